"""The journal index: what a ready read learned, kept between hook runs.

A hook process starts for every guarded call, and a long session's journal grows to tens of
megabytes; parsing all of it again costs about 7 ms per megabyte. After a ready read of a
complete journal the reader saves what it learned about the bytes it covered: the records'
ids, the causal order of the owned records with their positions, the light events, the
ownership outcome and Claude Code's queue as it stands (:class:`.trust.Handover`). Light
events hold ids, tool names, and the tool inputs and prompts of records under 4 KiB; never
the model's text or a tool's result. The next read
checks that the file is the same one (device and inode, never shorter, the last 64 KiB of
the covered bytes unchanged), parses only what was appended, and extends the order
(:func:`plangate.journal.order.extend_order`); whatever the extension cannot prove equal to
a full read makes the reader read in full instead.

Two files per session, both 0600. ``<index dir>/<session>.index``: a snapshot of the
fields, then the changes each later read made, appended as CRC-checked :mod:`marshal`
frames (:mod:`.frames`: a save writes what was added, not the megabytes a long session's
index holds; a new snapshot is written to a temporary name and renamed).
``<session>.events``: the light events, one :mod:`marshal` blob per read that added some,
only ever appended to (the index names each blob's offset, length and CRC-32), so a read
that does not need the saved events neither reads nor rewrites them.
A damaged or foreign file is ignored, and any file here may be deleted at any time.
Standard library only (hook path).
"""

from __future__ import annotations

import marshal
import os
import zlib

from plangate.journal import frames
from plangate.journal.chain import UNREACHABLE, Tip, tip_of
from plangate.journal.compact import rider_crc
from plangate.journal.events import Event
from plangate.journal.joined import SEARCHES, Joined
from plangate.journal.longs import Longs
from plangate.journal.packing import pack, unpack
from plangate.journal.records import Record
from plangate.state_root import Folder, StateRoot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

FORMAT = 9
"""Bumped whenever what the reader derives from a record changes, so old indexes are ignored
(9: the queue's ledger, ``queue``, and a typed turn's ``entrypoint``)."""
TAIL_BYTES = 64 * 1024
SUFFIX = ".index"
EVENTS_SUFFIX = ".events"
SEPARATOR = "\n"
"""Between the saved ids, and around them (no id holds one: an index is not kept then)."""
KEEP_SECONDS = 14 * 24 * 3600
"""Indexes not written for this long are removed when a new one is started."""

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
    "tracker_key",
    "tracked",
    "riders",
    "rider_crcs",
    "compact",
    "last_id",
    "tail_owner",
    "queue",
)
_ARRAYS = frozenset({"indices", "offsets", "lengths", "slots"})
"""Fields kept as :class:`~.longs.Longs` in memory and as their bytes on disk."""
_SETS = frozenset({"unresolved"})
_BOUNDARY = 1 + _FIELDS.index("boundary")
_CRC = 1 + _FIELDS.index("crc")
"""Fields kept as sets in memory and as lists on disk: :mod:`marshal` writes a set of
thousands of strings some fifty times slower than the same list."""


class Index:
    """The saved state of one journal. ``indices`` … ``slots`` describe the owned records in
    causal order (line index, byte offset, length, uuid, event slots); ``blobs`` hold their
    light events in order, as ``[offset, length, crc]`` of blobs in the events file;
    ``unordered`` are the ids of the other kept records. ``fresh`` are the blobs this read
    adds (appended to the events file by :func:`save`, which starts the file anew when
    ``restart``), ``loaded`` the saved blobs once :func:`read_blobs` read them."""

    __slots__ = (*_FIELDS, "fresh", "restart", "loaded", "saved", "frames")

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
        self.indices = Longs()
        self.offsets = Longs()
        self.lengths = Longs()
        self.ids = SEPARATOR  # every id followed by the separator: see knows()
        self.slots = Longs()
        self.slots_total = 0
        self.blobs: list[list[int]] = []
        self.event_count = 0
        self.frontier: dict[str, str | None] = {}
        self.uses: dict[str, str] = {}
        self.calls = Joined().text
        self.newest: str | None = None
        self.dropped: dict[str, int] = {}
        self.tracker_key = ""
        self.tracked: Any = None  # a tracker's state (plangate.journal.window)
        # The owned records' riders (plangate.journal.compact), and every rider's id digest
        # (4 bytes each, in file order): an appended record must not share one.
        self.riders = 0
        self.rider_crcs = b""
        # Whether the reads kept no object for event-less records; if so, the id of the last
        # record read with one, and the owner a rider of it would ride on (or None).
        self.compact = False
        self.last_id: str | None = None
        self.tail_owner: str | None = None
        # Claude Code's queue where the index ends, and the queued prompts handed over
        # before it (plangate.journal.trust.Handover.dump; None until a read saves one).
        self.queue: dict[str, Any] | None = None
        self.fresh: list[bytes] = []
        self.restart = True
        self.loaded: list[bytes] | None = []
        self.saved: list[Any] | None = None  # the values on disk (plangate.journal.frames)
        self.frames = 0

    def tip(self) -> Tip:
        return Tip(self.frontier, self.uses, Joined(self.calls), self.newest)

    def keep_tip(self, tip: Tip) -> None:
        self.frontier, self.uses, self.calls, self.newest = (
            tip.frontier,
            tip.uses,
            tip.calls.text,
            tip.newest,
        )

    def add(
        self,
        tail: int,
        boundary: int,
        crc: int,
        lines: int,
        kept: list[Record],
        appended: list[Record],
        light: list[Event],
        crcs: bytes = b"",
    ) -> bool:
        """Cover the journal up to ``boundary`` (a line boundary; ``crc`` of every byte
        before it, ``tail`` of its last :data:`TAIL_BYTES`, :func:`tail_crc`): ``kept`` are
        the records read since the last boundary, ``appended`` those of them in the order,
        ``light`` their events as numbered, before any reload, ``crcs`` the digests of the
        riders read (:attr:`.compact.Compactor.crcs`). False (and nothing added) when an id
        cannot be kept (it holds the separator)."""
        if any(SEPARATOR in (record.uuid or "") for record in appended):
            return False
        self.boundary = boundary
        self.crc = crc
        self.lines = lines
        self.tail = tail
        placed = {record.index for record in appended}
        self.unordered += [
            record.uuid for record in kept if record.uuid is not None and record.index not in placed
        ]
        slots = [record.slots for record in appended]
        self.indices.extend([record.index for record in appended])
        self.offsets.extend([record.offset for record in appended])
        self.lengths.extend([record.length for record in appended])
        self.slots.extend(slots)
        self.slots_total += sum(slots)
        self.riders += sum(record.tail for record in appended)
        self.rider_crcs += crcs
        # every owned record has an id
        self.ids += "".join((record.uuid or "") + SEPARATOR for record in appended)
        if light:
            self.fresh.append(marshal.dumps([pack(event) for event in light]))
            self.event_count += len(light)
        return True

    @property
    def count(self) -> int:
        """How many owned records the index holds."""
        return len(self.indices)

    def knows(self, uuid: str) -> bool:
        """Whether an owned record has this id (a search of the joined ids: quicker, for the
        few ids a read checks, than making a set of them all)."""
        return SEPARATOR + uuid + SEPARATOR in self.ids

    def ids_from(self, position: int) -> list[str]:
        """The ids of the owned records from ``position`` on."""
        wanted = self.count - position
        if wanted <= 0:
            return []
        return self.ids[1:-1].rsplit(SEPARATOR, wanted)[-wanted:]

    def owned_records(self) -> list[Record]:
        """The owned records with their light events, as pass two needs them."""
        by_record: dict[int, list[Event]] = {}
        for event in self.events():
            by_record.setdefault(event.record, []).append(event)
        return [
            Record.indexed(index, offset, length, uuid, slots, tuple(by_record.get(index, ())))
            for index, offset, length, uuid, slots in zip(
                self.indices, self.offsets, self.lengths, self.ids_from(0), self.slots, strict=True
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
        """Unpacks the events saved so far, whatever is added later (the saved blobs must
        have been read, :func:`read_blobs`)."""
        assert self.loaded is not None
        blobs = [*self.loaded, *self.fresh]
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


class Placed:
    """The ids of a saved index's owned records and of those placed since, as
    :func:`plangate.journal.order.extend_order` asks about them; with ``others`` (the ids
    of the index's other records) it answers for every id the journal holds."""

    __slots__ = ("index", "added", "others", "searches", "owned")

    def __init__(self, index: Index, others: Iterable[str] = ()) -> None:
        self.index = index
        self.added: set[str] = set()
        self.others = set(others)
        self.searches = 0
        self.owned: set[str] | None = None

    def __contains__(self, uuid: object) -> bool:
        if not isinstance(uuid, str):
            return False
        if uuid in self.added or uuid in self.others:
            return True
        if self.owned is None:
            self.searches += 1
            if self.searches <= SEARCHES:
                return self.index.knows(uuid)
            # Many questions (a run of appended progress records asks one each): a set.
            self.owned = set(self.index.ids_from(0))
        return uuid in self.owned

    def add(self, uuid: str) -> None:
        self.added.add(uuid)


def index_file(index_dir: str, session_id: str) -> str:
    return os.path.join(index_dir, session_id + SUFFIX)


def _key(values: list[Any]) -> object:
    """What a delta frame names the values it changes by: the boundary they cover and the
    digest of the bytes before it."""
    return (values[_BOUNDARY], values[_CRC])


def load(
    index_dir: str, session_id: str, path: str, info: os.stat_result, owners: list[str] | None
) -> Index | None:
    """The saved index of this very file, or None (none yet, damaged, or another file's)."""
    found = frames.read(index_file(index_dir, session_id), _key)
    if found is None:
        return None
    fields, count = found
    if len(fields) != len(_FIELDS) + 1 or fields[0] != FORMAT:
        return None
    index = Index.__new__(Index)
    index.saved, index.frames = fields, count
    for name, value in zip(_FIELDS, [_copy(field) for field in fields[1:]], strict=True):
        if name in _SETS:
            value = set(value)
        elif name in _ARRAYS:
            if not isinstance(value, bytes) or len(value) % 8:
                return None
            value = Longs(value)
        setattr(index, name, value)
    index.fresh, index.restart, index.loaded = [], False, None
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


def events_file(index_dir: str, session_id: str) -> str:
    return os.path.join(index_dir, session_id + EVENTS_SUFFIX)


def read_blobs(index_dir: str, session_id: str, index: Index) -> bool:
    """Read the saved event blobs the index names; False when one is missing or damaged."""
    if index.loaded is not None:
        return True
    loaded: list[bytes] = []
    try:
        with open(events_file(index_dir, session_id), "rb") as handle:
            for offset, length, crc in index.blobs:
                handle.seek(offset)
                blob = handle.read(length)
                if len(blob) != length or zlib.crc32(blob) != crc:
                    return False
                loaded.append(blob)
    except (OSError, ValueError):
        return False
    index.loaded = loaded
    return True


def rider_clash(index: Index, kept: list[Record], crcs: bytes) -> bool:
    """Whether a record read since the index (``kept``, and the riders of ``crcs``) may
    share its id with a saved rider (a digest matches): then only a full read can tell."""
    saved = index.rider_crcs
    if not saved:
        return False
    wanted = {rider_crc(record.uuid) for record in kept if record.uuid is not None}
    wanted.update(int.from_bytes(crcs[at : at + 4], "little") for at in range(0, len(crcs), 4))
    for crc in wanted:
        needle = crc.to_bytes(4, "little")
        found = saved.find(needle)
        while found >= 0:
            if not found % 4:
                return True
            found = saved.find(needle, found + 1)
    return False


def tail_matches(fd: int, index: Index) -> bool:
    """The last bytes the index covers are still there, unchanged."""
    start = max(0, index.boundary - TAIL_BYTES)
    data = os.pread(fd, index.boundary - start, start)
    return len(data) == index.boundary - start and zlib.crc32(data) == index.tail


def tail_crc(fd: int, boundary: int) -> int:
    start = max(0, boundary - TAIL_BYTES)
    return zlib.crc32(os.pread(fd, boundary - start, start))


def save(index_dir: str, session_id: str, index: Index) -> None:
    """Write atomically; a failure only means the next read is a full one. The folder (and
    the state root above it) must be real folders of this user's: a planted link is refused
    (:mod:`plangate.state_root`), and the save with it."""
    try:
        folder = safe_index_dir(index_dir)
        _append_blobs(folder, session_id, index)
    except OSError:
        return
    values: list[Any] = [FORMAT]
    for name in _FIELDS:
        value = getattr(index, name)
        values.append(
            list(value)
            if isinstance(value, set)
            else value.tobytes()
            if isinstance(value, Longs)
            else value
        )
    try:
        name = session_id + SUFFIX
        index.frames = frames.write(folder, name, values, index.saved, index.frames, _key)
    except OSError:
        return
    index.saved = [_copy(value) for value in values]


def safe_index_dir(index_dir: str) -> Folder:
    """``index_dir``, made (and the folder above it) if missing, refusing a link or another
    user's folder at either with :class:`~plangate.state_root.UnsafeFolder`."""
    folder = os.path.abspath(index_dir)
    return StateRoot(os.path.dirname(folder)).folder(os.path.basename(folder))


def _copy(value: Any, deep: bool = True) -> Any:
    """A copy of a list or dict, and of the lists and dicts a dict holds (a tracker's state),
    so that what is changed in memory is not also changed in the values saved on disk."""
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        if deep and any(isinstance(item, (list, dict)) for item in value.values()):
            return {key: _copy(item, False) for key, item in value.items()}
        return dict(value)
    return value


def _append_blobs(folder: Folder, session_id: str, index: Index) -> None:
    """Append the fresh blobs to the events file (started anew for a new index) and name
    them in the index."""
    if not index.fresh and not index.restart:
        return
    name = session_id + EVENTS_SUFFIX
    descriptor = folder.appending(name, truncate=index.restart)
    try:
        for blob in index.fresh:
            written = os.write(descriptor, blob)
            if written != len(blob):
                raise OSError("short write to the journal index's events file")
            end = os.lseek(descriptor, 0, os.SEEK_CUR)
            index.blobs.append([end - len(blob), len(blob), zlib.crc32(blob)])
    finally:
        os.close(descriptor)
    if index.loaded is not None:
        index.loaded += index.fresh
    index.fresh, index.restart = [], False


def prune(
    index_dir: str, now: float, keep_seconds: float = KEEP_SECONDS, also: tuple[str, ...] = ()
) -> None:
    """Remove indexes (and temporary files a killed writer left, and files ending in one of
    ``also``) not written for ``keep_seconds``: their sessions are over, and a later read
    would only read in full."""
    try:
        absolute = os.path.abspath(index_dir)
        root = StateRoot(os.path.dirname(absolute))
        folder = root.folder(os.path.basename(absolute), create=False)
        names = folder.names()
    except OSError:
        return
    for name in names:
        if not name.endswith((SUFFIX, EVENTS_SUFFIX, ".tmp", *also)):
            continue
        try:
            if now - os.lstat(folder.file(name)).st_mtime > keep_seconds:
                folder.remove(name)
        except OSError:
            continue  # gone meanwhile, or not ours to remove
