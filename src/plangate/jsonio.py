"""JSON for the hook path.

``import json`` costs about 12 ms on a two-core machine because its decoder pulls in ``re``
and ``enum``; a hook pays that on every tool call. This module drives the same C scanner and
string encoder that :mod:`json` uses (``_json``) directly, so parsing behaves exactly like
``json.loads`` with ``strict=True`` while importing nothing else. Falls back to :mod:`json`
where the accelerator is missing.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

JSON_WHITESPACE = " \t\n\r"


class JSONError(ValueError):
    """Text that is not exactly one JSON value."""


def _reject_constant(name: str) -> object:
    # NaN and Infinity are not JSON; Claude Code never writes them.
    raise JSONError(f"{name} is not valid JSON")


class _ScannerContext:
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_reject_constant)
    memo: dict[str, str] = {}


def _make_loads() -> Callable[[str], object]:
    try:
        import _json

        scan = _json.make_scanner(_ScannerContext())  # type: ignore[arg-type]
    except (ImportError, AttributeError, TypeError):  # pragma: no cover - CPython always has it
        import json

        def fallback(text: str) -> object:
            try:
                return json.loads(text, parse_constant=_reject_constant)
            except ValueError as error:
                raise JSONError(str(error)) from None

        return fallback

    def loads(text: str) -> object:
        end = len(text)
        start = 0
        while start < end and text[start] in JSON_WHITESPACE:
            start += 1
        try:
            value, stop = scan(text, start)
        except (StopIteration, ValueError, SystemError, RecursionError):
            # The accelerator reports errors through json.decoder, which it expects to be
            # imported already; errors are rare, so let the json module explain this one.
            return _explain_error(text)
        while stop < end and text[stop] in JSON_WHITESPACE:
            stop += 1
        if stop != end:
            raise JSONError(f"extra data at character {stop}")
        return value

    return loads


def _explain_error(text: str) -> object:
    import json

    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise JSONError("JSON nested too deeply") from None
    except ValueError as error:
        raise JSONError(str(error)) from None


loads = _make_loads()


def _make_quote() -> Callable[[str], str]:
    try:
        from _json import encode_basestring_ascii

        return encode_basestring_ascii
    except ImportError:  # pragma: no cover
        import json

        return json.dumps


_quote = _make_quote()


def dumps(value: object) -> str:
    """Compact, ASCII-only JSON for the plain values plangate writes (dict, list, str, numbers)."""
    parts: list[str] = []
    _encode(value, parts)
    return "".join(parts)


def _encode(value: object, parts: list[str]) -> None:
    if value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, str):
        parts.append(_quote(value))
    elif isinstance(value, int):
        parts.append(int.__repr__(value))
    elif isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise JSONError("NaN and Infinity cannot be written as JSON")
        parts.append(float.__repr__(value))
    elif isinstance(value, dict):
        parts.append("{")
        first = True
        for key, item in value.items():
            if not isinstance(key, str):
                raise JSONError(f"JSON object keys must be strings, not {type(key).__name__}")
            if not first:
                parts.append(",")
            first = False
            parts.append(_quote(key))
            parts.append(":")
            _encode(item, parts)
        parts.append("}")
    elif isinstance(value, (list, tuple)):
        parts.append("[")
        for position, item in enumerate(value):
            if position:
                parts.append(",")
            _encode(item, parts)
        parts.append("]")
    else:
        raise JSONError(f"cannot write {type(value).__name__} as JSON")
