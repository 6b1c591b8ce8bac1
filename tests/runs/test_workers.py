"""Several worker processes share one queue on a PostgreSQL server: every run is done
exactly once. The server is a throwaway one this module starts (``initdb`` + ``pg_ctl``)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from plangate.plan.model import Check
from testkit.git import git
from testkit.postgres import PostgresUnavailable, throwaway_postgres
from tests.runs.conftest import make_repo, plan_text, step

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL server of this module's own, stopped and removed afterwards."""
    try:
        with throwaway_postgres("plangate-pg-") as url:
            yield url
    except PostgresUnavailable as why:
        pytest.skip(str(why))


ENQUEUE = textwrap.dedent(
    """
    import json, sys
    from plangate.runs.engine import Engine, RunOptions
    engine = Engine()
    ids = []
    for case in json.loads(sys.argv[1]):
        run = engine.create(RunOptions(plan_path=case["plan"], repo=case["repo"],
                                       agent="scripted:" + case["script"]))
        engine.begin(run.id, 1, detach=True)
        ids.append(run.id)
    engine.shutdown()
    print(json.dumps(ids))
    """
)


def test_two_workers_share_one_queue(tmp_path: Path, postgres_url: str) -> None:
    from plangate.runs.store import Store

    env = dict(os.environ)
    env["PLANGATE_DATABASE_URL"] = postgres_url
    env["PLANGATE_STATE_ROOT"] = str(tmp_path / "state")
    store = Store(postgres_url)
    workers: list[subprocess.Popen[bytes]] = []
    outputs = []
    try:
        for index in range(2):
            output = open(tmp_path / f"worker{index}.out", "wb")  # noqa: SIM115
            outputs.append(output)
            workers.append(
                subprocess.Popen(
                    [sys.executable, "-m", "plangate", "worker", "--concurrency", "1"],
                    env=env,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                )
            )
        deadline = time.monotonic() + 60
        while sum(1 for row in store.executors() if row[3] == "worker") < 2:
            assert time.monotonic() < deadline, "the workers did not start"
            assert all(w.poll() is None for w in workers), "a worker stopped"
            time.sleep(0.1)

        cases = []
        plan = plan_text(
            [step(1, ["one.txt"]), step(2, ["two.txt"])],
            [Check("test -f one.txt && test -f two.txt", name="AC1")],
        )
        for index in range(6):
            folder = tmp_path / f"run{index}"
            repo = make_repo(folder / "repo")
            (folder / "plan.md").write_text(plan)
            script = {
                "log": str(folder / "log.txt"),
                "steps": [
                    {"step": 1, "write": {"one.txt": "1\n"}, "sleep": 0.3},
                    {"step": 2, "write": {"two.txt": "2\n"}},
                ],
            }
            (folder / "script.json").write_text(json.dumps(script))
            cases.append(
                {
                    "plan": str(folder / "plan.md"),
                    "repo": str(repo),
                    "script": str(folder / "script.json"),
                }
            )
        enqueued = subprocess.run(
            [sys.executable, "-c", ENQUEUE, json.dumps(cases)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert enqueued.returncode == 0, enqueued.stderr
        ids = json.loads(enqueued.stdout)
        assert len(ids) == 6

        deadline = time.monotonic() + 90
        while True:
            states = [store.run(run_id).state for run_id in ids]  # type: ignore[union-attr]
            if all(state == "done" for state in states):
                break
            assert time.monotonic() < deadline, f"runs not done: {states}"
            assert all(w.poll() is None for w in workers), "a worker stopped"
            time.sleep(0.2)

        for index, run_id in enumerate(ids):
            folder = tmp_path / f"run{index}"
            assert (folder / "log.txt").read_text().splitlines() == [
                "step v1 s1 t1 a0",
                "step v1 s2 t1 a0",
            ]
            run = store.run(run_id)
            assert run is not None
            subjects = git(folder / "repo", "log", "--format=%s", run.branch).splitlines()
            assert subjects == ["Step 2: Change 2", "Step 1: Change 1", "initial"]
            assert len(store.checks(run_id)) == 1

        # Both workers took runs.
        with store.engine.connect() as conn:
            import sqlalchemy as sa

            owners = (
                conn.execute(
                    sa.text(
                        "SELECT DISTINCT executor_id FROM dbos.workflow_status "
                        "WHERE status = 'SUCCESS'"
                    )
                )
                .scalars()
                .all()
            )
        assert len(owners) == 2
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.send_signal(signal.SIGTERM)
        for worker in workers:
            with contextlib.suppress(subprocess.TimeoutExpired):
                worker.wait(20)
            if worker.poll() is None:
                worker.kill()
                worker.wait()
        for output in outputs:
            output.close()
        store.close()
    for worker in workers:
        assert worker.returncode == 0
