"""The journal index's file: a snapshot, then what each later read changed, appended.

Rewriting a long session's whole index after every hook run costs more than reading it: the
file is megabytes, and under write-back pressure the kernel makes writers wait. So the file
is a series of frames, each ``length (4 bytes) | CRC-32 (4 bytes) | marshal body``:

- the first is a **snapshot**: the tuple of every field's value;
- each later one is a **delta**: ``(DELTA, key, ops)``, the changes from the values whose
  ``key`` (the covered boundary and its digest) it names. Values that only grew (strings,
  bytes, lists, as the index's records and ids do) are stored as what was added; a dict
  (a tracker's state) as the changes of its keys, the same way; anything else whole.

A reader applies a delta only when its key names the values it has; two hook runs that
appended from the same values leave a second delta that is skipped (it came from the same
journal bytes). A damaged or cut frame ends the file. After :data:`FRAMES_MAX` frames the
next save writes a snapshot again (to a temporary name, renamed). Standard library only.
"""

from __future__ import annotations

import marshal
import os
import zlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from plangate.state_root import Folder

FRAMES_MAX = 32
DELTA = "delta"
_GREW, _SET, _KEYS = 0, 1, 2
_HEADER = 8
_MISSING = object()


def read(path: str, key_of: Callable[[list[Any]], object]) -> tuple[list[Any], int] | None:
    """The values the file holds and how many frames it has, or None (missing, damaged)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    bodies = _bodies(data)
    if not bodies:
        return None
    try:
        first = marshal.loads(bodies[0])
        if not isinstance(first, tuple):
            return None
        values = list(first)
        for body in bodies[1:]:
            delta = marshal.loads(body)
            if not isinstance(delta, tuple) or len(delta) != 3 or delta[0] != DELTA:
                break
            if delta[1] == key_of(values):  # the key is of scalars, never grown
                for position, op, change in delta[2]:
                    values[position] = _apply(values[position], op, change)
    except (EOFError, ValueError, TypeError, IndexError, KeyError):
        return None
    return _finished(values), len(bodies)


def write(
    folder: Folder,
    name: str,
    values: list[Any],
    saved: list[Any] | None,
    frames: int,
    key_of: Callable[[list[Any]], object],
) -> int:
    """Save ``values`` in the file ``name`` of ``folder``: as a delta from ``saved`` (the
    values read or last written, in a file of ``frames`` frames), or as a snapshot. Returns
    the frames the file now has."""
    if saved is None or frames >= FRAMES_MAX or len(saved) != len(values):
        folder.replace(name, _frame(marshal.dumps(tuple(values))))  # not durable: a cache
        return 1
    ops = []
    for position, (old, new) in enumerate(zip(saved, values, strict=True)):
        change = _diff(old, new)
        if change is not None:
            ops.append((position, *change))
    if not ops:
        return frames
    frame = _frame(marshal.dumps((DELTA, key_of(saved), ops)))  # type: ignore[arg-type]
    # Never through a symlink planted in its place (a snapshot is written by rename), and
    # never a delta alone in a file made anew.
    descriptor = folder.appending(name, create=False)
    try:
        if os.write(descriptor, frame) != len(frame):
            raise OSError("short write to the journal index")
    finally:
        os.close(descriptor)
    return frames + 1


def _frame(body: bytes) -> bytes:
    return len(body).to_bytes(4, "big") + zlib.crc32(body).to_bytes(4, "big") + body


def _bodies(data: bytes) -> list[memoryview]:
    bodies: list[memoryview] = []
    view = memoryview(data)  # slices without copying megabytes
    position = 0
    while position + _HEADER <= len(data):
        length = int.from_bytes(data[position : position + 4], "big")
        crc = int.from_bytes(data[position + 4 : position + 8], "big")
        body = view[position + _HEADER : position + _HEADER + length]
        if len(body) != length or zlib.crc32(body) != crc:
            break
        bodies.append(body)
        position += _HEADER + length
    return bodies


def _diff(old: Any, new: Any) -> tuple[int, Any] | None:
    if type(old) is type(new) and isinstance(new, (str, bytes, list)):
        # startswith compares in place; a slice would copy megabytes of ids first.
        grew = new.startswith(old) if not isinstance(new, list) else new[: len(old)] == old
        if len(new) >= len(old) and grew:
            return None if len(new) == len(old) else (_GREW, new[len(old) :])
        return _SET, new
    if isinstance(old, dict) and isinstance(new, dict):
        changed: dict[Any, tuple[int, Any]] = {}
        for key, value in new.items():
            before = old.get(key, _MISSING)
            if before is _MISSING:
                changed[key] = (_SET, value)
            elif before is not value and before != value:
                change = _diff(before, value)
                if change is not None:
                    changed[key] = change
        removed = [key for key in old if key not in new]
        return None if not changed and not removed else (_KEYS, (changed, removed))
    return None if type(old) is type(new) and old == new else (_SET, new)


class _Grown:
    """A string or bytes value and what deltas added to it, joined once at the end (adding
    each to a megabyte of ids would copy it every time)."""

    __slots__ = ("parts",)

    def __init__(self, first: str | bytes) -> None:
        self.parts = [first]

    def value(self) -> str | bytes:
        return self.parts[0][:0].join(self.parts)  # type: ignore[arg-type]


def _finished(values: list[Any]) -> list[Any]:
    """``values`` with every :class:`_Grown` joined (at the top and in dicts)."""
    for position, value in enumerate(values):
        values[position] = _finish(value)
    return values


def _finish(value: Any) -> Any:
    if isinstance(value, _Grown):
        return value.value()
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, (_Grown, dict)):
                value[key] = _finish(item)
    return value


def _apply(value: Any, op: int, change: Any) -> Any:
    """``value`` (just read: changed in place where it can be) with one change applied."""
    if op == _GREW:
        if isinstance(value, list):
            value.extend(change)
            return value
        grown = value if isinstance(value, _Grown) else _Grown(value)
        grown.parts.append(change)
        return grown
    if op == _KEYS:
        changed, removed = change
        for key in removed:
            value.pop(key, None)
        for key, (inner, part) in changed.items():
            value[key] = _apply(value.get(key), inner, part)
        return value
    return change
