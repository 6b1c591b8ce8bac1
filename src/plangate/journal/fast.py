"""The optional compiled JSON parser for large journals (the ``fast`` extra: msgspec).

Parsing is most of a cold read of a long session: the standard library takes about 3 ms per
megabyte, msgspec about half that, and about a fifth when it decodes only what pass one reads
(:mod:`.headers`). msgspec was chosen by measurement (``benchmarks/``) among the validating
parsers that return the same Python values: it checks the JSON of every byte, keeps integers
of any size exactly (orjson turns those past 64 bits into floats; pysimdjson's lazy values
are no dicts) and decodes into typed structs. It is imported only when a read
has at least :data:`FAST_MIN_BYTES` to parse, where it repays its import; without it, or
with ``fast_min_bytes`` of ``$PLANGATE_TUNING`` above the journal's size, the standard library
reads alone. Lines it rejects go to the standard library, which gives the verdict
(:func:`plangate.journal.scan.parse_line`), so verdicts never depend on it.
"""

from __future__ import annotations

import os
import sys

from plangate.journal.codes import FAST_MIN_BYTES, FAST_MIN_BYTES_SETTING, fast_min_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType

MODULE = "msgspec"
"""The one module the hook path imports from outside the standard library, and lazily."""
OPTIONAL = "typing_extensions"

__all__ = [
    "FAST_MIN_BYTES",
    "FAST_MIN_BYTES_SETTING",
    "MODULE",
    "OPTIONAL",
    "fast_min_bytes",
    "fast_parser",
]

_UNSET: object = object()
_loaded: object = _UNSET


def fast_parser(to_parse: int) -> Callable[[bytes | memoryview, bool], object] | None:
    """The compiled parser when ``to_parse`` bytes make it worth importing, else None."""
    global _loaded
    if to_parse < fast_min_bytes():
        return None
    if _loaded is _UNSET:
        _loaded = _load()
    return _loaded  # type: ignore[return-value]


def _load() -> Callable[[bytes | memoryview, bool], object] | None:
    module = _import()
    if module is None:
        return None
    from plangate.journal.headers import header_decoder

    return header_decoder(module)


def _import() -> ModuleType | None:
    """msgspec, without the optional ``typing_extensions`` it would also load (7 to 20 ms of
    a hook run; ``typing``'s own helpers do for the plain types plangate decodes into)."""
    blocked = OPTIONAL not in sys.modules
    if blocked:
        sys.modules[OPTIONAL] = None  # type: ignore[assignment]  # an ImportError, for msgspec
    try:
        return _find()
    finally:
        if blocked and sys.modules.get(OPTIONAL, "") is None:
            del sys.modules[OPTIONAL]


def _find() -> ModuleType | None:
    try:
        import msgspec
    except ImportError:
        # Hooks run with -S, so the interpreter's own site-packages (a venv's) is not on the
        # path when plangate itself comes from elsewhere (an editable checkout): look there.
        version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
        prefix = os.path.dirname(os.path.dirname(sys.executable))
        folder = os.path.join(prefix, "lib", version, "site-packages")
        if folder in sys.path or not os.path.isdir(os.path.join(folder, MODULE)):
            return None
        sys.path.append(folder)  # after the standard library and plangate
        try:
            import msgspec
        except ImportError:
            return None
    return msgspec
