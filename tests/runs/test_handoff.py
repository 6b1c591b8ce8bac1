"""Which worker takes a queued run, on PostgreSQL (docs/runs-design.md, "Workers on several
machines"):

- two workers as two hosts, where only one sees the runs' folder (the other runs under
  bubblewrap with that folder hidden, as a machine that does not share it): the one that
  cannot see a run leaves it to the one that can and says so in its log; a run that no live
  worker can see waits, naming the missing path and every host that tried;
- ``plangate run --detach`` with no live worker (only a dead one's stale row): it starts one
  background worker on this machine, which carries the run and stops once no run is left;
  with a live worker of another workflow version only, it starts nothing and says why.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from plangate.agents.confinement import bwrap_problem
from plangate.plan.model import Check
from plangate.processes import pid_alive
from plangate.runs.attempts import REASON_ERROR
from plangate.runs.executors import live_worker_rows
from plangate.runs.store import Store
from testkit.postgres import PostgresUnavailable, throwaway_postgres
from tests.runs.conftest import make_repo, plan_text, step
from tests.runs.hosts import Host, state, submit, wait_until

pytestmark = pytest.mark.slow

PERIOD = "1"  # seconds between heartbeats, as in test_hosts.py


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    try:
        with throwaway_postgres("plangate-handoff-pg-") as url:
            yield url
    except PostgresUnavailable as why:
        pytest.skip(str(why))


def _env(url: str) -> dict[str, str]:
    env = {**os.environ, "PLANGATE_DATABASE_URL": url, "PLANGATE_HEARTBEAT_SECONDS": PERIOD}
    env.pop("PLANGATE_WORKER_HOST", None)
    return env


def test_a_worker_leaves_a_run_it_cannot_see_to_a_worker_that_can(
    tmp_path: Path, postgres_url: str
) -> None:
    problem = bwrap_problem()
    if problem is not None:
        pytest.skip(problem)
    shared = tmp_path / "shared"  # the runs' repositories, worktrees and scripts
    shared.mkdir()
    env = _env(postgres_url)
    store = Store(postgres_url)
    sees = Host("host-a", tmp_path, env)
    blind = Host(
        "host-b",
        tmp_path,
        env,
        wrap=["bwrap", "--dev-bind", "/", "/", "--tmpfs", str(shared)],
    )
    hosts = [sees, blind]
    try:
        wait_until(
            lambda: {row[1] for row in live_worker_rows(store)} >= {"host-a", "host-b"},
            "the workers did not start",
            hosts,
        )
        # host-a is kept busy by a first run (one run at a time), so the next runs stay
        # queued while host-b looks at them.
        go = tmp_path / "go"
        hold = {"step": 1, "write": {"f1.txt": "1\n"}, "wait_for": str(go)}
        first = submit(env, shared / "run0", [hold])
        wait_until(lambda: (shared / "run0" / "log.txt").exists(), "run0 did not start", hosts)
        queued = [
            submit(env, shared / f"run{n}", [{"step": 1, "write": {"f1.txt": "1\n"}}])
            for n in (1, 2)
        ]
        # A run that neither host can see: host-b has no repository, host-a no script.
        lost = submit(env, shared / "run3", [{"step": 1, "write": {"f1.txt": "1\n"}}])
        script = shared / "run3" / "script.json"
        script.unlink()

        def left(host: Host, run_id: str, what: str, path: Path) -> str:
            return (
                f"leaving run {run_id} turn 1 to another worker: the run's {what} {path} "
                f"does not exist on host {host.name}"
            )

        wait_until(
            lambda: state(store, lost) == "waiting", "the run nobody sees did not wait", hosts
        )
        record = store.run(lost)
        assert record is not None and record.waiting is not None
        assert record.waiting.reason == REASON_ERROR
        assert record.waiting.detail.startswith(
            f"the run's repository {shared / 'run3' / 'repo'} does not exist on host host-b; "
            "no live worker can see the run's paths (hosts that tried: "
            f"host-a ({script}), host-b ({shared / 'run3' / 'repo'}))"
        ), record.waiting.detail
        assert left(sees, lost, "agent file", script) in sees.log()
        assert left(blind, lost, "repository", shared / "run3" / "repo") in blind.log()
        assert f"cannot carry run {lost} turn 1 here" in blind.log()
        for n, run_id in zip((1, 2), queued, strict=True):
            # host-b left it to host-a, busy as it is: the run is still queued, not waiting.
            assert left(blind, run_id, "repository", shared / f"run{n}" / "repo") in blind.log()
            assert state(store, run_id) == "queued"
            assert store.misses(run_id, 1) == {"host-b": str(shared / f"run{n}" / "repo")}

        go.write_text("")
        wait_until(
            lambda: all(state(store, run_id) == "done" for run_id in [first, *queued]),
            "the runs host-a can see did not finish",
            hosts,
        )
        for n, run_id in enumerate([first, *queued]):
            run = store.run(run_id)
            assert run is not None and run.host == "host-a"
            assert (shared / f"run{n}" / "log.txt").read_text().splitlines() == ["step v1 s1 t1 a0"]
            assert f"took run {run_id} turn 1" in sees.log()
        assert "took run" not in blind.log(), blind.log()
    finally:
        for host in hosts:
            host.stop()
        store.close()


def test_detach_with_no_live_worker_starts_one_here_that_stops_when_idle(
    tmp_path: Path, postgres_url: str
) -> None:
    env = _env(postgres_url)
    env["PLANGATE_STATE_ROOT"] = str(tmp_path / "state")
    store = Store(postgres_url)
    try:
        # No worker serves the database (those of another test stopped cleanly) ...
        assert [row for row in store.executors() if row[3] == "worker"] == []
        # ... but a worker of another machine that stopped beating long ago left its row.
        store.heartbeat("gone-1", "host-gone", 1, "worker", time.time() - 3600)
        repo = make_repo(tmp_path / "repo")
        (tmp_path / "plan.md").write_text(
            plan_text([step(1, ["f1.txt"])], [Check("test -f f1.txt", name="AC1")])
        )
        script = tmp_path / "script.json"
        steps = [{"step": 1, "write": {"f1.txt": "1\n"}}]
        script.write_text(json.dumps({"log": str(tmp_path / "log.txt"), "steps": steps}))
        command = [sys.executable, "-m", "plangate", "run", str(tmp_path / "plan.md"), "--repo",
                   str(repo), "--detach", "--agent", f"scripted:{script}"]  # fmt: skip
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        run_id = done.stdout.split()[1].rstrip(":")
        assert (
            "no live worker serves the runs database, so started a background worker here"
            in done.stdout
        )
        pid = int(done.stdout.split("(process ")[1].split(")")[0])
        deadline = time.monotonic() + 180
        while state(store, run_id) != "done" or pid_alive(pid):
            assert time.monotonic() < deadline, (state(store, run_id), pid_alive(pid))
            time.sleep(0.2)
        log = (tmp_path / "state" / "runs" / "worker.log").read_text()
        assert f"took run {run_id} turn 1" in log
        assert "worker done: no run left to take" in log
        run = store.run(run_id)
        assert run is not None and run.carried_by is not None
        assert run.carried_by.startswith(f"{run.host}-")
        # The background worker was the only one: it stopped and forgot its heartbeat, and
        # the dead worker's row, which had nothing left to resume.
        assert [row for row in store.executors() if row[3] == "worker"] == []

        # A live worker of another workflow version cannot take the run, but it is live:
        # nothing is started, and the command says why the run stays queued.
        store.heartbeat("old-1", "host-old", 1, "worker", time.time(), "plangate-runs-0")
        again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
        assert again.returncode == 0, again.stdout + again.stderr
        assert "every live worker runs another plangate workflow version" in again.stdout
        assert "started a background worker" not in again.stdout
        assert state(store, again.stdout.split()[1].rstrip(":")) == "queued"
    finally:
        store.forget_executor("old-1")
        store.forget_executor("gone-1")
        store.close()
