"""Plan-governed runs end to end: ``plangate run`` and ``plangate reply`` as processes, the
real engine (DBOS on SQLite in a state root of their own) and the real Claude Code agent,
whose ``claude -p`` sessions edit the run's git worktree, against the stand-in playing the
model (:mod:`plangate.harness.run_player`). The checks are real commands run in the worktree.

Each test takes a few CLI sessions of one to three seconds each.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from plangate.agents.base import Failure, StepRequest
from plangate.agents.prompts import step_prompt
from plangate.commands.run import EXIT_DONE, EXIT_WAITING
from plangate.commands.show import show_command
from plangate.harness.claude import ClaudeEnv
from plangate.harness.run_player import RunPlayer, Session, Turn
from plangate.harness.standin import ModelRequest, StandIn, text, tool_use
from plangate.plan import parse_plan, render_plan
from plangate.runs.attempts import DETAIL_OUT_OF_ATTEMPTS, REASON_CHECK
from plangate.runs.store import Store
from testkit.git import git

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

#: Seconds one ``plangate run`` or ``plangate reply`` may take before the test fails.
COMMAND_TIMEOUT = 120


CHECK = 'python3 -B -c "import app; assert app.VALUE == 2, app.VALUE"'

PLAN_V1 = f"""# Plan: Set the value

## Goal

Make `app.VALUE` equal 2.

## Implementation plan

### Step 1: Set VALUE
Files: `app.py`
Serves: AC1

Change `VALUE` in `app.py`.

## Checks

- AC1: `{CHECK}` (timeout 60s)

## Acceptance criteria

- AC1: `app.VALUE` is 2.

## Review record
"""

STEP_2 = """### Step 2: Fix VALUE
Files: `app.py`
Serves: AC1

Set `VALUE = 2` in `app.py`; the check says what it is now.

"""

#: Version 2 as a good planner writes it: step 1 exactly as it was, step 2 added.
PLAN_V2 = PLAN_V1.replace("## Checks", STEP_2 + "## Checks")

#: A version that rewrites step 1, which was already carried out (its text changes).
PLAN_REWRITTEN = PLAN_V2.replace(
    "Change `VALUE` in `app.py`.", "Change `VALUE` in `app.py` to 2, not 3."
)

#: What the CLI offers the model besides the tools it was given (a placeholder, not a tool).
PLACEHOLDERS = {"DeferredToolPlaceholder"}


def edit(old: str, new: str) -> Turn:
    return [tool_use("Edit", file_path="app.py", old_string=old, new_string=new)]


def plan_answer(plan_text: str) -> str:
    return f"Here is version 2 of the plan.\n\n```plan\n{plan_text}```\n"


# ------------------------------------------------------------------------------------------
# the bench: a repository, a state root, the stand-in, and plangate as a process


def _descendants(pid: int) -> list[int]:
    """The processes below ``pid`` (Linux ``/proc``), so a timed-out command leaves none."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                parent = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


@dataclass
class Done:
    """What one ``plangate`` command did."""

    code: int
    out: str
    err: str
    seconds: float

    def describe(self) -> str:
        return (
            f"exit {self.code} after {self.seconds:.1f}s\nstdout:\n{self.out}\nstderr:\n{self.err}"
        )


@dataclass
class Bench:
    root: Path
    repo: Path
    state: Path
    model: StandIn
    player: RunPlayer
    environ: dict[str, str]

    def plangate(self, *args: str, timeout: float = COMMAND_TIMEOUT) -> Done:
        """``plangate ARGS`` as a process (``python -m plangate``)."""
        started = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "plangate", *args],
            cwd=self.root,
            env=self.environ,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for pid in [proc.pid, *_descendants(proc.pid)]:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            out, err = proc.communicate(timeout=10)
            pytest.fail(
                f"plangate {' '.join(args)} did not end within {timeout}s\n"
                f"stdout:\n{out}\nstderr:\n{err}\nsessions: {self.player.keys}"
            )
        return Done(proc.returncode, out, err, time.monotonic() - started)

    def run(self, plan_text: str, *options: str) -> tuple[str, Done]:
        """``plangate run PLAN --repo REPO OPTIONS``: the run's id and what it did."""
        plan = self.root / "plan.md"
        plan.write_text(plan_text, encoding="utf-8")
        done = self.plangate("run", str(plan), "--repo", str(self.repo), *options)
        first = done.out.splitlines()[0] if done.out else ""
        assert first.startswith("Run "), done.describe()
        return first.split()[1].rstrip(":"), done

    def show(self, run_id: str) -> dict[str, Any]:
        """``plangate show RUN --json``, in this process, on the run's state root."""
        out = io.StringIO()
        assert show_command(run_id, as_json=True, out=out) == 0
        data: dict[str, Any] = json.loads(out.getvalue())
        return data

    def show_text(self, run_id: str, version: int | None = None) -> str:
        out = io.StringIO()
        assert show_command(run_id, version=version, out=out) == 0
        return out.getvalue()


@pytest.fixture
def bench_for(tmp_path: Path, claude_bin: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Starts the stand-in with a player's script; returns the bench around it."""
    stack: list[StandIn] = []
    state = tmp_path / "state"
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(state))
    monkeypatch.delenv("PLANGATE_DATABASE_URL", raising=False)

    def make(sessions: Mapping[str, Sequence[Sequence[Turn]]]) -> Bench:
        repo = tmp_path / "repo"
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        (repo / "app.py").write_text("VALUE = 1\n", encoding="utf-8")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "initial")
        player = RunPlayer(sessions)
        model = StandIn(player).start()
        stack.append(model)
        cc = ClaudeEnv.create(tmp_path / "cc", model, project_dir=repo, binary=claude_bin)
        environ = cc.environ(
            {
                "PLANGATE_STATE_ROOT": str(state),
                "PLANGATE_CLAUDE_BIN": str(claude_bin),
            }
        )
        environ.pop("PLANGATE_DATABASE_URL", None)
        # Python writes bytecode caches as it does on a person's machine.
        environ.pop("PYTHONDONTWRITEBYTECODE", None)
        return Bench(tmp_path, repo, state, model, player, environ)

    yield make
    for model in stack:
        model.stop()
    assert [error for model in stack for error in model.errors] == []


def tool_names(request: ModelRequest) -> set[str]:
    return set(request.tool_names) - PLACEHOLDERS


def results(session: Session) -> list[dict[str, Any]]:
    """The tool results the CLI sent back in the session, in order."""
    return [result for request in session.requests[1:] for result in request.tool_results()]


def session_id(session: Session) -> str:
    """The CLI session a request belongs to (the CLI sends it in ``metadata.user_id``)."""
    user = json.loads(session.first.body["metadata"]["user_id"])
    value: str = user["session_id"]
    return value


def conversation(data: Mapping[str, Any]) -> list[str]:
    return [event["text"] for event in data["conversation"]]


def subjects(bench: Bench, branch: str) -> list[str]:
    return git(bench.repo, "log", "--format=%s", branch).splitlines()


def test_the_plans_are_canonical() -> None:
    for text_value in (PLAN_V1, PLAN_V2, PLAN_REWRITTEN):
        assert render_plan(parse_plan(text_value)) == text_value
    assert parse_plan(PLAN_V2).steps[0] == parse_plan(PLAN_V1).steps[0]
    assert parse_plan(PLAN_REWRITTEN).steps[0] != parse_plan(PLAN_V1).steps[0]


# ------------------------------------------------------------------------------------------
# 1. the first check fails, the fresh planner writes version 2, it passes


def test_check_fails_is_replanned_to_version_2_and_passes(bench_for: Any) -> None:
    bench: Bench = bench_for(
        {
            "v1 s1": [[edit("VALUE = 1", "VALUE = 3"), [text("Set VALUE to 3. STEP-1-MARKER")]]],
            "plan v2": [
                [
                    # The planner tries to fix the file itself: the CLI refuses the tool.
                    [tool_use("Write", file_path="app.py", content="VALUE = 2\n")],
                    [tool_use("Read", file_path="app.py")],
                    [text(plan_answer(PLAN_V2))],
                ]
            ],
            "v2 s2": [[edit("VALUE = 3", "VALUE = 2"), [text("Set VALUE to 2.")]]],
        }
    )
    run_id, done = bench.run(PLAN_V1)

    assert done.code == EXIT_DONE, done.describe()
    assert bench.player.keys == ["v1 s1", "plan v2", "v2 s2"]
    assert bench.player.unexpected == []
    assert (
        f"Plan changed to version 2: A check failed. View version 2: "
        f"plangate show {run_id} --version 2"
    ) in done.out
    assert f"Run {run_id} is done: its change is on branch plangate/run-{run_id}." in done.out

    data = bench.show(run_id)
    assert (data["state"], data["turn"], data["version"]) == ("done", 1, 2)
    assert (data["attempts_used"], data["attempts_allowed"]) == (1, 3)  # 3: the default
    assert data["waiting"] is None
    versions = data["versions"]
    assert [(v["number"], v["trigger"], v["accepted"]) for v in versions] == [
        (1, "initial", True),
        (2, "check", True),
    ]
    assert versions[0]["why"] == "The plan the run started with."
    assert versions[1]["why"].startswith("A check failed. check AC1 (`python3 -B -c ")
    assert "failed (exit 1)" in versions[1]["why"]
    assert versions[1]["attempts_used"] == 1
    events = conversation(data)
    assert "Plan changed to version 2: A check failed." in events
    assert events[-1].startswith("Done: every step is carried out, the checks pass")
    assert [(f["turn"], f["attempt"], f["kind"]) for f in data["failures"]] == [(1, 1, "check")]
    assert [(c["round"], c["passed"], c["exit_code"]) for c in data["checks"]] == [
        ("t1/a0", False, 1),
        ("t1/a1", True, 0),
    ]
    assert "AssertionError: 3" in data["checks"][0]["tail"]
    # Step 1 once; the agent carried on from step 2, the first step version 2 adds.
    steps = [(s["version"], s["step"], s["status"], s["changed_files"]) for s in data["steps"]]
    assert steps == [(1, 1, "done", ["app.py"]), (2, 2, "done", ["app.py"])]

    shown = bench.show_text(run_id, version=2)
    assert shown.startswith(f"Run {run_id}, version 2 of the plan (current)\n")
    assert shown.endswith(PLAN_V2)

    # One commit per step on the run's branch, in its own worktree; the repository's own
    # branch is untouched.
    branch = data["branch"]
    assert subjects(bench, branch) == ["Step 2: Fix VALUE", "Step 1: Set VALUE", "initial"]
    assert [s["commit"] for s in data["steps"]] == git(
        bench.repo, "log", "--format=%H", f"{data['base_commit']}..{branch}", "--reverse"
    ).splitlines()
    worktree = Path(data["worktree"])
    assert worktree.is_relative_to(bench.state)
    assert (worktree / "app.py").read_text() == "VALUE = 2\n"
    assert git(worktree, "status", "--porcelain") == ""
    assert (bench.repo / "app.py").read_text() == "VALUE = 1\n"
    assert subjects(bench, "main") == ["initial"]

    # The planner: a new CLI session with read-only tools, whose only input is the typed
    # request (the previous version, the failure with its output tail, the changed files,
    # the diff), never the conversation so far.
    (planner,) = bench.player.of("plan v2")
    first = planner.first
    # one user message (the prompt) and the CLI's own environment note; no earlier turns
    assert [m["role"] for m in first.messages if m.get("role") != "system"] == ["user"]
    assert tool_names(first) == {"Read", "Grep", "Glob"}
    prompt = planner.prompt
    assert "Write version 2 of it" in prompt
    assert "# Plan: Set the value" in prompt
    assert "(check) check AC1 (`python3 -B -c" in prompt
    assert "AssertionError: 3" in prompt
    assert "Files changed so far (since the run began):\n- `app.py`" in prompt
    assert "-VALUE = 1\n+VALUE = 3" in prompt
    for request in planner.requests:
        body = json.dumps(request.body)
        assert "STEP-1-MARKER" not in body
        assert "The step to carry out now" not in body
        assert "Set VALUE to 3." not in body
    refused, read = results(planner)
    assert refused.get("is_error") is True
    assert "No such tool available: Write" in json.dumps(refused["content"])
    assert not read.get("is_error") and "VALUE = 3" in json.dumps(read["content"])
    sessions = {s.key: s for s in bench.player.sessions}
    assert len({session_id(s) for s in sessions.values()}) == 3  # three sessions, none resumed

    # Step 2's session: version 2 of the plan, the step, and what failed.
    step2 = sessions["v2 s2"].prompt
    assert "(plan version 2)" in step2
    assert "The step to carry out now: Step 2: Fix VALUE" in step2
    assert "What failed last time, to fix now:" in step2 and "AssertionError: 3" in step2
    assert all(
        not r.get("is_error") for s in sessions.values() if s.role == "step" for r in results(s)
    )


# ------------------------------------------------------------------------------------------
# 2. the check keeps failing until the attempts run out; a reply starts a new turn


def test_out_of_attempts_waits_and_a_reply_carries_on(bench_for: Any) -> None:
    bench: Bench = bench_for(
        {
            "v1 s1": [[edit("VALUE = 1", "VALUE = 3"), [text("Set VALUE to 3.")]]],
            "plan v2": [[[text(plan_answer(PLAN_V2))]]],
            "v2 s2": [[edit("VALUE = 3", "VALUE = 4"), [text("Set VALUE to 4, I think.")]]],
            "fix": [[edit("VALUE = 4", "VALUE = 2"), [text("Set VALUE to 2 as you said.")]]],
        }
    )
    run_id, done = bench.run(PLAN_V1, "--attempts", "2")

    assert done.code == EXIT_WAITING, done.describe()
    assert bench.player.keys == ["v1 s1", "plan v2", "v2 s2"]  # the second failure waits
    assert "Waiting on you: The checks fail and need you (out of attempts)." in done.out
    assert "The agent's last message: Set VALUE to 4, I think." in done.out
    assert f'Reply with: plangate reply {run_id} "<message>"' in done.out

    data = bench.show(run_id)
    assert (data["state"], data["turn"], data["version"]) == ("waiting", 1, 2)
    assert (data["attempts_used"], data["attempts_allowed"]) == (2, 2)
    assert data["waiting"] == {
        "reason": REASON_CHECK,
        "detail": DETAIL_OUT_OF_ATTEMPTS,
        "last_message": "Set VALUE to 4, I think.",
    }
    assert [(f["attempt"], f["kind"]) for f in data["failures"]] == [(1, "check"), (2, "check")]
    assert [c["passed"] for c in data["checks"]] == [False, False]
    assert "AssertionError: 4" in data["checks"][1]["tail"]
    events = conversation(data)
    assert "Plan changed to version 2: A check failed." in events
    assert "Attempt 2 of 2 spent." in events
    assert events[-1] == "Waiting on you: The checks fail and need you (out of attempts)."
    branch = data["branch"]
    assert subjects(bench, branch) == ["Step 2: Fix VALUE", "Step 1: Set VALUE", "initial"]

    text_view = bench.show_text(run_id)
    assert f"State: waiting: {REASON_CHECK} ({DETAIL_OUT_OF_ATTEMPTS})" in text_view
    assert "Attempts: 2 of 2 used in turn 1" in text_view

    # The reply starts turn 2 with fresh attempts: no step is left, so the agent gets a fix
    # session with the reply and the failure the run waited on; the check passes.
    replied = bench.plangate("reply", run_id, "VALUE must be 2, not 4.")
    assert replied.code == EXIT_DONE, replied.describe()
    assert replied.out.startswith("You: VALUE must be 2, not 4.\n")
    assert "Turn 2: carrying on." in replied.out
    assert f"Run {run_id} is done" in replied.out
    assert bench.player.keys == ["v1 s1", "plan v2", "v2 s2", "fix"]
    assert bench.player.unexpected == []

    after = bench.show(run_id)
    assert (after["state"], after["turn"], after["version"]) == ("done", 2, 2)
    assert (after["attempts_used"], after["attempts_allowed"]) == (0, 2)
    assert after["waiting"] is None
    assert [(c["round"], c["passed"]) for c in after["checks"]] == [
        ("t1/a0", False),
        ("t1/a1", False),
        ("t2/a0", True),
    ]
    assert [(s["turn"], s["version"], s["step"]) for s in after["steps"]] == [
        (1, 1, 1),
        (1, 2, 2),
        (2, 2, None),
    ]
    assert len(after["versions"]) == 2  # a reply is no re-plan
    events = conversation(after)
    assert "You: VALUE must be 2, not 4." in events
    assert events[-1].startswith("Done:")
    assert subjects(bench, branch) == [
        "Fix",
        "Step 2: Fix VALUE",
        "Step 1: Set VALUE",
        "initial",
    ]
    assert (Path(after["worktree"]) / "app.py").read_text() == "VALUE = 2\n"

    (fix,) = bench.player.of("fix")
    prompt = fix.prompt
    assert "The person's reply, which starts this turn:" in prompt
    assert "VALUE must be 2, not 4." in prompt
    assert "What failed last time, to fix now:" in prompt
    assert "AssertionError: 4" in prompt
    assert "# Plan: Set the value" in prompt and "### Step 2: Fix VALUE" in prompt


# ------------------------------------------------------------------------------------------
# 3. the planner rewrites the step already carried out: refused, the run waits


def test_a_refused_version_is_kept_and_the_run_waits(bench_for: Any) -> None:
    bench: Bench = bench_for(
        {
            "v1 s1": [[edit("VALUE = 1", "VALUE = 3"), [text("Set VALUE to 3.")]]],
            "plan v2": [
                [[tool_use("Read", file_path="app.py")], [text(plan_answer(PLAN_REWRITTEN))]]
            ],
        }
    )
    run_id, done = bench.run(PLAN_V1, "--attempts", "3")

    detail = "new version refused: it rewrites step 1, which was already carried out"
    assert done.code == EXIT_WAITING, done.describe()
    assert bench.player.keys == ["v1 s1", "plan v2"]  # no step of the refused version ran
    assert bench.player.unexpected == []
    assert f"No new plan: {detail}." in done.out
    assert f"Waiting on you: {REASON_CHECK} ({detail})." in done.out
    assert "Plan changed" not in done.out

    data = bench.show(run_id)
    assert (data["state"], data["version"]) == ("waiting", 1)
    # One attempt spent: the run waits because no usable version was written, not because
    # it ran out of attempts.
    assert (data["attempts_used"], data["attempts_allowed"]) == (1, 3)
    assert data["waiting"] == {
        "reason": REASON_CHECK,
        "detail": detail,
        "last_message": "Set VALUE to 3.",
    }
    versions = data["versions"]
    assert [(v["number"], v["accepted"], v["trigger"]) for v in versions] == [
        (1, True, "initial"),
        (None, False, "check"),
    ]
    refused = versions[1]
    assert refused["refusal"] == detail
    assert refused["why"].startswith("A check failed. check AC1 (`python3 -B -c ")
    assert refused["attempts_used"] == 1
    assert f"No new plan: {detail}." in conversation(data)

    # The refused version is kept as the planner wrote it, and listed with its refusal.
    store = Store()
    try:
        stored = store.versions(run_id)
    finally:
        store.close()
    assert stored[1].plan_text == PLAN_REWRITTEN
    text_view = bench.show_text(run_id)
    assert "Plan: version 1" in text_view
    assert "  refused: A check failed. check AC1" in text_view
    assert f"    {detail}" in text_view

    # Nothing of the refused version reached the worktree.
    branch = data["branch"]
    assert subjects(bench, branch) == ["Step 1: Set VALUE", "initial"]
    worktree = Path(data["worktree"])
    assert (worktree / "app.py").read_text() == "VALUE = 3\n"
    assert git(worktree, "status", "--porcelain") == ""


# ------------------------------------------------------------------------------------------
# bugs found on the way


def test_a_step_that_runs_the_code_to_verify_it_is_done(bench_for: Any) -> None:
    bench: Bench = bench_for(
        {
            "v1 s1": [
                [
                    edit("VALUE = 1", "VALUE = 2"),
                    [tool_use("Bash", command='python3 -c "import app; print(app.VALUE)"')],
                    [text("Set VALUE to 2; importing app prints 2.")],
                ]
            ],
        }
    )
    run_id, done = bench.run(PLAN_V1, "--attempts", "1")

    (step,) = bench.player.of("v1 s1")
    assert "2" in json.dumps(results(step)[1]["content"])  # the Bash call ran
    data = bench.show(run_id)
    steps = [(s["step"], s["status"], s["changed_files"]) for s in data["steps"]]
    assert steps == [(1, "done", ["app.py"])], data["steps"]
    assert (done.code, data["state"]) == (EXIT_DONE, "done"), done.describe()


def test_the_fix_prompt_of_a_planned_run_states_its_job() -> None:
    request = StepRequest(
        run_id="r1",
        workdir=Path("."),
        step=None,
        plan_text=PLAN_V2,
        version=2,
        task=None,
        feedback=(Failure("check", "check AC1 failed (exit 1)", "AssertionError: 4"),),
        reply="VALUE must be 2, not 4.",
        turn=2,
    )
    prompt = step_prompt(request)
    assert "VALUE must be 2, not 4." in prompt and "AssertionError: 4" in prompt
    assert "(no task was given)" not in prompt
    assert "the plan does not name" in prompt
