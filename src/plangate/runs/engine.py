"""Wiring: start a run, follow it, reply, serve the queue, list and show runs.

One :class:`Engine` per process (DBOS is a process-wide singleton). A process that carries a
run in the foreground (``plangate run``, ``plangate reply`` without ``--detach``) starts the
turn's workflow itself and listens to no queue, so it never takes someone else's run.
``--detach`` enqueues on the shared ``plangate-runs`` queue, which nobody listens to: a
worker (``plangate worker``) listens to a queue of its own and moves onto it the queued turns
whose paths it sees (:mod:`plangate.runs.handoff`).

Every process has its own DBOS executor id and a heartbeat row in ``executors``; a worker
recovers the turns of executors that are gone (:mod:`plangate.runs.executors`).
"""

from __future__ import annotations

import logging
import os
import secrets
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from plangate.errors import PlangateError, StateError, UsageError
from plangate.runs import creation, executors, handoff, summary
from plangate.runs.creation import RunOptions as RunOptions
from plangate.runs.executors import HEARTBEAT_SECONDS as HEARTBEAT_SECONDS
from plangate.runs.executors import STALE_SECONDS as STALE_SECONDS
from plangate.runs.executors import dead_executors as dead_executors
from plangate.runs.executors import live_workers as live_workers
from plangate.runs.model import ACTIVE_STATES as ACTIVE_STATES
from plangate.runs.model import ENDED_STATES, Event, RunRecord
from plangate.runs.store import Store, database_url
from plangate.runs.summary import errored_error
from plangate.runs.summary import event_line as event_line
from plangate.runs.summary import run_summary as run_summary

POLL_SECONDS = 0.2
QUEUE_POLL_SECONDS = 0.5
DEFAULT_CONCURRENCY = 1  # runs at once per worker: a run drives a whole agent session


def system_database_url(url: str) -> str:
    """DBOS's system database: next to a SQLite runs file (its own file, so the two never
    wait on each other's write lock), or the same PostgreSQL database (schema ``dbos``)."""
    if url.startswith("sqlite:///"):
        path = Path(url.removeprefix("sqlite:///"))
        return f"sqlite:///{path.with_name(path.stem + '-dbos' + path.suffix)}"
    return url


class Engine:
    """The runs engine of this process."""

    def __init__(self, url: str | None = None) -> None:
        self.url = url or database_url()
        self.store = Store(self.url)
        self.host = executors.host_name()
        self.executor_id = f"{self.host}-{os.getpid()}-{secrets.token_hex(3)}"
        self.heartbeat_seconds = executors.heartbeat_seconds()
        self.launched = False
        self.role = ""
        self.concurrency = DEFAULT_CONCURRENCY
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None
        self.heartbeat = executors.Heartbeat(self.store, self.executor_id)

    # -- lifecycle --------------------------------------------------------------------------

    def launch(
        self,
        *,
        listen: bool,
        concurrency: int | None = None,
        log: Callable[[str], None] | None = None,
    ) -> None:
        """Start DBOS in this process; with ``listen``, take runs from the queue. ``log``
        gets one line per run taken or resumed here."""
        if self.launched:
            return
        from dbos import DBOS, DBOSConfig

        from plangate.runs import workflow

        _quiet_dbos()
        self.role = "worker" if listen else "cli"
        self.concurrency = concurrency or DEFAULT_CONCURRENCY
        self.heartbeat.version = workflow.APPLICATION_VERSION
        self.store.heartbeat(
            self.executor_id,
            self.host,
            os.getpid(),
            self.role,
            time.time(),
            workflow.APPLICATION_VERSION,
        )
        self._beat = threading.Thread(
            target=self._heartbeat, name="plangate-heartbeat", daemon=True
        )
        self._beat.start()
        workflow.bind(self.store, self.executor_id, log)
        settings: DBOSConfig = {
            "name": "plangate",
            "system_database_url": system_database_url(self.url),
            "application_version": workflow.APPLICATION_VERSION,
            "executor_id": self.executor_id,
            "log_level": "WARNING",
        }
        try:
            DBOS(config=settings)
            # A worker serves only its own queue, onto which it moves the turns it can
            # carry (plangate.runs.handoff); nobody listens to the shared queue.
            own = handoff.own_queue(self.executor_id)
            DBOS.listen_queues([own] if listen else [])
            DBOS.launch()
            _carry_turns_on_daemon_threads()
            if listen:
                DBOS.register_queue(
                    own,
                    worker_concurrency=self.concurrency,
                    polling_interval_sec=QUEUE_POLL_SECONDS,
                    on_conflict="always_update",
                )
        except PlangateError:
            raise
        except Exception as error:
            raise StateError(
                f"cannot start the runs engine: {' '.join(str(error).split())}",
                "check PLANGATE_DATABASE_URL, or that the state root can be written",
            ) from error
        self.launched = True

    def in_flight(self) -> int:
        """How many turns this process is carrying now."""
        if not self.launched:
            return 0
        from dbos import DBOS

        from plangate.runs import workflow

        return len(
            DBOS.list_workflows(
                status=["PENDING"],
                executor_id=self.executor_id,
                name=workflow.WORKFLOW_NAME,
                load_input=False,
                load_output=False,
            )
        )

    def shutdown(self) -> bool:
        """Stop this process's engine. ``False`` if turns were still in flight: they are
        abandoned to the workers, which resume them once this process has exited. Turns run
        on daemon threads (:class:`_DaemonThreads`), so the caller just returns: nothing
        waits for them, and the process ends as it would have without them."""
        clean = True
        try:
            if self.launched:
                from dbos import DBOS

                if self.role == "worker":  # the turns it took and did not start
                    try:
                        handoff.give_back(self.executor_id)
                    except Exception:  # a worker that recovers ours puts them back
                        logging.getLogger("plangate.runs").warning(
                            "plangate: could not put back the turns this worker took",
                            exc_info=True,
                        )
                clean = self.in_flight() == 0
                DBOS.destroy(workflow_completion_timeout_sec=0)
                self.launched = False
        finally:
            self._stop.set()
            try:
                if clean:
                    self.store.forget_executor(self.executor_id)
            finally:
                self.store.close()
        return clean

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.heartbeat_seconds):
            self.beat()

    def beat(self, clock: Callable[[], float] = time.time) -> bool:
        """Record this process's heartbeat (:meth:`executors.Heartbeat.beat`)."""
        return self.heartbeat.beat(self.role, clock)

    # -- starting and replying ----------------------------------------------------------------

    def create(self, options: RunOptions) -> RunRecord:
        """Check what was asked and record the run (``queued``), with version 1 of its plan
        (:func:`plangate.runs.creation.create`)."""
        return creation.create(self.store, options)

    def begin(self, run_id: str, turn: int, *, detach: bool) -> None:
        """Start the turn's workflow here, or put it on the queue (``detach``)."""
        from dbos import DBOS, SetWorkflowID

        from plangate.runs import workflow

        self.launch(listen=False)
        with SetWorkflowID(workflow.workflow_id(run_id, turn)):
            if detach:
                DBOS.enqueue_workflow(workflow.QUEUE, workflow.run_turn, run_id, turn)
            else:
                DBOS.start_workflow(workflow.run_turn, run_id, turn)

    def reply(self, run_id: str, message: str) -> int:
        """Record a reply and the turn it starts; the new turn's number."""
        run = self.resolve(run_id)
        if not message.strip():
            raise UsageError("the reply is empty", 'write it: plangate reply RUN "message"')
        if run.state not in ENDED_STATES:
            raise UsageError(
                f"run {run.id} is {self.describe_state(run)}, not waiting on you",
                f"reply when `plangate show {run.id}` says Waiting on you",
            )
        turn = run.turn + 1
        if not self.store.claim_turn(run.id, turn, message.strip()):
            raise UsageError(
                f"run {run.id} moved on before the reply was recorded",
                f"see `plangate show {run.id}`",
            )
        return turn

    # -- following ------------------------------------------------------------------------------

    def wait(
        self,
        run_id: str,
        turn: int,
        *,
        on_event: Callable[[Event], None] | None = None,
        after: int = 0,
        timeout: float | None = None,
    ) -> RunRecord:
        """Wait until the run's ``turn`` ends (done or waiting); report events on the way.
        :class:`~plangate.errors.RunErroredError` if it ends ``errored``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        seen = after
        while True:
            for event in self.store.events(run_id, seen):
                seen = event.seq
                if on_event is not None:
                    on_event(event)
            run = self.store.run(run_id)
            if run is None:
                raise StateError(f"run {run_id} disappeared from the store", "see `plangate runs`")
            if run.turn >= turn and run.state in ENDED_STATES:
                for event in self.store.events(run_id, seen):
                    seen = event.seq
                    if on_event is not None:
                        on_event(event)
                self._settle(run_id, turn)
                if run.state == "errored" and run.turn == turn:
                    raise errored_error(run)
                return run
            self._check_turn(run_id, turn)
            if deadline is not None and time.monotonic() > deadline:
                raise StateError(
                    f"run {run_id} did not finish turn {turn} in {timeout}s",
                    f"see `plangate show {run_id}`",
                )
            time.sleep(POLL_SECONDS)

    def _settle(self, run_id: str, turn: int, limit: float = 30.0) -> None:
        """Wait for DBOS to record the end of a turn whose last step has run, so that a
        process that stops now does not leave the turn looking unfinished."""
        if not self.launched:
            return
        from dbos import DBOS

        from plangate.runs import workflow

        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            status = DBOS.get_workflow_status(workflow.workflow_id(run_id, turn))
            if status is None or status.status not in ("PENDING", "ENQUEUED"):
                return
            time.sleep(0.02)

    def _check_turn(self, run_id: str, turn: int) -> None:
        """Raise if the turn's workflow ended without ending the turn (a bug, or someone
        cancelled it with the DBOS tools): waiting for it would never end."""
        if not self.launched:
            return
        from dbos import DBOS

        from plangate.runs import workflow

        status = DBOS.get_workflow_status(workflow.workflow_id(run_id, turn))
        if status is None:
            return
        if status.status in ("ERROR", "CANCELLED") or status.status.startswith("MAX_RECOVERY"):
            error = " ".join(str(status.error or status.status).split())
            raise StateError(
                f"turn {turn} of run {run_id} stopped: {error}",
                f"see `plangate show {run_id}`; `plangate reply {run_id} MESSAGE` starts a "
                "new turn once it waits on you",
            )

    # -- serving the queue ------------------------------------------------------------------------

    def recover(self) -> int:
        """Put the turns of executors that are gone back on the runs queue; how many."""
        return executors.recover(self.store, self.executor_id)

    def busy(self) -> bool:
        """Whether a run is queued, or in flight here or in a process that is gone."""
        return executors.busy(self.store, self.executor_id)

    def serve(
        self,
        *,
        until_idle: bool = False,
        concurrency: int | None = None,
        log: Callable[[str], None] | None = None,
        stop: threading.Event | None = None,
    ) -> None:
        """Take runs from the queue until ``stop`` is set (or, with ``until_idle``, until
        none is left to take here), resuming the runs of processes that are gone."""
        self.launch(listen=True, concurrency=concurrency or DEFAULT_CONCURRENCY, log=log)
        stop = stop or threading.Event()
        idle = 0
        last_recovery = 0.0
        while not stop.is_set():
            period = time.monotonic() - last_recovery > self.heartbeat_seconds
            if period:
                last_recovery = time.monotonic()
                recovered = self.recover()
                if recovered and log is not None:
                    log(f"resuming {recovered} interrupted run turn(s)")
            # Every poll while it has room; once a period when full, to record its misses.
            handoff.claim(self.store, self.executor_id, self.concurrency, log, when_full=period)
            if until_idle:
                idle = 0 if self.busy() else idle + 1
                if idle >= 3:
                    return
            stop.wait(QUEUE_POLL_SECONDS)

    # -- reading ------------------------------------------------------------------------------

    def resolve(self, run_id: str) -> RunRecord:
        """The run with this id, or the only one whose id starts with it."""
        run = self.store.run(run_id)
        if run is not None:
            return run
        matches = self.store.run_ids_like(run_id) if run_id else []
        if len(matches) == 1:
            found = self.store.run(matches[0])
            assert found is not None
            return found
        if matches:
            raise UsageError(
                f"{run_id!r} matches {len(matches)} runs",
                "give more of the run's id (see `plangate runs`)",
            )
        raise UsageError(f"there is no run {run_id!r}", "see `plangate runs` for the run ids")

    def interrupted(self, run: RunRecord) -> bool:
        """Whether the run is in flight in a process that is gone."""
        if run.state not in ACTIVE_STATES or run.state == "queued" or not run.executor:
            return False
        return bool(executors.dead_executors(self.store, [run.executor]))

    def describe_state(self, run: RunRecord) -> str:
        """The state as ``plangate show`` says it (:func:`plangate.runs.summary.state_line`)."""
        return summary.state_line(run, interrupted=self.interrupted(run))


class _DaemonThreads(ThreadPoolExecutor):
    """DBOS's executor in plangate: every workflow (a run's turn) on a daemon thread of its
    own. A ``ThreadPoolExecutor``'s threads are joined when the interpreter exits, so a
    process that stops with a turn in flight (Ctrl+C on ``plangate run``, SIGTERM on a
    worker) would wait for the agent to finish; on a daemon thread the turn simply ends with
    the process, as if killed, and stays pending for a worker to resume. (Like DBOS's own
    ``_SharedExecutor``, it overrides ``submit``, so the pool itself never starts a thread.)
    """

    def __init__(self) -> None:
        super().__init__(max_workers=1)

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()

        def work() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                result = fn(*args, **kwargs)
            except BaseException as error:
                future.set_exception(error)
            else:
                future.set_result(result)

        threading.Thread(target=work, name="plangate-turn", daemon=True).start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        pass  # nothing to wait for: the turns end with the process


def _carry_turns_on_daemon_threads() -> None:
    """Give DBOS :class:`_DaemonThreads` for its workflows (DBOS is pinned: an internal)."""
    from dbos._dbos import _get_dbos_instance

    _get_dbos_instance()._executor_field = _DaemonThreads()


def _quiet_dbos() -> None:
    for name in ("dbos", "dbos._logger"):
        logging.getLogger(name).setLevel(logging.WARNING)


_DETACH = (
    "import subprocess, sys\n"
    "child = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL,"
    " stderr=subprocess.STDOUT, start_new_session=True)\n"
    "print(child.pid, file=sys.stderr)\n"
)


def spawn_worker() -> int:
    """Start ``plangate worker --until-idle`` in the background, detached from this process
    (a launcher starts it and exits, so it is nobody's child here), its output appended to
    ``<state root>/runs/worker.log``; its process id."""
    from plangate.state_root import RUNS, WORKER_LOG, StateRoot

    handle = StateRoot().folder(RUNS).appending(WORKER_LOG)
    try:
        launcher = subprocess.run(
            [
                sys.executable,
                "-c",
                _DETACH,
                sys.executable,
                "-m",
                "plangate",
                "worker",
                "--until-idle",
            ],
            stdin=subprocess.DEVNULL,
            stdout=handle,
            stderr=subprocess.PIPE,
            check=True,
            env=dict(os.environ),
        )
    finally:
        os.close(handle)
    return int(launcher.stderr.strip() or 0)
