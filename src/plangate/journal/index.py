"""The journal index: what a ready read learned, kept between hook runs.

A hook process starts for every guarded call, and a long session's journal grows to tens of
megabytes; parsing all of it again costs about 7 ms per megabyte. After a ready read of a
complete journal the reader saves what it learned about the bytes it covered: the records'
ids, the causal order of the owned records with their positions, the light events and the
ownership outcome. Light events hold ids, tool names, and the tool inputs and prompts of
records under 4 KiB; never the model's text or a tool's result. The next read
checks that the file is the same one (device and inode, never shorter, the last 64 KiB of
the covered bytes unchanged), parses only what was appended, and extends the order
(:func:`plangate.journal.order.extend_order`); whatever the extension cannot prove equal to
a full read makes the reader read in full instead.

One file per session, ``<index dir>/<session>.index``: a CRC-32 of the body, then the body
in :mod:`marshal` form. Written 0600 to a temporary name and renamed, so a reader sees the
old index or the new one; a damaged or foreign file is ignored, and any file here may be
deleted at any time. Standard library only (hook path).
"""

from __future__ import annotations

import marshal
import os
import zlib

from plangate.files import remove_quietly, replace
from plangate.journal.chain import UNREACHABLE, Tip, tip_of
from plangate.journal.events import (
    AssistantText,
    EndTurn,
    Event,
    HumanTurn,
    ReadRange,
    TaskNotification,
    ToolResult,
    ToolUse,
)
from plangate.journal.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

FORMAT = 2
"""Bumped whenever what the reader derives from a record changes, so old indexes are ignored."""
TAIL_BYTES = 64 * 1024
SUFFIX = ".index"
KEEP_SECONDS = 14 * 24 * 3600
"""Indexes not written for this long are removed when a new one is started."""
BLOBS_MAX = 64
"""Event blobs kept before they are merged into one (each read that appends adds one)."""

_KINDS: tuple[type[Event], ...] = (
    ToolUse,
    ToolResult,
    AssistantText,
    EndTurn,
    HumanTurn,
    TaskNotification,
)
_KIND_CODES = {kind: code for code, kind in enumerate(_KINDS)}
_TOOL_RESULT = _KIND_CODES[ToolResult]
_FILE_FIELD = 8  # a ToolResult tuple: kind, four Event fields, id, text, is_error, file

_FIELDS = (
    "path",
    "dev",
    "ino",
    "owners",
    "boundary",
    "crc",
    "tail",
    "lines",
    "records",
    "version",
    "owner",
    "genesis",
    "root_shape",
    "unordered",
    "unresolved",
    "stray",
    "indices",
    "offsets",
    "lengths",
    "ids",
    "slots",
    "slots_total",
    "blobs",
    "event_count",
    "frontier",
    "uses",
    "calls",
    "newest",
    "dropped",
)


class Index:
    """The saved state of one journal. ``indices`` … ``slots`` describe the owned records in
    causal order (line index, byte offset, length, uuid, event slots); ``blobs`` hold their
    light events in order, packed; ``unordered`` are the ids of the other kept records."""

    __slots__ = _FIELDS

    def __init__(self, path: str, dev: int, ino: int, owners: tuple[str, ...] | None) -> None:
        self.path = path
        self.dev = dev
        self.ino = ino
        self.owners = owners
        self.boundary = 0
        self.crc = 0
        self.tail = 0
        self.lines = 0
        self.records = 0
        self.version: str | None = None
        self.owner: str | None = None
        self.genesis = False
        self.root_shape: list[str] = []
        self.unordered: list[str] = []
        self.unresolved: set[str] = set()
        self.stray: dict[str, str] = {}
        self.indices: list[int] = []
        self.offsets: list[int] = []
        self.lengths: list[int] = []
        self.ids: list[str] = []
        self.slots: list[int] = []
        self.slots_total = 0
        self.blobs: list[bytes] = []
        self.event_count = 0
        self.frontier: dict[str, str | None] = {}
        self.uses: dict[str, str] = {}
        self.calls: set[str] = set()
        self.newest: str | None = None
        self.dropped: dict[str, int] = {}

    def tip(self) -> Tip:
        return Tip(self.frontier, self.uses, self.calls, self.newest)

    def keep_tip(self, tip: Tip) -> None:
        self.frontier, self.uses, self.calls, self.newest = (
            tip.frontier,
            tip.uses,
            tip.calls,
            tip.newest,
        )

    def add(
        self,
        fd: int,
        boundary: int,
        crc: int,
        lines: int,
        kept: list[Record],
        appended: list[Record],
        light: list[Event],
    ) -> None:
        """Cover the journal up to ``boundary`` (a line boundary; ``crc`` of every byte
        before it): ``kept`` are the records read since the last boundary, ``appended`` those
        of them in the order, ``light`` their events as numbered, before any reload."""
        self.boundary = boundary
        self.crc = crc
        self.lines = lines
        self.tail = tail_crc(fd, boundary)
        placed = {record.index for record in appended}
        self.unordered += [
            record.uuid for record in kept if record.uuid is not None and record.index not in placed
        ]
        for record in appended:
            self.indices.append(record.index)
            self.offsets.append(record.offset)
            self.lengths.append(record.length)
            self.ids.append(record.uuid or "")  # every owned record has an id
            self.slots.append(record.slots)
            self.slots_total += record.slots
        if light:
            self.blobs.append(marshal.dumps([pack(event) for event in light]))
            self.event_count += len(light)
        if len(self.blobs) > BLOBS_MAX:
            merged = [item for blob in self.blobs for item in marshal.loads(blob)]
            self.blobs = [marshal.dumps(merged)]

    def owned_records(self) -> list[Record]:
        """The owned records with their light events, as pass two needs them."""
        by_record: dict[int, list[Event]] = {}
        for event in self.events():
            by_record.setdefault(event.record, []).append(event)
        return [
            Record.indexed(index, offset, length, uuid, slots, tuple(by_record.get(index, ())))
            for index, offset, length, uuid, slots in zip(
                self.indices, self.offsets, self.lengths, self.ids, self.slots, strict=True
            )
        ]

    def bases(self) -> dict[int, int]:
        """Each owned record's first event slot, by line index."""
        bases: dict[int, int] = {}
        base = 0
        for index, used in zip(self.indices, self.slots, strict=True):
            bases[index] = base
            base += used
        return bases

    def events(self) -> list[Event]:
        return self.blobs_reader()()

    def blobs_reader(self) -> Callable[[], list[Event]]:
        """Unpacks the events saved so far, whatever is added later."""
        blobs = list(self.blobs)
        return lambda: [unpack(item) for blob in blobs for item in marshal.loads(blob)]


def begin(
    path: str,
    info: os.stat_result,
    owners: tuple[str, ...] | None,
    records: list[Record],
    ordered: list[Record],
    anchor: Record,
    dropped: dict[str, int],
) -> Index | None:
    """An empty index for a full read of ``records``, or None when a later read could not
    go on from it: some record waits for an ancestor (a later record may place it earlier
    than anything appended)."""
    if dropped.get(UNREACHABLE):
        return None
    index = Index(path, info.st_dev, info.st_ino, owners)
    index.keep_tip(tip_of(records, ordered, anchor))
    index.dropped = dict(dropped)
    uuids = {record.uuid for record in records if record.uuid is not None}
    index.unresolved = {
        record.parent
        for record in records
        if record.via_logical_parent and record.parent is not None and record.parent not in uuids
    }
    return index


def index_file(index_dir: str, session_id: str) -> str:
    return os.path.join(index_dir, session_id + SUFFIX)


def load(
    index_dir: str, session_id: str, path: str, info: os.stat_result, owners: list[str] | None
) -> Index | None:
    """The saved index of this very file, or None (none yet, damaged, or another file's)."""
    try:
        with open(index_file(index_dir, session_id), "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    body = data[4:]
    if len(data) < 8 or zlib.crc32(body) != int.from_bytes(data[:4], "big"):
        return None
    try:
        fields = marshal.loads(body)
    except (EOFError, ValueError, TypeError):
        return None
    if not isinstance(fields, tuple) or len(fields) != len(_FIELDS) + 1 or fields[0] != FORMAT:
        return None
    index = Index.__new__(Index)
    for name, value in zip(_FIELDS, fields[1:], strict=True):
        setattr(index, name, value)
    wanted = tuple(owners) if owners is not None else None
    if (index.path, index.dev, index.ino, index.owners) != (
        path,
        info.st_dev,
        info.st_ino,
        wanted,
    ):
        return None
    if not 0 < index.boundary <= info.st_size:
        return None
    return index


def tail_matches(fd: int, index: Index) -> bool:
    """The last bytes the index covers are still there, unchanged."""
    start = max(0, index.boundary - TAIL_BYTES)
    data = os.pread(fd, index.boundary - start, start)
    return len(data) == index.boundary - start and zlib.crc32(data) == index.tail


def tail_crc(fd: int, boundary: int) -> int:
    start = max(0, boundary - TAIL_BYTES)
    return zlib.crc32(os.pread(fd, boundary - start, start))


def save(index_dir: str, session_id: str, index: Index) -> None:
    """Write atomically; a failure only means the next read is a full one."""
    body = marshal.dumps((FORMAT, *(getattr(index, name) for name in _FIELDS)))
    data = zlib.crc32(body).to_bytes(4, "big") + body
    try:
        os.makedirs(index_dir, mode=0o700, exist_ok=True)
        replace(index_file(index_dir, session_id), data, 0o600)  # not durable: a cache
    except OSError:
        return


def prune(index_dir: str, now: float, keep_seconds: float = KEEP_SECONDS) -> None:
    """Remove indexes (and temporary files a killed writer left) not written for
    ``keep_seconds``: their sessions are over, and a later read would only read in full."""
    try:
        names = os.listdir(index_dir)
    except OSError:
        return
    for name in names:
        if not (name.endswith(SUFFIX) or name.endswith(".tmp")):
            continue
        path = os.path.join(index_dir, name)
        try:
            stale = now - os.lstat(path).st_mtime > keep_seconds
        except OSError:
            continue
        if stale:
            remove_quietly(path)


def pack(event: Event) -> tuple[object, ...]:
    """An event as plain values: its kind's code, then its fields in constructor order."""
    code = _KIND_CODES[type(event)]
    head = (code, event.order, event.record, event.message_id, event.timestamp)
    if isinstance(event, ToolUse):
        return (*head, event.tool_use_id, event.name, event.input)
    if isinstance(event, ToolResult):
        file = event.file
        packed_file = (
            None
            if file is None
            else (file.file_path, file.start_line, file.num_lines, file.total_lines, file.content)
        )
        return (
            *head,
            event.tool_use_id,
            event.text,
            event.is_error,
            packed_file,
            event.is_async,
            event.text_starts_json,
        )
    if isinstance(event, AssistantText):
        return (*head, event.text)
    if isinstance(event, HumanTurn):
        return (
            *head,
            event.text,
            event.command,
            event.arguments,
            event.source,
            event.prompt_id,
        )
    if isinstance(event, TaskNotification):
        return (*head, event.tool_use_id, event.status)
    return head


def unpack(item: tuple[Any, ...]) -> Event:
    code: int = item[0]
    if code == _TOOL_RESULT and item[_FILE_FIELD] is not None:
        item = (*item[:_FILE_FIELD], ReadRange(*item[_FILE_FIELD]), *item[_FILE_FIELD + 1 :])
    event: Event = _KINDS[code](*item[1:])
    return event
