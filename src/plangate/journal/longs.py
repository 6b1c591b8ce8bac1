"""A growing list of 64-bit integers kept as bytes: a journal index's positions and sizes.

The journal index holds four numbers per owned record; as bytes they load and save at the
speed of a copy, where a list of ints costs an object each. (The standard library's
``array`` would do, but importing it imports ``collections``: milliseconds of every hook
run.) Standard library only (hook path).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

WIDTH = 8


class Longs:
    __slots__ = ("data",)

    def __init__(self, data: bytes = b"") -> None:
        if len(data) % WIDTH:
            raise ValueError("not a whole number of 64-bit integers")
        self.data = bytearray(data)

    def append(self, value: int) -> None:
        self.data += value.to_bytes(WIDTH, sys.byteorder, signed=True)

    def extend(self, values: list[int]) -> None:
        """:meth:`append` each value, in one copy."""
        order = sys.byteorder
        self.data += b"".join([value.to_bytes(WIDTH, order, signed=True) for value in values])

    def __len__(self) -> int:
        return len(self.data) // WIDTH

    def __getitem__(self, position: int) -> int:
        if not 0 <= position < len(self):
            raise IndexError(position)
        start = position * WIDTH
        return int.from_bytes(self.data[start : start + WIDTH], sys.byteorder, signed=True)

    def tolist(self, start: int = 0) -> list[int]:
        """The values from position ``start`` on."""
        return memoryview(bytes(self.data[start * WIDTH :])).cast("q").tolist()

    def __iter__(self) -> Iterator[int]:
        return iter(self.tolist())

    def tobytes(self) -> bytes:
        return bytes(self.data)
