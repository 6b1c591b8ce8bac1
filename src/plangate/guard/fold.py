"""The guard's history, folded as the journal grows, so a decision reads its window alone.

A phase decision needs the whole session for a few facts only; everything else it reads
from the current /autoplan invocation's **window** (from the human turn before the init that
binds it, :func:`invocation_window`). :class:`GuardTracker` folds
those facts over the owned records, in the form the full decision sees them (light events;
a Bash call too large for the index reloaded in full, as the full decision's selection
reloads it), and the reader keeps the state in the journal index
(:mod:`plangate.journal.window`):

- where the window begins: the positions of human turns, of plangate Bash calls (and
  their results) and of init calls with the plans they name;
- for every human turn that may begin a window, the fold :class:`~.decide.Disarm` had made
  before it (background reviewers launched and not yet notified, turn ends, the latest human
  turn, inits after it);
- over every event: the call ids, the ids of results and notifications that name no call
  (yet), the messages whose calls have a result, the calls still without one (with their
  message), and whether a call id repeats (the id sets as
  :class:`~plangate.journal.joined.Joined` strings: one object each to load).

:func:`decide.decide` then folds only the window onto the saved ``Disarm``, binds over the
earlier plangate calls plus the window, and raises :class:`~.decide.Unproven` when the
binding lies before the window; :class:`Facts` answers what the hook path asks of every
event. Whatever cannot be proven equal to the full decision (a window reaching back past
the saved turns, a rewind or summarize that makes the reader read in full) is decided in
full. Standard library and plangate only (hook path).
"""

from __future__ import annotations

from plangate import __version__
from plangate.guard.decide import Disarm
from plangate.guard.literal_calls import init_pair, kept_in_full, may_be_init
from plangate.guard.state import Installation
from plangate.journal.events import Event, TaskNotification, ToolResult, ToolUse
from plangate.journal.joined import Joined
from plangate.journal.records import Record
from plangate.journal.window import Tracker, Window

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

    from plangate.journal.window import Reload

VERSION = 3


class GuardTracker(Tracker):
    """The fold, for one installation (its plangate executable names the literal inits)."""

    def __init__(self, installation: Installation) -> None:
        self.installation = installation
        # A saved state is only as good as the code that folded it: any other release, or
        # another installation's plangate (it names the literal inits), starts anew.
        self.key = f"guard-{VERSION}:{__version__}:{installation.plangate}"

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
        if state.get("count") != position:
            return None
        disarm = Disarm.load(state["disarm"])
        snapshots: dict[int, Any] = state["snapshots"]
        turns: list[int] = state["turns"]
        inits: list[Any] = state["inits"]
        chosen: list[int] = state["chosen"]
        bash = Ordered(state["bash"])
        uses, orphans = Joined(state["uses"]), Joined(state["orphans"])
        noted, ran = Joined(state["noted"]), Joined(state["ran"])
        pending: dict[str, str | None] = state["pending"]
        repeated: bool = state["repeated"]
        storable = True
        for offset, record in enumerate(records):
            at = position + offset
            events = record.events
            marks = mark(events, bash)
            picked, full, human = marks.picked, marks.full, marks.human
            inits.extend([at, pair] for pair in marks.inits)
            if picked:
                chosen.append(at)
            if human:
                turns.append(at)
                snapshots[at] = disarm.dump()
            for event in reload(record) if full else events:
                disarm.step(event, self.installation)
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
                elif isinstance(event, TaskNotification):
                    storable = noted.add(event.tool_use_id) and storable
        if not storable:
            return None  # an id the joined sets cannot hold
        cut = window_start(turns, inits)
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
        }

    def window(self, state: dict[str, Any]) -> tuple[int, list[int]] | None:
        cut = state["cut"]
        if cut is None or cut not in state["snapshots"]:
            return None  # a turn whose fold was not kept
        return cut, [at for at in state["chosen"] if at < cut]


class Marks:
    """What the window selection notes of one record (:func:`mark`)."""

    __slots__ = ("picked", "full", "human", "inits")

    def __init__(self) -> None:
        self.picked = False  # a plangate Bash call, or a result of one
        self.full = False  # a Bash call too large for the index (its input reloads)
        self.human = False  # a human turn
        self.inits: list[tuple[str, ...] | None] = []  # the plans of each init call in it


def mark(events: Sequence[Event], bash: Ordered | set[str]) -> Marks:
    """The one place the window asks of a record's calls: is it a plangate Bash call (kept
    with its results, its id added to ``bash``), and is it an init (with the plans it names,
    :func:`~plangate.guard.literal_calls.init_pair`)? Both the fold and
    :func:`invocation_window` ask here, so they select the same window."""
    marks = Marks()
    for event in events:
        if isinstance(event, ToolUse) and event.name == "Bash":
            command = event.input.get("command") if event.input else None
            marks.full = marks.full or event.input is None
            if kept_in_full(command):
                bash.add(event.tool_use_id)
                marks.picked = True
                if may_be_init(command):
                    marks.inits.append(init_pair(command))
        elif isinstance(event, ToolResult) and event.tool_use_id in bash:
            marks.picked = True
        elif event.kind == "human_turn":
            marks.human = True
    return marks


def invocation_window(ordered: list[Record]) -> Iterable[Record]:
    """The records the decision needs in full.

    Every plangate Bash call and its results, and everything from the human turn before the
    init that binds the invocation. A re-run init of the same plans (``reused: true``) keeps
    the earlier binding, so the window reaches back over the whole trailing run of inits
    naming the same active plan and restore point.
    """
    chosen: set[int] = set()
    bash: set[str] = set()
    inits: list[tuple[int, tuple[str, ...] | None]] = []
    turns: list[int] = []
    for position, record in enumerate(ordered):
        marks = mark(record.events, bash)
        if marks.picked:
            chosen.add(position)
        if marks.human:
            turns.append(position)
        inits.extend((position, pair) for pair in marks.inits)
    chosen.update(range(window_start(turns, inits), len(ordered)))
    return [ordered[position] for position in sorted(chosen)]


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


def window_start(turns: list[int], inits: list[Any]) -> int:
    """The window's first position (for the fold and for
    :func:`invocation_window` alike): the last human turn (``turns``,
    ascending positions) at or before the first init of the trailing run of ``inits``
    (``(position, plans)``) that names the same plans."""
    earliest = -1
    if inits:
        earliest, pair = inits[-1]
        for position, other in reversed(inits[:-1]):
            if pair is not None and other is not None and other != pair:
                break
            earliest = position
    start = 0
    for position in turns:
        if earliest >= 0 and position > earliest:
            break
        start = position
    return start


def facts_of(window: Window) -> Facts:
    """The facts of a windowed read (made once per read)."""
    if not isinstance(window.derived, Facts):
        window.derived = Facts(window.state)
    return window.derived


class Facts:
    """What the hook path asks of every event, answered from the fold's state after a
    windowed read (the verdict's events are the window's)."""

    __slots__ = ("uses", "orphans", "noted", "ran", "pending", "repeated", "snapshot")

    def __init__(self, state: dict[str, Any]) -> None:
        self.uses, self.orphans = Joined(state["uses"]), Joined(state["orphans"])
        self.noted, self.ran = Joined(state["noted"]), Joined(state["ran"])
        self.pending: dict[str, str | None] = state["pending"]
        self.repeated: bool = state["repeated"]
        self.snapshot = Disarm.load(state["snapshots"][state["cut"]])

    def mentions(self, tool_use_id: str) -> bool:
        """Some event (a call, a result, a notification) carries this id."""
        return tool_use_id in self.uses or tool_use_id in self.orphans or tool_use_id in self.noted

    def lagged(self) -> bool:
        """Some tool call has no result."""
        return bool(self.pending)

    def ran_in(self, message_id: str) -> bool:
        """A tool call of this message has a result."""
        return message_id in self.ran
