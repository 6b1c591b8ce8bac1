"""The one mapper between the run's values (:mod:`plangate.runs.model`) and table rows.

A :class:`RowMap` knows a value class and its table: a field is stored in the column of the
same name unless ``columns`` renames it, through ``encode`` on the way in and ``decode`` on
the way out (a tuple as JSON text, a failure list as JSON, a boolean); ``computed`` fields
are made from several columns and never written. Reading a row with fewer columns leaves the
missing fields at their defaults::

    RUNS.record(row)                        # a RunRecord
    STEPS.values(record, run_id=run_id)     # the row to insert, with the extra columns
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar

import sqlalchemy as sa

from plangate.runs import schema
from plangate.runs.model import (
    CheckRecord,
    Errored,
    Event,
    Failure,
    RunRecord,
    StepRecord,
    VersionRecord,
    Waiting,
)

R = TypeVar("R")


def dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclasses.dataclass(frozen=True)
class RowMap(Generic[R]):
    """How values of ``cls`` are rows of ``table``."""

    cls: type[R]
    table: sa.Table
    columns: Mapping[str, str] = dataclasses.field(default_factory=dict)
    encode: Mapping[str, Callable[[Any], Any]] = dataclasses.field(default_factory=dict)
    decode: Mapping[str, Callable[[Any], Any]] = dataclasses.field(default_factory=dict)
    computed: Mapping[str, Callable[[Mapping[str, Any]], Any]] = dataclasses.field(
        default_factory=dict
    )

    def _fields(self) -> list[tuple[str, str]]:
        fields = dataclasses.fields(self.cls)  # type: ignore[arg-type]
        return [(f.name, self.columns.get(f.name, f.name)) for f in fields]

    def record(self, row: sa.Row[Any] | Mapping[str, Any]) -> R:
        data: Mapping[Any, Any] = row._mapping if isinstance(row, sa.Row) else row
        values: dict[str, Any] = {}
        for name, column in self._fields():
            if name in self.computed:
                values[name] = self.computed[name](data)
            elif column in data:
                value = data[column]
                values[name] = self.decode[name](value) if name in self.decode else value
        return self.cls(**values)

    def values(self, record: R, **extra: Any) -> dict[str, Any]:
        """The row for ``record``, with ``extra`` columns (the run's id, a timestamp)."""
        row: dict[str, Any] = {}
        for name, column in self._fields():
            if name in self.computed or column not in self.table.c:
                continue
            value = getattr(record, name)
            row[column] = self.encode[name](value) if name in self.encode else value
        row.update(extra)
        return row


def _strings(text: str) -> tuple[str, ...]:
    return tuple(json.loads(text))


def _string_list(value: Sequence[str]) -> str:
    return dumps(list(value))


def failures_json(items: Sequence[Failure]) -> str:
    return dumps([[f.kind, f.summary, f.output_tail] for f in items])


def failures_from(text: str) -> tuple[Failure, ...]:
    return tuple(Failure(kind, summary, tail) for kind, summary, tail in json.loads(text))


def _waiting(row: Mapping[str, Any]) -> Waiting | None:
    if row["state"] != "waiting" or not row["waiting_reason"]:
        return None
    return Waiting(row["waiting_reason"], row["waiting_detail"] or "", row["last_message"] or "")


def _errored(row: Mapping[str, Any]) -> Errored | None:
    if row["state"] != "errored":
        return None
    return Errored(row.get("error") or "an unexpected error", row.get("error_log") or "")


RUNS: RowMap[RunRecord] = RowMap(
    RunRecord,
    schema.runs,
    encode={"extra_checks": _string_list},
    decode={"extra_checks": _strings, "has_plan": bool, "review": bool},
    computed={"waiting": _waiting, "errored": _errored},
)
VERSIONS: RowMap[VersionRecord] = RowMap(
    VersionRecord,
    schema.versions,
    encode={"failures": failures_json},
    decode={"failures": failures_from, "accepted": bool},
)
STEPS: RowMap[StepRecord] = RowMap(
    StepRecord,
    schema.steps,
    encode={
        "changed_files": _string_list,
        "evidence": lambda items: dumps([[cid, list(paths)] for cid, paths in items]),
    },
    decode={
        "changed_files": _strings,
        "evidence": lambda text: tuple((cid, tuple(paths)) for cid, paths in json.loads(text)),
    },
)
CHECKS: RowMap[CheckRecord] = RowMap(
    CheckRecord, schema.checks, columns={"index": "idx"}, decode={"timed_out": bool}
)
FAILURES: RowMap[Failure] = RowMap(Failure, schema.failures)
EVENTS: RowMap[Event] = RowMap(Event, schema.events)
