"""The hook's read loop: read the session journal until a decision can be made.

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
"""

from __future__ import annotations

import time

from plangate.guard.decide import Unproven
from plangate.guard.fold import facts_of
from plangate.journal import codes
from plangate.journal.events import Event, ToolResult, ToolUse
from plangate.journal.reader import Verdict, read_journal
from plangate.journal.records import Record
from plangate.journal.scan import Prefix

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from plangate.journal.window import Tracker

DEADLINE_SECONDS = 2.0
POLL_SECONDS = 0.05
UNVERIFIED_READER_CODES = frozenset({codes.TOO_LARGE, codes.REWRITTEN})

JOURNAL = "journal"
PAYLOAD = "payload"
NONE = "none"


class Observation:
    """What the loop saw: a ready verdict and the path, or an outcome code."""

    __slots__ = ("verdict", "path", "code", "detail", "shapes")

    def __init__(
        self,
        verdict: Verdict | None,
        path: str,
        code: str | None = None,
        detail: str = "",
        shapes: list[str] | None = None,
    ) -> None:
        self.verdict = verdict
        self.path = path
        self.code = code
        self.detail = detail
        self.shapes = shapes or []

    @property
    def version(self) -> str | None:
        return self.verdict.claude_code_version if self.verdict is not None else None


def lagged(events: list[Event]) -> bool:
    """Some journaled tool call has no result yet.

    Claude Code 2.1.3xx can ask the model for its next message, and run that message's hooks,
    before it has written the previous call's result. When the current call is not journaled
    and any call still lacks its result, the journal has not caught up with what the model
    saw: either an earlier result is unwritten, or the current call's own message (with a
    sibling still running) is about to be written. Both resolve by waiting.
    """
    answered = {event.tool_use_id for event in events if isinstance(event, ToolResult)}
    return any(isinstance(event, ToolUse) and event.tool_use_id not in answered for event in events)


def _lagged(verdict: Verdict) -> bool:
    if verdict.window is not None:
        return facts_of(verdict.window).lagged()
    return lagged(verdict.events)


def observe(
    journal: str,
    *,
    session_id: str,
    tool_use_id: str,
    owners: list[str],
    config_dir: str,
    select: Callable[[list[Record]], Iterable[Record]],
    deadline: float = DEADLINE_SECONDS,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    wait_for_current: bool = False,
    index_dir: str | None = None,
    tracker: Tracker | None = None,
) -> Observation:
    """Read until a decision can be made (see the module docstring). With
    ``wait_for_current`` the payload path is not taken early: the loop waits, within the
    deadline, for Claude Code to journal the current call itself. ``index_dir`` lets the
    first read go on from the journal index an earlier hook run saved; with ``tracker`` too
    (the guard's fold), its events may be the invocation's window only, the fold answering
    for the rest (:exc:`~plangate.guard.decide.Unproven` when it cannot)."""
    until = clock() + deadline
    prior: Prefix | None = None
    unrecognized_once = False
    last: Verdict | None = None
    while True:
        verdict = read_journal(
            journal,
            session_id=session_id,
            owners=owners,
            config_dir=config_dir,
            prior=prior,
            select=select,
            index_dir=index_dir,
            tool_use_id=tool_use_id,
            tracker=tracker,
        )
        last = verdict
        if prior is None and verdict.prefix is not None:
            prior = verdict.prefix
        if verdict.ready:
            window = verdict.window
            start = window.cut_order if window is not None else 0
            if any(
                isinstance(event, ToolUse)
                and event.tool_use_id == tool_use_id
                and event.order >= start
                for event in verdict.events
            ):
                return Observation(verdict, JOURNAL)
            if window is not None and tool_use_id in facts_of(window).uses:
                raise Unproven("the current call is before the window")
            stray = verdict.stray_tool_uses.get(tool_use_id)
            if stray is not None and stray != "unreachable":
                return Observation(
                    verdict,
                    JOURNAL,
                    "current_mismatch",
                    f"the journal records this call in {stray}",
                )
            behind = _lagged(verdict)
            if stray is None and not wait_for_current and not behind:
                return Observation(verdict, PAYLOAD)
        elif verdict.reason is not None:
            code = codes.base_code(verdict.reason)
            if code in UNVERIFIED_READER_CODES:
                return Observation(verdict, NONE, verdict.reason, verdict.detail)
            if code == codes.UNRECOGNIZED_SHAPE:
                if unrecognized_once:
                    return Observation(
                        verdict, NONE, verdict.reason, verdict.detail, list(verdict.root_shape)
                    )
                unrecognized_once = True
                continue  # read once more: both reads must agree
            if code == codes.CYCLE:
                from plangate.guard import compaction  # only a journal refused as a loop

                if compaction.loops_only_through_a_boundary(journal):
                    return Observation(verdict, NONE, codes.UNRECOGNIZED_SHAPE, compaction.DETAIL)
            return Observation(verdict, NONE, verdict.reason, verdict.detail)
        if clock() >= until:
            break
        sleep(POLL_SECONDS)
    if last is not None and last.ready and wait_for_current and not _lagged(last):
        return Observation(last, PAYLOAD)
    if last is not None and last.ready:
        return Observation(last, PAYLOAD, "journal_lag", "an earlier tool call has no result")
    if last is not None and last.exists:
        return Observation(last, NONE, "journal_lag", "nothing in the journal is owned yet")
    return Observation(last, NONE, "journal_missing", "the session journal does not exist")
