"""Handing a queued turn to a worker that can see its paths.

A run's repository, worktree and agent files are absolute paths where it was started
(docs/runs-design.md, "Workers on several machines"). DBOS's queue gives a turn to whichever
listening worker polls first, with no filter, so no worker listens to the shared queue
(``plangate-runs``, where ``--detach``, a reply and the recovery put turns). Each worker
listens only to a queue of its own (:func:`own_queue`) and, while it has room, moves onto it
the queued turns it takes (:func:`claim`), one conditional update each, so two workers never
take the same turn. Before taking a turn it checks the paths
(:func:`plangate.runs.context.unseen`):

- it sees them: it takes the turn;
- it does not: it records ``host H cannot see path P`` for the turn (``path_misses``), logs
  ``leaving run … to another worker: …`` and leaves the turn queued for a worker that can;
- once every live worker of this workflow version has recorded a miss for the turn, the last
  to look takes it, and the turn waits naming the path and every host that tried.

A worker that is gone leaves the turns on its own queue; :func:`release` puts them back on
the shared queue (called by :func:`plangate.runs.executors.recover`), and a worker that stops
cleanly gives its own back (:func:`give_back`). DBOS is pinned (``pyproject.toml``): the move
is an update of its ``workflow_status`` row, the one place plangate writes DBOS's tables for
this.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from plangate.runs.context import unseen
from plangate.runs.host import host_name
from plangate.runs.store import Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from dbos._sys_db import SystemDatabase

OWN_QUEUE_SEPARATOR = "@"
SCAN_LIMIT = 100  # the oldest queued turns looked at per pass


def shared_queue() -> str:
    from plangate.runs import workflow

    return workflow.QUEUE


def own_queue(executor_id: str) -> str:
    """The queue only this worker listens to: the turns it took and has yet to start."""
    return f"{shared_queue()}{OWN_QUEUE_SEPARATOR}{executor_id}"


def parse_workflow_id(workflow_id: str) -> tuple[str, int] | None:
    """``(run id, turn)`` of a turn's workflow id (``<run>.t<turn>``), or ``None``."""
    run_id, _, turn = workflow_id.rpartition(".t")
    return (run_id, int(turn)) if run_id and turn.isdigit() else None


def live_hosts(store: Store, version: str) -> set[str]:
    """The hosts of the live workers that may take a turn of workflow ``version``."""
    from plangate.runs.executors import live_worker_rows

    return {row[1] for row in live_worker_rows(store, version)}


def claim(
    store: Store,
    me: str,
    concurrency: int,
    log: Callable[[str], None] | None = None,
    *,
    when_full: bool = True,
) -> int:
    """Take onto this worker's own queue the queued turns it can carry, while it has room
    for them; how many. Turns whose paths it cannot see are left to other workers (their
    miss recorded, and logged once), unless no live worker is left that has not tried.
    Without ``when_full``, a worker with no room does not look (the serve loop looks every
    poll, and once a heartbeat period ``when_full``, to record its misses)."""
    from plangate.runs import workflow

    system = _system()
    ws = system.tables.workflow_status
    mine = own_queue(me)
    host = host_name()
    room = concurrency - _count(ws, sa.or_(ws.c.queue_name == mine, ws.c.executor_id == me))
    if room <= 0 and not when_full:
        return 0
    queued = _queued(ws, workflow.APPLICATION_VERSION)
    taken = 0
    hosts: set[str] | None = None
    for flow_id in queued:
        parsed = parse_workflow_id(flow_id)
        run = store.run(parsed[0]) if parsed else None
        if parsed is None or run is None:
            continue
        run_id, turn = parsed
        found = unseen(run, store)
        if found is None and host in store.misses(run_id, turn):
            store.forget_miss(run_id, turn, host)  # it sees them now (a share mounted)
        if found is not None:
            what, path = found
            before = store.misses(run_id, turn)
            if before.get(host) != path:
                store.record_miss(run_id, turn, host, path)
                if log is not None:
                    log(
                        f"leaving run {run_id} turn {turn} to another worker: the run's "
                        f"{what} {path} does not exist on host {host}"
                    )
            if hosts is None:
                hosts = live_hosts(store, workflow.APPLICATION_VERSION)
            if hosts - set(before) - {host}:
                continue  # a live worker that has not tried may see it
        if taken >= room:
            continue  # keep looking: the misses of later turns are recorded all the same
        if _move(ws, flow_id, shared_queue(), mine, workflow.APPLICATION_VERSION):
            taken += 1
    return taken


def release(store: Store, me: str) -> int:
    """Put the turns left on the own queues of gone workers back on the shared queue, and
    drop those queues; how many turns."""
    from plangate.runs.executors import dead_executors

    system = _system()
    ws = system.tables.workflow_status
    prefix = own_queue("")
    query = (
        sa.select(ws.c.queue_name)
        .distinct()
        .where(ws.c.queue_name.startswith(prefix), ws.c.status == "ENQUEUED")
    )
    queues = {str(row[0]) for row in _rows(query)}
    queues |= {queue.name for queue in system.list_queues() if queue.name.startswith(prefix)}
    owners = [name.removeprefix(prefix) for name in sorted(queues)]
    return sum(give_back(executor) for executor in dead_executors(store, owners, me=me))


def give_back(executor_id: str) -> int:
    """Put the turns still waiting on this worker's own queue back on the shared queue, and
    drop the queue; how many turns."""
    system = _system()
    ws = system.tables.workflow_status
    mine = own_queue(executor_id)
    statement = (
        sa.update(ws)
        .where(ws.c.queue_name == mine, ws.c.status == "ENQUEUED")
        .values(queue_name=shared_queue(), updated_at=int(time.time() * 1000))
    )
    with system.engine.begin() as conn:
        count = conn.execute(statement).rowcount
    system.delete_queue(mine)
    return int(count or 0)


def _system() -> SystemDatabase:
    from dbos._dbos import _get_dbos_instance

    return _get_dbos_instance()._sys_db


def _queued(ws: sa.Table, version: str) -> list[str]:
    """The oldest turns on the shared queue, of this workflow version."""
    query = (
        sa.select(ws.c.workflow_uuid)
        .where(
            ws.c.queue_name == shared_queue(),
            ws.c.status == "ENQUEUED",
            ws.c.application_version == version,
        )
        .order_by(ws.c.created_at)
        .limit(SCAN_LIMIT)
    )
    return [str(row[0]) for row in _rows(query)]


def _count(ws: sa.Table, where: sa.ColumnElement[bool]) -> int:
    """How many turns are pending or queued under ``where``."""
    query = sa.select(sa.func.count()).where(where, ws.c.status.in_(("ENQUEUED", "PENDING")))
    value: int = _rows(query)[0][0]
    return int(value)


def _rows(query: sa.Select[Any]) -> list[sa.Row[Any]]:
    system = _system()
    with system.engine.begin() as conn:
        return list(conn.execute(query).all())


def _move(ws: sa.Table, flow_id: str, source: str, target: str, version: str) -> bool:
    """Move one queued turn from ``source`` to ``target``; whether this call moved it."""
    statement = (
        sa.update(ws)
        .where(
            ws.c.workflow_uuid == flow_id,
            ws.c.queue_name == source,
            ws.c.status == "ENQUEUED",
            ws.c.application_version == version,
        )
        .values(queue_name=target, updated_at=int(time.time() * 1000))
    )
    with _system().engine.begin() as conn:
        return bool(conn.execute(statement).rowcount)
