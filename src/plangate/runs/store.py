"""The runs database, through SQLAlchemy Core: what the engine and the viewer read and write.

The tables and where the database is are :mod:`plangate.runs.schema`; how a value is a row
is :mod:`plangate.runs.rows`. Every write from a workflow step is keyed, so a step that runs
again after a crash writes nothing twice (``INSERT … ON CONFLICT DO NOTHING``)::

    store = Store()                       # <state root>/runs.db, or $PLANGATE_DATABASE_URL
    with store.transaction() as conn:
        store.add_event(conn, run_id, "t1/start", 1, "start", "Run started …")
    store.events(run_id)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from plangate.errors import StateError
from plangate.runs import rows, schema
from plangate.runs.model import (
    ENDED_STATES,
    CheckRecord,
    Event,
    Failure,
    RunRecord,
    StepRecord,
    Trigger,
    VersionRecord,
)
from plangate.runs.schema import (
    DATABASE_URL_ENV,
    checks,
    events,
    executors,
    failures,
    path_misses,
    replies,
    runs,
    steps,
    versions,
)
from plangate.runs.schema import database_url as database_url  # re-exported: callers' home
from plangate.runs.schema import now as now
from plangate.runs.schema import sqlalchemy_url as sqlalchemy_url
from plangate.state_root import StateRoot

TURN_RESET: dict[str, Any] = {
    "attempts_used": 0,
    "waiting_reason": None,
    "waiting_detail": None,
    "error": None,
    "error_log": None,
}
"""What a new turn starts without: the attempts, and why the last one ended."""

ExecutorRow = tuple[str, str, int, str, float]
"""``(id, host, pid, role, seen_at)`` of a process serving runs."""


class Store:
    """The runs database. Thread-safe: every call takes its own connection."""

    def __init__(self, url: str | None = None) -> None:
        self.url = url or database_url()
        self.is_sqlite = self.url.startswith("sqlite")
        kwargs: dict[str, Any] = {}
        if self.is_sqlite:
            path = self.url.removeprefix("sqlite:///")
            try:
                StateRoot().place(str(Path(path).parent))
            except OSError as error:
                raise StateError(
                    f"cannot create the folder of the runs database {path}: {error}",
                    "set PLANGATE_STATE_ROOT to a folder you can write",
                ) from error
            kwargs["connect_args"] = {"timeout": 60, "check_same_thread": False}
        else:
            kwargs["pool_pre_ping"] = True
        self.engine = sa.create_engine(sqlalchemy_url(self.url), **kwargs)
        if self.is_sqlite:
            sa.event.listen(self.engine, "connect", _sqlite_pragmas)
        try:
            schema.create(self.engine)
        except sa.exc.OperationalError as error:
            raise StateError(
                f"cannot open the runs database: {str(error.orig).strip()}",
                f"check {DATABASE_URL_ENV}, or that the state root can be written",
            ) from error

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def transaction(self) -> Iterator[sa.Connection]:
        with self.engine.begin() as conn:
            yield conn

    # -- writing ------------------------------------------------------------------------

    def _dialect_insert(self, table: sa.Table, values: dict[str, Any]) -> Any:
        if self.is_sqlite:
            return sqlite.insert(table).values(**values)
        return postgresql.insert(table).values(**values)

    def _insert_ignore(
        self, conn: sa.Connection, table: sa.Table, values: dict[str, Any], keys: Sequence[str]
    ) -> None:
        """Insert a row unless one with the same ``keys`` exists. (Whether it was inserted
        cannot be read from the result: psycopg reports ``rowcount`` -1 for ``INSERT … ON
        CONFLICT DO NOTHING``, so nothing here asks.)"""
        statement = self._dialect_insert(table, values)
        conn.execute(statement.on_conflict_do_nothing(index_elements=list(keys)))

    def insert_run(
        self, conn: sa.Connection, record: RunRecord, approval: str | None = None
    ) -> None:
        """Insert the run's row; ``approval`` is its plan's approval as JSON
        (:meth:`plangate.runs.approval.Approval.dumps`), when it has a plan."""
        conn.execute(runs.insert().values(**rows.RUNS.values(record), approval=approval))

    def update_run(self, conn: sa.Connection, run_id: str, **values: Any) -> None:
        values["updated_at"] = now()
        conn.execute(runs.update().where(runs.c.id == run_id).values(**values))

    def claim_turn(self, run_id: str, turn: int, message: str) -> bool:
        """Record a reply and move a run whose turn ended (waiting, done or errored) to
        ``turn``; ``False`` if it has not (another reply got there first, or it is running)."""
        with self.transaction() as conn:
            result = conn.execute(
                runs.update()
                .where(runs.c.id == run_id, runs.c.state.in_(ENDED_STATES))
                .where(runs.c.turn == turn - 1)
                .values(state="queued", turn=turn, notice=None, updated_at=now(), **TURN_RESET)
            )
            if not result.rowcount:
                return False
            self._insert_ignore(
                conn,
                replies,
                {"run_id": run_id, "turn": turn, "message": message, "created_at": now()},
                ("run_id", "turn"),
            )
            self.add_event(conn, run_id, f"t{turn}/reply", turn, "reply", f"You: {message}")
            return True

    def add_event(
        self, conn: sa.Connection, run_id: str, key: str, turn: int, kind: str, text: str
    ) -> None:
        values = rows.EVENTS.values(Event(0, kind, text, turn, now()), run_id=run_id, key=key)
        del values["seq"]  # the database numbers the conversation
        self._insert_ignore(conn, events, values, ("run_id", "key"))

    def add_version(
        self,
        conn: sa.Connection,
        run_id: str,
        key: str,
        *,
        accepted: bool,
        trigger: Trigger,
        why: str,
        refusal: str | None,
        attempts_used: int,
        plan_text: str,
        failure_items: Sequence[Failure] = (),
    ) -> VersionRecord:
        """Record a version (numbered if accepted); the existing row if ``key`` is taken."""
        existing = self._version_where(conn, run_id, versions.c.key == key)
        if existing is not None:
            return existing
        last = sa.func.coalesce(sa.func.max(versions.c.seq), 0)
        seq = conn.execute(sa.select(last).where(versions.c.run_id == run_id)).scalar_one()
        number = None
        if accepted:
            highest = sa.func.coalesce(sa.func.max(versions.c.number), 0)
            query = sa.select(highest).where(versions.c.run_id == run_id)
            number = conn.execute(query).scalar_one() + 1
        record = VersionRecord(
            seq=seq + 1,
            number=number,
            trigger=trigger,
            why=why,
            accepted=accepted,
            refusal=refusal,
            attempts_used=attempts_used,
            plan_text=plan_text,
            failures=tuple(failure_items),
            created_at=now(),
        )
        conn.execute(
            versions.insert().values(**rows.VERSIONS.values(record, run_id=run_id, key=key))
        )
        return record

    def add_step(self, conn: sa.Connection, run_id: str, record: StepRecord) -> None:
        values = rows.STEPS.values(record, run_id=run_id, created_at=now())
        self._insert_ignore(conn, steps, values, ("run_id", "key"))

    def add_checks(self, conn: sa.Connection, run_id: str, records: Sequence[CheckRecord]) -> None:
        for record in records:
            values = rows.CHECKS.values(record, run_id=run_id, created_at=now())
            self._insert_ignore(conn, checks, values, ("run_id", "round_key", "idx"))

    def add_failures(
        self,
        conn: sa.Connection,
        run_id: str,
        turn: int,
        attempt: int,
        items: Sequence[Failure],
    ) -> None:
        for index, item in enumerate(items):
            values = rows.FAILURES.values(
                item, run_id=run_id, turn=turn, attempt=attempt, idx=index, created_at=now()
            )
            self._insert_ignore(conn, failures, values, ("run_id", "turn", "attempt", "idx"))

    def heartbeat(
        self,
        executor_id: str,
        host: str,
        pid: int,
        role: str,
        seen_at: float,
        version: str | None = None,
    ) -> None:
        """Record that ``executor_id`` (of workflow ``version``) is alive at ``seen_at``: its
        row inserted, or brought up to date, in one upsert on every backend."""
        values = {
            "id": executor_id,
            "host": host,
            "pid": pid,
            "role": role,
            "started_at": now(),
            "seen_at": seen_at,
            "version": version,
        }
        statement = self._dialect_insert(executors, values)
        statement = statement.on_conflict_do_update(
            index_elements=["id"],
            set_={"seen_at": seen_at, "host": host, "pid": pid, "role": role, "version": version},
        )
        with self.transaction() as conn:
            conn.execute(statement)

    def record_miss(self, run_id: str, turn: int, host: str, path: str) -> None:
        """Record that a worker on ``host`` cannot see ``path``, which the run's ``turn``
        needs (:mod:`plangate.runs.handoff`)."""
        values = {"run_id": run_id, "turn": turn, "host": host, "path": path, "seen_at": now()}
        statement = self._dialect_insert(path_misses, values).on_conflict_do_update(
            index_elements=["run_id", "turn", "host"], set_={"path": path}
        )
        with self.transaction() as conn:
            conn.execute(statement)

    def misses(self, run_id: str, turn: int) -> dict[str, str]:
        """The hosts whose worker could not see a path of the run's ``turn``: host to path,
        by host name (:func:`plangate.runs.summary.left_by` tells them)."""
        query = (
            sa.select(path_misses.c.host, path_misses.c.path)
            .where(path_misses.c.run_id == run_id, path_misses.c.turn == turn)
            .order_by(path_misses.c.host)
        )
        return {str(row.host): str(row.path) for row in self._all(query)}

    def forget_miss(self, run_id: str, turn: int, host: str) -> None:
        """Forget that ``host`` could not see a path of the run's ``turn``."""
        where = (path_misses.c.run_id == run_id, path_misses.c.turn == turn)
        with self.transaction() as conn:
            conn.execute(path_misses.delete().where(*where, path_misses.c.host == host))

    def worker_versions(self) -> dict[str, str | None]:
        """The workflow version of each process that recorded one (none: an older plangate)."""
        query = sa.select(executors.c.id, executors.c.version)
        return {str(row.id): row.version for row in self._all(query)}

    def forget_executor(self, executor_id: str) -> None:
        with self.transaction() as conn:
            conn.execute(executors.delete().where(executors.c.id == executor_id))

    # -- reading ------------------------------------------------------------------------

    def _all(self, query: sa.Select[Any]) -> list[sa.Row[Any]]:
        with self.engine.connect() as conn:
            return list(conn.execute(query).all())

    def _first(self, query: sa.Select[Any]) -> sa.Row[Any] | None:
        with self.engine.connect() as conn:
            return conn.execute(query).first()

    def run(self, run_id: str) -> RunRecord | None:
        row = self._first(runs.select().where(runs.c.id == run_id))
        return None if row is None else rows.RUNS.record(row)

    def approval(self, run_id: str) -> str | None:
        """The run's plan approval as recorded when it began (JSON), or ``None``."""
        row = self._first(sa.select(runs.c.approval).where(runs.c.id == run_id))
        return None if row is None or row[0] is None else str(row[0])

    def runs(self) -> list[RunRecord]:
        query = runs.select().order_by(runs.c.created_at, runs.c.id)
        return [rows.RUNS.record(row) for row in self._all(query)]

    def run_ids_like(self, prefix: str) -> list[str]:
        query = sa.select(runs.c.id).where(runs.c.id.startswith(prefix, autoescape=True))
        return [row[0] for row in self._all(query)]

    def runs_carried_by(self, executor_id: str, states: Sequence[str]) -> list[str]:
        """The ids of the runs ``executor_id`` carries in one of ``states``."""
        query = sa.select(runs.c.id).where(runs.c.executor == executor_id, runs.c.state.in_(states))
        return [row[0] for row in self._all(query)]

    def versions(self, run_id: str) -> list[VersionRecord]:
        query = versions.select().where(versions.c.run_id == run_id).order_by(versions.c.seq)
        return [rows.VERSIONS.record(row) for row in self._all(query)]

    def _version_where(
        self, conn: sa.Connection | None, run_id: str, where: sa.ColumnElement[bool]
    ) -> VersionRecord | None:
        query = versions.select().where(versions.c.run_id == run_id, where)
        row = self._first(query) if conn is None else conn.execute(query).first()
        return None if row is None else rows.VERSIONS.record(row)

    def version(self, run_id: str, number: int) -> VersionRecord | None:
        return self._version_where(None, run_id, versions.c.number == number)

    def version_by_key(self, run_id: str, key: str) -> VersionRecord | None:
        return self._version_where(None, run_id, versions.c.key == key)

    def steps(self, run_id: str) -> list[StepRecord]:
        query = steps.select().where(steps.c.run_id == run_id).order_by(steps.c.created_at)
        return [rows.STEPS.record(row) for row in self._all(query)]

    def step(self, run_id: str, key: str) -> StepRecord | None:
        row = self._first(steps.select().where(steps.c.run_id == run_id, steps.c.key == key))
        return None if row is None else rows.STEPS.record(row)

    def checks(self, run_id: str, round_key: str | None = None) -> list[CheckRecord]:
        query = checks.select().where(checks.c.run_id == run_id)
        if round_key is not None:
            query = query.where(checks.c.round_key == round_key)
        query = query.order_by(checks.c.created_at, checks.c.idx)
        return [rows.CHECKS.record(row) for row in self._all(query)]

    def failures(self, run_id: str, turn: int | None = None) -> list[tuple[int, int, Failure]]:
        """``(turn, attempt, failure)`` rows, in order."""
        query = failures.select().where(failures.c.run_id == run_id)
        if turn is not None:
            query = query.where(failures.c.turn == turn)
        query = query.order_by(failures.c.turn, failures.c.attempt, failures.c.idx)
        return [(row.turn, row.attempt, rows.FAILURES.record(row)) for row in self._all(query)]

    def events(self, run_id: str, after: int = 0) -> list[Event]:
        query = (
            events.select()
            .where(events.c.run_id == run_id, events.c.seq > after)
            .order_by(events.c.seq)
        )
        return [rows.EVENTS.record(row) for row in self._all(query)]

    def event_kind(self, run_id: str, key: str) -> str | None:
        """The kind of the event with this key, or ``None`` if there is none."""
        query = sa.select(events.c.kind).where(events.c.run_id == run_id, events.c.key == key)
        row = self._first(query)
        return None if row is None else str(row[0])

    def reply(self, run_id: str, turn: int) -> str | None:
        query = sa.select(replies.c.message).where(
            replies.c.run_id == run_id, replies.c.turn == turn
        )
        row = self._first(query)
        return None if row is None else str(row[0])

    def executors(self) -> list[ExecutorRow]:
        return [
            (row.id, row.host, row.pid, row.role, row.seen_at)
            for row in self._all(executors.select())
        ]


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=60000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()
