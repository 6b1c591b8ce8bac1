"""The hand-off's decisions, in this process on SQLite, with DBOS's real queue rows: which
queued turns a worker takes onto its own queue, which it leaves to others (and records), and
putting back the turns of a worker that is gone. The PostgreSQL proof with two hosts is
``test_handoff.py``."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

from plangate.plan.model import Check
from plangate.runs import handoff
from plangate.runs.host import host_name
from plangate.runs.store import Store
from tests.runs.conftest import make_repo, plan_text, step


def _queue(flow_id: str) -> str | None:
    from dbos import DBOS

    status = DBOS.get_workflow_status(flow_id)
    assert status is not None and status.status == "ENQUEUED"
    return status.queue_name


def _queued_run(engine: Any, folder: Path) -> str:
    from plangate.runs.engine import RunOptions

    repo = make_repo(folder / "repo")
    (folder / "plan.md").write_text(
        plan_text([step(1, ["f1.txt"])], [Check("test -f f1.txt", name="AC1")])
    )
    (folder / "script.json").write_text(json.dumps({"steps": []}))
    record = engine.create(
        RunOptions(
            plan_path=str(folder / "plan.md"),
            repo=str(repo),
            agent=f"scripted:{folder / 'script.json'}",
        )
    )
    engine.begin(record.id, 1, detach=True)
    return str(record.id)


def test_a_worker_takes_what_it_sees_leaves_the_rest_and_a_gone_one_gives_back(
    engine: Any, tmp_path: Path
) -> None:
    from dbos import DBOS

    from plangate.runs import workflow

    store: Store = engine.store
    here = host_name()
    lines: list[str] = []
    seen = _queued_run(engine, tmp_path / "seen")
    hidden = _queued_run(engine, tmp_path / "hidden")
    shutil.rmtree(tmp_path / "hidden" / "repo")  # not on this host
    flows = {run_id: workflow.workflow_id(run_id, 1) for run_id in (seen, hidden)}
    # A live worker of another host that has not looked at the runs yet.
    store.heartbeat("peer-1", "peer-host", 1, "worker", time.time(), workflow.APPLICATION_VERSION)
    # ... and one of another workflow version, which can take neither.
    store.heartbeat("old-1", "old-host", 1, "worker", time.time(), "plangate-runs-0")
    DBOS.register_queue(handoff.own_queue("me-1"), worker_concurrency=1)  # not listened to here
    try:
        # Room for two: it takes the run it sees, and leaves the other.
        assert handoff.claim(store, "me-1", 2, lines.append) == 1
        assert _queue(flows[seen]) == handoff.own_queue("me-1")
        assert _queue(flows[hidden]) == workflow.QUEUE  # left to peer-host
        missing = str(tmp_path / "hidden" / "repo")
        assert store.misses(hidden, 1) == {here: missing}
        assert lines == [
            f"leaving run {hidden} turn 1 to another worker: the run's repository {missing} "
            f"does not exist on host {here}"
        ]
        assert handoff.claim(store, "me-1", 2, lines.append) == 0
        assert len(lines) == 1  # said once

        # peer-host cannot see it either: no live worker of this version is left to try,
        # so the first worker with room takes it (its turn then waits, naming both hosts).
        store.record_miss(hidden, 1, "peer-host", "/elsewhere/repo")
        assert handoff.claim(store, "me-1", 1, lines.append) == 0  # no room: one is queued
        assert handoff.claim(store, "me-1", 2, lines.append) == 1
        assert _queue(flows[hidden]) == handoff.own_queue("me-1")
        # A full worker looks only once a period (when_full), to record its misses.
        later = _queued_run(engine, tmp_path / "later")
        flows[later] = workflow.workflow_id(later, 1)
        shutil.rmtree(tmp_path / "later" / "repo")
        assert handoff.claim(store, "me-1", 2, lines.append, when_full=False) == 0
        assert store.misses(later, 1) == {}
        assert handoff.claim(store, "me-1", 2, lines.append) == 0
        assert store.misses(later, 1) == {here: str(tmp_path / "later" / "repo")}

        # me-1 has no heartbeat: it is gone, and the turns it took go back.
        assert handoff.release(store, engine.executor_id) == 2
        assert {_queue(flow) for flow in flows.values()} == {workflow.QUEUE}  # `later` too
        assert handoff.own_queue("me-1") not in {queue.name for queue in _queues()}
        assert handoff.release(store, engine.executor_id) == 0
    finally:
        for flow in flows.values():
            DBOS.cancel_workflow(flow)
        store.forget_executor("peer-1")
        store.forget_executor("old-1")


def _queues() -> list[Any]:
    from dbos._dbos import _get_dbos_instance

    return list(_get_dbos_instance()._sys_db.list_queues())
