"""A bug is not "waiting on you": real runs (scripted agent, real git, real DBOS on SQLite)
with an exception injected at a named seam of the workflow.

An error of a stage (the agent, git, a check that cannot run, a plan) makes the run wait on
a person; any other exception marks it ``errored``, with its traceback in the run's log, and
``plangate show``, ``plangate runs`` and the viewer say so, with the log's path. A heartbeat
that fails is logged, and once it has failed long enough the runs it carries say so too.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from plangate.commands.runs import runs_command
from plangate.commands.show import show_command
from plangate.errors import AgentError, CheckError, GitError, PlangateError
from plangate.plan.errors import PlanFormatError
from plangate.plan.model import Check
from plangate.runs.attempts import REASON_ERROR
from plangate.runs.engine import STALE_SECONDS, run_summary
from plangate.runs.model import RunRecord
from plangate.runs.store import Store
from plangate.web.app import create_app
from tests.runs.conftest import Harness, plan_text, step

CHECK = Check("grep -qx hello hello.txt", name="AC1")
V1 = plan_text([step(1, ["hello.txt"])], [CHECK])
V2 = plan_text([step(1, ["hello.txt"]), step(2, ["hello.txt"], title="Fix it")], [CHECK])
GOOD = {"steps": [{"step": 1, "write": {"hello.txt": "hello\n"}}]}
NEEDS_REPLAN = {
    "steps": [
        {"step": 1, "write": {"hello.txt": "helo\n"}},
        {"step": 2, "write": {"hello.txt": "hello\n"}},
    ],
    "plans": [{"version": 2, "plan_text": V2}],
}


@dataclass(frozen=True)
class Seam:
    """Where an exception is raised: ``target`` (module attribute, or ``store.<method>``)
    is replaced by a function raising ``error``; ``script`` drives the run there."""

    name: str
    target: str
    error: Exception
    stage: str
    script: dict[str, Any]


def _raiser(error: Exception) -> Callable[..., Any]:
    def seam_raises(*_args: Any, **_kwargs: Any) -> Any:
        raise error

    return seam_raises


BUGS = [
    Seam(
        "the agent",
        "",
        RuntimeError("agent bug"),
        "carrying out a step",
        {"steps": [{"step": 1, "turn": 1, "crash": "agent bug"}]},
    ),
    Seam(
        "the step's commit",
        "plangate.runs.sandbox.commit",
        ZeroDivisionError("division by zero"),
        "carrying out a step",
        GOOD,
    ),
    Seam(
        "a check", "plangate.runs.checks.run_check", KeyError("missing"), "running the checks", GOOD
    ),
    Seam(
        "the evidence gate",
        "plangate.runs.evidence.gate",
        TypeError("bad gate"),
        "the evidence gate",
        GOOD,
    ),
    Seam(
        "the planner's judgement",
        "plangate.runs.planner.judge",
        ValueError("bad judge"),
        "re-planning",
        NEEDS_REPLAN,
    ),
    Seam(
        "the store, spending an attempt",
        "store.add_failures",
        AttributeError("no column"),
        "spending an attempt",
        NEEDS_REPLAN,
    ),
]
STAGE_ERRORS = [
    Seam(
        "the agent fails",
        "",
        AgentError("claude exited with status 1", "the script says so"),
        "",
        {"steps": [{"step": 1, "turn": 1, "error": "claude exited with status 1"}]},
    ),
    Seam(
        "git fails", "plangate.runs.sandbox.commit", GitError("git commit failed", "look"), "", GOOD
    ),
    Seam(
        "a check cannot start",
        "plangate.runs.checks.run_check",
        CheckError("cannot run the check", "fix the worktree"),
        "",
        GOOD,
    ),
    Seam(
        "a plan cannot be used",
        "plangate.runs.planner.judge",
        PlanFormatError("not a plan", code="missing_section"),
        "",
        NEEDS_REPLAN,
    ),
]


def _inject(seam: Seam, harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    if not seam.target:
        return  # the scripted agent raises it
    if seam.target.startswith("store."):
        monkeypatch.setattr(harness.engine.store, seam.target.split(".", 1)[1], _raiser(seam.error))
    else:
        module, name = seam.target.rsplit(".", 1)
        monkeypatch.setattr(f"{module}.{name}", _raiser(seam.error))


@pytest.mark.parametrize("seam", BUGS, ids=[seam.name for seam in BUGS])
def test_a_bug_marks_the_run_errored_with_its_traceback(
    seam: Seam, harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    _inject(seam, harness, monkeypatch)
    outcome = harness.run(V1, seam.script)
    monkeypatch.undo()
    run = outcome.record
    assert outcome.state == "errored"
    assert run.waiting is None and run.executor is None
    assert run.errored is not None
    kind = type(seam.error).__name__
    assert run.errored.error == f"{kind} in {seam.stage}: {seam.error}"
    log = Path(run.errored.log)
    assert log == Path(run.worktree).parent / "errors.log"
    text = log.read_text()
    assert f"run {run.id} turn 1" in text
    assert "Traceback (most recent call last)" in text
    assert f"{kind}: {seam.error}" in text
    if seam.target:
        assert "seam_raises" in text  # the frame that raised, not only the message
    last = harness.engine.store.events(run.id)[-1]
    assert last.kind == "errored" and str(log) in last.text
    # plangate show and plangate runs say so, with the log
    engine = harness.engine
    assert engine.describe_state(run) == f"errored: {run.errored.error} (traceback in {log})"
    assert run_summary(run)["errored"] == {"error": run.errored.error, "log": str(log)}


def test_show_runs_and_the_viewer_show_an_errored_run(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    outcome = harness.run(V1, {"steps": [{"step": 1, "turn": 1, "crash": "agent bug"}]})
    run = outcome.record
    assert run.errored is not None
    log = run.errored.log
    monkeypatch.setenv("PLANGATE_DATABASE_URL", harness.engine.url)
    out = io.StringIO()
    assert show_command(run.id, out=out) == 0
    shown = out.getvalue()
    assert (
        f"State: errored: RuntimeError in carrying out a step: agent bug (traceback in {log})"
        in (shown)
    )
    assert f"the traceback is in {log}" in shown
    out = io.StringIO()
    assert show_command(run.id, as_json=True, out=out) == 0
    data = json.loads(out.getvalue())
    assert data["state"] == "errored" and data["errored"]["log"] == log
    out = io.StringIO()
    assert runs_command(out=out) == 0
    line = next(line for line in out.getvalue().splitlines() if line.startswith(run.id))
    assert " errored " in line
    assert log in out.getvalue()
    out = io.StringIO()
    assert runs_command(as_json=True, out=out) == 0
    rows = {row["id"]: row for row in json.loads(out.getvalue())}
    assert rows[run.id]["errored"]["log"] == log
    client = TestClient(create_app(harness.engine.url), base_url="http://127.0.0.1")
    page = client.get(f"/runs/{run.id}").text
    assert "Errored" in page and log in page and "agent bug" in page
    listing = client.get("/runs").text
    assert "Errored" in listing and log in listing
    assert client.get(f"/runs/{run.id}.json").json()["run"]["errored"]["log"] == log


def test_a_reply_to_an_errored_run_tries_again(harness: Harness) -> None:
    outcome = harness.run(
        V1,
        {
            "steps": [
                {"step": 1, "turn": 1, "crash": "agent bug"},
                {"step": 1, "turn": 2, "write": {"hello.txt": "hello\n"}},
            ]
        },
    )
    assert outcome.state == "errored"
    after = harness.reply(outcome, "Try again.")
    assert after.state == "done"
    assert after.record.errored is None


@pytest.mark.parametrize("seam", STAGE_ERRORS, ids=[seam.name for seam in STAGE_ERRORS])
def test_an_error_of_a_stage_waits_on_you(
    seam: Seam, harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    _inject(seam, harness, monkeypatch)
    outcome = harness.run(V1, seam.script)
    monkeypatch.undo()
    assert outcome.state == "waiting"
    assert isinstance(seam.error, PlangateError)
    assert outcome.record.waiting.reason == REASON_ERROR
    assert outcome.record.waiting.detail == " ".join(str(seam.error).split())
    assert outcome.record.errored is None
    assert not (Path(outcome.record.worktree).parent / "errors.log").exists()


def test_a_long_stage_error_is_cut_to_one_line(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    message = "git said:\n" + "x" * 2000
    monkeypatch.setattr("plangate.runs.sandbox.commit", _raiser(GitError(message)))
    outcome = harness.run(V1, GOOD)
    detail = outcome.record.waiting.detail
    assert len(detail) == 500 and detail.endswith("…") and "\n" not in detail


# -- heartbeats ----------------------------------------------------------------------------


def _run(store: Store, run_id: str) -> RunRecord:
    run = store.run(run_id)
    assert run is not None
    return run


def test_failed_heartbeats_are_logged_and_then_mark_the_runs_carried(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from plangate.runs.engine import Engine

    outcome = harness.run(V1, GOOD)  # a real run, then made to look carried by `engine`
    engine = Engine(harness.engine.url)  # not launched: no heartbeat thread of its own
    store = engine.store
    with store.transaction() as conn:
        store.update_run(conn, outcome.run_id, state="running", executor=engine.executor_id)
    assert engine.beat() is True  # its heartbeat row: the run is carried, not interrupted
    calls: list[float] = []

    def failing(*args: Any) -> None:
        calls.append(args[-1])
        raise OSError("database is locked")

    monkeypatch.setattr(store, "heartbeat", failing)
    caplog.set_level(logging.WARNING, logger="plangate.runs")
    start = 1_000_000.0
    assert engine.beat(clock=lambda: start) is False
    assert "could not record its heartbeat" in caplog.text
    assert "OSError: database is locked" in caplog.text  # the first failure with its traceback
    assert engine.beat(clock=lambda: start + STALE_SECONDS / 2) is False
    assert "heartbeat failed 2 times in a row" in caplog.text
    assert _run(store, outcome.run_id).notice is None  # not yet: a short outage is retried
    assert engine.beat(clock=lambda: start + STALE_SECONDS + 1) is False
    run = _run(store, outcome.run_id)
    assert run.notice is not None and "has not recorded its heartbeat for 31s" in run.notice
    assert "OSError: database is locked" in run.notice
    assert engine.describe_state(run).startswith("running (warning: this process (")
    client = TestClient(create_app(engine.url), base_url="http://127.0.0.1")
    assert "has not recorded its heartbeat" in client.get(f"/runs/{run.id}").text
    monkeypatch.undo()
    assert engine.beat() is True
    assert "heartbeat recorded again after 3 failures" in caplog.text
    assert _run(store, outcome.run_id).notice is None
    assert len(calls) == 3
    with store.transaction() as conn:
        store.update_run(conn, outcome.run_id, state="done", executor=None)
    engine.shutdown()
