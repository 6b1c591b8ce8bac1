"""The session record's shape: the one parser of ``record.json``, for the hooks and ``report``.

:func:`check` takes the decoded JSON and returns it as a record, or raises ``GATE_STATE``
naming the first field of the wrong type (``gates.ceo_review_gate.runs.<run>.blocked is
not a whole number``). Every reader goes through it (:func:`.session_record.read_record`),
so no field is read one way by the Stop hook and another way by ``plangate report``, and no
part of a record is silently replaced. A missing field is its empty value (a record written
by an older plangate); a field plangate does not know is kept as it is.

Hook path: standard library only.
"""

from __future__ import annotations

from plangate.gates.errors import GATE_STATE, GateError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NoReturn

    Rule = tuple[Callable[[object], bool], str]

SCHEMA = 1
KEY_SHOWN = 60


def _is_text(value: object) -> bool:
    return isinstance(value, str)


def _is_text_or_null(value: object) -> bool:
    return value is None or isinstance(value, str)


def _is_integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_count(value: object) -> bool:
    return _is_integer(value) and value >= 0  # type: ignore[operator]


def _is_texts(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _is_texts_or_null(value: object) -> bool:
    return value is None or _is_texts(value)


def _is_objects(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, dict) for item in value)


TEXT = (_is_text, "a string")
TEXT_OR_NULL = (_is_text_or_null, "a string or null")
COUNT = (_is_count, "a whole number")
INTEGER = (_is_integer, "an integer")
TEXTS = (_is_texts, "a list of strings")
TEXTS_OR_NULL = (_is_texts_or_null, "a list of strings or null")

RUN: dict[str, Rule] = {
    "skill": TEXT,
    "agent": TEXT_OR_NULL,
    "via": TEXT_OR_NULL,
    "loaded_at": TEXT_OR_NULL,
    "observed": COUNT,
    "blocked": COUNT,
    "fired_at": TEXT_OR_NULL,
    "released_at": TEXT_OR_NULL,
    "exhausted_at": TEXT_OR_NULL,
    "file": TEXT_OR_NULL,
    "last_stop": INTEGER,
    "waiting": TEXT,
    "phases": TEXTS_OR_NULL,
    "published": TEXTS_OR_NULL,
    "missing": TEXT_OR_NULL,
}
"""A run's fields and their types; a missing one is absent (``observed`` and ``blocked``
then count 0)."""
ENTRY: dict[str, Rule] = {
    "errors": (_is_objects, "a list of objects"),
    "error_count": COUNT,
    "skipped": TEXTS,
}
RECORD: dict[str, Rule] = {
    "session": TEXT,
    "updated_at": TEXT,
    "pending_merged": COUNT,
    "markers": TEXTS,
}


def _wrong(field: str, wanted: str) -> NoReturn:
    raise GateError(GATE_STATE, f"the session record's {field} is not {wanted}")


def _key(key: str) -> str:
    return key if len(key) <= KEY_SHOWN else key[: KEY_SHOWN - 3] + "..."


def _fields(value: dict[str, Any], rules: dict[str, Rule], where: str) -> None:
    for key, (valid, wanted) in rules.items():
        if key in value and not valid(value[key]):
            _wrong(f"{where}{key}", wanted)


def _mapping(value: object, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        _wrong(field, "an object")
    return value


def check(value: object) -> dict[str, Any]:
    """``value`` as a session record (see the module docstring); ``GATE_STATE`` otherwise."""
    if not isinstance(value, dict) or value.get("schema") != SCHEMA:
        raise GateError(GATE_STATE, "the session record has an unknown shape")
    record: dict[str, Any] = value
    _fields(record, RECORD, "")
    record.setdefault("markers", [])
    stops = _mapping(record.setdefault("stops", {}), "stops")
    for scope, stop in stops.items():
        if not _is_integer(stop):
            _wrong(f"stops.{_key(scope)}", "an integer")
    for switch, entry in _mapping(record.setdefault("gates", {}), "gates").items():
        where = f"gates.{_key(switch)}."
        _fields(_mapping(entry, where[:-1]), ENTRY, where)
        for run_key, run in _mapping(entry.get("runs", {}), where + "runs").items():
            run_where = f"{where}runs.{_key(run_key)}"
            _fields(_mapping(run, run_where), RUN, run_where + ".")
    return record
