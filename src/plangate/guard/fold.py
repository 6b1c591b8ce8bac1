"""The guard's one pass over the live chain: events in, state out.

A phase decision needs the whole session for a few facts only, and everything else from the
current /autoplan invocation's **window** (from the human turn before the init that binds it
to the end, plus every earlier plangate Bash call and its results). :class:`GuardTracker`
folds the owned records into that state, in causal order, one record at a time:

- where the window begins: the positions of human turns, of plangate Bash calls (and their
  results) and of this installation's literal inits, with the plans each names and how its
  result looked (:func:`window_start`);
- for every human turn that may begin a window, the :class:`~.invocation.Disarm` fold before it;
- over every event: the call ids, the ids of results and notifications that name no call
  (yet), the messages whose calls have a result, the calls still without one, and whether a
  call id repeats (the id sets as :class:`~plangate.journal.joined.Joined` strings).

There is one fold and one way to read it. A cold read is the fold from record 0 (the reader
runs it as it reads, or :meth:`GuardTracker.select` does); an indexed read continues the
state the journal index saved (:mod:`plangate.journal.window`). Either way the decision gets
a :class:`~.observe.Chain`: the state's facts and the window's events, in full. Standard library
and plangate only (hook path).
"""

from __future__ import annotations

import os

from plangate import __version__
from plangate.guard.invocation import Disarm
from plangate.guard.literal_calls import kept_in_full
from plangate.guard.state import Installation
from plangate.journal.events import Event, TaskNotification, ToolResult, ToolUse
from plangate.journal.joined import Joined
from plangate.journal.records import Record
from plangate.journal.window import Tracker

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from plangate.guard.world import World
    from plangate.journal.window import Reload

VERSION = 4
OK, BAD, WAITING = "ok", "bad", "waiting"
"""How an init's result looked in the light events: a success printing JSON, anything else
(an error, a second result, other output), none yet."""


class GuardTracker(Tracker):
    """The fold, for one installation (its plangate executable names the literal inits)."""

    def __init__(self, installation: Installation, journal: str) -> None:
        self.installation = installation
        # A saved state is only as good as the code that folded it: any other release, or
        # another installation's plangate (it names the literal inits), starts anew.
        self.key = f"guard-{VERSION}:{__version__}:{installation.plangate}"
        self.journal = journal
        self.last: tuple[int, list[Record], dict[str, Any]] | None = None
        self.selected: tuple[list[Record], dict[str, Any]] | None = None

    def start(self) -> dict[str, Any]:
        return {
            "count": 0,
            "disarm": Disarm().dump(),
            "snapshots": {0: Disarm().dump()},
            "turns": [],
            "inits": [],
            "chosen": [],
            "bash": [],
            "uses": Joined().text,
            "orphans": Joined().text,
            "noted": Joined().text,
            "ran": Joined().text,
            "pending": {},
            "repeated": False,
            "cut": None,
        }

    def fold(
        self, state: dict[str, Any], position: int, records: list[Record], reload: Reload
    ) -> dict[str, Any] | None:
        folded, storable = self.folded(state, position, records, reload)
        if folded is None or not storable:
            return None  # an id the joined sets cannot hold
        self.last = (position, records, folded)
        return folded

    def folded(
        self, state: dict[str, Any], position: int, records: list[Record], reload: Reload
    ) -> tuple[dict[str, Any] | None, bool]:
        """The fold itself: the state after ``records`` (the first at ``position``), and
        whether the saved form can hold it."""
        if state.get("count") != position:
            return None, True
        disarm = Disarm.load(state["disarm"])
        snapshots: dict[int, Any] = state["snapshots"]
        turns: list[int] = state["turns"]
        inits: list[list[Any]] = state["inits"]
        chosen: list[int] = state["chosen"]
        bash = Ordered(state["bash"])
        uses, orphans = Joined(state["uses"]), Joined(state["orphans"])
        noted, ran = Joined(state["noted"]), Joined(state["ran"])
        pending: dict[str, str | None] = state["pending"]
        repeated: bool = state["repeated"]
        waiting: dict[str, list[Any]] = {entry[2]: entry for entry in inits}
        storable = True
        for offset, record in enumerate(records):
            at = position + offset
            events = record.events
            picked, full, human = mark(events, bash)
            if picked:
                chosen.append(at)
            if human:
                turns.append(at)
                snapshots[at] = disarm.dump()
            for event in reload(record) if full else events:
                arguments = disarm.step(event, self.installation)
                if arguments is not None:
                    assert isinstance(event, ToolUse)  # an init's call
                    entry = [at, plans_of(arguments), event.tool_use_id, WAITING]
                    inits.append(entry)
                    waiting[event.tool_use_id] = entry
            for event in events:
                if isinstance(event, ToolUse):
                    use, message = event.tool_use_id, event.message_id
                    seen = use in uses
                    answered = use in orphans or (seen and use not in pending)
                    repeated = repeated or seen
                    storable = uses.add(use) and storable
                    if not answered:
                        pending[use] = message
                    elif message is not None:
                        storable = ran.add(message) and storable
                elif isinstance(event, ToolResult):
                    result = event.tool_use_id
                    if result not in uses:
                        storable = orphans.add(result) and storable
                    message = pending.pop(result, None)
                    if message is not None:
                        storable = ran.add(message) and storable
                    init = waiting.get(result)
                    if init is not None:
                        fine = init[3] == WAITING and not event.is_error
                        init[3] = OK if fine and event.text_starts_json else BAD
                elif isinstance(event, TaskNotification):
                    storable = noted.add(event.tool_use_id) and storable
        cut = window_start(turns, inits, self.installation.world)
        kept = {at: dumped for at, dumped in snapshots.items() if at >= cut}
        return {
            "count": position + len(records),
            "disarm": disarm.dump(),
            "snapshots": kept,
            "turns": [at for at in turns if at >= cut],
            "inits": inits,
            "chosen": chosen,
            "bash": bash.items,
            "uses": uses.text,
            "orphans": orphans.text,
            "noted": noted.text,
            "ran": ran.text,
            "pending": pending,
            "repeated": repeated,
            "cut": cut,
        }, storable

    def window(self, state: dict[str, Any]) -> tuple[int, list[int]] | None:
        cut = state["cut"]
        if cut is None or cut not in state["snapshots"]:
            return None  # a turn whose fold was not kept
        return cut, [at for at in state["chosen"] if at < cut]

    def select(self, ordered: list[Record]) -> list[Record]:
        """The reader's selection on a read that did not continue a saved window (a cold
        read, or a saved state that names no window): the same fold from record 0, unless
        the reader just made it of exactly these records. The records returned are reloaded
        in full, and :func:`~.observe.chain_of` reads the window from them."""
        state = self._reused(ordered)
        if state is None or self.window(state) is None:
            state = self._fold_from_start(ordered)
        self.selected = (ordered, state)
        plan = self.window(state)
        assert plan is not None  # a fold from record 0 keeps the cut's snapshot
        cut, earlier = plan
        return [ordered[at] for at in earlier] + ordered[cut:]

    def _fold_from_start(self, ordered: list[Record]) -> dict[str, Any]:
        from plangate.journal.reload import reloader  # a record too large for the index

        try:
            descriptor = self.installation.world.open_journal(self.journal)
        except OSError:
            # Gone since the reader opened it (a deleted session): the light events, where
            # only a Bash call of over 4 KiB before the window is folded without its input.
            state, _ = self.folded(self.start(), 0, ordered, lambda record: record.events)
        else:
            try:
                state, _ = self.folded(self.start(), 0, ordered, reloader(descriptor, {}))
            finally:
                os.close(descriptor)
        assert state is not None
        return state

    def _reused(self, ordered: list[Record]) -> dict[str, Any] | None:
        if self.last is None:
            return None
        position, records, state = self.last
        if position + len(records) != len(ordered):
            return None
        if not all(a is b for a, b in zip(ordered[position:], records, strict=True)):
            return None
        return state


def mark(events: Sequence[Event], bash: Ordered) -> tuple[bool, bool, bool]:
    """What the window notes of one record: ``picked`` (a plangate Bash call, kept with its
    results, its id added to ``bash``, or a result of one), ``full`` (a Bash call too large
    for the index: its input reloads) and ``human`` (a human turn)."""
    picked = full = human = False
    for event in events:
        if isinstance(event, ToolUse) and event.name == "Bash":
            command = event.input.get("command") if event.input else None
            full = full or event.input is None
            if kept_in_full(command):
                bash.add(event.tool_use_id)
                picked = True
        elif isinstance(event, ToolResult) and event.tool_use_id in bash:
            picked = True
        elif event.kind == "human_turn":
            human = True
    return picked, full, human


def plans_of(arguments: list[str]) -> list[str]:
    """The (active plan, restore point) an init names, as written (:func:`same_plans`
    compares them as the binding does)."""
    return [arguments[1], arguments[2]]


def same_plans(first: list[str], second: list[str], world: World) -> bool:
    """Whether two inits name the same plans once canonical (only asked when they are
    spelled differently: it resolves links)."""
    if first == second:
        return True
    canonical = world.canonical_path
    return [canonical(path) for path in first] == [canonical(path) for path in second]


class Ordered:
    """A set that keeps its items in the order they came, so the saved state only grows
    (:mod:`plangate.journal.frames` then saves what was added)."""

    __slots__ = ("items", "seen")

    def __init__(self, items: list[str]) -> None:
        self.items = list(items)
        self.seen = set(items)

    def __contains__(self, item: str) -> bool:
        return item in self.seen

    def add(self, item: str) -> None:
        if item not in self.seen:
            self.seen.add(item)
            self.items.append(item)


def window_start(turns: list[int], inits: list[list[Any]], world: World) -> int:
    """The window's first position: the last human turn (``turns``, ascending) at or before
    the first init of the trailing run that can hold the binding.

    Going back from the last init, the run takes every init naming the same plans (a
    ``reused`` re-run keeps the earlier binding) and every init that did not visibly succeed
    (it binds nothing); it stops at a successful init of other plans, which rebinds. So the
    init that binds (:func:`plangate.guard.invocation.bind`) is always inside the window."""
    earliest = -1
    if inits:
        earliest, plans = inits[-1][0], inits[-1][1]
        for at, other, _, status in reversed(inits[:-1]):
            if status == OK and not same_plans(other, plans, world):
                break
            earliest = at
    start = 0
    for position in turns:
        if earliest >= 0 and position > earliest:
            break
        start = position
    return start
