"""The invocation: is it over (:func:`disarmed`), and which init binds it (:func:`bind`)?

Both read every plangate Bash call of the session, which the window always holds
(:mod:`plangate.guard.fold`); :func:`disarmed` folds the rest on from the state the fold kept
before the window.
"""

from __future__ import annotations

from plangate import skill_names
from plangate.autoplan import layout
from plangate.decisions import reasons
from plangate.guard.artifact_checks import Binding, init_result, verify_binding
from plangate.guard.literal_calls import (
    is_gate_render,
    looks_like_unbindable_init,
)
from plangate.guard.state import History, Installation, Refusal
from plangate.journal.events import Event, HumanTurn, ToolResult, ToolUse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def disarmed(
    history: History, installation: Installation, prior: Disarm, start: int
) -> tuple[bool, set[int]]:
    """Whether the invocation is over, and the orders of events outside any invocation.

    An invocation ends when its Final Approval Gate is written (a literal ``plangate gate
    render`` that succeeded) or at a new literal init, which begins the next one. A typed
    turn does not end it, whatever was typed and however the previous turn ended (gstack
    ends it at an unrelated request after an end of turn; plangate does not, see
    ``docs/guard-deviations.md``). What happens between a gate and the next init is not part
    of /autoplan's run (a phase entry made then does not count). A ``/autoplan`` typed again
    needs its own init first (``init_own``), unless an init was tried since in a form that
    cannot be bound (piped, redirected, chained, through a variable): then the denial says
    how to run it instead (``init_unbindable``), as seed 000 orders it. ``prior`` is the fold
    of every event before order ``start`` (:mod:`plangate.guard.fold`): only the events from
    ``start`` on are folded here.
    """
    fold = prior
    orders: set[int] = set()
    for event in history.events:
        if event.order < start:
            continue
        fold.step(event, installation)
        if fold.outside:
            orders.add(event.order)
    ours = fold.has_latest and skill_names.is_skill(fold.latest_command, layout.SKILL_NAME)
    if ours and not fold.init_after:
        raise Refusal(reasons.INIT_UNBINDABLE if fold.unbindable_after else reasons.INIT_OWN)
    return fold.outside, orders


class Disarm:
    """The fold :func:`disarmed` makes over the events, one at a time (the guard's fold,
    :mod:`plangate.guard.fold`, keeps it before every human turn as :meth:`dump` gives it)."""

    __slots__ = (
        "gates",
        "has_latest",
        "latest_command",
        "outside",
        "init_after",
        "unbindable_after",
    )

    def __init__(self) -> None:
        self.gates: set[str] = set()
        self.has_latest = False
        self.latest_command: str | None = None
        self.outside = False
        self.init_after = False
        self.unbindable_after = False  # an init tried since the latest turn, unbindably

    def step(self, event: Event, installation: Installation) -> list[str] | None:
        """Fold ``event`` in; the init's three paths when it is a literal init."""
        if isinstance(event, ToolUse):
            if event.name != "Bash" or not event.input:
                return None
            command = event.input.get("command")
            arguments = installation.init_arguments(command)
            if arguments is not None:
                self.outside = False
                self.init_after = True
                return arguments
            if is_gate_render(command, installation.plangate, installation.world):
                self.gates.add(event.tool_use_id)
            elif isinstance(command, str) and looks_like_unbindable_init(command):
                self.unbindable_after = True
        elif isinstance(event, ToolResult):
            if event.tool_use_id in self.gates:
                self.gates.discard(event.tool_use_id)
                if not event.is_error:
                    self.outside = True  # the Final Approval Gate is written
        elif isinstance(event, HumanTurn):
            self.has_latest = True
            self.latest_command = event.command
            self.init_after = False
            self.unbindable_after = False
        return None

    def dump(self) -> tuple[object, ...]:
        return (
            sorted(self.gates),
            self.has_latest,
            self.latest_command,
            self.outside,
            self.init_after,
            self.unbindable_after,
        )

    @classmethod
    def load(cls, dumped: tuple[Any, ...] | list[Any]) -> Disarm:
        fold = cls()
        gates, *flags = dumped
        fold.gates = set(gates)
        fold.has_latest, fold.latest_command, fold.outside, fold.init_after = flags[:4]
        fold.unbindable_after = bool(flags[4]) if len(flags) > 4 else False  # older saves
        return fold


def _init_call(use: ToolUse, installation: Installation) -> list[str] | None:
    if use.name != "Bash" or not use.input:
        return None
    return installation.init_arguments(use.input.get("command"))


def bind(history: History, installation: Installation) -> Binding:
    binding: Binding | None = None
    failed: Refusal | None = None
    unbindable = False
    for event in history.events:
        if not isinstance(event, ToolUse) or event.name != "Bash":
            continue
        arguments = _init_call(event, installation)
        if arguments is None:
            command = event.input.get("command") if event.input else None
            if isinstance(command, str) and looks_like_unbindable_init(command):
                unbindable = True
            continue
        results = history.results_after(event)
        if len(results) != 1:
            raise Refusal(reasons.INIT_MISMATCH, f"the init has {len(results)} results")
        result = results[0]
        if result.is_error or result.text is None:
            failed = Refusal(reasons.INIT_FAILED, "the init failed")
            continue
        try:
            value = init_result(result.text, arguments, installation.world)
        except Refusal as refusal:
            if refusal.code == reasons.INIT_FAILED:
                failed = refusal
                continue
            raise
        failed = None
        same_pair = binding is not None and (
            binding.active == value["activePlan"] and binding.restore == value["restorePath"]
        )
        if value["reused"] and same_pair:
            continue
        scope = value.get("scope")
        binding = Binding(
            value["sourcePlan"],
            value["activePlan"],
            value["restorePath"],
            value["originalSha256"],
            value["originalBytes"],
            result.order,
            scope if isinstance(scope, dict) else {},
        )
    if failed is not None:
        raise failed
    if binding is None:
        raise Refusal(reasons.INIT_UNBINDABLE if unbindable else reasons.INIT_REQUIRED)
    verify_binding(binding, installation.world)
    return binding
