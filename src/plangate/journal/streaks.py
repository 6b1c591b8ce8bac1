"""Runs of riders read by their bytes: no decode, no object, no call per line.

A long command streams progress records that differ from each other only in their ``uuid``,
``parentUuid`` and ``timestamp``: a million of them, decoded and judged one by one, cost a
cold read seconds (:mod:`.compact` already keeps no object for them). Once a line has been
decoded and taken as a rider, :func:`streak_of` makes it a **template**: its bytes with the
hex digits of those two ids and the digits of the timestamp masked. :meth:`Streak.ride`
then takes, within one read of the file, the longest run of following lines that are the
template with those places filled, judged column by column over the whole run (one slice per
masked place, so a few hundred C-level operations per megabyte):

- every line has the template's length and every other byte of the template;
- the masked places hold lower-case hex digits (ids) and digits (timestamp);
- each line's parent is the line before it (the first's: the compactor's last record).

Why such a line is a rider exactly when the template's is: its masked places lie inside the
string values of the top-level ``uuid``, ``parentUuid`` and ``timestamp`` (proven once per
template by decoding a **probe**, the template with every masked place changed, which must
give the template's dict with exactly those three values changed). A hex digit or digit in
place of another in a string without escapes changes that string and nothing else, so the
line decodes to the template's dict with three values changed: a canonical UUID (a valid
id), its parent (the last record, as required), and a timestamp of the same shape. Every
other field :meth:`.compact.Compactor.take_raw` reads is the template's. What it would
look up per id is kept for the whole run: the ids' keys go into the riders' table in one
loop (a key found: :class:`~.compact.Uncompacted`, as there), and the kept records' ids are
checked against the table once the scan ends (:meth:`.compact.Compactor.check`). Whatever
does not match exactly is left to the line-by-line path. Standard library only (hook path).
"""

from __future__ import annotations

import sys

from plangate.journal.compact import LOWER_HEX, Uncompacted

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeGuard

    from plangate.journal.compact import Compactor
    from plangate.journal.records import Record

UUID_HEX = tuple(at for at in range(36) if at not in (8, 13, 18, 23))
"""Where a canonical UUID (``8-4-4-4-12``) has hex digits."""
UUID_TAIL = (*range(24, 36), *range(19, 23))
"""The hex digits of its :func:`~.compact.rider_key`, in the order it reads them."""
_HEX = LOWER_HEX.encode()
_DIGITS = b"0123456789"
_ROTATE_HEX = bytes.maketrans(_HEX, _HEX[1:] + _HEX[:1])
_ROTATE_DIGITS = bytes.maketrans(_DIGITS, _DIGITS[1:] + _DIGITS[:1])
_ODD = bytes(value | 1 for value in range(256))
_MASKED = ord("0")
USABLE = sys.byteorder == "little"
"""The keys are read as native 64-bit integers of the ids' bytes: little-endian only."""


def canonical(value: object) -> TypeGuard[str]:
    """A canonical lower-case UUID string."""
    if type(value) is not str or len(value) != 36:
        return False
    if not value[8] == value[13] == value[18] == value[23] == "-":
        return False
    return not (value[:8] + value[9:13] + value[14:18] + value[19:23] + value[24:]).strip(LOWER_HEX)


class Streak:
    """A rider's line as a template (:func:`streak_of`), for the riders of ``owner``."""

    __slots__ = (
        "owner",
        "length",
        "masked",
        "head",
        "uuid_at",
        "parent_at",
        "digits_at",
        "varied",
    )

    def __init__(
        self, owner: Record, line: bytes, uuid_at: int, parent_at: int, digits_at: list[int]
    ) -> None:
        self.owner = owner
        self.length = len(line)
        self.uuid_at = uuid_at
        self.parent_at = parent_at
        self.digits_at = digits_at
        ids = [uuid_at + at for at in UUID_HEX] + [parent_at + at for at in UUID_HEX]
        self.varied = (*ids, *digits_at)  # the masked places
        masked = bytearray(line)
        for at in self.varied:
            masked[at] = _MASKED
        masked.append(10)
        self.masked = bytes(masked)
        self.head = self.masked[: min(self.varied)]

    def ride(self, compactor: Compactor, buffer: bytearray, start: int, got: int) -> int:
        """How many whole lines of ``buffer[start:got]`` from ``start`` on are riders of the
        template (each taken: counted on the owner, its key added); 0 when the first is not."""
        step = self.length + 1
        count = (got - start) // step
        last = compactor.last
        if (
            not count
            or compactor.owner is not self.owner
            or last is None
            or buffer[start + self.length] != 10
            or not buffer.startswith(self.head, start)
            or buffer[start + self.parent_at : start + self.parent_at + 36] != last.encode()
        ):
            return 0
        run = buffer[start : start + count * step]  # a copy, masked below
        ids = [run[self.uuid_at + at :: step] for at in UUID_HEX]
        parents = [run[self.parent_at + at :: step] for at in UUID_HEX]
        digits = [run[at::step] for at in self.digits_at]
        zeros = b"0" * count
        for at in self.varied:
            run[at::step] = zeros
        expected = self.masked * count
        if run != expected:
            count = first_difference(run, expected) // step
        count = within(ids + parents, count, _HEX)
        count = within(digits, count, _DIGITS)
        for parent, uuid in zip(parents, ids, strict=True):
            if count > 1 and parent[1:count] != uuid[: count - 1]:
                count = 1 + first_difference(parent[1:count], uuid[: count - 1])
        if not count:
            return 0
        rows = bytearray(len(UUID_TAIL) * count)
        for place, at in enumerate(UUID_TAIL):
            rows[place :: len(UUID_TAIL)] = ids[UUID_HEX.index(at)][:count]
        keys = bytearray.fromhex(rows.decode("ascii"))
        keys[0::8] = keys[0::8].translate(_ODD)  # a key's low bit is set (rider_key)
        if not compactor.riders.add_keys(memoryview(keys).cast("Q")):
            raise Uncompacted("two riders may share an id")
        crcs = bytearray(4 * count)
        for place in range(4):
            crcs[place::4] = keys[place::8]
        compactor.crcs += crcs
        end = start + (count - 1) * step + self.uuid_at
        compactor.last = buffer[end : end + 36].decode("ascii")
        compactor.counted += count
        compactor.streaked = True
        self.owner.tail += count
        return count


def streak_of(
    line: bytes, raw: dict[str, object], owner: Record, decode: Callable[[bytes], object]
) -> Streak | None:
    """The template of ``line``, just taken as a rider of ``owner`` (``raw``, as ``decode``
    gave it), or None when its ids are not canonical UUIDs or the probe (module docstring)
    does not decode as required."""
    uuid, parent, timestamp = raw.get("uuid"), raw.get("parentUuid"), raw.get("timestamp")
    if not USABLE or not canonical(uuid) or not canonical(parent) or uuid == parent:
        return None
    if type(timestamp) is not str or not timestamp.isascii() or not timestamp.isprintable():
        return None
    if '"' in timestamp or "\\" in timestamp:
        return None
    places = []
    for key, value in (("uuid", uuid), ("parentUuid", parent), ("timestamp", timestamp)):
        at = line.find(b'"%s":"%s"' % (key.encode(), value.encode()))
        if at < 0:
            return None
        places.append(at + len(key) + 4)
    uuid_at, parent_at, stamp_at = places
    digits_at = [stamp_at + at for at, char in enumerate(timestamp) if char in "0123456789"]
    if not digits_at:
        return None
    streak = Streak(owner, line, uuid_at, parent_at, digits_at)
    probe = bytearray(line)
    for at in (uuid_at, parent_at):
        probe[at : at + 36] = probe[at : at + 36].translate(_ROTATE_HEX)
    for at in digits_at:
        probe[at : at + 1] = probe[at : at + 1].translate(_ROTATE_DIGITS)
    expected = dict(raw)
    for key, at, size in (
        ("uuid", uuid_at, 36),
        ("parentUuid", parent_at, 36),
        ("timestamp", stamp_at, len(timestamp)),
    ):
        expected[key] = probe[at : at + size].decode("ascii")
    try:
        decoded = decode(bytes(probe))
    except Exception:  # noqa: BLE001 - any refusal: no template
        return None
    return streak if decoded == expected else None


def first_difference(first: bytes | bytearray, second: bytes | bytearray) -> int:
    """The index of the first byte where the two differ (the shorter's length if none)."""
    low, high = 0, min(len(first), len(second))
    if first[:high] == second[:high]:
        return high
    while high - low > 1:  # first[:low] == second[:low], first[:high] != second[:high]
        middle = (low + high) // 2
        if first[low:middle] == second[low:middle]:
            low = middle
        else:
            high = middle
    return low


def within(columns: list[bytearray], count: int, allowed: bytes) -> int:
    """How many of the first ``count`` bytes of every column are in ``allowed``, counted
    from the start (one translation of them all, and per column only when one is not)."""
    if not b"".join(column[:count] for column in columns).translate(None, allowed):
        return count
    flags = _FLAGS[allowed]
    for column in columns:
        bad = column[:count].translate(flags).find(1)  # the first byte not allowed
        if bad >= 0:
            count = bad
    return count


_FLAGS = {
    allowed: bytes(0 if value in allowed else 1 for value in range(256))
    for allowed in (_HEX, _DIGITS)
}
