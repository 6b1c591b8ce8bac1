"""Wiring: start a run, follow it, reply, serve the queue, list and show runs.

One :class:`Engine` per process (DBOS is a process-wide singleton). A process that carries a
run in the foreground (``plangate run``, ``plangate reply`` without ``--detach``) starts the
turn's workflow itself and listens to no queue, so it never takes someone else's run; a
worker (``plangate worker``) listens to the ``plangate-runs`` queue. ``--detach`` enqueues.

Every process has its own DBOS executor id and a heartbeat row in ``executors``. A worker
recovers the workflows of executors that are gone (same host: the process no longer exists;
any host: no heartbeat for :data:`STALE_SECONDS`): DBOS puts them back on a queue and one
live process takes each, resuming it after its last completed step.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plangate import config
from plangate.agents import load_agent
from plangate.errors import PlangateError, StateError, UsageError
from plangate.locations import state_root
from plangate.plan.parse import parse_plan
from plangate.plan.render import render_plan
from plangate.plan.validate import validate_plan
from plangate.runs import sandbox
from plangate.runs.attempts import TRIGGER_SENTENCES
from plangate.runs.model import Event, RunRecord
from plangate.runs.store import Store, database_url, now

HEARTBEAT_SECONDS = 5.0
STALE_SECONDS = 30.0
POLL_SECONDS = 0.2
QUEUE_POLL_SECONDS = 0.5
DEFAULT_CONCURRENCY = 1  # runs at once per worker: a run drives a whole agent session
ACTIVE_STATES = ("queued", "running", "checking", "replanning")


def system_database_url(url: str) -> str:
    """DBOS's system database: next to a SQLite runs file (its own file, so the two never
    wait on each other's write lock), or the same PostgreSQL database (schema ``dbos``)."""
    if url.startswith("sqlite:///"):
        path = Path(url.removeprefix("sqlite:///"))
        return f"sqlite:///{path.with_name(path.stem + '-dbos' + path.suffix)}"
    return url


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def dead_executors(store: Store, candidates: Sequence[str], *, me: str = "") -> list[str]:
    """The executors among ``candidates`` that are gone: no heartbeat row; on this host, a
    process that no longer exists; on another host, no heartbeat for :data:`STALE_SECONDS`."""
    rows = {row[0]: row for row in store.executors()}
    host = socket.gethostname()
    clock = time.time()
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
            gone = not _pid_alive(pid) or clock - seen_at > 10 * STALE_SECONDS
        else:
            gone = clock - seen_at > STALE_SECONDS
        if gone:
            dead.append(executor)
    return dead


@dataclass(frozen=True, slots=True)
class RunOptions:
    """What ``plangate run`` was asked for."""

    plan_path: str | None = None
    task: str | None = None
    repo: str = "."
    attempts: int | None = None
    checks: tuple[str, ...] = ()
    review: bool = False
    agent: str = "claude-code"


class Engine:
    """The runs engine of this process."""

    def __init__(self, url: str | None = None) -> None:
        self.url = url or database_url()
        self.store = Store(self.url)
        self.executor_id = f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"
        self.launched = False
        self.role = ""
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------------

    def launch(self, *, listen: bool, concurrency: int | None = None) -> None:
        """Start DBOS in this process; with ``listen``, take runs from the queue."""
        if self.launched:
            return
        from dbos import DBOS, DBOSConfig

        from plangate.runs import workflow

        _quiet_dbos()
        self.role = "worker" if listen else "cli"
        self.store.heartbeat(
            self.executor_id, socket.gethostname(), os.getpid(), self.role, time.time()
        )
        self._beat = threading.Thread(
            target=self._heartbeat, name="plangate-heartbeat", daemon=True
        )
        self._beat.start()
        workflow.bind(self.store, self.executor_id)
        settings: DBOSConfig = {
            "name": "plangate",
            "system_database_url": system_database_url(self.url),
            "application_version": workflow.APPLICATION_VERSION,
            "executor_id": self.executor_id,
            "log_level": "WARNING",
        }
        try:
            DBOS(config=settings)
            DBOS.listen_queues([workflow.QUEUE] if listen else [])
            DBOS.launch()
            if listen:
                DBOS.register_queue(
                    workflow.QUEUE,
                    worker_concurrency=concurrency,
                    polling_interval_sec=QUEUE_POLL_SECONDS,
                    on_conflict="always_update",
                )
        except PlangateError:
            raise
        except Exception as error:
            raise StateError(
                f"cannot start the runs engine: {' '.join(str(error).split())}",
                "check PLANGATE_DATABASE_URL, or that the state root can be written",
            ) from None
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
        abandoned to the workers, which resume them once this process has exited, so the
        caller should end the process now (``os._exit``) rather than wait for them."""
        clean = True
        try:
            if self.launched:
                from dbos import DBOS

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
        host, pid = socket.gethostname(), os.getpid()
        while not self._stop.wait(HEARTBEAT_SECONDS):
            try:
                self.store.heartbeat(self.executor_id, host, pid, self.role, time.time())
            except Exception:  # a missed beat is retried; a long outage makes us look dead
                continue

    # -- starting and replying ----------------------------------------------------------------

    def create(self, options: RunOptions) -> RunRecord:
        """Check what was asked and record the run (``queued``), with version 1 of its plan."""
        if (options.plan_path is None) == (options.task is None):
            raise UsageError(
                "give a plan file or --task, not both and not neither",
                "run `plangate run PLAN.md` or `plangate run --task TEXT`",
            )
        attempts = options.attempts
        if attempts is None:
            value, _source = config.resolve("run_attempts")
            attempts = int(value)
        if attempts < 1:
            raise UsageError(f"--attempts {attempts} is less than 1", "give --attempts 1 or more")
        load_agent(options.agent)  # an unknown agent is refused now, not in the worker
        head = sandbox.repo_head(options.repo)
        plan_text = None
        title = (options.task or "").strip().splitlines()[0][:80] if options.task else ""
        if options.plan_path is not None:
            path = Path(options.plan_path)
            try:
                raw = path.read_text(encoding="utf-8")
            except OSError as error:
                raise UsageError(
                    f"cannot read the plan {path}: {error.strerror or error}",
                    "give the path of a plan file (docs/plan-format.md)",
                ) from None
            plan = parse_plan(raw, source=str(path))
            problems = validate_plan(plan)
            if problems:
                raise UsageError(
                    f"the plan {path} cannot run: {problems[0]}"
                    + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""),
                    "fix the plan (docs/plan-format.md lists what validate_plan reports)",
                )
            plan_text = render_plan(plan)
            title = plan.title
        run_id = secrets.token_hex(4)
        worktree = Path(state_root()) / "runs" / run_id / "worktree"
        stamp = now()
        record = RunRecord(
            id=run_id,
            created_at=stamp,
            updated_at=stamp,
            repo=head.toplevel,
            base_commit=head.commit,
            branch=f"plangate/run-{run_id}",
            worktree=str(worktree),
            agent=options.agent,
            task=options.task,
            plan_source=None
            if options.plan_path is None
            else str(Path(options.plan_path).resolve()),
            has_plan=plan_text is not None,
            attempts_allowed=attempts,
            review=options.review,
            extra_checks=tuple(options.checks),
            state="queued",
            turn=1,
            attempts_used=0,
            version=1 if plan_text is not None else 0,
            title=title,
        )
        store = self.store
        with store.transaction() as conn:
            store.insert_run(conn, record)
            if plan_text is not None:
                store.add_version(
                    conn,
                    run_id,
                    "initial",
                    accepted=True,
                    trigger="initial",
                    why=TRIGGER_SENTENCES["initial"],
                    refusal=None,
                    attempts_used=0,
                    plan_text=plan_text,
                )
        return record

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
        if run.state not in ("waiting", "done"):
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
        """Wait until the run's ``turn`` ends (done or waiting); report events on the way."""
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
            if run.turn >= turn and run.state in ("waiting", "done"):
                for event in self.store.events(run_id, seen):
                    seen = event.seq
                    if on_event is not None:
                        on_event(event)
                self._settle(run_id, turn)
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
        gone = dead_executors(self.store, [row[0] for row in self.store.executors()])
        for executor in gone:
            if executor not in owners:  # nothing left to resume: forget it
                self.store.forget_executor(executor)
        dead = dead_executors(self.store, sorted(owners), me=self.executor_id)
        if not dead:
            return 0
        system = _get_dbos_instance()._sys_db
        count = 0
        for executor in dead:
            for flow in system.get_pending_workflows(executor, workflow.APPLICATION_VERSION):
                with bind_shard_keys({flow.workflow_id: flow.shard_key}):
                    if system.reenqueue_for_recovery(flow.workflow_id, dead, workflow.QUEUE):
                        count += 1
        return count

    def busy(self) -> bool:
        """Whether a run is queued, or in flight here or in a process that is gone."""
        from dbos import DBOS

        from plangate.runs import workflow

        flows = DBOS.list_workflows(
            status=["ENQUEUED", "PENDING"],
            load_input=False,
            load_output=False,
            name=workflow.WORKFLOW_NAME,
        )
        if any(flow.status == "ENQUEUED" for flow in flows):
            return True
        owners = [flow.executor_id or "" for flow in flows]
        if self.executor_id in owners:
            return True
        return bool(dead_executors(self.store, owners, me=self.executor_id))

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
        self.launch(listen=True, concurrency=concurrency or DEFAULT_CONCURRENCY)
        stop = stop or threading.Event()
        idle = 0
        last_recovery = 0.0
        while not stop.is_set():
            if time.monotonic() - last_recovery > HEARTBEAT_SECONDS:
                last_recovery = time.monotonic()
                recovered = self.recover()
                if recovered and log is not None:
                    log(f"resuming {recovered} interrupted run turn(s)")
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
        return bool(dead_executors(self.store, [run.executor]))

    def describe_state(self, run: RunRecord) -> str:
        if self.interrupted(run):
            return f"{run.state} (interrupted: `plangate worker --until-idle` resumes it)"
        return run.state


def _quiet_dbos() -> None:
    for name in ("dbos", "dbos._logger"):
        logging.getLogger(name).setLevel(logging.WARNING)


_DETACH = (
    "import subprocess, sys\n"
    "child = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL,"
    " stderr=subprocess.STDOUT, start_new_session=True)\n"
    "print(child.pid, file=sys.stderr)\n"
)


def spawn_worker(log_path: Path) -> int:
    """Start ``plangate worker --until-idle`` in the background, detached from this process
    (a launcher starts it and exits, so it is nobody's child here); its process id."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as handle:
        launcher = subprocess.run(
            [
                sys.executable,
                "-c",
                _DETACH,
                sys.executable,
                "-m",
                "plangate.runs.worker",
                "--until-idle",
            ],
            stdin=subprocess.DEVNULL,
            stdout=handle,
            stderr=subprocess.PIPE,
            check=True,
            env=dict(os.environ),
        )
    return int(launcher.stderr.strip() or 0)


def live_workers(store: Store) -> int:
    """How many worker processes have a fresh heartbeat."""
    rows = [row for row in store.executors() if row[3] == "worker"]
    dead = set(dead_executors(store, [row[0] for row in rows]))
    return sum(1 for row in rows if row[0] not in dead)


def event_line(run_id: str, event: Event) -> str:
    """How ``plangate run`` prints a conversation line."""
    if event.kind == "plan_changed":
        number = event.text.split("version ", 1)[1].split(":", 1)[0]
        return f"{event.text} View version {number}: plangate show {run_id} --version {number}"
    if event.kind == "agent":
        return "Agent: " + event.text.replace("\n", "\n  ")
    return event.text


def run_summary(run: RunRecord) -> dict[str, Any]:
    return {
        "id": run.id,
        "state": run.state,
        "title": run.title,
        "turn": run.turn,
        "attempts_used": run.attempts_used,
        "attempts_allowed": run.attempts_allowed,
        "version": run.version,
        "created_at": run.created_at,
        "updated_at": run.updated_at,
    }
