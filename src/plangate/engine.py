"""The one driver: every workflow's hook decision as read → settle → fold → rules, in passes.

A :class:`Workflow` says what is particular to it (as pre-commit's ``Language`` does for a
language, httpx's ``BaseTransport`` for a transport): how one read of the session's history
goes (through the :class:`plangate.journal.world.World` it is handed, with its fold as the
reader's tracker), what "caught up with the call" means for it, how it folds a settled read,
its rules on that state, and its policy for a further pass. :func:`decide` runs the steps the
same way for all of them, on the world's clock, with one :class:`plangate.journal.settle.Settle`
a pass:

1. **read** the history (:meth:`Workflow.read`);
2. **settle**: judge the read (:meth:`Workflow.caught_up`): ready, or :data:`WAIT` (one poll,
   then read again, within the pass's bound), or :data:`AGAIN` (read again at once: a second
   look); at the bound, :meth:`Workflow.behind` says what the pass decides on;
3. **fold** the settled read into the workflow's state (:meth:`Workflow.fold`), or ask for
   another pass (:class:`Again`: the contracts' window held no workflow run, so the whole
   session is read);
4. **rules** on that state (:meth:`Workflow.rules`): the ruling;
5. the workflow's **policy** (:meth:`Workflow.again`): the ruling stands, or another pass
   decides (the guard's "allow fast, deny sure": a deny on the payload path waits for the
   call itself; the contracts' missing approval: the whole session, then the call itself).

What a ruling becomes (a :class:`plangate.decisions.reasons.Decision`, its hook output and
log line) is the caller's, through :mod:`plangate.decisions`. The workflows on it: the guard's
/autoplan rules (:mod:`plangate.guard.evaluate`), the workflow contracts
(:mod:`plangate.contracts.evaluate`) and, at a final stop, the gates
(:class:`plangate.gates.transcript.Stop`: the seed-001 skill gates and a contract's done
gate). Standard library and plangate only, no :mod:`typing` at run time (hook path).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from plangate.journal.settle import Settle
    from plangate.journal.world import World

WAIT = "wait"
""":meth:`Workflow.caught_up`: the history is behind the call; wait one poll, read again."""
AGAIN = "again"
""":meth:`Workflow.caught_up`: read again at once (a second look, granted by the pass's
:meth:`~plangate.journal.settle.Settle.second_look`)."""


class Again:
    """:meth:`Workflow.fold`: the read cannot be folded into a state the rules can judge;
    decide in another pass, ``attempt``."""

    __slots__ = ("attempt",)

    def __init__(self, attempt: Any) -> None:
        self.attempt = attempt


class Workflow:
    """One workflow on the engine. ``first`` is the first pass's attempt: a value the
    workflow's own steps read (how it reads, how long it waits), and its policy changes."""

    first: Any = None

    def begin(self, world: World, attempt: Any) -> Settle:
        """A pass begins: its bound (on ``world``'s clock), and any state the pass keeps."""
        raise NotImplementedError

    def read(self, world: World, attempt: Any) -> Any:
        """One read of the session's history through ``world`` (a
        :class:`plangate.journal.verdict.Verdict`, or what the workflow judges instead)."""
        raise NotImplementedError

    def caught_up(self, verdict: Any, attempt: Any, wait: Settle) -> Any:
        """What the read settles on, or :data:`WAIT` or :data:`AGAIN`."""
        raise NotImplementedError

    def behind(self, last: Any, attempt: Any) -> Any:
        """What the pass settles on when its bound passed with the history still behind."""
        raise NotImplementedError

    def fold(self, seen: Any, attempt: Any) -> Any:
        """The state the rules judge, folded from what the read settled on; or
        :class:`Again`."""
        raise NotImplementedError

    def rules(self, state: Any, seen: Any, attempt: Any) -> Any:
        """The ruling on ``state``."""
        raise NotImplementedError

    def again(self, ruling: Any, seen: Any, attempt: Any) -> Any:
        """The next pass's attempt, or None: ``ruling`` stands."""
        raise NotImplementedError


def settle(workflow: Workflow, world: World, attempt: Any) -> Any:
    """One pass's read and settle: read, judge, and while the history is behind, wait one
    poll and read again, within the pass's bound."""
    wait = workflow.begin(world, attempt)
    while True:
        verdict = workflow.read(world, attempt)
        seen = workflow.caught_up(verdict, attempt, wait)
        if seen is AGAIN:
            continue
        if seen is not WAIT:
            return seen
        if not wait.again():
            return workflow.behind(verdict, attempt)


def decide(workflow: Workflow, world: World) -> tuple[Any, Any]:
    """The ruling of ``workflow`` on the history ``world`` holds, and what the pass that
    ruled settled on (the read's facts the decision names: its path, the agent's version)."""
    attempt = workflow.first
    while True:
        seen = settle(workflow, world, attempt)
        state = workflow.fold(seen, attempt)
        if isinstance(state, Again):
            attempt = state.attempt
            continue
        ruling = workflow.rules(state, seen, attempt)
        attempt = workflow.again(ruling, seen, attempt)
        if attempt is None:
            return ruling, seen
