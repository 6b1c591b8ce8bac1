"""The command functions behind ``plangate run``, ``runs``, ``show``, ``reply``, ``worker``:
in this process, on a SQLite state root of their own."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from plangate.commands.reply import reply_command
from plangate.commands.run import EXIT_DONE, EXIT_WAITING, run_command
from plangate.commands.runs import runs_command
from plangate.commands.show import show_command
from plangate.commands.worker import worker_command
from plangate.errors import RunErroredError, UsageError
from plangate.plan.model import Check
from plangate.processes import pid_alive
from plangate.runs.store import Store
from tests.runs.conftest import make_repo, plan_text, step

V1 = plan_text([step(1, ["hello.txt"])], [Check("grep -qx hello hello.txt", name="AC1")])
V2 = plan_text(
    [step(1, ["hello.txt"]), step(2, ["hello.txt"])],
    [Check("grep -qx hello hello.txt", name="AC1")],
)


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(tmp_path / "state"))
    monkeypatch.delenv("PLANGATE_DATABASE_URL", raising=False)
    make_repo(tmp_path / "repo")
    (tmp_path / "plan.md").write_text(V1)
    return tmp_path


def _script(folder: Path, script: dict[str, object]) -> str:
    path = folder / "script.json"
    path.write_text(json.dumps(script))
    return f"scripted:{path}"


def test_run_show_reply_and_runs(setup: Path) -> None:
    agent = _script(
        setup,
        {
            "steps": [
                {"step": 1, "write": {"hello.txt": "helo\n"}, "message": "Wrote helo."},
                {"step": 2, "turn": 1, "write": {"hello.txt": "hallo\n"}, "message": "Hallo?"},
                {"step": None, "turn": 2, "write": {"hello.txt": "hello\n"}},
            ],
            "plans": [{"version": 2, "plan_text": V2}],
        },
    )
    out = io.StringIO()
    code = run_command(
        str(setup / "plan.md"), repo=str(setup / "repo"), attempts=2, agent=agent, out=out
    )
    text = out.getvalue()
    assert code == EXIT_WAITING
    run_id = text.split()[1].rstrip(":")
    assert (
        f"Plan changed to version 2: A check failed. View version 2: "
        f"plangate show {run_id} --version 2"
    ) in text
    assert "Waiting on you: The checks fail and need you (out of attempts)." in text
    assert "The agent's last message: Hallo?" in text
    assert f'Reply with: plangate reply {run_id} "<message>"' in text

    out = io.StringIO()
    assert runs_command(out=out) == 0
    assert f"{run_id:<10} waiting      2/2       2        Demo" in out.getvalue()

    out = io.StringIO()
    assert show_command(run_id[:4], as_json=True, out=out) == 0
    data = json.loads(out.getvalue())
    assert data["waiting"]["reason"] == "The checks fail and need you"
    assert [(v["number"], v["trigger"]) for v in data["versions"]] == [
        (1, "initial"),
        (2, "check"),
    ]
    assert data["checks"][0]["tail"] == ""

    out = io.StringIO()
    assert show_command(run_id, version=2, out=out) == 0
    shown = out.getvalue()
    assert shown.startswith(f"Run {run_id}, version 2 of the plan (current)\n")
    assert "Why this version: A check failed. check AC1 (`grep -qx hello hello.txt`)" in shown
    assert f"See version 1: plangate show {run_id} --version 1" in shown
    assert shown.endswith(V2)

    with pytest.raises(UsageError, match="has no version 3"):
        show_command(run_id, version=3, out=io.StringIO())

    out = io.StringIO()
    assert reply_command(run_id, "hello, with two l's", out=out) == EXIT_DONE
    replied = out.getvalue()
    assert replied.startswith("You: hello, with two l's\n")
    assert "Plan changed" not in replied
    assert f"Run {run_id} is done" in replied

    # A done run takes a reply too: it starts another turn on the same branch.
    out = io.StringIO()
    assert reply_command(run_id, "also check the spelling", out=out) == EXIT_DONE
    assert "Turn 3: carrying on." in out.getvalue()


def test_reply_to_a_running_run_is_refused(setup: Path) -> None:
    store = Store()
    try:
        from plangate.runs.engine import Engine, RunOptions

        engine = Engine()
        run = engine.create(RunOptions(plan_path=str(setup / "plan.md"), repo=str(setup / "repo")))
        engine.shutdown()
        with pytest.raises(UsageError, match=f"run {run.id} is queued, not waiting on you"):
            reply_command(run.id, "hi", out=io.StringIO())
    finally:
        store.close()


def test_bad_input_is_refused_with_a_remedy(setup: Path) -> None:
    with pytest.raises(UsageError, match="give a plan file or --task"):
        run_command(None, repo=str(setup / "repo"), out=io.StringIO())
    (setup / "bad.md").write_text(plan_text([step(1, ["/etc/passwd"])]))
    with pytest.raises(UsageError, match="cannot run: step 1 names an absolute path"):
        run_command(str(setup / "bad.md"), repo=str(setup / "repo"), out=io.StringIO())
    with pytest.raises(UsageError, match="is not inside a git repository"):
        run_command(str(setup / "plan.md"), repo=str(setup), out=io.StringIO())
    with pytest.raises(UsageError, match="there is no run 'nope'"):
        show_command("nope", out=io.StringIO())


def test_detach_queues_and_a_background_worker_finishes(setup: Path) -> None:
    agent = _script(setup, {"steps": [{"step": 1, "write": {"hello.txt": "hello\n"}}]})
    out = io.StringIO()
    code = run_command(
        str(setup / "plan.md"), repo=str(setup / "repo"), detach=True, agent=agent, out=out
    )
    assert code == EXIT_DONE
    assert "is queued; no live worker serves the runs database, so started a background" in (
        out.getvalue()
    )
    store = Store()
    try:
        (run,) = store.runs()
        deadline = time.monotonic() + 60
        while store.run(run.id).state != "done":  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "the background worker did not finish the run"
            time.sleep(0.2)
    finally:
        store.close()


def test_worker_until_idle_with_nothing_to_do(setup: Path) -> None:
    out = io.StringIO()
    assert worker_command(until_idle=True, out=out) == EXIT_DONE
    assert out.getvalue().splitlines()[-1] == "worker done: no run left to take"


def test_a_run_that_errors_says_where_its_traceback_is(
    setup: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from plangate.cli import main
    from plangate.commands.run import EXIT_CODES

    agent = _script(setup, {"steps": [{"step": 1, "turn": 1, "crash": "a bug in the agent"}]})
    with pytest.raises(RunErroredError, match="stopped on an unexpected error") as caught:
        run_command(
            str(setup / "plan.md"), repo=str(setup / "repo"), agent=agent, out=io.StringIO()
        )
    log = Path(caught.value.log)
    assert log.name == "errors.log" and "RuntimeError: a bug in the agent" in log.read_text()
    assert f"the traceback is in {log}" in str(caught.value)

    code = main(["run", str(setup / "plan.md"), "--repo", str(setup / "repo"), "--agent", agent])
    captured = capsys.readouterr()
    assert code == EXIT_CODES.failure
    assert "RuntimeError in carrying out a step: a bug in the agent" in captured.err
    assert "errors.log" in captured.err
    assert "Traceback" not in captured.err  # one line; the traceback is in the log


def test_a_check_that_leaves_its_session_is_still_ended(setup: Path) -> None:
    pid_file = setup / "escapee.pid"
    check = f"setsid sleep 300 & echo $! > {pid_file}; grep -qx hello hello.txt"
    agent = _script(setup, {"steps": [{"step": 1, "write": {"hello.txt": "hello\n"}}]})
    out = io.StringIO()
    code = run_command(
        str(setup / "plan.md"), repo=str(setup / "repo"), checks=[check], agent=agent, out=out
    )
    assert code == EXIT_DONE, out.getvalue()
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not pid_alive(pid), "the check's setsid child outlived the check"


def test_a_plan_that_does_not_parse_is_a_usage_error_exit_2(setup: Path) -> None:
    (setup / "notaplan.md").write_text("# Just some notes\n\nNo steps here.\n")
    done = subprocess.run(
        [sys.executable, "-m", "plangate", "run", str(setup / "notaplan.md"),
         "--repo", str(setup / "repo")],
        capture_output=True, text=True, timeout=120, env=dict(os.environ),
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    # One line: the file and line at fault, the problem, and its remedy in parentheses.
    assert done.stderr.startswith(f"plangate: {setup / 'notaplan.md'}:3: "), done.stderr
    assert done.stderr.rstrip().endswith(")") and len(done.stderr.splitlines()) == 1
    assert Store().runs() == []  # nothing was recorded


def test_a_step_that_changed_no_file_is_no_changes_in_the_json(setup: Path) -> None:
    (setup / "plan.md").write_text(
        plan_text(
            [step(1, ["hello.txt"]), step(2, ["hello.txt"])],
            [Check("grep -qx hello hello.txt", name="AC1")],
        )
    )
    agent = _script(setup, {"steps": [{"step": 1, "write": {"hello.txt": "hello\n"}}]})
    out = io.StringIO()
    code = run_command(str(setup / "plan.md"), repo=str(setup / "repo"), agent=agent, out=out)
    assert code == EXIT_DONE, out.getvalue()
    run_id = out.getvalue().split()[1].rstrip(":")
    out = io.StringIO()
    assert show_command(run_id, as_json=True, out=out) == 0
    shown = json.loads(out.getvalue())
    assert [(s["step"], s["status"], s["changed_files"]) for s in shown["steps"]] == [
        (1, "done", ["hello.txt"]),
        (2, "no_changes", []),
    ]
    assert all(s["commit"] for s in shown["steps"])  # the step got its (empty) commit
    out = io.StringIO()
    assert runs_command(as_json=True, out=out) == 0
    (listed,) = json.loads(out.getvalue())
    assert [(s["step"], s["status"]) for s in listed["steps"]] == [(1, "done"), (2, "no_changes")]
    # Who carried it: this foreground process, on this host.
    assert listed["worker"] and listed["host"] and listed["worker"].startswith(listed["host"])
    assert listed["carried_now"] is False
    out = io.StringIO()
    assert show_command(run_id, out=out) == 0
    assert f"Carrier: last carried by {listed['worker']} on {listed['host']}\n" in out.getvalue()


def test_a_worker_that_cannot_see_the_runs_repository_says_which_path(setup: Path) -> None:
    from plangate.runs.engine import Engine, RunOptions

    agent = _script(setup, {"steps": [{"step": 1, "write": {"hello.txt": "hello\n"}}]})
    engine = Engine()
    run = engine.create(
        RunOptions(plan_path=str(setup / "plan.md"), repo=str(setup / "repo"), agent=agent)
    )
    engine.begin(run.id, 1, detach=True)
    engine.shutdown()
    # As on a machine that does not share the submitter's folders.
    (setup / "repo").rename(setup / "elsewhere")
    out = io.StringIO()
    assert worker_command(until_idle=True, out=out) == EXIT_DONE
    log = out.getvalue()
    where = f"the run's repository {setup / 'repo'} does not exist on host "
    assert f"cannot carry run {run.id} turn 1 here: {where}" in log, log
    store = Store()
    try:
        record = store.run(run.id)
        assert record is not None and record.state == "waiting" and record.waiting is not None
        assert where in record.waiting.detail
        assert "git is not installed" not in record.waiting.detail
        assert "Workers on several machines" in record.waiting.detail
    finally:
        store.close()
