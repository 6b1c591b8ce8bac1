"""What the guard's checks share: the installation, the indexed history, the phase state,
and how a check ends (:class:`Refusal`)."""

from __future__ import annotations

from plangate.autoplan import layout
from plangate.guard.literal_calls import init_arguments
from plangate.guard.world import OS, World
from plangate.journal.events import Event, ToolResult, ToolUse


class Installation:
    """What the hook knows about itself: its plangate executable and skill folders, the
    session's cwd, and the world it reads (:mod:`plangate.guard.world`)."""

    __slots__ = ("plangate", "skill_dirs", "cwd", "world", "_inits")

    def __init__(self, plangate: str, skill_dirs: list[str], cwd: str, world: World = OS) -> None:
        self.plangate = plangate
        self.skill_dirs = skill_dirs
        self.cwd = cwd
        self.world = world
        self._inits: dict[str, list[str] | None] = {}

    def init_arguments(self, command: object) -> list[str] | None:
        """:func:`~plangate.guard.literal_calls.init_arguments` for this installation's
        plangate, worked out once per command in a decision (the fold, the disarm fold and
        the binding all ask; each answer resolves two paths)."""
        if not isinstance(command, str):
            return None
        if command not in self._inits:
            self._inits[command] = init_arguments(command, self.plangate, self.world)
        return self._inits[command]


def number(phase: str) -> float:
    return float(layout.PHASE_NUMBERS[phase])


class History:
    """The events before the current call, indexed for the checks."""

    def __init__(self, events: list[Event]) -> None:
        self.events = events
        self.uses: dict[str, ToolUse] = {}
        self.results: dict[str, list[ToolResult]] = {}
        for event in events:
            if isinstance(event, ToolUse):
                self.uses[event.tool_use_id] = event
            elif isinstance(event, ToolResult):
                self.results.setdefault(event.tool_use_id, []).append(event)

    def results_after(self, use: ToolUse) -> list[ToolResult]:
        return [r for r in self.results.get(use.tool_use_id, ()) if r.order > use.order]

    def single_success(self, use: ToolUse) -> ToolResult | None:
        results = self.results_after(use)
        if len(results) != 1 or results[0].is_error:
            return None
        return results[0]


class PhaseState:
    """The phase the session is in, where it entered it, and the furthest phase it reached
    (a fresh checkpoint of an earlier phase reopens that phase: ``phase`` goes back,
    ``furthest`` does not)."""

    __slots__ = ("phase", "furthest", "entry_order", "checkpoints", "prepared")

    def __init__(self) -> None:
        self.phase: str | None = None
        self.furthest: str | None = None
        self.entry_order = -1
        self.checkpoints: dict[str, str] = {}
        self.prepared: dict[str, str] = {}


class Refusal(Exception):
    """The guard denies (or, for unverified codes, lets through with a warning) with ``code``.

    ``detail`` is a short fact for the message (never content the model wrote); ``keys``
    carries key names for ``agent_key``.
    """

    def __init__(self, code: str, detail: str = "", keys: list[str] | None = None) -> None:
        super().__init__(code)
        self.code = code
        self.detail = detail
        self.keys = keys or []

    def __repr__(self) -> str:
        return f"Refusal({self.code!r}, {self.detail!r})"
