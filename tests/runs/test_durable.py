"""A run killed inside a step resumes from its last completed step: nothing lost, nothing
done twice (only the step in flight runs again)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from plangate.plan.model import Check
from plangate.processes import pid_alive
from plangate.runs.store import Store
from testkit.git import git
from tests.runs.conftest import make_repo, plan_text, step

pytestmark = pytest.mark.slow


def _env(state: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PLANGATE_STATE_ROOT"] = str(state)
    env.pop("PLANGATE_DATABASE_URL", None)
    return env


def _wait_for(predicate, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_killed_inside_a_step_resumes_without_redoing_work(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    state = tmp_path / "state"
    log = tmp_path / "log.txt"
    checks_ran = tmp_path / "checks.txt"
    go = tmp_path / "go"
    plan = plan_text(
        [step(1, ["one.txt"]), step(2, ["two.txt"]), step(3, ["three.txt"])],
        [Check(f"echo ran >> {checks_ran} && test -f one.txt && test -f three.txt", name="AC1")],
    )
    (tmp_path / "plan.md").write_text(plan)
    script = {
        "log": str(log),
        "steps": [
            {"step": 1, "write": {"one.txt": "1\n"}},
            {"step": 2, "wait_for": str(go), "write": {"two.txt": "2\n"}},
            {"step": 3, "write": {"three.txt": "3\n"}},
        ],
    }
    (tmp_path / "script.json").write_text(json.dumps(script))
    command = [
        sys.executable,
        "-m",
        "plangate",
        "run",
        str(tmp_path / "plan.md"),
        "--repo",
        str(repo),
        "--agent",
        f"scripted:{tmp_path / 'script.json'}",
    ]
    output = open(tmp_path / "first.out", "wb")  # noqa: SIM115 - closed below
    first = subprocess.Popen(command, env=_env(state), stdout=output, stderr=subprocess.STDOUT)
    try:
        _wait_for(
            lambda: log.exists() and "step v1 s2 t1 a0" in log.read_text(), 60, "step 2 to start"
        )
        time.sleep(0.3)  # well inside step 2
        first.send_signal(signal.SIGKILL)
        first.wait(10)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
        output.close()
    assert first.returncode == -signal.SIGKILL

    store = Store(f"sqlite:///{state / 'runs.db'}")
    try:
        (run,) = store.runs()
        assert run.state == "running"
        assert [s.step for s in store.steps(run.id)] == [1]

        go.touch()
        resumed = subprocess.run(
            [sys.executable, "-m", "plangate", "worker", "--until-idle"],
            env=_env(state),
            capture_output=True,
            text=True,
            timeout=90,
        )
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert "resuming 1 interrupted run turn(s)" in resumed.stdout

        done = store.run(run.id)
        assert done is not None and done.state == "done"
        # Step 1 was not run again; step 2 (in flight) ran again once; step 3 once.
        assert log.read_text().splitlines() == [
            "step v1 s1 t1 a0",
            "step v1 s2 t1 a0",
            "step v1 s2 t1 a0",
            "step v1 s3 t1 a0",
        ]
        assert checks_ran.read_text() == "ran\n"
        subjects = git(repo, "log", "--format=%s", done.branch).splitlines()
        assert subjects == ["Step 3: Change 3", "Step 2: Change 2", "Step 1: Change 1", "initial"]
        assert [s.step for s in store.steps(run.id)] == [1, 2, 3]
        texts = [e.text for e in store.events(run.id) if e.kind != "agent"]
        assert len(texts) == len(set(texts))
    finally:
        store.close()


def test_runs_started_together_on_one_sqlite_state_root(tmp_path: Path) -> None:
    """Processes racing to create the databases and carrying runs side by side."""
    repo = make_repo(tmp_path / "repo")
    state = tmp_path / "state"
    (tmp_path / "plan.md").write_text(
        plan_text([step(1, ["one.txt"])], [Check("test -f one.txt", name="AC1")])
    )
    (tmp_path / "script.json").write_text(
        json.dumps({"steps": [{"step": 1, "write": {"one.txt": "1\n"}}]})
    )
    command = [
        sys.executable,
        "-m",
        "plangate",
        "run",
        str(tmp_path / "plan.md"),
        "--repo",
        str(repo),
        "--agent",
        f"scripted:{tmp_path / 'script.json'}",
    ]
    processes = [
        subprocess.Popen(
            command, env=_env(state), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        for _ in range(3)
    ]
    errors = [process.communicate(timeout=90)[1] for process in processes]
    assert [process.returncode for process in processes] == [0, 0, 0], errors
    store = Store(f"sqlite:///{state / 'runs.db'}")
    try:
        assert [run.state for run in store.runs()] == ["done", "done", "done"]
    finally:
        store.close()


def test_a_check_cut_off_by_kill_9_of_the_worker_group_is_ended_before_it_runs_again(
    tmp_path: Path,
) -> None:
    """Issue 13: checks start in sessions of their own, so kill -9 of the worker, even of its
    process group, leaves a check running, and the resumed run started it again beside it."""
    repo = make_repo(tmp_path / "repo")
    state = tmp_path / "state"
    pids, mark, overlap = tmp_path / "pids", tmp_path / "mark", tmp_path / "overlap"
    check = (
        f"echo $$ >> {pids}; "
        f"if [ ! -e {mark} ]; then touch {mark}; sleep 300; fi; "
        # Still running (a zombie nobody reaped yet is not): the first check's shell.
        f"p=$(head -n1 {pids}); "
        f"if [ -e /proc/$p ] && ! grep -q ') Z' /proc/$p/stat; then echo still > {overlap}; fi"
    )
    (tmp_path / "plan.md").write_text(plan_text([step(1, ["one.txt"])], [Check(check)]))
    script = {"steps": [{"step": 1, "write": {"one.txt": "1\n"}}]}
    (tmp_path / "script.json").write_text(json.dumps(script))
    command = [sys.executable, "-m", "plangate", "run", str(tmp_path / "plan.md")]
    command += ["--repo", str(repo), "--agent", f"scripted:{tmp_path / 'script.json'}"]
    first = subprocess.Popen(
        command,
        env=_env(state),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        _wait_for(lambda: pids.exists() and pids.read_text().strip() != "", 90, "the check")
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(10)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait()
    cut_off = int(pids.read_text().split()[0])
    assert pid_alive(cut_off)  # the check outlived its worker's whole process group
    resumed = subprocess.run(
        [sys.executable, "-m", "plangate", "worker", "--until-idle"],
        env=_env(state),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert not overlap.exists()  # the old check was gone before the new one started
    assert not pid_alive(cut_off)
    store = Store(f"sqlite:///{state / 'runs.db'}")
    try:
        (run,) = store.runs()
        assert run.state == "done"
    finally:
        store.close()
