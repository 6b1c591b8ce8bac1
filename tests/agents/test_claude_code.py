"""ClaudeCodeAgent with the real Claude Code CLI against the scripted stand-in model.

Each test runs one or two short ``claude -p`` sessions (about a second each) in a real git
repository; the stand-in plays the model and records what the CLI sent it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from plangate.agents.base import (
    Agent,
    Failure,
    PlanRequest,
    ReviewRequest,
    StepRequest,
)
from plangate.agents.claude_code import STEP_TOOLS, ClaudeCodeAgent
from plangate.errors import ClaudeCodeError
from plangate.harness.claude import ClaudeEnv
from plangate.harness.standin import (
    ModelRequest,
    RecordedRequest,
    Reply,
    Script,
    StandIn,
    text,
    tool_use,
)
from plangate.plan import parse_plan, render_step, validate_plan
from testkit.git import git

from .conftest import PLAN

pytestmark = pytest.mark.e2e

#: What the CLI offers the model besides the tools it was given (a placeholder, not a tool).
PLACEHOLDERS = {"DeferredToolPlaceholder"}

PLAN_V2 = PLAN.replace(
    "## Checks",
    """### Step 2: Test X
Files: `tests/test_app.py`
Serves: AC1

Add a test that `X` is 2.

## Checks""",
)


def make_agent(
    tmp_path: Path, model: StandIn, repo: Path, claude_bin: Path, timeout: float = 60
) -> ClaudeCodeAgent:
    """An agent whose CLI runs in a fresh HOME against the stand-in."""
    cc = ClaudeEnv.create(tmp_path / "cc", model, project_dir=repo, binary=claude_bin)
    return ClaudeCodeAgent(binary=claude_bin, env=cc.environ(), timeout=timeout)


def main_requests(records: list[RecordedRequest]) -> list[ModelRequest]:
    return [
        ModelRequest(body=r.body, kind="main")
        for r in records
        if r.kind == "main" and r.body is not None
    ]


def tool_names(request: ModelRequest) -> set[str]:
    return set(request.tool_names) - PLACEHOLDERS


def step_request(repo: Path, reply: str | None = None) -> StepRequest:
    plan = parse_plan(PLAN)
    return StepRequest(
        run_id="run-1",
        workdir=repo,
        step=plan.steps[0],
        plan_text=PLAN,
        version=1,
        reply=reply,
    )


def plan_request(repo: Path, diff: str = "", changed: tuple[str, ...] = ()) -> PlanRequest:
    return PlanRequest(
        run_id="run-1",
        workdir=repo,
        previous_plan=PLAN,
        task=None,
        failures=(
            Failure(
                kind="check",
                summary="check `pytest -q` failed (exit 1)",
                output_tail="E   assert 1 == 2\nFAILED tests/test_app.py::test_x - CHECK-TAIL",
            ),
            Failure(kind="gate", summary="AC1 has no evidence"),
        ),
        changed_files=changed,
        diff=diff,
        version=2,
    )


def plan_answer(plan_text: str = PLAN_V2) -> str:
    return f"Here is version 2.\n\n```plan\n{plan_text}```\n"


def test_is_an_agent() -> None:
    assert isinstance(ClaudeCodeAgent(binary=Path("/bin/true")), Agent)


# ------------------------------------------------------------------------------------------
# steps


def test_step_edits_the_file_and_is_done(tmp_path: Path, repo: Path, claude_bin: Path) -> None:
    script = Script(
        main=[
            [tool_use("Edit", file_path="src/app.py", old_string="X = 1", new_string="X = 2")],
            [tool_use("Bash", command="git diff --stat")],
            [text("Set X to 2.\nEVIDENCE AC1: `src/app.py`")],
        ]
    )
    with StandIn(script) as model:
        agent = make_agent(tmp_path, model, repo, claude_bin)
        outcome = agent.do_step(step_request(repo, reply="Please use the value 2."))
        records = model.requests

    assert outcome.status == "done", outcome
    assert outcome.escalation is None
    assert outcome.message.startswith("Set X to 2.")
    assert dict(outcome.evidence) == {"AC1": ("src/app.py",)}
    assert (repo / "src" / "app.py").read_text() == "X = 2\n"
    assert git(repo, "status", "--porcelain").strip() == "M src/app.py"

    requests = main_requests(records)
    assert len(requests) == 3
    first = requests[0]
    assert tool_names(first) == set(STEP_TOOLS)
    prompt = first.last_user_text
    for expected in (
        "Step 1: Change X",
        "Files: `src/app.py`",
        "AC1: `X` equals 2.",
        "Set `X = 2` in `src/app.py`.",
        "# Plan: Bump the answer",
        "Please use the value 2.",
        "Only touch the files this step names",
        "ESCALATE: <why>",
    ):
        assert expected in prompt, expected
    edit_result = requests[1].tool_results()[0]
    assert not edit_result.get("is_error"), edit_result
    bash_result = requests[2].tool_results()[0]
    assert not bash_result.get("is_error"), bash_result
    assert "src/app.py" in json.dumps(bash_result["content"])
    assert agent.last_args is not None
    assert "--resume" not in agent.last_args and "--continue" not in agent.last_args


def test_step_escalates_with_the_reason(tmp_path: Path, repo: Path, claude_bin: Path) -> None:
    script = Script(
        main=[[text("X is imported from another module.\n\nESCALATE: needs src/other.py")]]
    )
    with StandIn(script) as model:
        agent = make_agent(tmp_path, model, repo, claude_bin)
        outcome = agent.do_step(step_request(repo))

    assert outcome.status == "escalate"
    assert outcome.escalation == "needs src/other.py"
    assert "X is imported from another module." in outcome.message
    assert (repo / "src" / "app.py").read_text() == "X = 1\n"


# ------------------------------------------------------------------------------------------
# the planner


def test_planner_returns_a_whole_plan(tmp_path: Path, repo: Path, claude_bin: Path) -> None:
    with StandIn(Script(main=[[text(plan_answer())]])) as model:
        agent = make_agent(tmp_path, model, repo, claude_bin)
        outcome = agent.plan(plan_request(repo))

    assert outcome.needs_person is None
    assert outcome.plan_text == PLAN_V2
    plan = parse_plan(outcome.plan_text)
    assert validate_plan(plan) == []
    old = parse_plan(PLAN)
    assert render_step(plan.steps[0]) == render_step(old.steps[0])
    assert [s.number for s in plan.steps] == [1, 2]
    assert agent.last_args is not None
    assert "--resume" not in agent.last_args and "--continue" not in agent.last_args


def test_planner_cannot_write_the_cli_refuses(tmp_path: Path, repo: Path, claude_bin: Path) -> None:
    """The read-only tool set is enforced by the CLI: the model asks to edit, write and run
    a command, and the CLI refuses every call; nothing in the worktree changes."""
    script = Script(
        main=[
            [tool_use("Edit", file_path="src/app.py", old_string="X = 1", new_string="X = 9")],
            [tool_use("Write", file_path="src/new.py", content="HACKED = True\n")],
            [tool_use("Bash", command="echo pwned > pwned.txt")],
            [tool_use("NotebookEdit", notebook_path="n.ipynb", new_source="x")],
            [tool_use("Agent", description="edit", prompt="Set X = 9 in src/app.py")],
            [tool_use("Read", file_path="src/app.py")],
            [text(plan_answer())],
        ]
    )
    with StandIn(script) as model:
        agent = make_agent(tmp_path, model, repo, claude_bin)
        outcome = agent.plan(plan_request(repo))
        records = model.requests

    assert (repo / "src" / "app.py").read_text() == "X = 1\n"
    assert not (repo / "src" / "new.py").exists()
    assert not (repo / "pwned.txt").exists()
    assert git(repo, "status", "--porcelain") == ""

    requests = main_requests(records)
    assert len(requests) == 7
    assert tool_names(requests[0]) == {"Read", "Grep", "Glob"}
    refused = [r.tool_results()[0] for r in requests[1:6]]
    for name, result in zip(
        ["Edit", "Write", "Bash", "NotebookEdit", "Agent"], refused, strict=True
    ):
        content = json.dumps(result.get("content"))
        assert result.get("is_error") is True, result
        assert f"No such tool available: {name}" in content, content
        assert "disabled for this session" in content, content
    read = requests[6].tool_results()[0]
    assert not read.get("is_error") and "X = 1" in json.dumps(read["content"])
    assert outcome.plan_text == PLAN_V2


def test_planner_gets_only_the_typed_request_never_a_conversation(
    tmp_path: Path, repo: Path, claude_bin: Path
) -> None:
    script = Script(
        main=[
            [tool_use("Edit", file_path="src/app.py", old_string="X = 1", new_string="X = 2")],
            [text("Done. STEP-ANSWER-MARKER")],
            [text(plan_answer())],
        ]
    )
    with StandIn(script) as model:
        agent = make_agent(tmp_path, model, repo, claude_bin)
        agent.do_step(step_request(repo, reply="REPLY-MARKER"))
        assert agent.last_result is not None
        step_session = agent.last_result.session_id
        before = len(model.requests)
        diff = git(repo, "diff")
        outcome = agent.plan(plan_request(repo, diff=diff, changed=("src/app.py",)))
        planner_records = model.requests[before:]

    assert outcome.plan_text == PLAN_V2
    assert agent.last_result is not None
    assert agent.last_result.session_id != step_session

    requests = main_requests(planner_records)
    assert len(requests) == 1
    (request,) = requests
    # one user message (the prompt) and the CLI's own environment note; no earlier turns
    assert [m["role"] for m in request.messages if m.get("role") != "system"] == ["user"]
    prompt = request.last_user_text
    assert "check `pytest -q` failed (exit 1)" in prompt
    assert "FAILED tests/test_app.py::test_x - CHECK-TAIL" in prompt
    assert "AC1 has no evidence" in prompt
    assert "-X = 1" in prompt and "+X = 2" in prompt
    assert "`src/app.py`" in prompt
    assert "# Plan: Bump the answer" in prompt
    assert "NEEDS PERSON: <why>" in prompt
    for record in planner_records:
        body = record.text()
        assert "STEP-ANSWER-MARKER" not in body
        assert "REPLY-MARKER" not in body
        assert "Only touch the files this step names" not in body


def test_planner_says_a_person_must_decide(tmp_path: Path, repo: Path, claude_bin: Path) -> None:
    answer = "Both fixes are possible.\n\nNEEDS PERSON: choose between a cache and a rewrite"
    with StandIn(Script(main=[[text(answer)]])) as model:
        agent = make_agent(tmp_path, model, repo, claude_bin)
        outcome = agent.plan(plan_request(repo))

    assert outcome.plan_text is None
    assert outcome.needs_person == "choose between a cache and a rewrite"
    assert outcome.message == answer


# ------------------------------------------------------------------------------------------
# the review


def test_review_sends_back_with_a_reason_read_only(
    tmp_path: Path, repo: Path, claude_bin: Path
) -> None:
    script = Script(
        main=[
            [tool_use("Write", file_path="review.txt", content="x")],
            [text("The test is missing.\nSEND BACK: no test covers X")],
            [text("Looks right.\n\nAPPROVED")],
        ]
    )
    request = ReviewRequest(
        run_id="run-1",
        workdir=repo,
        plan_text=PLAN,
        task=None,
        changed_files=("src/app.py",),
        diff="-X = 1\n+X = 2\n",
        version=1,
    )
    with StandIn(script) as model:
        agent = make_agent(tmp_path, model, repo, claude_bin)
        sent_back = agent.review(request)
        approved = agent.review(request)
        records = model.requests

    assert not sent_back.approved and sent_back.reason == "no test covers X"
    assert approved.approved and approved.reason == ""
    assert not (repo / "review.txt").exists()
    requests = main_requests(records)
    assert tool_names(requests[0]) == {"Read", "Grep", "Glob"}
    assert "No such tool available: Write" in json.dumps(requests[1].tool_results())


# ------------------------------------------------------------------------------------------
# failures


@pytest.fixture
def release() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()


def test_a_session_that_runs_out_of_time_raises(
    tmp_path: Path, repo: Path, claude_bin: Path, release: threading.Event
) -> None:
    def slow(request: ModelRequest) -> Reply | None:
        if request.kind == "main":
            release.wait(300)
            return Reply([text("too late")])
        return None

    with StandIn(slow) as model:
        agent = make_agent(tmp_path, model, repo, claude_bin, timeout=3)
        started = time.monotonic()
        with pytest.raises(ClaudeCodeError) as caught:
            agent.do_step(step_request(repo))
        elapsed = time.monotonic() - started
        release.set()

    # Not a speed check: the model answers only after 300 s, so raising within half of that
    # (generous for a loaded machine) proves the 3 s timeout ended the session.
    assert elapsed < 150
    assert "did not finish the step within 3s" in caught.value.message
    assert "timeout" in caught.value.remedy
    assert (repo / "src" / "app.py").read_text() == "X = 1\n"


def test_an_unreachable_model_raises_with_the_cli_message(
    tmp_path: Path, repo: Path, claude_bin: Path
) -> None:
    with StandIn(Script()) as model:
        cc = ClaudeEnv.create(tmp_path / "cc", model, project_dir=repo, binary=claude_bin)
        env = cc.environ()
    # the stand-in is stopped now: its port refuses connections
    env.update({"CLAUDE_CODE_MAX_RETRIES": "0", "API_TIMEOUT_MS": "3000"})
    agent = ClaudeCodeAgent(binary=claude_bin, env=env, timeout=60)
    with pytest.raises(ClaudeCodeError) as caught:
        agent.plan(plan_request(repo))
    assert "Claude Code failed the planner" in caught.value.message
    assert "API Error" in caught.value.message
    assert caught.value.remedy
