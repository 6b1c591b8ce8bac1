"""The runs database's schema: its tables, where it is, and how it is made and brought up
to date.

SQLite file ``<state root>/runs.db`` by default; ``PLANGATE_DATABASE_URL=postgresql://…``
moves it (and DBOS's system tables, in schema ``dbos``) onto PostgreSQL. Tables:

=============  ================================================================================
``runs``       one row per run: where it works, its settings, state, turn, attempts, waiting
               (reason, detail), errored (error, log), notice, who carries it (executor id and
               host), and the plan's approval (JSON, :mod:`plangate.runs.approval`)
``versions``   every plan version the run had or was offered, accepted or refused, and why
``steps``      every step the agent carried out or escalated, with its commit and files
``failures``   every failure of a round (check, gate, escalation, review), one line each
``checks``     every check run, with its whole output
``events``     the conversation, append-only
``replies``    a person's replies, one per turn
``executors``  the processes serving runs, with a heartbeat (for recovering a dead one) and
               the workflow version they carry
``path_misses`` the hosts whose worker found a queued turn's paths missing, and the path
               (:mod:`plangate.runs.handoff`)
=============  ================================================================================

A database made by an older plangate gets the columns added since (:func:`create`); columns
are only ever added, and nullable, so older processes keep working on it.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from pathlib import Path

import sqlalchemy as sa

from plangate.errors import ConfigError
from plangate.locations import state_root
from plangate.state_root import RUNS_DATABASE

DATABASE_URL_ENV = "PLANGATE_DATABASE_URL"
DATABASE_FILE = RUNS_DATABASE
_PG_CREATE_LOCK = 7301962  # the advisory lock workers take to create the tables one at a time

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
    sa.Column("executor", sa.Text),  # the process carrying the run now (none between turns)
    sa.Column("carried_by", sa.Text),  # the process carrying it, or that carried it last
    sa.Column("host", sa.Text),  # carried_by's host (plangate.runs.host)
    sa.Column("error", sa.Text),
    sa.Column("error_log", sa.Text),
    sa.Column("notice", sa.Text),
    sa.Column("approval", sa.Text),  # the plan's review and approval when the run began (JSON)
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
    sa.Column("version", sa.String(64)),  # its APPLICATION_VERSION (none: an older plangate)
)

path_misses = sa.Table(
    "path_misses",
    metadata,
    sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id"), primary_key=True),
    sa.Column("turn", sa.Integer, primary_key=True),
    sa.Column("host", sa.String(255), primary_key=True),
    sa.Column("path", sa.Text, nullable=False),
    sa.Column("seen_at", sa.String(40), nullable=False),
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


def create(engine: sa.Engine) -> None:
    """Make the tables that do not exist yet, and add the columns a table lacks."""
    if engine.dialect.name == "sqlite":
        # Processes starting together race to create the tables; the losers see them.
        for attempt in range(10):
            try:
                with engine.begin() as conn:
                    metadata.create_all(conn)
                    _add_columns(conn)
                return
            except sa.exc.OperationalError as error:
                message = str(error.orig)
                if ("already exists" not in message and "duplicate column" not in message) or (
                    attempt == 9
                ):
                    raise
                time.sleep(0.05 * (attempt + 1))
        return
    # Several workers may start at once: one creates the tables, the others wait.
    with engine.begin() as conn:
        conn.execute(sa.text(f"SELECT pg_advisory_xact_lock({_PG_CREATE_LOCK})"))
        metadata.create_all(conn)
        _add_columns(conn)


def _add_columns(conn: sa.Connection) -> None:
    inspector = sa.inspect(conn)
    quote = conn.dialect.identifier_preparer.quote
    for table in metadata.sorted_tables:
        present = {column["name"] for column in inspector.get_columns(table.name)}
        for column in table.columns:
            if column.name in present:
                continue
            if not column.nullable:  # a rule for whoever adds a column, not for users
                raise RuntimeError(f"{table.name}.{column.name} is new: it must be nullable")
            kind = column.type.compile(dialect=conn.dialect)
            conn.execute(
                sa.text(f"ALTER TABLE {quote(table.name)} ADD COLUMN {quote(column.name)} {kind}")
            )
