"""What one journal read gives the decision: the folded chain.

:func:`chain_of` turns a ready verdict into a :class:`Chain`, the same way whatever the read
was: the state of the guard's fold (:mod:`plangate.guard.fold`) after the last owned record,
and the window's events in full. After a read that continued a saved window the verdict's
events are the window's already; after any other read they are every event, and the window
is taken from them as the fold's selection named it. Standard library and plangate only
(hook path).
"""

from __future__ import annotations

from plangate.guard.invocation import Disarm
from plangate.journal.events import Event
from plangate.journal.joined import Joined
from plangate.journal.verdict import Verdict

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from plangate.guard.fold import GuardTracker


class Chain:
    """The window's events (``events``, from order ``start`` on plus the earlier plangate
    Bash calls and results) and what the fold knows of every event (the id sets, the calls
    still without a result, the :class:`Disarm` fold before the window)."""

    __slots__ = (
        *("events", "start", "uses", "orphans", "noted", "ran", "pending", "repeated"),
        "_snapshot",
    )

    def __init__(self, events: list[Event], start: int, state: dict[str, Any]) -> None:
        self.events = events
        self.start = start
        self.uses, self.orphans = Joined(state["uses"]), Joined(state["orphans"])
        self.noted, self.ran = Joined(state["noted"]), Joined(state["ran"])
        self.pending: dict[str, str | None] = state["pending"]
        self.repeated: bool = state["repeated"]
        self._snapshot = state["snapshots"][state["cut"]]

    def snapshot(self) -> Disarm:
        """The :class:`Disarm` fold of every event before the window (a fresh copy)."""
        return Disarm.load(self._snapshot)

    def mentions(self, tool_use_id: str) -> bool:
        """Some event (a call, a result, a notification) carries this id."""
        return tool_use_id in self.uses or tool_use_id in self.orphans or tool_use_id in self.noted

    def lagged(self) -> bool:
        """Some journaled tool call has no result yet."""
        return bool(self.pending)

    def ran_in(self, message_id: str) -> bool:
        """A tool call of this message has a result."""
        return message_id in self.ran


def chain_of(verdict: Verdict, tracker: GuardTracker) -> Chain:
    """The chain of a ready verdict read with ``tracker``."""
    window = verdict.window
    if window is not None:
        return Chain(verdict.events, window.cut_order, window.state)
    assert tracker.selected is not None, "a ready read without a window selects"
    ordered, state = tracker.selected
    plan = tracker.window(state)
    assert plan is not None
    cut, earlier = plan
    start = next((r.events[0].order for r in ordered[cut:] if r.events), None)
    events = verdict.events
    if start is None:
        start = events[-1].order + 1 if events else 0
    kept = {ordered[at].index for at in earlier}
    if cut > 0 or kept:
        events = [e for e in events if e.order >= start or e.record in kept]
    return Chain(events, start, state)
