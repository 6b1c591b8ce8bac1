"""Read one Claude Code session journal and give a verdict.

:func:`read_journal` runs pass one (an index without content, :mod:`.scan`), decides
ownership and causal order (:mod:`.order`), and then, in pass two, reloads in full only the
records a caller selects, within a 32 MiB budget. Every failure is a verdict with a reason
code, never an exception; the reader never writes to the journal. Standard library only.
"""

from __future__ import annotations

import os

from plangate.journal import codes
from plangate.journal.events import Event, ToolResult, ToolUse
from plangate.journal.identity import (
    IdentityError,
    check_layout,
    check_unchanged,
    open_journal,
)
from plangate.journal.order import own
from plangate.journal.records import EventBuilder, Record, clean_bash_result
from plangate.journal.scan import Prefix, ScanRefusal, parse_line, scan

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

READY = "ready"
MISSING = "missing"
ERROR = "error"


class Verdict:
    """The reader's answer about one journal.

    ``status`` is ``ready`` (the conversation is owned and ordered), ``missing`` (nothing to
    judge yet: no file, or no owned record with content yet; ``reason`` is None) or ``error``
    (refused: ``reason`` holds the code and ``detail`` says why in words).
    """

    __slots__ = (
        "path",
        "session_id",
        "status",
        "reason",
        "detail",
        "claude_code_version",
        "records",
        "lines",
        "owned",
        "events",
        "root_shape",
        "prefix",
        "complete",
        "record_bytes",
        "retained_bytes",
        "exists",
        "genesis",
        "owner",
        "stray_tool_uses",
    )

    def __init__(self, path: str, session_id: str | None) -> None:
        self.path = path
        self.session_id = session_id
        self.status = MISSING
        self.reason: str | None = None
        self.detail = ""
        self.claude_code_version: str | None = None
        self.records = 0
        self.lines = 0
        self.owned = 0
        self.events: list[Event] = []
        self.root_shape: list[str] = []
        self.prefix: Prefix | None = None
        self.complete = True
        self.record_bytes: int | None = None
        self.retained_bytes = 0
        self.exists = False
        self.genesis = False
        self.owner: str | None = None
        # Tool calls recorded outside the owned conversation, by id: where they are
        # ("another session", "a subagent record", "unreachable" when an ancestor is missing).
        self.stray_tool_uses: dict[str, str] = {}

    @property
    def ready(self) -> bool:
        return self.status == READY

    def refuse(self, reason: str, detail: str) -> Verdict:
        self.status = ERROR
        self.reason = reason
        self.detail = detail
        self.events = []
        return self

    def tool_uses(self) -> dict[str, ToolUse]:
        return {e.tool_use_id: e for e in self.events if isinstance(e, ToolUse)}

    def results_for(self, tool_use_id: str) -> list[ToolResult]:
        return [
            e for e in self.events if isinstance(e, ToolResult) and e.tool_use_id == tool_use_id
        ]

    def __repr__(self) -> str:
        return (
            f"Verdict(status={self.status!r}, reason={self.reason!r}, "
            f"version={self.claude_code_version!r}, records={self.records}, "
            f"events={len(self.events)})"
        )


Selector = "Callable[[list[Record]], Iterable[Record]]"


def read_journal(
    path: str,
    *,
    session_id: str | None = None,
    owners: list[str] | None = None,
    config_dir: str | None = None,
    prior: Prefix | None = None,
    full: bool = False,
    select: Callable[[list[Record]], Iterable[Record]] | None = None,
    record_max: int = codes.RECORD_MAX_BYTES,
    retained_max: int = codes.RETAINED_MAX_BYTES,
) -> Verdict:
    """Judge the journal at ``path``.

    With ``config_dir`` the hook's identity checks apply: ``path`` must be
    ``<config_dir>/projects/<slug>/<session_id>.jsonl`` with no symlink on the way. Without it
    only the content is judged and the session is the first conversation record's.
    ``owners`` are the folders that may own the conversation (the project directory and its
    linked worktrees); None accepts the root's own folder. ``prior`` is the prefix an earlier
    read in this hook run returned. ``full`` reloads every owned record with its content;
    ``select`` picks the records to reload. Limits can only be lowered.
    """
    if owners is not None and not owners:
        return Verdict(path, session_id).refuse(codes.IDENTITY, "no project folder owns it")
    record_max = min(record_max, codes.RECORD_MAX_BYTES)
    retained_max = min(retained_max, codes.RETAINED_MAX_BYTES)
    verdict = Verdict(path, session_id)
    layout = config_dir is not None
    try:
        if layout:
            if session_id is None:
                session_id = _session_from_name(path)
                verdict.session_id = session_id
            check_layout(path, session_id, config_dir)  # type: ignore[arg-type]
        opened = open_journal(path, follow_symlinks=not layout)
    except IdentityError as error:
        return verdict.refuse(codes.IDENTITY, error.detail)
    if opened is None:
        verdict.detail = "the journal does not exist (yet)"
        return verdict
    fd, info = opened
    verdict.exists = True
    try:
        return _read_open(
            verdict, fd, info, layout, owners, prior, full, select, record_max, retained_max
        )
    except IdentityError as error:
        return verdict.refuse(codes.IDENTITY, error.detail)
    finally:
        os.close(fd)


def _session_from_name(path: str) -> str:
    name = os.path.basename(path)
    return name[: -len(".jsonl")] if name.endswith(".jsonl") else name


def _read_open(
    verdict: Verdict,
    fd: int,
    info: os.stat_result,
    layout: bool,
    owners: list[str] | None,
    prior: Prefix | None,
    full: bool,
    select: Callable[[list[Record]], Iterable[Record]] | None,
    record_max: int,
    retained_max: int,
) -> Verdict:
    size = info.st_size
    if prior is not None and size < prior.size:
        return verdict.refuse(codes.IDENTITY, "the journal shrank since this hook run read it")
    builder = EventBuilder(full=False)
    try:
        found = scan(
            fd,
            size,
            session_id=verdict.session_id if layout else None,
            prior=prior,
            builder=builder,
            record_max=record_max,
        )
    except ScanRefusal as refusal:
        verdict.record_bytes = refusal.record_bytes
        return verdict.refuse(refusal.reason, refusal.detail)
    check_unchanged(fd, verdict.path, info, follow_symlinks=not layout)
    verdict.prefix = found.prefix
    verdict.complete = found.complete
    verdict.lines = found.lines
    records = found.records
    if not layout:
        records = _one_session(records, verdict)
    verdict.records = len(records)
    verdict.claude_code_version = found.first_version
    ownership = own(records, owners)
    verdict.root_shape = ownership.root_shape
    verdict.genesis = ownership.genesis
    verdict.owner = ownership.owner
    if ownership.reason is not None:
        return verdict.refuse(ownership.reason, _explain(ownership.reason))
    ordered = ownership.ordered
    verdict.owned = len(ordered)
    verdict.stray_tool_uses = dict(found.stray)
    _note_unplaced(records, ordered, found.foreign_uuids, verdict.stray_tool_uses)
    for record in reversed(ordered):
        if record.version is not None:
            verdict.claude_code_version = record.version
            break
    if not ordered or not any(record.array_content for record in ordered):
        verdict.detail = "no owned record with content yet"
        verdict.status = MISSING
        return verdict
    bases = _number(ordered)
    if full:
        chosen: Iterable[Record] = ordered
    elif select is not None:
        chosen = select(ordered)
    else:
        chosen = ()
    refused = _reload(fd, chosen, bases, verdict, retained_max)
    if refused is not None:
        return refused
    events = [event for record in ordered for event in record.events]
    _clean_bash_results(events)
    verdict.events = events
    verdict.status = READY
    return verdict


def _note_unplaced(
    records: list[Record], ordered: list[Record], foreign: set[str], stray: dict[str, str]
) -> None:
    """Tool calls in records the conversation does not reach, and why: an ancestor not
    written yet (``unreachable``), or one that belongs elsewhere."""
    placed = {record.index for record in ordered}
    by_uuid = {record.uuid: record for record in records if record.uuid is not None}
    for record in records:
        if record.index in placed or not record.events:
            continue
        where = "outside the conversation"
        if record.node:
            where = "unreachable"
            current: Record | None = record
            seen: set[int] = set()
            while current is not None and current.parent is not None:
                if current.index in seen:
                    break
                seen.add(current.index)
                if current.parent in foreign:
                    where = "another session"
                    break
                current = by_uuid.get(current.parent)
        for event in record.events:
            if isinstance(event, ToolUse):
                stray.setdefault(event.tool_use_id, where)


def _one_session(records: list[Record], verdict: Verdict) -> list[Record]:
    """Content-only reads keep the session of the first conversation record."""
    if verdict.session_id is None:
        first = next((r for r in records if r.conversation and r.session_id), None)
        if first is None:
            return records
        verdict.session_id = first.session_id
    return [record for record in records if record.session_id == verdict.session_id]


def _number(ordered: list[Record]) -> dict[int, int]:
    """Give every event its place in causal order; returns each record's first slot."""
    bases: dict[int, int] = {}
    base = 0
    for record in ordered:
        bases[record.index] = base
        if base:
            for event in record.events:
                event.order += base
        base += record.slots
    return bases


def _reload(
    fd: int,
    chosen: Iterable[Record],
    bases: dict[int, int],
    verdict: Verdict,
    retained_max: int,
) -> Verdict | None:
    builder = EventBuilder(full=True)
    retained = 0
    for record in chosen:
        retained += record.length
        if retained > retained_max:
            verdict.retained_bytes = retained
            return verdict.refuse(
                codes.OVERSIZED_INVOCATION,
                "the records this decision needs in full are over the retained-data budget",
            )
        data = os.pread(fd, record.length, record.offset)
        if len(data) != record.length:
            return verdict.refuse(codes.REWRITTEN, "a record changed length after it was indexed")
        try:
            raw = parse_line(data, record.index)
        except ScanRefusal:
            return verdict.refuse(codes.REWRITTEN, "a record no longer parses as it did")
        fresh = Record(record.index, record.offset, record.length, raw)
        events, slots = builder.build(raw, fresh, bases.get(record.index, 0))
        if fresh.uuid != record.uuid or slots != record.slots or len(events) != len(record.events):
            return verdict.refuse(codes.REWRITTEN, "a record changed after it was indexed")
        record.events = events
    verdict.retained_bytes = retained
    return None


def _clean_bash_results(events: list[Event]) -> None:
    bash_ids = {e.tool_use_id for e in events if isinstance(e, ToolUse) and e.name == "Bash"}
    if not bash_ids:
        return
    for event in events:
        if isinstance(event, ToolResult) and event.tool_use_id in bash_ids:
            clean_bash_result(event)


_EXPLANATIONS = {
    codes.COMPETING_ROOT: "the journal has two conversation roots, or two records share one id",
    codes.CYCLE: "the journal's parent links form a loop",
    codes.SIDECHAIN: "the first turn or its ancestry is a sidechain (subagent) record",
    codes.AGENT: "the conversation's ancestry passes through a subagent record",
    codes.FOREIGN_CWD: "the conversation was started in another project directory",
}


def _explain(reason: str) -> str:
    explanation = _EXPLANATIONS.get(reason)
    if explanation is not None:
        return explanation
    detail = reason.partition(":")[2]
    if detail == "cwd_spelling":
        return "the journal's folder is the project's folder spelled differently"
    if detail.startswith("root_parent"):
        return "the conversation root has a parent this reader does not know"
    if detail.startswith("preamble"):
        return "a record above the first turn is not a SessionStart hook record"
    if detail.startswith("first_turn"):
        return "the first turn of the conversation is not a user message"
    if detail == "record_metadata":
        return "a record on the conversation's ancestry lacks an id, folder or timestamp"
    return "the journal has a shape this reader does not know"
