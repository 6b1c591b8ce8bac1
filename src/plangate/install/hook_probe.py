"""What a registered hook command would run: the plangate version its interpreter imports from
its folder, and the JSON parser that plangate reads long journals with (msgspec, or the
standard library where msgspec cannot be imported). One process per interpreter and folder,
started as the hooks are (``-S``, plangate's folder first on the path)."""

from __future__ import annotations

import functools

from plangate.processes import run_bounded

STDLIB = "stdlib"
UNKNOWN = "unknown"
_PROBE = """\
import sys
sys.path.insert(0, sys.argv[1])
import plangate
print(plangate.__version__)
try:
    from plangate.journal.fast import fast_parser
    found = fast_parser(1 << 62) is not None
except Exception:
    print("unknown")
else:
    module = sys.modules.get("msgspec")
    print("msgspec " + str(getattr(module, "__version__", "?")) if found else "stdlib")
"""


class Probe:
    """``version``: the plangate the hooks import; ``parser``: ``msgspec <version>``,
    :data:`STDLIB`, or :data:`UNKNOWN` (a plangate that does not say)."""

    __slots__ = ("version", "parser")

    def __init__(self, version: str, parser: str) -> None:
        self.version = version
        self.parser = parser


@functools.lru_cache(maxsize=16)  # the hooks and parser checks share it; run_checks clears it
def probe(python: str, root: str) -> Probe | None:
    """What ``python`` imports from ``root``; None when it cannot import plangate."""
    try:
        done = run_bounded([python, "-S", "-c", _PROBE, root], timeout=30)
    except OSError:
        return None
    lines = done.stdout.splitlines()
    if done.timed_out or done.returncode != 0 or not lines:
        return None
    return Probe(lines[0].strip(), lines[1].strip() if len(lines) > 1 else UNKNOWN)
