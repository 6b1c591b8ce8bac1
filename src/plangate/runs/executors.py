"""The processes that serve runs: their heartbeats, which of them are gone, and putting the
turns of those that are gone back on the queue.

Every process that carries turns (a foreground ``plangate run`` or ``reply``, a worker) has a
DBOS executor id of its own and a row in the ``executors`` table that its heartbeat renews
every :func:`heartbeat_seconds` (:class:`Heartbeat`). An executor is gone when it has no row,
when it ran on this host and its process no longer exists
(:func:`plangate.processes.pid_alive`: a zombie counts as gone), or when it ran on another
host and its heartbeat is older than :func:`stale_seconds` (:func:`dead_executors`). A
worker's :func:`recover` puts the pending turns of gone executors back on the shared runs
queue, with the turns they had taken onto their own queues and not started
(:func:`plangate.runs.handoff.release`), where a live worker that sees a turn's paths takes
it and resumes it after its last completed step.

The host is :func:`host_name`: ``$PLANGATE_WORKER_HOST`` when set (two workers on one machine
that stand for two machines, or a container whose hostname is not stable), else the
machine's hostname. The period is ``$PLANGATE_HEARTBEAT_SECONDS`` (default
:data:`HEARTBEAT_SECONDS`); a process of another host is gone after :data:`STALE_BEATS`
periods without a beat.

A heartbeat that fails is logged; once heartbeats have failed for :func:`stale_seconds`, the
runs the process carries get a notice (``plangate show``, ``plangate runs``, the viewer),
since other workers may take them for gone.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence

from plangate.errors import ConfigError
from plangate.processes import pid_alive
from plangate.runs import errorlog, handoff
from plangate.runs.host import HOST_ENV as HOST_ENV
from plangate.runs.host import host_name as host_name
from plangate.runs.model import ACTIVE_STATES
from plangate.runs.store import ExecutorRow, Store

HEARTBEAT_SECONDS = 5.0
STALE_BEATS = 6  # periods without a beat after which a process of another host is gone
STALE_SECONDS = STALE_BEATS * HEARTBEAT_SECONDS  # with the default period: 30 s
HEARTBEAT_ENV = "PLANGATE_HEARTBEAT_SECONDS"

logger = logging.getLogger("plangate.runs")


def heartbeat_seconds(environ: Mapping[str, str] | None = None) -> float:
    """The heartbeat period: ``$PLANGATE_HEARTBEAT_SECONDS`` (0.1 to 600), else
    :data:`HEARTBEAT_SECONDS`. Every process sharing a database must use the same one."""
    env = os.environ if environ is None else environ
    text = env.get(HEARTBEAT_ENV, "").strip()
    if not text:
        return HEARTBEAT_SECONDS
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.1 <= value <= 600:
        raise ConfigError(
            f"{HEARTBEAT_ENV}={text!r} is not a number of seconds from 0.1 to 600",
            f"set {HEARTBEAT_ENV} to a period such as 5 (the same in every worker), or unset it",
        )
    return value


def stale_seconds(environ: Mapping[str, str] | None = None) -> float:
    """How long a process of another host may go without a beat before it counts as gone."""
    return STALE_BEATS * heartbeat_seconds(environ)


def handover_seconds(environ: Mapping[str, str] | None = None) -> float:
    """The documented bound on how long a run of a process killed on another host waits
    before a live worker resumes it: the process counts as gone after :func:`stale_seconds`,
    and a worker looks for gone processes once a period; one more period covers its queue
    poll and the start of the turn. With the default period, 40 s."""
    return stale_seconds(environ) + 2 * heartbeat_seconds(environ)


def dead_executors(
    store: Store,
    candidates: Sequence[str],
    *,
    me: str = "",
    clock: Callable[[], float] = time.time,
) -> list[str]:
    """The executors among ``candidates`` that are gone: no heartbeat row; on this host, a
    process that no longer exists; on another host, no heartbeat for :func:`stale_seconds`."""
    rows = {row[0]: row for row in store.executors()}
    host = host_name()
    stale = stale_seconds()
    now = clock()
    dead = []
    for executor in sorted(set(candidates)):
        if not executor or executor == me:
            continue
        row = rows.get(executor)
        if row is None:
            dead.append(executor)
            continue
        _id, row_host, pid, _role, seen_at = row
        if row_host == host:
            # Here the process table decides; a long silence covers a reused process id.
            gone = not pid_alive(pid) or now - seen_at > 10 * stale
        else:
            gone = now - seen_at > stale
        if gone:
            dead.append(executor)
    return dead


def live_worker_rows(store: Store, version: str | None = None) -> list[ExecutorRow]:
    """The worker processes with a fresh heartbeat; with ``version``, only those that may
    take a turn of that workflow version: of it, or of an older plangate that records none
    (it serves the shared queue itself)."""
    rows = [row for row in store.executors() if row[3] == "worker"]
    dead = set(dead_executors(store, [row[0] for row in rows]))
    versions = store.worker_versions() if version is not None else {}
    return [
        row
        for row in rows
        if row[0] not in dead and (version is None or versions.get(row[0]) in (version, None))
    ]


def live_workers(store: Store, version: str | None = None) -> int:
    """How many worker processes have a fresh heartbeat (of ``version``: see
    :func:`live_worker_rows`)."""
    return len(live_worker_rows(store, version))


def recover(store: Store, me: str) -> int:
    """Put the turns of executors that are gone back on the runs queue; how many.

    DBOS's own recovery puts a workflow that was started directly (a foreground ``plangate
    run``) on its internal queue, which every DBOS process serves, foreground ones too;
    here it goes to the runs queue instead, which only workers serve.
    """
    from dbos import DBOS
    from dbos._dbos import _get_dbos_instance
    from dbos._shard_keys import bind_shard_keys

    from plangate.runs import workflow

    pending = DBOS.list_workflows(
        status=["PENDING"],
        load_input=False,
        load_output=False,
        name=workflow.WORKFLOW_NAME,
        app_version=workflow.APPLICATION_VERSION,
    )
    owners = {flow.executor_id or "" for flow in pending}
    dead = dead_executors(store, sorted(owners), me=me)
    system = _get_dbos_instance()._sys_db
    count = 0
    for executor in dead:
        for flow in system.get_pending_workflows(executor, workflow.APPLICATION_VERSION):
            with bind_shard_keys({flow.workflow_id: flow.shard_key}):
                if system.reenqueue_for_recovery(flow.workflow_id, dead, workflow.QUEUE):
                    count += 1
    # A turn re-enqueued keeps the queue it came from: a gone worker's own queue, which
    # nobody serves; those, and the turns it had taken but not started, go back to the shared
    # queue, where the live workers check their paths again.
    handoff.release(store, me)
    gone = dead_executors(store, [row[0] for row in store.executors()])
    for executor in gone:
        if executor not in owners:  # nothing left to resume: forget it
            store.forget_executor(executor)
    return count


def busy(store: Store, me: str) -> bool:
    """Whether a turn waits on this worker's own queue, or one is in flight here or in a
    process that is gone. (A turn on the shared queue that this worker would take is moved
    onto its own queue by :func:`plangate.runs.handoff.claim` before this is asked, unless
    this worker has no room: then a turn is in flight here.)"""
    from dbos import DBOS

    from plangate.runs import workflow

    flows = DBOS.list_workflows(
        status=["ENQUEUED", "PENDING"],
        load_input=False,
        load_output=False,
        name=workflow.WORKFLOW_NAME,
    )
    if any(
        flow.status == "ENQUEUED" and flow.queue_name == handoff.own_queue(me) for flow in flows
    ):
        return True
    owners = [flow.executor_id or "" for flow in flows]
    if me in owners:
        return True
    return bool(dead_executors(store, owners, me=me))


class Heartbeat:
    """This process's heartbeat, and what it does when beats fail."""

    def __init__(self, store: Store, executor_id: str, version: str | None = None) -> None:
        self.store = store
        self.executor_id = executor_id
        self.version = version  # the workflow version this process carries
        self._failing_since: float | None = None  # when heartbeats began to fail
        self._beats_failed = 0
        self._marked = False  # the runs carried here show that heartbeats fail

    def beat(self, role: str, clock: Callable[[], float] = time.time) -> bool:
        """Record this process's heartbeat; whether it was recorded.

        A beat that fails is logged (the first with its traceback) and tried again at the
        next one. Once beats have failed for :func:`stale_seconds`, other processes may take
        this one for gone and resume its runs, so each run it carries gets a notice (shown by
        ``plangate show``, ``plangate runs`` and the viewer), cleared when a beat is recorded
        again.
        """
        when = clock()
        try:
            self.store.heartbeat(
                self.executor_id, host_name(), os.getpid(), role, when, self.version
            )
        except Exception as error:
            self._beats_failed += 1
            if self._failing_since is None:
                self._failing_since = when
                logger.warning(
                    "plangate: this process (%s) could not record its heartbeat; retrying "
                    "every %gs",
                    self.executor_id,
                    heartbeat_seconds(),
                    exc_info=True,
                )
            else:
                logger.warning(
                    "plangate: heartbeat failed %d times in a row, for %ds: %s",
                    self._beats_failed,
                    when - self._failing_since,
                    errorlog.describe(error),
                )
            if not self._marked and when - self._failing_since >= stale_seconds():
                self._marked = self._mark_carried(
                    f"this process ({self.executor_id}) has not recorded its heartbeat for "
                    f"{when - self._failing_since:.0f}s ({errorlog.describe(error)}); another "
                    "worker may take the run over"
                )
            return False
        if self._failing_since is not None:
            logger.warning(
                "plangate: heartbeat recorded again after %d failures", self._beats_failed
            )
            if self._marked:
                self._marked = not self._mark_carried(None)
            self._failing_since, self._beats_failed = None, 0
        return True

    def _mark_carried(self, notice: str | None) -> bool:
        """Set (or clear) the notice on the runs this process carries; whether it could."""
        try:
            store = self.store
            carried = store.runs_carried_by(self.executor_id, ACTIVE_STATES)
            with store.transaction() as conn:
                for run_id in carried:
                    store.update_run(conn, run_id, notice=notice)
        except Exception:
            logger.warning("plangate: could not mark the runs of this process", exc_info=True)
            return False
        return True
