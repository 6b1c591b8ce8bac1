"""How a demo scene prints: one line at a time, flushed, so a person watches it happen."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

Say = Callable[[str], None]


def printer(out: TextIO | None = None) -> Say:
    """A :data:`Say` that prints each line to ``out`` (standard output by default)."""
    stream = out if out is not None else sys.stdout

    def say(line: str = "") -> None:
        print(line, file=stream, flush=True)

    return say
