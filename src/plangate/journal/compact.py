"""Pass one without an object per event-less record: riders, counted lines, keyed ids.

A long session can hold a million records that carry no event: progress records a long
command streams, attachments, metadata lines. Kept as :class:`~.records.Record` objects they
cost the reader some 700 bytes each. :class:`Compactor` keeps none of them, and every
decision stays the one the full structure gives:

- A **metadata line** (no ``uuid``, no ``parentUuid``) that is not a conversation message is
  only counted (by session, for reads that pick the session afterwards).
- A **rider** is an event-less record of the main conversation's shape (a node: id, folder,
  timestamp, not a subagent's) with no message, that is not a compact boundary or a
  SessionStart hook, whose parent is the record just before it (the last kept record with an
  id) and whose session is that record's. It rides on its **owner**: the last kept node that
  is not a rider. The owner counts its riders (:attr:`~.records.Record.tail`); a record whose
  parent is the last rider hangs from the owner instead (``hung_from_tail``). A rider never
  starts a branch and its only child is the next record, so it is live exactly when its owner
  is, and dropped with its owner's reason; :mod:`.chain` and :mod:`.order` count it so.
- Riders' ids are kept as 64-bit keys (:func:`rider_key`) in an open-addressed table, other
  sessions' ids (``foreign``) too. Whenever a key is found (two records may share an id, or
  a record hangs from a rider that is not the last one, or from another session's record),
  the read cannot prove the compact structure equal to the full one: :class:`Uncompacted` is
  raised and the reader reads again with every record kept. So two ids sharing a key only
  cost time.
- A run of riders whose lines differ only in their ids and timestamp is read by its bytes,
  with no decode and no call per line (:mod:`.streaks`).

Standard library only (hook path).
"""

from __future__ import annotations

import os
import zlib

from plangate.journal.paths import is_absolute
from plangate.journal.records import Record, valid_id, valid_timestamp, valid_version

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Container, Sequence
    from typing import Any

    from plangate.journal.scan import Scan
    from plangate.journal.streaks import Streak

    Decode = Callable[[bytes], object]

_NO_FOLDER = object()
_START_SLOTS = 1 << 10
_LOW64 = (1 << 64) - 1
STREAK_PAYS = 16
"""A streak that took this many lines starts the wait before the next template anew."""
RESERVE_AFTER = 1000
"""A streak that took this many lines in one read is a flood: its room is made ahead."""
RESERVE_MAX = 1 << 20
"""At most this many riders' room (16 MiB of table) is made ahead of time."""


class Uncompacted(Exception):
    """The compact structure cannot be proven equal to the full one: read with every record."""


class HashedIds:
    """A set of strings kept as their 64-bit keys (:func:`rider_key`) in one bytearray: 16
    bytes per id at most, no object each. A key found may be another
    id's: callers treat a hit as "maybe".

    A key's slot mixes every bit of it with two random odd multipliers drawn per table
    (multiply, fold the high half onto the low, multiply, top bits taken): the key is an
    id's raw bytes, which whoever writes the journal chooses, and a slot taken from those
    bytes unmixed put every sequential or time-ordered id in one cluster (each insert
    probing all the ids before it: 10,000 ids took 3 s, 30,000 took 28 s). One multiply
    alone (multiply-shift) leaves keys that differ only in their top bits, or that count up,
    in clusters a few times longer than random keys make. Linear probing, at most half
    full. ``probes`` counts the slots looked at
    beyond the first (tests assert it stays linear)."""

    __slots__ = ("table", "view", "mask", "shift", "multiplier", "second", "count", "probes")

    def __init__(self) -> None:
        self.count = 0
        self.probes = 0
        draw = os.urandom(16)
        self.multiplier = int.from_bytes(draw[:8], "little") | 1
        self.second = int.from_bytes(draw[8:], "little") | 1
        self._allocate(_START_SLOTS)

    def _allocate(self, slots: int) -> None:
        self.table = bytearray(8 * slots)
        self.view = memoryview(self.table).cast("Q")
        self.mask = slots - 1
        self.shift = 64 - slots.bit_length() + 1

    def slot(self, key: int) -> int:
        """Where the probe for ``key`` starts."""
        mixed = key * self.multiplier & _LOW64
        return ((mixed ^ mixed >> 32) * self.second & _LOW64) >> self.shift

    def add(self, value: str) -> bool:
        """Add ``value``; False (and nothing added) when its key is there already."""
        return self.add_key(rider_key(value))

    def add_keys(self, keys: Sequence[int]) -> bool:
        """Add every key (each odd, as :func:`rider_key` makes them); False as soon as one
        is there already (the keys before it stay added). One loop for a run of keys
        (:mod:`.streaks`): a call each would cost as much as the rest of their lines."""
        self.reserve(len(keys))
        view, mask, shift = self.view, self.mask, self.shift
        multiplier, second = self.multiplier, self.second
        added = probes = 0
        try:
            for key in keys:
                mixed = key * multiplier & _LOW64
                slot = ((mixed ^ mixed >> 32) * second & _LOW64) >> shift
                held = view[slot]
                while held:
                    if held == key:
                        return False
                    slot = (slot + 1) & mask
                    held = view[slot]
                    probes += 1
                view[slot] = key
                added += 1
        finally:
            self.count += added
            self.probes += probes
        return True

    def reserve(self, count: int) -> None:
        """Room for ``count`` more keys without growing (growing rehashes every key)."""
        while 2 * (self.count + count) > self.mask:
            self._grow()

    def add_key(self, key: int) -> bool:
        view, mask = self.view, self.mask
        slot = self.slot(key)
        while True:
            held = view[slot]
            if not held:
                break
            if held == key:
                return False
            slot = (slot + 1) & mask
            self.probes += 1
        view[slot] = key
        self.count += 1
        if 2 * self.count > mask:
            self._grow()
        return True

    def maybe(self, value: object) -> bool:
        """Whether ``value``'s key is in the set (``value`` itself may not be)."""
        if type(value) is not str or not self.count:
            return False
        key = rider_key(value)
        view, mask = self.view, self.mask
        slot = self.slot(key)
        while True:
            held = view[slot]
            if not held:
                return False
            if held == key:
                return True
            slot = (slot + 1) & mask
            self.probes += 1

    def _grow(self) -> None:
        old = self.view
        self._allocate(2 * (self.mask + 1))
        view, mask, shift = self.view, self.mask, self.shift
        multiplier, second = self.multiplier, self.second
        probes = 0
        for key in old:
            if key:
                mixed = key * multiplier & _LOW64
                slot = ((mixed ^ mixed >> 32) * second & _LOW64) >> shift
                while view[slot]:
                    slot = (slot + 1) & mask
                    probes += 1
                view[slot] = key
        self.probes += probes
        old.release()


class Foreign:
    """Other sessions' record ids, as :class:`HashedIds`: a question whose answer may be yes
    raises :class:`Uncompacted` (the full read keeps them as strings)."""

    __slots__ = ("ids",)

    def __init__(self) -> None:
        self.ids = HashedIds()

    def add(self, uuid: str) -> None:
        self.ids.add(uuid)

    def __contains__(self, uuid: object) -> bool:
        if self.ids.maybe(uuid):
            raise Uncompacted("a record may hang from another session's record")
        return False


def rider_key(uuid: str) -> int:
    """The 64-bit key of an id (odd, so never 0), the same in every process: for an id of
    the canonical UUID shape (lower-case hex, ``8-4-4-4-12``) its last 8 bytes (the last 6
    first, whose bits are all random in a version 4 UUID), which
    :mod:`.streaks` reads for a whole run of lines at once; for any other id two CRC-32s of
    its UTF-8. Two ids may share a key: callers treat a key found as "maybe"."""
    if len(uuid) == 36 and uuid[8] == uuid[13] == uuid[18] == uuid[23] == "-":
        tail = uuid[24:] + uuid[19:23]
        if not tail.strip(LOWER_HEX):
            return int.from_bytes(bytes.fromhex(tail), "little") | 1
    data = uuid.encode("utf-8", "surrogatepass")
    return (_crc32(data, _SEED) << 32 | _crc32(data)) | 1


def rider_crc(uuid: str) -> int:
    """The 32-bit digest of a rider's id that a journal index keeps (:mod:`.index`): the low
    half of its :func:`rider_key`."""
    return rider_key(uuid) & 0xFFFFFFFF


LOWER_HEX = "0123456789abcdef"
_SEED = 0x9E3779B9
_crc32 = zlib.crc32


class Compactor:
    """Pass one's choice, record by record, of what is kept as an object.

    ``counted`` is how many records were not kept (riders and metadata lines), ``by_session``
    the metadata lines by session id, ``riders`` the riders' ids and ``crcs`` their
    :func:`rider_crc` digests in file order (4 bytes each, for the journal index)."""

    __slots__ = (
        "counted",
        "by_session",
        "riders",
        "crcs",
        "ids",
        "last",
        "owner",
        "orphans",
        "known",
        "seeded",
        "cwd",
        "streak",
        "streaked",
        "streaks",
        "rider_length",
        "arm_after",
        "backoff",
        "ahead",
    )

    def __init__(
        self, known: Container[str] = (), last: str | None = None, owner: Record | None = None
    ) -> None:
        # A scan that goes on from a saved journal index: the ids it holds, the id of its
        # last record and the owner that record rides on (a stand-in, :func:`stand_in`).
        self.known = known
        self.counted = 0
        self.by_session: dict[str | None, int] = {}
        self.riders = HashedIds()
        self.crcs = bytearray()
        self.ids: set[str] = set()  # the kept records' ids
        self.last = last  # the id of the last kept record that has one
        self.owner = owner  # the owner a rider of ``last`` would ride on
        self.seeded = owner  # the stand-in, whose riders the index adds to its own
        self.cwd: object = _NO_FOLDER  # the last folder found to be an absolute path
        self.orphans: list[Record] = []  # kept records whose parent no kept record had yet
        # Runs of riders read by their bytes (plangate.journal.streaks): the template armed,
        # whether one took lines, and when to try making one. Not when going on from an
        # index: each id would have to be looked up in it.
        self.streak: Streak | None = None
        self.streaked = False
        self.streaks = isinstance(known, tuple) and not known
        self.rider_length = -1
        self.arm_after = 0
        self.backoff = 1
        self.ahead = 0  # the bytes the scan was to read (set by it), until room is made

    def take(self, record: Record) -> bool:
        """True when ``record`` is not to be kept (counted on its owner, or as a line)."""
        if record.metadata:
            if record.conversation:
                return False  # an api-request blob's message may name the session
            self.counted += 1
            session = record.session_id
            self.by_session[session] = self.by_session.get(session, 0) + 1
            return True
        uuid = record.uuid
        if uuid is None:
            return False  # no id: it changes nothing a rider depends on
        owner = self.owner
        last = self.last
        if self.riders.maybe(uuid):
            raise Uncompacted("a record may share its id with a rider")
        parent = record.parent
        if owner is not None and parent == last and last is not None:
            if _rides(record, owner) and uuid not in self.ids and uuid not in self.known:
                if not self.riders.add(uuid):
                    raise Uncompacted("two riders may share an id")
                self.crcs += rider_crc(uuid).to_bytes(4, "little")
                owner.tail += 1
                if owner.tail == 1:
                    owner.tail_first = record.index
                if record.version is not None:
                    owner.tail_version = record.version
                self.counted += 1
                self.last = uuid
                return True
            if last != owner.uuid and not record.via_logical_parent:
                record.parent = owner.uuid  # hangs from the owner's last rider
                record.hung_from_tail = True
        if record.parent is not None and record.parent not in self.ids:
            self.orphans.append(record)
        self.ids.add(uuid)
        self.last = uuid
        self.owner = record if record.node else None
        return False

    def take_raw(self, raw: dict[str, Any], index: int, scan: Scan) -> bool:
        """True when ``raw`` (line ``index``, of this session) rides on the current owner:
        counted, and no :class:`~.records.Record` made for it. False: make one and
        :meth:`take` it, which judges it again in full.

        Decided on ``raw`` alone (a long command's progress records are most of some
        journals): what :class:`~.records.Record` and the event builder would make of it is
        a node without message, events or slots that is no compact boundary, SessionStart
        hook or segment start; whatever is in doubt here answers False. The folder and
        version last found good are remembered, as they repeat."""
        owner = self.owner
        if owner is None:
            return False
        get = raw.get
        last = self.last
        if last is None or get("parentUuid") != last or "message" in raw:
            return False
        if get("isSidechain") is not False or get("sessionId") != owner.session_id:
            return False
        agent_id = get("agentId")
        if agent_id is not None and agent_id != "":
            return False
        uuid = get("uuid")
        if type(uuid) is not str or not valid_id(uuid) or not valid_timestamp(get("timestamp")):
            return False
        cwd = get("cwd")
        if cwd != self.cwd:
            if type(cwd) is not str or not is_absolute(cwd):
                return False
            self.cwd = cwd
        record_type = get("type")
        if record_type == "progress":
            data = get("data")
            if type(data) is dict and data.get("hookEvent") is not None:
                return False  # a SessionStart hook as 2.1.3x wrote it
        elif record_type == "attachment":
            attachment = get("attachment")
            if type(attachment) is dict and (
                attachment.get("hookEvent") is not None
                or attachment.get("type") == "queued_command"
            ):
                return False  # a SessionStart hook, or a background task's notification
        elif record_type == "system" and get("subtype") == "compact_boundary":
            return False
        if uuid in self.ids or uuid in self.known:
            return False
        if not self.riders.add(uuid):
            raise Uncompacted("two records may share an id")
        self.crcs += rider_crc(uuid).to_bytes(4, "little")
        owner.tail += 1
        if owner.tail == 1:
            owner.tail_first = index
        version = get("version")
        if version is not None and valid_version(version):
            owner.tail_version = version
            if scan.first_version is None or scan.first_version_agent:
                scan.first_version = version
                scan.first_version_agent = False
        self.counted += 1
        self.last = uuid
        return True

    def arm(
        self, line: bytes | memoryview, raw: dict[str, Any], index: int, decode: Decode
    ) -> None:
        """``line`` (line ``index``) was just taken as a rider: make it the template of a
        streak (:mod:`.streaks`) when the rider before it had its length. A template that
        cannot be made, or takes no line, is tried again only after twice as many riders."""
        length = len(line)
        same = length == self.rider_length
        self.rider_length = length
        if not same or not self.streaks or index < self.arm_after or self.owner is None:
            return
        from plangate.journal.streaks import streak_of

        self.streak = streak_of(bytes(line), raw, self.owner, decode)
        if self.streak is None:
            self.wait(index)

    def ride(self, buffer: bytearray, start: int, got: int, index: int) -> int:
        """How many lines from ``start`` (line ``index``) the armed streak took."""
        streak = self.streak
        assert streak is not None
        taken = streak.ride(self, buffer, start, got)
        if taken >= STREAK_PAYS:
            self.backoff = 1
            if taken >= RESERVE_AFTER and self.ahead:
                # A flood: room for as many riders as the bytes left could hold, once, so
                # that the table does not grow (each time rehashing every key) on the way.
                self.riders.reserve(min(self.ahead // (streak.length + 1), RESERVE_MAX))
                self.ahead = 0
        elif start + streak.length < got:  # its next line is not one: disarmed
            self.streak = None
            self.wait(index)
        return taken

    def wait(self, index: int) -> None:
        self.arm_after = index + self.backoff
        self.backoff = min(2 * self.backoff, 1 << 16)

    def check(self) -> None:
        """After the scan: no kept record may hang from a rider other than through its owner
        (a parent written later, or a rider in the middle of a run), nor share its id with a
        rider a streak took (the line-by-line path looks that up per rider)."""
        if not self.riders.count:
            return
        if self.streaked and any(self.riders.maybe(uuid) for uuid in self.ids):
            raise Uncompacted("a record may share its id with a rider")
        for record in self.orphans:
            if record.parent not in self.ids and self.riders.maybe(record.parent):
                raise Uncompacted("a record may hang from a rider")


def stand_in(uuid: str, session_id: str) -> Record:
    """A saved record, as the owner that riders read after a journal index ride on."""
    owner = Record.indexed(-1, 0, 0, uuid, 0, ())
    owner.session_id = session_id
    owner.version = None
    return owner


def _rides(record: Record, owner: Record) -> bool:
    """Whether ``record`` (whose parent is the last kept record) can ride on ``owner``."""
    return (
        record.node
        and not record.has_message
        and not record.events
        and not record.slots
        and not record.session_start
        and not record.via_logical_parent
        and not (record.type == "system" and record.subtype == "compact_boundary")
        and record.session_id == owner.session_id
    )
