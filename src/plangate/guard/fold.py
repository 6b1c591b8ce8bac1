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
state the journal index saved (:mod:`plangate.journal.window`). The state is a
:class:`GuardState`, saved in the index as a dict of plain values (:meth:`GuardState.dump`,
:meth:`GuardState.load`: the one place that knows its keys). Either way the decision gets
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
from plangate.journal.window import Fold

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from plangate.guard.world import World
    from plangate.journal.window import Reload

VERSION = 5
"""Of the fold's saved state (:attr:`GuardTracker.key`). 5: an init answered in a later read
is saved with its status (version 4 changed it in memory only, so the index kept it waiting)."""
OK, BAD, WAITING = "ok", "bad", "waiting"
"""How an init's result looked in the light events: a success printing JSON, anything else
(an error, a second result, other output), none yet."""


class Init:
    """A literal init the fold saw: its position, the plans it names (:func:`plans_of`), its
    call id and how its result looked (:data:`OK`, :data:`BAD`, :data:`WAITING`). Saved as
    the list ``[at, plans, call, status]`` (:meth:`dump`)."""

    __slots__ = ("at", "plans", "call", "status")

    def __init__(self, at: int, plans: list[str], call: str, status: str = WAITING) -> None:
        self.at = at
        self.plans = plans
        self.call = call
        self.status = status

    def dump(self) -> list[Any]:
        return [self.at, self.plans, self.call, self.status]

    @classmethod
    def load(cls, saved: Sequence[Any]) -> Init:
        at, plans, call, status = saved
        return cls(at, plans, call, status)

    def __repr__(self) -> str:
        return f"Init{tuple(self.dump())!r}"


class GuardState:
    """The fold's state after the first ``count`` owned records.

    The journal index saves it as a dict (:meth:`dump`; :meth:`load` reads it back), with
    one key per attribute: the index's frames save what each key added
    (:mod:`plangate.journal.frames`), so the lists only grow where they can."""

    __slots__ = (
        *("count", "disarm", "snapshots", "turns", "inits", "chosen", "bash"),
        *("uses", "orphans", "noted", "ran", "pending", "repeated", "cut"),
    )

    def __init__(self) -> None:
        self.count = 0  # how many owned records are folded in
        self.disarm = Disarm()  # the Disarm fold after them
        # The Disarm fold before each human turn from the cut on, as dumped.
        self.snapshots: dict[int, Any] = {0: Disarm().dump()}
        self.turns: list[int] = []  # the positions of human turns from the cut on
        self.inits: list[Init] = []  # every literal init of this installation
        self.chosen: list[int] = []  # records with a plangate Bash call or its result
        self.bash = Ordered([])  # the ids of plangate Bash calls
        self.uses, self.orphans = Joined(), Joined()  # call ids; result ids with no call (yet)
        # The ids task notifications name; the messages whose calls have a result.
        self.noted, self.ran = Joined(), Joined()
        self.pending: dict[str, str | None] = {}  # calls without a result: id to message id
        self.repeated = False  # some call id came twice
        self.cut: int | None = None  # where the window begins (window_start); None at first

    def window(self) -> tuple[int, list[int]] | None:
        """:meth:`GuardTracker.window` of this state."""
        return _window(self.cut, self.snapshots, self.chosen)

    def dump(self) -> dict[str, Any]:
        """The saved form: a dict of lists, strings and numbers (:mod:`marshal` writes it)."""
        return {
            "count": self.count,
            "disarm": self.disarm.dump(),
            "snapshots": dict(self.snapshots),
            "turns": list(self.turns),
            "inits": [init.dump() for init in self.inits],
            "chosen": list(self.chosen),
            "bash": list(self.bash.items),
            "uses": self.uses.text,
            "orphans": self.orphans.text,
            "noted": self.noted.text,
            "ran": self.ran.text,
            "pending": dict(self.pending),
            "repeated": self.repeated,
            "cut": self.cut,
        }

    @classmethod
    def load(cls, saved: dict[str, Any]) -> GuardState:
        """The state :meth:`dump` saved (its lists and dicts copied: a fold changes the
        state in place, never the saved value)."""
        state = cls()
        state.count = saved["count"]
        state.disarm = Disarm.load(saved["disarm"])
        state.snapshots = dict(saved["snapshots"])
        state.turns = list(saved["turns"])
        state.inits = [Init.load(init) for init in saved["inits"]]
        state.chosen = list(saved["chosen"])
        state.bash = Ordered(saved["bash"])
        state.uses, state.orphans = Joined(saved["uses"]), Joined(saved["orphans"])
        state.noted, state.ran = Joined(saved["noted"]), Joined(saved["ran"])
        state.pending = dict(saved["pending"])
        state.repeated = saved["repeated"]
        state.cut = saved["cut"]
        return state

    @staticmethod
    def saved_window(saved: dict[str, Any]) -> tuple[int, list[int]] | None:
        """:meth:`window` of a saved state, without loading the rest of it."""
        return _window(saved["cut"], saved["snapshots"], saved["chosen"])


def _window(
    cut: int | None, snapshots: dict[int, Any], chosen: list[int]
) -> tuple[int, list[int]] | None:
    if cut is None or cut not in snapshots:
        return None  # a turn whose fold was not kept
    return cut, [at for at in chosen if at < cut]


class GuardTracker(Fold["GuardState"]):
    """The fold, for one installation (its plangate executable names the literal inits).

    The reader sees the saved form the journal index keeps (:meth:`GuardState.dump`); the
    fold itself works on a :class:`GuardState` (:meth:`step`)."""

    def __init__(self, installation: Installation, journal: str) -> None:
        self.installation = installation
        # A saved state is only as good as the code that folded it: any other release, or
        # another installation's plangate (it names the literal inits), starts anew.
        self.key = f"guard-{VERSION}:{__version__}:{installation.plangate}"
        self.journal = journal
        self.last: tuple[int, list[Record], GuardState] | None = None
        self.selected: tuple[list[Record], GuardState] | None = None

    def new(self) -> GuardState:
        return GuardState()

    def load(self, saved: Any) -> GuardState:
        return GuardState.load(saved)

    def step(self, state: GuardState, position: int, records: list[Record], reload: Reload) -> bool:
        _, storable = self.folded(state, position, records, reload)
        if storable:  # else an id the joined sets cannot hold
            self.last = (position, records, state)
        return storable

    def plan(self, state: GuardState) -> tuple[int, list[int]] | None:
        return state.window()

    def window(self, state: Any) -> tuple[int, list[int]] | None:
        return GuardState.saved_window(state)  # without loading the rest of it

    def folded(
        self, state: GuardState, position: int, records: list[Record], reload: Reload
    ) -> tuple[GuardState, bool]:
        """The fold itself: ``state`` (after the records before ``position``) once
        ``records`` are folded in, changed in place, and whether the saved form can hold
        it."""
        assert state.count == position
        disarm, snapshots, turns = state.disarm, state.snapshots, state.turns
        inits, chosen, bash = state.inits, state.chosen, state.bash
        uses, orphans, noted, ran = state.uses, state.orphans, state.noted, state.ran
        pending = state.pending
        repeated = state.repeated
        waiting = {init.call: init for init in inits}
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
                    made = Init(at, plans_of(arguments), event.tool_use_id)
                    inits.append(made)
                    waiting[made.call] = made
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
                        fine = init.status == WAITING and not event.is_error
                        init.status = OK if fine and event.text_starts_json else BAD
                elif isinstance(event, TaskNotification):
                    storable = noted.add(event.tool_use_id) and storable
        cut = window_start(turns, inits, self.installation.world)
        state.count = position + len(records)
        state.snapshots = {at: dumped for at, dumped in snapshots.items() if at >= cut}
        state.turns = [at for at in turns if at >= cut]
        state.repeated = repeated
        state.cut = cut
        return state, storable

    def select(self, ordered: list[Record]) -> list[Record]:
        """The reader's selection on a read that did not continue a saved window (a cold
        read, or a saved state that names no window): the same fold from record 0, unless
        the reader just made it of exactly these records. The records returned are reloaded
        in full, and :func:`~.observe.chain_of` reads the window from them."""
        state = self._reused(ordered)
        if state is None or state.window() is None:
            state = self._fold_from_start(ordered)
        self.selected = (ordered, state)
        plan = state.window()
        assert plan is not None  # a fold from record 0 keeps the cut's snapshot
        cut, earlier = plan
        return [ordered[at] for at in earlier] + ordered[cut:]

    def _fold_from_start(self, ordered: list[Record]) -> GuardState:
        from plangate.journal.reload import reloader  # a record too large for the index

        try:
            descriptor = self.installation.world.open_journal(self.journal)
        except OSError:
            # Gone since the reader opened it (a deleted session): the light events, where
            # only a Bash call of over 4 KiB before the window is folded without its input.
            state, _ = self.folded(GuardState(), 0, ordered, lambda record: record.events)
        else:
            try:
                state, _ = self.folded(GuardState(), 0, ordered, reloader(descriptor, {}))
            finally:
                os.close(descriptor)
        return state

    def _reused(self, ordered: list[Record]) -> GuardState | None:
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


def window_start(turns: list[int], inits: list[Init], world: World) -> int:
    """The window's first position: the last human turn (``turns``, ascending) at or before
    the first init of the trailing run that can hold the binding.

    Going back from the last init, the run takes every init naming the same plans (a
    ``reused`` re-run keeps the earlier binding) and every init that did not visibly succeed
    (it binds nothing); it stops at a successful init of other plans, which rebinds. So the
    init that binds (:func:`plangate.guard.invocation.bind`) is always inside the window."""
    earliest = -1
    if inits:
        earliest, plans = inits[-1].at, inits[-1].plans
        for init in reversed(inits[:-1]):
            if init.status == OK and not same_plans(init.plans, plans, world):
                break
            earliest = init.at
    start = 0
    for position in turns:
        if earliest >= 0 and position > earliest:
            break
        start = position
    return start
