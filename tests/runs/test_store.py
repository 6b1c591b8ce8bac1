"""The runs database: one mapper for every value (a table of round trips), and a database
of an older plangate brought up to date."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from plangate.runs import rows, schema
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
from plangate.runs.store import Store

RUN = RunRecord(
    id="r1",
    created_at="2026-01-01T00:00:00.000Z",
    updated_at="2026-01-01T00:00:00.000Z",
    repo="/repo",
    base_commit="abc",
    branch="plangate/run-r1",
    worktree="/state/runs/r1/worktree",
    agent="claude-code",
    task=None,
    plan_source="/plan.md",
    has_plan=True,
    attempts_allowed=3,
    review=True,
    extra_checks=("pytest -q", "ruff check"),
    state="queued",
    turn=1,
    attempts_used=0,
    version=1,
    title="Demo",
    notice="a notice",
)
FAILURES = (Failure("check", "check `x` failed (exit 1)", "tail"), Failure("gate", "AC1"))
CASES: list[tuple[str, rows.RowMap[Any], Any, dict[str, Any]]] = [
    ("run", rows.RUNS, RUN, {}),
    (
        "version",
        rows.VERSIONS,
        VersionRecord(
            2, 2, "check", "A check failed.", True, None, 1, "# Plan: x\n", FAILURES, "now"
        ),
        {"run_id": "r1", "key": "t1/a1"},
    ),
    (
        "step",
        rows.STEPS,
        StepRecord(
            "t1/a0/v1/s1",
            1,
            0,
            1,
            1,
            "done",
            "sha",
            ("a.py", "b.py"),
            "Done.",
            None,
            (("AC1", ("report.md",)),),
        ),
        {"run_id": "r1", "created_at": "now"},
    ),
    (
        "check",
        rows.CHECKS,
        CheckRecord("t1/a0", 2, "AC1", "pytest -q", None, True, 1.5, "out", "tail"),
        {"run_id": "r1", "created_at": "now"},
    ),
    (
        "failure",
        rows.FAILURES,
        FAILURES[0],
        {"run_id": "r1", "turn": 1, "attempt": 1, "idx": 0, "created_at": "now"},
    ),
    (
        "event",
        rows.EVENTS,
        Event(7, "start", "Run started.", 1, "now"),
        {"run_id": "r1", "key": "k"},
    ),
]


@pytest.mark.parametrize(("name", "mapper", "value", "extra"), CASES, ids=[c[0] for c in CASES])
def test_every_value_round_trips_through_its_row(
    name: str, mapper: rows.RowMap[Any], value: Any, extra: dict[str, Any], tmp_path: Path
) -> None:
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    try:
        with store.transaction() as conn:
            if name != "run":
                conn.execute(schema.runs.insert().values(**rows.RUNS.values(RUN)))
            conn.execute(mapper.table.insert().values(**mapper.values(value, **extra)))
            row = conn.execute(mapper.table.select()).one()
        assert mapper.record(row) == value
    finally:
        store.close()


def test_a_run_reads_its_waiting_and_errored_parts(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    try:
        with store.transaction() as conn:
            store.insert_run(conn, RUN)
            store.update_run(
                conn,
                "r1",
                state="waiting",
                waiting_reason="Why",
                waiting_detail="what",
                last_message="said",
            )
        run = store.run("r1")
        assert run is not None and run.waiting == Waiting("Why", "what", "said")
        assert run.errored is None
        with store.transaction() as conn:
            store.update_run(conn, "r1", state="errored", error="E in x: y", error_log="/l.log")
        run = store.run("r1")
        assert run is not None and run.errored == Errored("E in x: y", "/l.log")
        assert run.waiting is None
    finally:
        store.close()


def test_a_database_of_an_older_plangate_gets_the_new_columns(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    new = {"error", "error_log", "notice"}
    old = sa.MetaData()
    for table in schema.metadata.sorted_tables:
        columns = [c._copy() for c in table.columns if not (table.name == "runs" and c.name in new)]
        sa.Table(table.name, old, *columns)
    engine = sa.create_engine(f"sqlite:///{path}")
    old.create_all(engine)
    with engine.begin() as conn:
        conn.execute(
            old.tables["runs"]
            .insert()
            .values(**{k: v for k, v in rows.RUNS.values(RUN).items() if k not in new})
        )
    engine.dispose()

    store = Store(f"sqlite:///{path}")
    try:
        run = store.run("r1")
        assert run is not None and run.errored is None and run.notice is None
        assert run.extra_checks == RUN.extra_checks
    finally:
        store.close()
    with sqlite3.connect(path) as conn:
        names = {row[1] for row in conn.execute("PRAGMA table_info(runs)")}
    assert new <= names
