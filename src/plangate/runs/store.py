"""The runs database, through SQLAlchemy Core.

SQLite file ``<state root>/runs.db`` by default; ``PLANGATE_DATABASE_URL=postgresql://…``
moves it (and DBOS's system tables, in schema ``dbos``) onto PostgreSQL. Tables:

=============  ================================================================================
``runs``       one row per run: where it works, its settings, state, turn, attempts, waiting
``versions``   every plan version the run had or was offered, accepted or refused, and why
``steps``      every step the agent carried out or escalated, with its commit and files
``failures``   every failure of a round (check, gate, escalation, review), one line each
``checks``     every check run, with its whole output
``events``     the conversation, append-only
``replies``    a person's replies, one per turn
``executors``  the processes serving runs, with a heartbeat (for recovering a dead one)
=============  ================================================================================

Every write from a workflow step is keyed, so a step that runs again after a crash writes
nothing twice (``INSERT … ON CONFLICT DO NOTHING``).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from plangate.errors import ConfigError, StateError
from plangate.locations import state_root
from plangate.runs.model import (
    CheckRecord,
    Event,
    Failure,
    FailureKind,
    RunRecord,
    RunState,
    StepRecord,
    Trigger,
    VersionRecord,
    Waiting,
)

DATABASE_URL_ENV = "PLANGATE_DATABASE_URL"
DATABASE_FILE = "runs.db"

metadata = sa.MetaData()

runs = sa.Table(
    "runs",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.Column("updated_at", sa.String(40), nullable=False),
    sa.Column("repo", sa.Text, nullable=False),
    sa.Column("base_commit", sa.String(64), nullable=False),
    sa.Column("branch", sa.Text, nullable=False),
    sa.Column("worktree", sa.Text, nullable=False),
    sa.Column("agent", sa.Text, nullable=False),
    sa.Column("task", sa.Text),
    sa.Column("plan_source", sa.Text),
    sa.Column("has_plan", sa.Boolean, nullable=False),
    sa.Column("title", sa.Text, nullable=False, server_default=""),
    sa.Column("attempts_allowed", sa.Integer, nullable=False),
    sa.Column("review", sa.Boolean, nullable=False),
    sa.Column("extra_checks", sa.Text, nullable=False, server_default="[]"),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("turn", sa.Integer, nullable=False, server_default="1"),
    sa.Column("attempts_used", sa.Integer, nullable=False, server_default="0"),
    sa.Column("version", sa.Integer, nullable=False, server_default="0"),
    sa.Column("waiting_reason", sa.Text),
    sa.Column("waiting_detail", sa.Text),
    sa.Column("last_message", sa.Text),
    sa.Column("executor", sa.Text),
)

versions = sa.Table(
    "versions",
    metadata,
    sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id"), primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True),
    sa.Column("key", sa.String(64), nullable=False),
    sa.Column("number", sa.Integer),
    sa.Column("trigger", sa.String(16), nullable=False),
    sa.Column("why", sa.Text, nullable=False),
    sa.Column("accepted", sa.Boolean, nullable=False),
    sa.Column("refusal", sa.Text),
    sa.Column("attempts_used", sa.Integer, nullable=False),
    sa.Column("plan_text", sa.Text, nullable=False),
    sa.Column("failures", sa.Text, nullable=False, server_default="[]"),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.UniqueConstraint("run_id", "key", name="versions_key"),
    sa.UniqueConstraint("run_id", "number", name="versions_number"),
)

steps = sa.Table(
    "steps",
    metadata,
    sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id"), primary_key=True),
    sa.Column("key", sa.String(96), primary_key=True),
    sa.Column("turn", sa.Integer, nullable=False),
    sa.Column("attempt", sa.Integer, nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("step", sa.Integer),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("commit", sa.String(64)),
    sa.Column("changed_files", sa.Text, nullable=False, server_default="[]"),
    sa.Column("message", sa.Text, nullable=False, server_default=""),
    sa.Column("escalation", sa.Text),
    sa.Column("evidence", sa.Text, nullable=False, server_default="[]"),
    sa.Column("created_at", sa.String(40), nullable=False),
)

failures = sa.Table(
    "failures",
    metadata,
    sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id"), primary_key=True),
    sa.Column("turn", sa.Integer, primary_key=True),
    sa.Column("attempt", sa.Integer, primary_key=True),
    sa.Column("idx", sa.Integer, primary_key=True),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("summary", sa.Text, nullable=False),
    sa.Column("output_tail", sa.Text, nullable=False, server_default=""),
    sa.Column("created_at", sa.String(40), nullable=False),
)

checks = sa.Table(
    "checks",
    metadata,
    sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id"), primary_key=True),
    sa.Column("round_key", sa.String(64), primary_key=True),
    sa.Column("idx", sa.Integer, primary_key=True),
    sa.Column("name", sa.Text),
    sa.Column("command", sa.Text, nullable=False),
    sa.Column("exit_code", sa.Integer),
    sa.Column("timed_out", sa.Boolean, nullable=False),
    sa.Column("duration_seconds", sa.Float, nullable=False),
    sa.Column("output", sa.Text, nullable=False),
    sa.Column("tail", sa.Text, nullable=False),
    sa.Column("created_at", sa.String(40), nullable=False),
)

events = sa.Table(
    "events",
    metadata,
    sa.Column("seq", sa.Integer, sa.Identity(), primary_key=True),
    sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id"), nullable=False),
    sa.Column("key", sa.String(128), nullable=False),
    sa.Column("turn", sa.Integer, nullable=False),
    sa.Column("kind", sa.String(32), nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.UniqueConstraint("run_id", "key", name="events_key"),
)

replies = sa.Table(
    "replies",
    metadata,
    sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id"), primary_key=True),
    sa.Column("turn", sa.Integer, primary_key=True),
    sa.Column("message", sa.Text, nullable=False),
    sa.Column("created_at", sa.String(40), nullable=False),
)

executors = sa.Table(
    "executors",
    metadata,
    sa.Column("id", sa.String(128), primary_key=True),
    sa.Column("host", sa.Text, nullable=False),
    sa.Column("pid", sa.Integer, nullable=False),
    sa.Column("role", sa.String(16), nullable=False),
    sa.Column("started_at", sa.String(40), nullable=False),
    sa.Column("seen_at", sa.Float, nullable=False),
)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def database_url(environ: dict[str, str] | None = None) -> str:
    """The runs database: ``$PLANGATE_DATABASE_URL``, else ``<state root>/runs.db``."""
    env = os.environ if environ is None else environ
    url = env.get(DATABASE_URL_ENV, "").strip()
    if url:
        if not url.startswith(("postgresql://", "postgres://", "postgresql+", "sqlite:")):
            raise ConfigError(
                f"{DATABASE_URL_ENV}={url.split('@')[-1]!r} is not a PostgreSQL or SQLite URL",
                f"set {DATABASE_URL_ENV} to postgresql://user:password@host:5432/database, "
                "or unset it to use a SQLite file in the state root",
            )
        return url
    return f"sqlite:///{Path(state_root()) / DATABASE_FILE}"


def sqlalchemy_url(url: str) -> str:
    """``url`` with the psycopg 3 driver named (SQLAlchemy would look for psycopg2)."""
    if url.startswith("postgres://"):
        url = "postgresql://" + url.removeprefix("postgres://")
    if url.startswith("postgresql://"):
        return "postgresql+psycopg://" + url.removeprefix("postgresql://")
    return url


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _failures_json(items: Sequence[Failure]) -> str:
    return _dumps([[f.kind, f.summary, f.output_tail] for f in items])


def _failures_from(text: str) -> tuple[Failure, ...]:
    return tuple(
        Failure(cast(FailureKind, kind), summary, tail) for kind, summary, tail in json.loads(text)
    )


class Store:
    """The runs database. Thread-safe: every call takes its own connection."""

    def __init__(self, url: str | None = None) -> None:
        self.url = url or database_url()
        self.is_sqlite = self.url.startswith("sqlite")
        kwargs: dict[str, Any] = {}
        if self.is_sqlite:
            path = self.url.removeprefix("sqlite:///")
            try:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise StateError(
                    f"cannot create the folder of the runs database {path}: {error}",
                    "set PLANGATE_STATE_ROOT to a folder you can write",
                ) from None
            kwargs["connect_args"] = {"timeout": 60, "check_same_thread": False}
        else:
            kwargs["pool_pre_ping"] = True
        self.engine = sa.create_engine(sqlalchemy_url(self.url), **kwargs)
        if self.is_sqlite:
            sa.event.listen(self.engine, "connect", _sqlite_pragmas)
        try:
            self._create_tables()
        except sa.exc.OperationalError as error:
            raise StateError(
                f"cannot open the runs database: {str(error.orig).strip()}",
                f"check {DATABASE_URL_ENV}, or that the state root can be written",
            ) from None

    def _create_tables(self) -> None:
        if self.is_sqlite:
            # Processes starting together race to create the tables; the losers see them.
            for attempt in range(10):
                try:
                    metadata.create_all(self.engine)
                    return
                except sa.exc.OperationalError as error:
                    if "already exists" not in str(error.orig) or attempt == 9:
                        raise
                    time.sleep(0.05 * (attempt + 1))
            return
        # Several workers may start at once: one creates the tables, the others wait.
        with self.engine.begin() as conn:
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(7301962)"))
            metadata.create_all(conn)

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def transaction(self) -> Iterator[sa.Connection]:
        with self.engine.begin() as conn:
            yield conn

    # -- writing ------------------------------------------------------------------------

    def _insert_ignore(
        self, conn: sa.Connection, table: sa.Table, values: dict[str, Any], keys: Sequence[str]
    ) -> bool:
        """Insert a row unless one with the same ``keys`` exists; whether it was inserted."""
        statement: Any
        if self.is_sqlite:
            statement = sqlite.insert(table).values(**values)
        else:
            statement = postgresql.insert(table).values(**values)
        statement = statement.on_conflict_do_nothing(index_elements=list(keys))
        result = conn.execute(statement)
        return bool(result.rowcount)

    def insert_run(self, conn: sa.Connection, record: RunRecord) -> None:
        conn.execute(
            runs.insert().values(
                id=record.id,
                created_at=record.created_at,
                updated_at=record.updated_at,
                repo=record.repo,
                base_commit=record.base_commit,
                branch=record.branch,
                worktree=record.worktree,
                agent=record.agent,
                task=record.task,
                plan_source=record.plan_source,
                has_plan=record.has_plan,
                title=record.title,
                attempts_allowed=record.attempts_allowed,
                review=record.review,
                extra_checks=_dumps(list(record.extra_checks)),
                state=record.state,
                turn=record.turn,
                attempts_used=record.attempts_used,
                version=record.version,
            )
        )

    def update_run(self, conn: sa.Connection, run_id: str, **values: Any) -> None:
        values["updated_at"] = now()
        conn.execute(runs.update().where(runs.c.id == run_id).values(**values))

    def claim_turn(self, run_id: str, turn: int, message: str) -> bool:
        """Record a reply and move a waiting (or done) run to ``turn``; ``False`` if the run
        is not waiting or done (another reply got there first, or it is running)."""
        with self.transaction() as conn:
            result = conn.execute(
                runs.update()
                .where(runs.c.id == run_id, runs.c.state.in_(("waiting", "done")))
                .where(runs.c.turn == turn - 1)
                .values(
                    state="queued",
                    turn=turn,
                    attempts_used=0,
                    waiting_reason=None,
                    waiting_detail=None,
                    updated_at=now(),
                )
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
        self._insert_ignore(
            conn,
            events,
            {
                "run_id": run_id,
                "key": key,
                "turn": turn,
                "kind": kind,
                "text": text,
                "created_at": now(),
            },
            ("run_id", "key"),
        )

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
        existing = conn.execute(
            versions.select().where(versions.c.run_id == run_id, versions.c.key == key)
        ).first()
        if existing is not None:
            return _version(existing)
        seq = conn.execute(
            sa.select(sa.func.coalesce(sa.func.max(versions.c.seq), 0)).where(
                versions.c.run_id == run_id
            )
        ).scalar_one()
        number = None
        if accepted:
            number = (
                conn.execute(
                    sa.select(sa.func.coalesce(sa.func.max(versions.c.number), 0)).where(
                        versions.c.run_id == run_id
                    )
                ).scalar_one()
                + 1
            )
        conn.execute(
            versions.insert().values(
                run_id=run_id,
                seq=seq + 1,
                key=key,
                number=number,
                trigger=trigger,
                why=why,
                accepted=accepted,
                refusal=refusal,
                attempts_used=attempts_used,
                plan_text=plan_text,
                failures=_failures_json(failure_items),
                created_at=now(),
            )
        )
        row = conn.execute(
            versions.select().where(versions.c.run_id == run_id, versions.c.key == key)
        ).one()
        return _version(row)

    def add_step(self, conn: sa.Connection, run_id: str, record: StepRecord) -> None:
        self._insert_ignore(
            conn,
            steps,
            {
                "run_id": run_id,
                "key": record.key,
                "turn": record.turn,
                "attempt": record.attempt,
                "version": record.version,
                "step": record.step,
                "status": record.status,
                "commit": record.commit,
                "changed_files": _dumps(list(record.changed_files)),
                "message": record.message,
                "escalation": record.escalation,
                "evidence": _dumps([[cid, list(paths)] for cid, paths in record.evidence]),
                "created_at": now(),
            },
            ("run_id", "key"),
        )

    def add_checks(self, conn: sa.Connection, run_id: str, records: Sequence[CheckRecord]) -> None:
        for record in records:
            self._insert_ignore(
                conn,
                checks,
                {
                    "run_id": run_id,
                    "round_key": record.round_key,
                    "idx": record.index,
                    "name": record.name,
                    "command": record.command,
                    "exit_code": record.exit_code,
                    "timed_out": record.timed_out,
                    "duration_seconds": record.duration_seconds,
                    "output": record.output,
                    "tail": record.tail,
                    "created_at": now(),
                },
                ("run_id", "round_key", "idx"),
            )

    def add_failures(
        self,
        conn: sa.Connection,
        run_id: str,
        turn: int,
        attempt: int,
        items: Sequence[Failure],
    ) -> None:
        for index, item in enumerate(items):
            self._insert_ignore(
                conn,
                failures,
                {
                    "run_id": run_id,
                    "turn": turn,
                    "attempt": attempt,
                    "idx": index,
                    "kind": item.kind,
                    "summary": item.summary,
                    "output_tail": item.output_tail,
                    "created_at": now(),
                },
                ("run_id", "turn", "attempt", "idx"),
            )

    def heartbeat(self, executor_id: str, host: str, pid: int, role: str, seen_at: float) -> None:
        with self.transaction() as conn:
            inserted = self._insert_ignore(
                conn,
                executors,
                {
                    "id": executor_id,
                    "host": host,
                    "pid": pid,
                    "role": role,
                    "started_at": now(),
                    "seen_at": seen_at,
                },
                ("id",),
            )
            if not inserted:
                conn.execute(
                    executors.update().where(executors.c.id == executor_id).values(seen_at=seen_at)
                )

    def forget_executor(self, executor_id: str) -> None:
        with self.transaction() as conn:
            conn.execute(executors.delete().where(executors.c.id == executor_id))

    # -- reading ------------------------------------------------------------------------

    def run(self, run_id: str) -> RunRecord | None:
        with self.engine.connect() as conn:
            row = conn.execute(runs.select().where(runs.c.id == run_id)).first()
        return None if row is None else _run(row)

    def runs(self) -> list[RunRecord]:
        with self.engine.connect() as conn:
            rows = conn.execute(runs.select().order_by(runs.c.created_at, runs.c.id)).all()
        return [_run(row) for row in rows]

    def run_ids_like(self, prefix: str) -> list[str]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(runs.c.id).where(runs.c.id.startswith(prefix, autoescape=True))
            ).all()
        return [row[0] for row in rows]

    def versions(self, run_id: str) -> list[VersionRecord]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                versions.select().where(versions.c.run_id == run_id).order_by(versions.c.seq)
            ).all()
        return [_version(row) for row in rows]

    def version(self, run_id: str, number: int) -> VersionRecord | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                versions.select().where(versions.c.run_id == run_id, versions.c.number == number)
            ).first()
        return None if row is None else _version(row)

    def version_by_key(self, run_id: str, key: str) -> VersionRecord | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                versions.select().where(versions.c.run_id == run_id, versions.c.key == key)
            ).first()
        return None if row is None else _version(row)

    def steps(self, run_id: str) -> list[StepRecord]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                steps.select().where(steps.c.run_id == run_id).order_by(steps.c.created_at)
            ).all()
        return [_step(row) for row in rows]

    def step(self, run_id: str, key: str) -> StepRecord | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                steps.select().where(steps.c.run_id == run_id, steps.c.key == key)
            ).first()
        return None if row is None else _step(row)

    def checks(self, run_id: str, round_key: str | None = None) -> list[CheckRecord]:
        query = checks.select().where(checks.c.run_id == run_id)
        if round_key is not None:
            query = query.where(checks.c.round_key == round_key)
        with self.engine.connect() as conn:
            rows = conn.execute(query.order_by(checks.c.created_at, checks.c.idx)).all()
        return [_check(row) for row in rows]

    def failures(self, run_id: str, turn: int | None = None) -> list[tuple[int, int, Failure]]:
        """``(turn, attempt, failure)`` rows, in order."""
        query = failures.select().where(failures.c.run_id == run_id)
        if turn is not None:
            query = query.where(failures.c.turn == turn)
        with self.engine.connect() as conn:
            rows = conn.execute(
                query.order_by(failures.c.turn, failures.c.attempt, failures.c.idx)
            ).all()
        return [
            (
                row.turn,
                row.attempt,
                Failure(cast(FailureKind, row.kind), row.summary, row.output_tail),
            )
            for row in rows
        ]

    def events(self, run_id: str, after: int = 0) -> list[Event]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                events.select()
                .where(events.c.run_id == run_id, events.c.seq > after)
                .order_by(events.c.seq)
            ).all()
        return [Event(row.seq, row.kind, row.text, row.turn, row.created_at) for row in rows]

    def event_kind(self, run_id: str, key: str) -> str | None:
        """The kind of the event with this key, or ``None`` if there is none."""
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(events.c.kind).where(events.c.run_id == run_id, events.c.key == key)
            ).first()
        return None if row is None else str(row[0])

    def reply(self, run_id: str, turn: int) -> str | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(replies.c.message).where(
                    replies.c.run_id == run_id, replies.c.turn == turn
                )
            ).first()
        return None if row is None else str(row[0])

    def executors(self) -> list[tuple[str, str, int, str, float]]:
        with self.engine.connect() as conn:
            rows = conn.execute(executors.select()).all()
        return [(row.id, row.host, row.pid, row.role, row.seen_at) for row in rows]


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=60000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _run(row: sa.Row[Any]) -> RunRecord:
    waiting = None
    if row.state == "waiting" and row.waiting_reason:
        waiting = Waiting(row.waiting_reason, row.waiting_detail or "", row.last_message or "")
    return RunRecord(
        id=row.id,
        created_at=row.created_at,
        updated_at=row.updated_at,
        repo=row.repo,
        base_commit=row.base_commit,
        branch=row.branch,
        worktree=row.worktree,
        agent=row.agent,
        task=row.task,
        plan_source=row.plan_source,
        has_plan=bool(row.has_plan),
        attempts_allowed=row.attempts_allowed,
        review=bool(row.review),
        extra_checks=tuple(json.loads(row.extra_checks)),
        state=cast(RunState, row.state),
        turn=row.turn,
        attempts_used=row.attempts_used,
        version=row.version,
        waiting=waiting,
        title=row.title,
        executor=row.executor,
    )


def _version(row: sa.Row[Any]) -> VersionRecord:
    return VersionRecord(
        seq=row.seq,
        number=row.number,
        trigger=cast(Trigger, row.trigger),
        why=row.why,
        accepted=bool(row.accepted),
        refusal=row.refusal,
        attempts_used=row.attempts_used,
        plan_text=row.plan_text,
        failures=_failures_from(row.failures),
        created_at=row.created_at,
    )


def _step(row: sa.Row[Any]) -> StepRecord:
    return StepRecord(
        key=row.key,
        turn=row.turn,
        attempt=row.attempt,
        version=row.version,
        step=row.step,
        status=row.status,
        commit=row.commit,
        changed_files=tuple(json.loads(row.changed_files)),
        message=row.message,
        escalation=row.escalation,
        evidence=tuple((cid, tuple(paths)) for cid, paths in json.loads(row.evidence)),
    )


def _check(row: sa.Row[Any]) -> CheckRecord:
    return CheckRecord(
        round_key=row.round_key,
        index=row.idx,
        name=row.name,
        command=row.command,
        exit_code=row.exit_code,
        timed_out=bool(row.timed_out),
        duration_seconds=row.duration_seconds,
        output=row.output,
        tail=row.tail,
    )
