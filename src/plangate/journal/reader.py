"""Read one Claude Code session journal and give a verdict.

:func:`read_journal` runs pass one (an index without content, :mod:`.scan`), decides
ownership and causal order (:mod:`.order`), and then, in pass two, reloads in full only the
records a caller selects, within a 32 MiB budget. A hook's first read of a journal of
512 KiB or more goes on from the journal index an earlier hook run saved (:mod:`.index`)
and parses only what was appended. Every failure is a verdict with a reason code, never an
exception; the reader never writes to the journal. Standard library only.

The conversation is the live chain, chosen the way Claude Code 2.1.332 chooses what it sends
to the model: from the current call's record (or the newest conversation record) up through
parent links and compact boundaries' logical parents, with the side records of those turns
(parallel blocks, tool results, attachments); rewound, interrupted and summarized-away
records are dropped and counted by reason (:mod:`.chain`, ``docs/journal-reading.md``).
"""

from __future__ import annotations

import gc
import os
import time

from plangate import deferred
from plangate.journal import codes
from plangate.journal.building import EventBuilder
from plangate.journal.chain import extend_tip
from plangate.journal.compact import Uncompacted, stand_in
from plangate.journal.events import Event, ToolUse
from plangate.journal.identity import (
    IdentityError,
    check_layout,
    check_unchanged,
    open_journal,
)
from plangate.journal.order import extend_order, own
from plangate.journal.records import Record
from plangate.journal.reload import clean_bash_results, reload_records, reloader
from plangate.journal.scan import Prefix, Scan, ScanRefusal, digest_of, scan
from plangate.journal.trust import Handover
from plangate.journal.verdict import ERROR, MISSING, READY, Verdict
from plangate.tuning import setting

__all__ = ["ERROR", "MISSING", "READY", "Verdict", "read_journal"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Container, Iterable

    from plangate.journal import index as journal_index
    from plangate.journal.window import Tracker

INDEX_MIN_BYTES_SETTING = "index_min_bytes"
"""Its name in ``PLANGATE_TUNING`` (:mod:`plangate.tuning`)."""
INDEX_MIN_BYTES = 512 * 1024
"""Smaller journals are read in full: that is quicker than loading and saving an index."""

Selector = "Callable[[list[Record]], Iterable[Record]]"

COMPACT = True
"""Full reads keep no object for event-less records (:mod:`.compact`); the tests read with it
off too, to prove that both decide the same."""


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
    index_dir: str | None = None,
    tool_use_id: str | None = None,
    tracker: Tracker | None = None,
) -> Verdict:
    """Judge the journal at ``path``.

    With ``config_dir`` the hook's identity checks apply: ``path`` must be
    ``<config_dir>/projects/<slug>/<session_id>.jsonl`` with no symlink on the way. Without it
    only the content is judged and the session is the first conversation record's.
    ``owners`` are the folders that may own the conversation (the project directory and its
    linked worktrees); None accepts the root's own folder. ``prior`` is the prefix an earlier
    read in this hook run returned. ``full`` reloads every owned record with its content;
    ``select`` picks the records to reload. Limits can only be lowered. With ``index_dir``
    (hook reads with ``config_dir``) a read goes on from the index an earlier read saved
    there (:mod:`.index`) and saves it again; a read with ``prior`` digests the bytes the
    index covers again, so that a change to them is still ``rewritten``. The conversation is
    the live chain (:mod:`.chain`) followed up from the record of ``tool_use_id`` (the
    current call), else from the newest conversation record; ``Verdict.dropped`` counts what
    it left out.
    With ``tracker`` (and ``select``) an indexed read folds the tracker's state over what was
    appended and, when the tracker names a window, reloads only its records: the verdict's
    events are theirs, and ``Verdict.window`` says where it begins (:mod:`.window`).
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
    # A read allocates a few objects per record and frees none of them in cycles: the cyclic
    # collector's passes over them were a fifth of a cold read of a long session. Off while
    # reading, back on (as it was) after.
    collecting = gc.isenabled()
    if collecting:
        gc.disable()
    try:
        reading = _Reading(fd, info, owners, full, select, record_max, retained_max, tool_use_id)
        reading.tracker = tracker
        usable = index_dir if layout else None
        if usable is not None and info.st_size >= index_min_bytes():
            verdict = _read_indexed(verdict, reading, usable, prior)
        else:
            verdict = _read_open(verdict, reading, layout, prior, None)
        if verdict.reason == codes.CYCLE:
            _name_compaction_loop(verdict, fd)
        return verdict
    except IdentityError as error:
        return verdict.refuse(codes.IDENTITY, error.detail)
    finally:
        os.close(fd)
        if collecting:
            gc.enable()


def _name_compaction_loop(verdict: Verdict, fd: int) -> None:
    """A loop that only a compact boundary's logical parent closes is seed 000's
    ``unrecognized_shape:compaction_unreachable``, not a damaged journal (:mod:`.compaction`)."""
    from plangate.journal.compaction import loops_only_through_a_boundary

    try:
        os.lseek(fd, 0, os.SEEK_SET)
        with os.fdopen(os.dup(fd), "rb") as handle:
            if loops_only_through_a_boundary(handle):
                verdict.refuse(
                    codes.unrecognized(codes.COMPACTION_UNREACHABLE),
                    "records after a compaction hang from a compact boundary whose logical "
                    "parent loops back",
                )
    except OSError:
        return


def index_min_bytes() -> int:
    """The journal size from which hook reads use the index: ``index_min_bytes`` of
    ``$PLANGATE_TUNING`` (the test suite sets 0, so that every hook read of its small
    journals goes through the index), else :data:`INDEX_MIN_BYTES`."""
    return setting(INDEX_MIN_BYTES_SETTING, INDEX_MIN_BYTES)


def _fast_parser(to_parse: int) -> Callable[[bytes | memoryview, bool], object] | None:
    """:func:`.fast.fast_parser`, imported only when ``to_parse`` bytes may want it."""
    if to_parse < codes.fast_min_bytes():
        return None
    from plangate.journal.fast import fast_parser  # only journals worth the compiled parser

    return fast_parser(to_parse)


def _session_from_name(path: str) -> str:
    name = os.path.basename(path)
    return name[: -len(".jsonl")] if name.endswith(".jsonl") else name


class _Reading:
    """What one read was asked for, besides the verdict it fills in."""

    __slots__ = (
        "fd",
        "info",
        "owners",
        "full",
        "select",
        "record_max",
        "retained_max",
        "tool_use_id",
        "tracker",
    )

    def __init__(
        self,
        fd: int,
        info: os.stat_result,
        owners: list[str] | None,
        full: bool,
        select: Callable[[list[Record]], Iterable[Record]] | None,
        record_max: int,
        retained_max: int,
        tool_use_id: str | None,
    ) -> None:
        self.fd = fd
        self.info = info
        self.owners = owners
        self.full = full
        self.select = select
        self.record_max = record_max
        self.retained_max = retained_max
        self.tool_use_id = tool_use_id
        self.tracker: Tracker | None = None


def _read_open(
    verdict: Verdict, reading: _Reading, layout: bool, prior: Prefix | None, index_dir: str | None
) -> Verdict:
    """A full read: event-less records kept as counts (:mod:`.compact`), or, when that
    cannot be proven to decide as the full structure does, every record kept."""
    if not COMPACT:
        return _read_whole(verdict, reading, layout, prior, index_dir, False)
    before = {name: getattr(verdict, name) for name in Verdict.__slots__}
    try:
        return _read_whole(verdict, reading, layout, prior, index_dir, True)
    except Uncompacted:
        for name, value in before.items():
            setattr(verdict, name, value)
        return _read_whole(verdict, reading, layout, prior, index_dir, False)


def _read_whole(
    verdict: Verdict,
    reading: _Reading,
    layout: bool,
    prior: Prefix | None,
    index_dir: str | None,
    compact: bool,
) -> Verdict:
    fd, info = reading.fd, reading.info
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
            record_max=reading.record_max,
            fast=_fast_parser(size),
            compact=compact,
            only_session=None if layout or not compact else verdict.session_id,
        )
    except ScanRefusal as refusal:
        verdict.record_bytes = refusal.record_bytes
        return verdict.refuse(refusal.reason, refusal.detail)
    check_unchanged(fd, verdict.path, info, follow_symlinks=not layout)
    verdict.prefix = found.prefix
    verdict.complete = found.complete
    verdict.lines = found.lines
    verdict.handed_over = frozenset(found.queue.handed)
    records = found.records
    counted = found.counted
    if not layout:
        records = _one_session(records, verdict)
        if records is not found.records and found.compactor is not None:
            by_session = found.compactor.by_session.get(verdict.session_id, 0)
            counted = by_session + sum(record.tail for record in records)
    verdict.records = len(records) + counted
    verdict.claude_code_version = found.first_version
    ownership = own(records, reading.owners, reading.tool_use_id, found.foreign_uuids)
    verdict.dropped = ownership.dropped
    verdict.root_shape = ownership.root_shape
    verdict.genesis = ownership.genesis
    verdict.owner = ownership.owner
    if ownership.reason is not None:
        return verdict.refuse(ownership.reason, _explain(ownership.reason))
    ordered = ownership.ordered
    verdict.owned = len(ordered) + sum(record.tail for record in ordered)
    verdict.stray_tool_uses = dict(found.stray)
    _note_unplaced(records, ordered, found.foreign_uuids, verdict.stray_tool_uses)
    _note_version(ordered, verdict)
    if not ordered or not any(record.array_content for record in ordered):
        verdict.detail = "no owned record with content yet"
        verdict.status = MISSING
        return verdict
    bases = _number(ordered)
    light = [event for record in ordered for event in record.events]
    anchor = ownership.anchor
    keep = index_dir is not None and found.complete and size > 0 and anchor is not None
    tracked = None
    if keep and reading.tracker is not None:
        tracker = reading.tracker
        tracked = tracker.fold(tracker.start(), 0, ordered, reloader(reading.fd, bases))
    _finish(verdict, reading, ordered, bases)
    if keep and index_dir is not None and anchor is not None:
        from plangate.journal.index import tail_crc  # only journals worth an index

        # What the save needs, taken now: the read closes the journal, and the caller may
        # change the verdict, before a deferred save runs.
        tail, kept = tail_crc(fd, size), _Kept(verdict)

        def start() -> None:
            _start_index(
                index_dir, kept, reading, found, records, ordered, light, anchor, tracked, tail
            )

        deferred.defer(start, size)  # after the answer, for a long journal's hook run
    return verdict


class _Kept:
    """The verdict's values an index saves, as they were when the read ended."""

    __slots__ = (
        "path",
        "session_id",
        "dropped",
        "owner",
        "genesis",
        "root_shape",
        "digest",
        "records",
        "version",
        "stray",
    )

    def __init__(self, verdict: Verdict) -> None:
        assert verdict.prefix is not None and verdict.session_id is not None
        self.path = verdict.path
        self.session_id: str = verdict.session_id
        self.dropped = dict(verdict.dropped)
        self.owner = verdict.owner
        self.genesis = verdict.genesis
        self.root_shape = verdict.root_shape
        self.digest = int(verdict.prefix.digest, 16)
        self.records = verdict.records
        self.version = verdict.claude_code_version
        self.stray = dict(verdict.stray_tool_uses)


def _start_index(
    index_dir: str,
    kept: _Kept,
    reading: _Reading,
    found: Scan,
    records: list[Record],
    ordered: list[Record],
    light: list[Event],
    anchor: Record,
    tracked: object,
    tail: int,
) -> None:
    """Save an index of this full read, when a later read can go on from it."""
    from plangate.journal import index as journal_index  # only journals worth an index

    owners = tuple(reading.owners) if reading.owners is not None else None
    fresh = journal_index.begin(
        kept.path, reading.info, owners, records, ordered, anchor, kept.dropped
    )
    if fresh is None:
        return
    journal_index.prune(index_dir, time.time())
    fresh.owner = kept.owner
    fresh.genesis = kept.genesis
    fresh.root_shape = kept.root_shape
    if reading.tracker is not None and tracked is not None:
        fresh.tracker_key, fresh.tracked = reading.tracker.key, tracked
    _save(index_dir, kept, fresh, found, ordered, light, tail)


def _read_indexed(
    verdict: Verdict, reading: _Reading, index_dir: str, prior: Prefix | None
) -> Verdict:
    """Go on from the saved index, or read in full (and save one) when it cannot be used.
    A later read of the same hook run (``prior``: what the first one covered) goes on from
    it too (a guard waiting for its call to be journaled re-reads a long journal several
    times), when the index covers at most those bytes, with their digest where it ends: the
    bytes before the index's boundary are digested again (no line parsed), those after it by
    the scan, so that a byte changed under the hook run is still ``rewritten``."""
    from plangate.journal import index as journal_index  # only journals worth an index

    fd, info = reading.fd, reading.info
    assert verdict.session_id is not None
    if prior is not None and info.st_size < prior.size:
        return verdict.refuse(codes.IDENTITY, "the journal shrank since this hook run read it")
    deferred.drain()  # a save this process deferred (a second read in one hook run) first
    saved = journal_index.load(index_dir, verdict.session_id, verdict.path, info, reading.owners)
    if (
        saved is None
        or not journal_index.tail_matches(fd, saved)
        or not _covers(saved, prior)
        or (prior is not None and digest_of(fd, saved.boundary) != f"{saved.crc:08x}")
    ):
        return _read_open(verdict, reading, True, prior, index_dir)  # which says what changed
    queue = Handover.restore(saved.queue)  # the queue's ledger where the index ends
    if queue is None:
        return _read_open(verdict, reading, True, prior, index_dir)
    builder = EventBuilder(full=False)
    known = journal_index.Placed(saved, saved.unordered)
    stand = None  # what records that ride on the saved last record's owner count on
    if saved.compact and saved.tail_owner is not None:
        stand = stand_in(saved.tail_owner, verdict.session_id)
    try:
        found = scan(
            fd,
            info.st_size,
            session_id=verdict.session_id,
            prior=prior if prior is not None and prior.size > saved.boundary else None,
            builder=builder,
            record_max=reading.record_max,
            start=saved.boundary,
            start_line=saved.lines,
            start_digest=saved.crc,
            fast=_fast_parser(info.st_size - saved.boundary),
            compact=saved.compact,
            known=known,
            last=saved.last_id,
            owner=stand,
            queue=queue,
        )
    except (ScanRefusal, Uncompacted):
        return _read_open(verdict, reading, True, prior, index_dir)  # the full read says why
    check_unchanged(fd, verdict.path, info, follow_symlinks=False)
    crcs = found.compactor.crcs if found.compactor is not None else b""
    if journal_index.rider_clash(saved, found.records, bytes(crcs)):
        return _read_open(verdict, reading, True, prior, index_dir)
    placed = journal_index.Placed(saved)
    riding = stand.tail if stand is not None else 0
    if riding and saved.tail_owner not in placed:
        return _read_open(verdict, reading, True, prior, index_dir)  # riders of a dropped record
    appended = extend_order(placed, known, saved.unresolved, found.records)
    if appended is None:
        return _read_open(verdict, reading, True, prior, index_dir)
    tip = extend_tip(saved.tip(), appended, reading.tool_use_id)
    if tip is None:
        return _read_open(verdict, reading, True, prior, index_dir)
    saved.keep_tip(tip)
    verdict.dropped = dict(saved.dropped)
    verdict.prefix = found.prefix
    verdict.complete = found.complete
    verdict.lines = found.lines
    verdict.handed_over = frozenset(found.queue.handed)
    verdict.records = saved.records + len(found.records) + found.counted
    verdict.root_shape = saved.root_shape
    verdict.genesis = saved.genesis
    verdict.owner = saved.owner
    verdict.owned = saved.count + saved.riders + riding + len(appended)
    verdict.owned += sum(record.tail for record in appended)
    stray = dict(saved.stray)
    stray.update(found.stray)
    try:
        _note_unplaced(found.records, appended, found.foreign_uuids, stray)
    except Uncompacted:
        return _read_open(verdict, reading, True, prior, index_dir)
    verdict.stray_tool_uses = stray
    verdict.claude_code_version = (
        saved.version if saved.version is not None else found.first_version
    )
    if stand is not None and stand.tail_version is not None:
        verdict.claude_code_version = stand.tail_version  # riders after the saved records
    _note_version(appended, verdict)
    bases = _number(appended, saved.slots_total)
    light = [event for record in appended for event in record.events]
    windowed = False
    if reading.tracker is not None and reading.select is not None and not reading.full:
        from plangate.journal.windowed import read_window  # only trackers' indexed reads

        windowed = read_window(
            verdict, reading.fd, reading.tracker, reading.retained_max, saved, appended, bases
        )
    if not windowed:  # else the window's records were reloaded and the verdict filled in
        if not journal_index.read_blobs(index_dir, verdict.session_id, saved):
            return _read_open(verdict, reading, True, prior, index_dir)  # the events file is gone
        if reading.select is None and not reading.full:
            # Nothing to reload: the saved events are unpacked only if someone asks for them.
            verdict.defer_events(saved.event_count + len(light), saved.blobs_reader(), light)
            verdict.status = READY
        else:
            ordered = saved.owned_records() + appended
            bases.update(saved.bases())
            tracker = reading.tracker
            if tracker is not None and saved.tracked is None:
                saved.tracker_key = tracker.key
                saved.tracked = tracker.fold(tracker.start(), 0, ordered, reloader(fd, bases))
            _finish(verdict, reading, ordered, bases)
    if found.complete and found.size > saved.boundary:
        tail = journal_index.tail_crc(fd, found.size)
        _save(index_dir, _Kept(verdict), saved, found, appended, light, tail)
    return verdict


def _covers(saved: journal_index.Index, prior: Prefix | None) -> bool:
    """Whether a read that goes on from ``saved`` checks the bytes an earlier read of this
    hook run covered (``prior``): those before the index's boundary by its digest there, the
    others as the scan reads them."""
    if prior is None or prior.size > saved.boundary:
        return True
    return prior.size == saved.boundary and prior.digest == f"{saved.crc:08x}"


def _save(
    index_dir: str,
    kept: _Kept,
    saved: journal_index.Index,
    found: Scan,
    appended: list[Record],
    light: list[Event],
    tail: int,
) -> None:
    """Add what this read found to the index and save it (a failure only costs the next
    read a full one). ``tail`` is the CRC of the journal's last bytes before the boundary."""
    from plangate.journal import index as journal_index

    crcs = bytes(found.compactor.crcs) if found.compactor is not None else b""
    if not saved.add(
        tail, found.size, kept.digest, found.lines, found.records, appended, light, crcs
    ):
        return
    compactor = found.compactor
    saved.compact = compactor is not None
    if compactor is not None:
        saved.last_id = compactor.last
        saved.tail_owner = compactor.owner.uuid if compactor.owner is not None else None
        if compactor.seeded is not None:
            saved.riders += compactor.seeded.tail
    saved.records = kept.records
    saved.version = kept.version
    saved.stray = kept.stray
    saved.queue = found.queue.dump(compactor)
    journal_index.save(index_dir, kept.session_id, saved)


def _finish(
    verdict: Verdict, reading: _Reading, ordered: list[Record], bases: dict[int, int]
) -> None:
    """Pass two: reload what the caller chose in full, then the events in causal order."""
    if reading.full:
        chosen: Iterable[Record] = ordered
    elif reading.select is not None:
        chosen = reading.select(ordered)
    else:
        chosen = ()
    if reload_records(reading.fd, chosen, bases, verdict, reading.retained_max) is not None:
        return
    events = [event for record in ordered for event in record.events]
    clean_bash_results(events)
    verdict.events = events
    verdict.status = READY


def _note_version(ordered: list[Record], verdict: Verdict) -> None:
    for record in reversed(ordered):
        version = record.tail_version or record.version  # its riders come after it
        if version is not None:
            verdict.claude_code_version = version
            return


def _note_unplaced(
    records: list[Record], ordered: list[Record], foreign: Container[str], stray: dict[str, str]
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


def _number(ordered: list[Record], base: int = 0) -> dict[int, int]:
    """Give every event its place in causal order, the first record starting at slot
    ``base``; returns each record's first slot."""
    bases: dict[int, int] = {}
    for record in ordered:
        bases[record.index] = base
        if base:
            for event in record.events:
                event.order += base
        base += record.slots
    return bases


_EXPLANATIONS = {
    codes.COMPETING_ROOT: "two writers: two records share one id, the conversation passes "
    "through another session's record, or an abandoned branch went on after the live one",
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
    if detail == codes.CWD_SPELLING:
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
