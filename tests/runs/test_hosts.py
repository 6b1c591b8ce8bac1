"""Workers on two "hosts" share one PostgreSQL queue: each has its own host identity
(``PLANGATE_WORKER_HOST``), state root and HOME, as two machines would, and a short
heartbeat period (``PLANGATE_HEARTBEAT_SECONDS``), so that the test spans many periods.
Neither takes the other's live runs, no step runs twice, and a worker killed with kill -9
hands its run to the other within the documented time (:func:`handover_seconds`)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from plangate.runs.executors import handover_seconds, stale_seconds
from plangate.runs.store import Store
from testkit.git import git
from testkit.postgres import PostgresUnavailable, throwaway_postgres
from tests.runs.hosts import Host, state, submit, wait_until

pytestmark = pytest.mark.slow

PERIOD = "1"  # seconds between heartbeats: gone after 6 s, handed over within 8 s
LOAD_MARGIN = 20.0  # a 2-core machine shared by other test runs delays process start-up


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    try:
        with throwaway_postgres("plangate-hosts-pg-") as url:
            yield url
    except PostgresUnavailable as why:
        pytest.skip(str(why))


def test_a_heartbeat_refreshes_its_row_on_every_backend(tmp_path: Path, postgres_url: str) -> None:
    for url in (postgres_url, f"sqlite:///{tmp_path / 'runs.db'}"):
        store = Store(url)
        try:
            store.heartbeat("probe-x", "host-a", 1, "worker", 1.0)
            store.heartbeat("probe-x", "host-b", 2, "worker", 2.0)
            assert [row for row in store.executors() if row[0] == "probe-x"] == [
                ("probe-x", "host-b", 2, "worker", 2.0)
            ]
        finally:
            store.forget_executor("probe-x")
            store.close()


def test_workers_on_two_hosts_never_take_a_live_run_and_take_over_a_killed_one(
    tmp_path: Path, postgres_url: str
) -> None:
    env = {
        **os.environ,
        "PLANGATE_DATABASE_URL": postgres_url,
        "PLANGATE_HEARTBEAT_SECONDS": PERIOD,
    }
    env.pop("PLANGATE_WORKER_HOST", None)
    period = float(PERIOD)
    stale = stale_seconds({"PLANGATE_HEARTBEAT_SECONDS": PERIOD})
    store = Store(postgres_url)
    hosts = [Host(name, tmp_path, env) for name in ("host-a", "host-b")]
    try:
        wait_until(
            lambda: (
                {row[1] for row in store.executors() if row[3] == "worker"} >= {"host-a", "host-b"}
            ),
            "the workers did not start",
            hosts,
        )
        # Each run's steps take 3 x 2 s: the batch lasts many heartbeat periods, and every
        # run outlives the time after which a silent worker of another host counts as gone.
        steps: list[dict[str, object]] = [
            {"step": n, "write": {f"f{n}.txt": f"{n}\n"}, "sleep": 2.0} for n in (1, 2, 3)
        ]
        folders = [tmp_path / f"run{index}" for index in range(4)]
        ids = [submit(env, folder, steps) for folder in folders]
        oldest_beat = 0.0
        started = time.monotonic()

        def batch_done() -> bool:
            nonlocal oldest_beat
            now = time.time()
            for row in store.executors():
                if row[3] == "worker":
                    oldest_beat = max(oldest_beat, now - row[4])
            return all(state(store, run_id) == "done" for run_id in ids)

        wait_until(batch_done, "the runs did not finish", hosts)
        assert time.monotonic() - started > stale  # the batch outlived the staleness bound
        # Every beat was refreshed: no worker ever looked gone to the other.
        assert oldest_beat < stale, f"a heartbeat went {oldest_beat:.1f}s without a refresh"
        for folder, run_id in zip(folders, ids, strict=True):
            # No step ran twice.
            assert (folder / "log.txt").read_text().splitlines() == [
                "step v1 s1 t1 a0",
                "step v1 s2 t1 a0",
                "step v1 s3 t1 a0",
            ]
            run = store.run(run_id)
            assert run is not None and run.host in ("host-a", "host-b")
            assert run.carried_by is not None and run.carried_by.startswith(run.host)
            assert len(store.checks(run_id)) == 1
            # One git identity for step commits, whichever host carried them.
            who = git(folder / "repo", "log", "--format=%an <%ae> %cn <%ce>", "-3", run.branch)
            assert set(who.splitlines()) == {
                "plangate run <plangate@localhost> plangate run <plangate@localhost>"
            }
        logs = {host.name: host.log() for host in hosts}
        for name, text in logs.items():
            assert "resuming" not in text, f"{name} took a live run:\n{text}"
            assert "no longer owned" not in text, f"{name} lost a live run:\n{text}"
        taken = {name: text.count("took run ") for name, text in logs.items()}
        assert sum(taken.values()) == len(ids) and all(taken.values()), taken
        for run_id in ids:  # one log line per run taken, on the host the run names
            run = store.run(run_id)
            assert run is not None
            assert f"took run {run_id} turn 1" in logs[run.host or ""]

        # kill -9 of the worker carrying a run: the other resumes it after the last
        # completed step, within the documented time.
        go = tmp_path / "go"
        folder = tmp_path / "killed"
        run_id = submit(
            env,
            folder,
            [
                {"step": 1, "write": {"f1.txt": "1\n"}},
                {"step": 2, "write": {"f2.txt": "2\n"}, "wait_for": str(go)},
            ],
        )
        log = folder / "log.txt"
        wait_until(lambda: log.exists() and "s2" in log.read_text(), "step 2 did not start", hosts)
        run = store.run(run_id)
        assert run is not None and run.executor is not None
        carrier = next(host for host in hosts if host.name == run.host)
        other = next(host for host in hosts if host is not carrier)
        carrier.signal(signal.SIGKILL)
        carrier.process.wait()
        killed_at = time.monotonic()

        def taken_over() -> bool:
            record = store.run(run_id)
            return record is not None and record.host == other.name

        wait_until(taken_over, "the run was not handed over", [other])
        handover = time.monotonic() - killed_at
        print(f"handed over after {handover:.1f}s (documented bound {handover_seconds(env):.0f}s)")
        # Not before the killed worker could count as gone; within the documented bound
        # (plus a margin for a loaded machine: process and DBOS start-up are not timed).
        assert handover <= handover_seconds(env) + LOAD_MARGIN
        assert handover >= stale - period
        go.write_text("")
        wait_until(
            lambda: state(store, run_id) == "done", "the resumed run did not finish", [other]
        )
        lines = log.read_text().splitlines()
        # The completed step was not run again; only the one in flight was.
        assert lines == ["step v1 s1 t1 a0", "step v1 s2 t1 a0", "step v1 s2 t1 a0"]
        assert f"resuming run {run_id} turn 1 (it was carried by " in other.log()
        assert f"on {carrier.name})" in other.log()
    finally:
        for host in hosts:
            host.stop()
        store.close()
