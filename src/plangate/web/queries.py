"""The run viewer's reads of the runs database, over read-only connections.

:class:`Reader` is the runs store (:class:`plangate.runs.store.Store`) opened read-only: its
own reading methods (``runs``, ``run``, ``versions``, ``steps``, ``checks``, ``failures``,
``events``) work unchanged, and any write fails in the database itself. A SQLite file is
opened with ``mode=ro``; a PostgreSQL connection runs its transactions ``READ ONLY``. The
few reads the store has no method for (the change stamp a page polls, each run's last event,
which executors are alive) are here too.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import sqlalchemy as sa

from plangate.errors import StateError
from plangate.runs import schema
from plangate.runs.executors import dead_executors
from plangate.runs.model import ACTIVE_STATES, Event
from plangate.runs.rows import EVENTS
from plangate.runs.store import Store, sqlalchemy_url


def sqlite_path(url: str) -> Path | None:
    """The file of a ``sqlite:///…`` URL, ``None`` for another database."""
    if not url.startswith("sqlite:///"):
        return None
    return Path(url.removeprefix("sqlite:///").split("?", 1)[0])


def read_only_url(url: str) -> str:
    """``url`` opened read-only: a SQLite file as ``file:…?mode=ro``; others unchanged."""
    path = sqlite_path(url)
    if path is None:
        return sqlalchemy_url(url)
    return f"sqlite:///file:{quote(str(path.resolve()))}?mode=ro&uri=true"


@dataclass(frozen=True, slots=True)
class Stamp:
    """What changes whenever anything a page shows changes; pages poll it."""

    value: str
    state: str | None = None


class Reader(Store):
    """The runs store, read-only. Thread-safe: every call takes its own connection."""

    def __init__(self, url: str) -> None:  # no super().__init__: that creates tables
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        path = sqlite_path(url)
        if path is not None and not path.exists():
            raise StateError(
                f"there is no runs database at {path}",
                "start a run with `plangate run`, or set PLANGATE_DATABASE_URL",
            )
        options: dict[str, Any] = {}
        if self.is_sqlite:
            options["connect_args"] = {"timeout": 10, "check_same_thread": False}
        else:
            options["pool_pre_ping"] = True
            options["execution_options"] = {"postgresql_readonly": True}
        self.engine = sa.create_engine(read_only_url(url), **options)
        if self.is_sqlite:
            sa.event.listen(self.engine, "connect", _read_only_pragmas)

    # -- what the store has no method for ------------------------------------------------

    def last_events(self) -> dict[str, Event]:
        """Each run's latest conversation line."""
        events = schema.events
        latest = (
            sa.select(events.c.run_id, sa.func.max(events.c.seq).label("seq"))
            .group_by(events.c.run_id)
            .subquery()
        )
        query = sa.select(events).join(
            latest, sa.and_(events.c.run_id == latest.c.run_id, events.c.seq == latest.c.seq)
        )
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return {row.run_id: EVENTS.record(row) for row in rows}

    def version_counts(self) -> dict[str, int]:
        """How many accepted versions each run has."""
        versions = schema.versions
        query = (
            sa.select(versions.c.run_id, sa.func.count())
            .where(versions.c.accepted.is_(True))
            .group_by(versions.c.run_id)
        )
        with self.engine.connect() as conn:
            return {row[0]: int(row[1]) for row in conn.execute(query).all()}

    def list_stamp(self) -> Stamp:
        """Changes whenever a run is added or changes, or any run's conversation grows."""
        runs, events = schema.runs, schema.events
        with self.engine.connect() as conn:
            count, updated = conn.execute(
                sa.select(sa.func.count(), sa.func.max(runs.c.updated_at))
            ).one()
            seq = conn.execute(sa.select(sa.func.max(events.c.seq))).scalar()
        return Stamp(f"{count}|{updated or ''}|{seq or 0}")

    def run_stamp(self, run_id: str) -> Stamp | None:
        """Changes whenever the run's row, conversation, versions, steps or checks change,
        or a host leaves its queued turn or misses another path (``path_misses``)."""
        runs, events = schema.runs, schema.events
        versions, steps, checks = schema.versions, schema.steps, schema.checks
        misses = schema.path_misses
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(runs.c.updated_at, runs.c.state).where(runs.c.id == run_id)
            ).first()
            if row is None:
                return None
            parts = [row.updated_at, row.state]
            for column, table in (
                (sa.func.max(events.c.seq), events),
                (sa.func.count(), versions),
                (sa.func.count(), steps),
                (sa.func.count(), checks),
            ):
                value = conn.execute(
                    sa.select(column).select_from(table).where(table.c.run_id == run_id)
                ).scalar()
                parts.append(str(value or 0))
            left = conn.execute(
                sa.select(misses.c.turn, misses.c.host, misses.c.path)
                .where(misses.c.run_id == run_id)
                .order_by(misses.c.turn, misses.c.host)
            ).all()
            # Each host and the path it misses, not only how many: a host whose missing
            # path changed redraws the page too.
            parts.append(hashlib.sha256(repr([tuple(m) for m in left]).encode()).hexdigest()[:16])
        return Stamp("|".join(parts), row.state)

    def executor_liveness(self) -> tuple[set[str], set[str]]:
        """The executors with a heartbeat row, and those of them that are gone (the engine's
        rule: :func:`plangate.runs.executors.dead_executors`)."""
        known = {row[0] for row in self.executors()}
        return known, set(dead_executors(self, sorted(known)))


def interrupted(state: str, executor: str | None, known: set[str], gone: set[str]) -> bool:
    """Whether a run is in flight in a process that is gone (the engine's rule)."""
    if state not in ACTIVE_STATES or state == "queued" or not executor:
        return False
    return executor not in known or executor in gone


def _read_only_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA query_only=1")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()
