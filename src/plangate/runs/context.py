"""What the workflow's steps share: this process's store and executor id, the values they
pass back to the workflow, and the reads most of them make.

:func:`bind` points the steps of this process at a store (the engine does, when it starts
DBOS). Every value here is picklable: DBOS records a step's result with pickle.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from plangate.agents import agent_files
from plangate.errors import AgentError, GitError, PlangateError
from plangate.plan.model import Plan
from plangate.plan.parse import parse_plan
from plangate.runs.host import host_name
from plangate.runs.model import Failure, RunRecord
from plangate.runs.store import Store


class _Context:
    """What the steps of this process use: the store and this executor's id."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.store: Store | None = None
        self.executor_id = ""
        self.host = ""
        self.log: Callable[[str], None] | None = None  # a worker's log: runs taken, resumed


CONTEXT = _Context()


def bind(store: Store, executor_id: str, log: Callable[[str], None] | None = None) -> None:
    """Point this process's workflow steps at ``store``; ``log`` gets one line per run this
    process takes or resumes (a worker's log)."""
    with CONTEXT.lock:
        CONTEXT.store = store
        CONTEXT.executor_id = executor_id
        CONTEXT.host = host_name()
        CONTEXT.log = log


def carrier_values() -> dict[str, str]:
    """The columns that say this process carries a run."""
    return {
        "executor": CONTEXT.executor_id,
        "carried_by": CONTEXT.executor_id,
        "host": CONTEXT.host,
    }


SHARED_PATHS_REMEDY = (
    "every worker must see a run's repository, worktree and agent files at the paths they "
    "had where the run was started (docs/runs-design.md, Workers on several machines); "
    "share them, or stop the workers that cannot see them, then reply to try again"
)


def unseen(run: RunRecord, store: Store) -> tuple[str, str] | None:
    """What and where the first path is that the run needs and this host cannot see (``("
    repository", "/srv/repo")``), or ``None``.

    The repository, the worktree once it was made (a turn was prepared: the run's first
    event), and the agent's files are stored as absolute paths where the run was started;
    a worker on another machine needs them at the same paths."""
    if not Path(run.repo).is_dir():
        return "repository", run.repo
    worktree = Path(run.worktree)
    if not (worktree / ".git").exists() and store.event_kind(run.id, "t1/start") is not None:
        return "worktree", str(worktree)
    for path in agent_files(run.agent):
        if not Path(path).is_file():
            return "agent file", str(path)
    return None


def missing_path(run: RunRecord, store: Store) -> PlangateError | None:
    """The error for the first path the run needs that this host cannot see, naming it and
    every host whose worker found a path of this turn missing; or ``None``."""
    found = unseen(run, store)
    if found is None:
        return None
    what, path = found
    host = CONTEXT.host or host_name()
    message = f"the run's {what} {path} does not exist on host {host}"
    tried = {**store.misses(run.id, run.turn), host: path}
    if len(tried) > 1:
        hosts = ", ".join(f"{name} ({tried[name]})" for name in sorted(tried))
        message += f"; no live worker can see the run's paths (hosts that tried: {hosts})"
    error = AgentError if what == "agent file" else GitError
    return error(message, SHARED_PATHS_REMEDY)


def take(run_id: str, turn: int) -> None:
    """Mark the run as carried here, and say so in the log: one line each time this process
    takes a turn or resumes one. Called by the workflow each time it starts executing (the
    first time, and after a recovery); it decides nothing, so a replay is unaffected."""
    store = store_()
    run = store.run(run_id)
    if run is None:
        return
    before = run.executor
    if before != CONTEXT.executor_id or run.host != CONTEXT.host:
        with store.transaction() as conn:
            store.update_run(conn, run_id, **carrier_values())
    if CONTEXT.log is None:
        return
    missing = missing_path(run, store)
    if missing is not None:  # the turn's first stage raises it: the run waits, naming it
        CONTEXT.log(f"cannot carry run {run_id} turn {turn} here: {missing.message}")
        return
    if before and before != CONTEXT.executor_id:
        where = f" on {run.host}" if run.host else ""
        CONTEXT.log(f"resuming run {run_id} turn {turn} (it was carried by {before}{where})")
    else:
        CONTEXT.log(f"took run {run_id} turn {turn}")


def store_() -> Store:
    store = CONTEXT.store
    if store is None:
        raise PlangateError("the runs engine is not started", "start it with plangate run")
    return store


def attempt_key(turn: int, attempt: int) -> str:
    return f"t{turn}/a{attempt}"


# -- values passed between steps ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TurnStart:
    has_plan: bool
    task: str | None
    plan_text: str | None
    version: int
    executed: tuple[int, ...]
    feedback: tuple[Failure, ...]
    reply: str | None
    attempts_allowed: int
    review: bool


@dataclass(frozen=True, slots=True)
class StepResult:
    status: Literal["done", "escalated"]
    failure: Failure | None = None


@dataclass(frozen=True, slots=True)
class ReplanResult:
    number: int | None
    plan_text: str | None
    detail: str


# -- helpers the steps share ----------------------------------------------------------------


def plan_of(run_id: str, version: int) -> Plan | None:
    if version <= 0:
        return None
    record = store_().version(run_id, version)
    if record is None:
        raise PlangateError(f"run {run_id} has no plan version {version}", "start a new run")
    return parse_plan(record.plan_text, source=f"<version {version}>")


def event(run_id: str, key: str, turn: int, kind: str, text: str) -> None:
    store = store_()
    with store.transaction() as conn:
        store.add_event(conn, run_id, key, turn, kind, text)


def set_state(run_id: str, state: str) -> None:
    store = store_()
    with store.transaction() as conn:
        store.update_run(conn, run_id, state=state)


def carried(run_id: str) -> tuple[Store, Path, str, str]:
    """The store, worktree, base commit and agent of the run; and the run marked as carried
    by this process (a turn resumed elsewhere after a crash changes hands)."""
    store = store_()
    run = store.run(run_id)
    if run is None:
        raise PlangateError(f"there is no run {run_id}", "see `plangate runs`")
    missing = missing_path(run, store)
    if missing is not None:
        raise missing
    if run.executor != CONTEXT.executor_id:
        with store.transaction() as conn:
            store.update_run(conn, run_id, **carrier_values())
    return store, Path(run.worktree), run.base_commit, run.agent
