"""The two skill gates: their switch, their hook name and the skill each one holds."""

from __future__ import annotations

CEO_REVIEW_SKILL = "plan-ceo-review"
AUTOPLAN_SKILL = "autoplan"

STOP = "Stop"
SUBAGENT_STOP = "SubagentStop"


class Gate:
    """One gate. ``switch`` is the setting (``ceo_review_gate``), ``hook`` the name its
    markers and trace log use (``ceo-review-gate``), ``skill`` the skill it holds."""

    __slots__ = ("switch", "hook", "skill", "events")

    def __init__(self, switch: str, hook: str, skill: str, events: tuple[str, ...]) -> None:
        self.switch = switch
        self.hook = hook
        self.skill = skill
        self.events = events

    def __repr__(self) -> str:
        return f"Gate({self.switch!r})"

    @property
    def env(self) -> str:
        """The environment variable that turns this gate on or off for one session."""
        return "PLANGATE_" + self.switch.upper()


CEO_REVIEW = Gate("ceo_review_gate", "ceo-review-gate", CEO_REVIEW_SKILL, (STOP, SUBAGENT_STOP))
AUTOPLAN = Gate("autoplan_gate", "autoplan-gate", AUTOPLAN_SKILL, (STOP,))
GATES: tuple[Gate, ...] = (CEO_REVIEW, AUTOPLAN)
BY_SWITCH: dict[str, Gate] = {gate.switch: gate for gate in GATES}


def gates_for(event: str) -> list[Gate]:
    """The gates a hook event serves: both on Stop, the CEO review gate on SubagentStop."""
    return [gate for gate in GATES if event in gate.events]
