"""The one switch of the hooks' speed devices: ``PLANGATE_TUNING``.

Each device spares a hook call more than a millisecond where it applies (measured:
``docs/hook-speed.md``), and none changes a decision: the journal index and
the pre-index are caches that every read verifies, msgspec parses what the standard library
would, and deferred work runs after the answer. Tests and benchmarks move their thresholds;
nobody needs to otherwise. The variable holds ``name=value`` pairs separated by commas, each
value a whole number, e.g. ``PLANGATE_TUNING=index_min_bytes=0,preindex=0``:

- ``index_min_bytes``: the journal size from which hook reads keep and use a journal index
  (default 512 KiB; :mod:`plangate.journal.index`);
- ``fast_min_bytes``: the bytes to parse from which msgspec parses a journal's lines
  (default 16 MiB; :mod:`plangate.journal.fast`);
- ``defer_min_bytes``: the journal size from which a hook leaves its index save to a
  detached child after answering (default 8 MiB; :mod:`plangate.deferred`);
- ``preindex``: ``0`` turns the guard's pre-index off; ``preindex_min_bytes`` (default 2 MiB)
  and ``preindex_step_bytes`` (default 1 MiB) are its journal size and growth
  (:mod:`plangate.guard.preindex`);
- ``fold``: ``0`` turns the contracts' index fold off (every read unpacks the whole saved
  session: slower, the same decisions; :mod:`plangate.contracts.tracking`).

A name this list does not hold, or a value that is not a whole number, is ignored. Standard
library only (hook path).
"""

from __future__ import annotations

import os

ENV = "PLANGATE_TUNING"


def settings(text: str | None = None) -> dict[str, int]:
    """The switch's settings (``text``, default this process's ``PLANGATE_TUNING``)."""
    found: dict[str, int] = {}
    for item in (os.environ.get(ENV, "") if text is None else text).split(","):
        name, _, value = item.strip().partition("=")
        value = value.strip()
        if name and value.isascii() and value.isdigit():
            found[name.strip()] = int(value)
    return found


def setting(name: str, default: int) -> int:
    """Setting ``name`` of ``PLANGATE_TUNING``, or ``default``."""
    text = os.environ.get(ENV)
    if not text:
        return default
    return settings(text).get(name, default)


def joined(text: str | None = None, **values: int) -> str:
    """The switch's text with ``values`` set over ``text`` (default this process's): what a
    test or a benchmark puts in a hook's environment."""
    found = settings(text)
    found.update(values)
    return ",".join(f"{name}={value}" for name, value in found.items())
