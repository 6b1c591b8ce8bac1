"""The guard's read and settle (:class:`JournalRead`, on :func:`plangate.engine.settle`):
read the session journal until a phase decision can be made.

Claude Code often runs a PreToolUse hook before it has written the current call to the
journal, and sometimes before it has written the previous message. The loop reads for at
most two seconds (every 50 ms), keeping the first read's prefix so that bytes changing under
it are ``rewritten``:

- the current call is journaled → decide on the **journal path**;
- it is not, and every journaled call has its result → decide at once on the **payload
  path**, with the call built from Claude Code's own parsed input and placed after the last
  journaled record;
- a journaled call still has no result → wait; at the deadline the call runs unverified
  (``journal_lag``).

Every ready read gives the decision a :class:`Chain` (:func:`chain_of`), the same way
whatever the read was: the state of the guard's fold (:mod:`plangate.guard.fold`) after the
last owned record, and the window's events in full. After a read that continued a saved
window the verdict's events are the window's already; after any other read they are every
event, and the window is taken from them as the fold's selection named it.
"""

from __future__ import annotations

from plangate.decisions import reasons
from plangate.engine import AGAIN, WAIT, Workflow, settle
from plangate.guard.fold import GuardState
from plangate.guard.invocation import Disarm
from plangate.guard.world import OS, World
from plangate.journal import codes
from plangate.journal.events import Event, ToolUse
from plangate.journal.reader import Verdict
from plangate.journal.scan import Prefix
from plangate.journal.settle import Settle

TYPE_CHECKING = False
if TYPE_CHECKING:
    from plangate.guard.fold import GuardTracker
    from plangate.journal.world import World as AnyWorld

DEADLINE_SECONDS = 2.0
UNVERIFIED_READER_CODES = frozenset({codes.TOO_LARGE, codes.REWRITTEN})

JOURNAL = reasons.PATH_JOURNAL
PAYLOAD = reasons.PATH_PAYLOAD
NONE = reasons.PATH_NONE


class Observation:
    """What the loop saw: a ready verdict, its chain and the path, or an outcome code."""

    __slots__ = ("verdict", "chain", "path", "code", "detail", "shapes")

    def __init__(
        self,
        verdict: Verdict | None,
        path: str,
        code: str | None = None,
        detail: str = "",
        shapes: list[str] | None = None,
        chain: Chain | None = None,
    ) -> None:
        self.verdict = verdict
        self.chain = chain
        self.path = path
        self.code = code
        self.detail = detail
        self.shapes = shapes or []

    @property
    def version(self) -> str | None:
        return self.verdict.claude_code_version if self.verdict is not None else None


class JournalRead(Workflow):
    """The guard's read and settle (steps 1 and 2 of :mod:`plangate.engine`): one read of the
    journal through the world with ``tracker`` (the guard's fold) as the reader's tracker, and
    what "caught up" means for a phase decision (see the module docstring). A pass's
    attempt is ``wait_for_current``: the payload path is not taken early, the pass waits,
    within the deadline, for Claude Code to journal the current call itself. ``index_dir``
    lets the first read go on from the journal index an earlier hook run saved."""

    def __init__(
        self,
        journal: str,
        *,
        session_id: str,
        tool_use_id: str,
        owners: list[str],
        config_dir: str,
        tracker: GuardTracker,
        deadline: float | None = None,
        index_dir: str | None = None,
    ) -> None:
        self.journal = journal
        self.session_id = session_id
        self.tool_use_id = tool_use_id
        self.owners = owners
        self.config_dir = config_dir
        self.tracker = tracker
        self.deadline = deadline
        self.index_dir = index_dir
        self.prior: Prefix | None = None
        self.last_chain: Chain | None = None

    def begin(self, world: AnyWorld, attempt: bool) -> Settle:
        """A pass keeps the first read's prefix (bytes changing under it are ``rewritten``)
        and the last ready read's chain."""
        self.prior = None
        self.last_chain = None
        deadline = DEADLINE_SECONDS if self.deadline is None else self.deadline
        return Settle.within(deadline, world.clock, world.sleep)

    def read(self, world: AnyWorld, attempt: bool) -> Verdict:
        verdict = world.read_journal(
            self.journal,
            session_id=self.session_id,
            owners=self.owners,
            config_dir=self.config_dir,
            prior=self.prior,
            select=self.tracker.select,
            index_dir=self.index_dir,
            tool_use_id=self.tool_use_id,
            tracker=self.tracker,
        )
        if self.prior is None and verdict.prefix is not None:
            self.prior = verdict.prefix
        return verdict

    def caught_up(self, verdict: Verdict, attempt: bool, wait: Settle) -> Observation | str:
        tool_use_id = self.tool_use_id
        if verdict.ready:
            chain = self.last_chain = chain_of(verdict, self.tracker)
            if any(
                isinstance(event, ToolUse)
                and event.tool_use_id == tool_use_id
                and event.order >= chain.start
                for event in chain.events
            ):
                return Observation(verdict, JOURNAL, chain=chain)
            if tool_use_id in chain.uses:
                # Journaled before the window: before the init that binds the invocation.
                detail = "the journal records this call before the invocation's init"
                return Observation(verdict, JOURNAL, reasons.CURRENT_MISMATCH, detail, chain=chain)
            stray = verdict.stray_tool_uses.get(tool_use_id)
            if stray is not None and stray != "unreachable":
                return Observation(
                    verdict,
                    JOURNAL,
                    reasons.CURRENT_MISMATCH,
                    f"the journal records this call in {stray}",
                    chain=chain,
                )
            if stray is None and not attempt and not chain.lagged():
                return Observation(verdict, PAYLOAD, chain=chain)
        elif verdict.reason is not None:
            code = codes.base_code(verdict.reason)
            if code in UNVERIFIED_READER_CODES:
                return Observation(verdict, NONE, verdict.reason, verdict.detail)
            if code == codes.UNRECOGNIZED_SHAPE:
                if wait.second_look():
                    return AGAIN
                return Observation(
                    verdict, NONE, verdict.reason, verdict.detail, list(verdict.root_shape)
                )
            return Observation(verdict, NONE, verdict.reason, verdict.detail)
        return WAIT

    def behind(self, last: Verdict, attempt: bool) -> Observation:
        chain = self.last_chain
        if last.ready and chain is not None:
            if attempt and not chain.lagged():
                return Observation(last, PAYLOAD, chain=chain)
            detail = "an earlier tool call has no result"
            return Observation(last, PAYLOAD, reasons.JOURNAL_LAG, detail, chain=chain)
        if last.exists:
            owned = "nothing in the journal is owned yet"
            return Observation(last, NONE, reasons.JOURNAL_LAG, owned)
        missing = "the session journal does not exist"
        return Observation(last, NONE, reasons.JOURNAL_MISSING, missing)


def observe(
    journal: str,
    *,
    session_id: str,
    tool_use_id: str,
    owners: list[str],
    config_dir: str,
    tracker: GuardTracker,
    world: World = OS,
    deadline: float = DEADLINE_SECONDS,
    wait_for_current: bool = False,
    index_dir: str | None = None,
) -> Observation:
    """One pass of the guard's read and settle alone (:class:`JournalRead` on
    :func:`plangate.engine.settle`): what a phase decision would be made on."""
    read = JournalRead(
        journal,
        session_id=session_id,
        tool_use_id=tool_use_id,
        owners=owners,
        config_dir=config_dir,
        tracker=tracker,
        deadline=deadline,
        index_dir=index_dir,
    )
    seen: Observation = settle(read, world, wait_for_current)
    return seen


class Chain:
    """The window's events (``events``, from order ``start`` on plus the earlier plangate
    Bash calls and results) and what the fold knows of every event (the id sets, the calls
    still without a result, the :class:`Disarm` fold before the window)."""

    __slots__ = (
        *("events", "start", "uses", "orphans", "noted", "ran", "pending", "repeated"),
        "_snapshot",
    )

    def __init__(self, events: list[Event], start: int, state: GuardState) -> None:
        assert state.cut is not None  # a state that names a window
        self.events = events
        self.start = start
        self.uses, self.orphans = state.uses, state.orphans
        self.noted, self.ran = state.noted, state.ran
        self.pending = state.pending
        self.repeated = state.repeated
        self._snapshot = state.snapshots[state.cut]

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
        # The state as the journal index saves it (the tracker's state: GuardTracker.fold).
        return Chain(verdict.events, window.cut_order, GuardState.load(window.state))
    assert tracker.selected is not None, "a ready read without a window selects"
    ordered, state = tracker.selected
    plan = state.window()
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
