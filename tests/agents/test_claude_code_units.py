"""ClaudeCodeAgent without the real CLI: answer parsers, prompts, flags and failures.

The failure tests run a fake ``claude`` (a Python script) that records its arguments, stdin
and environment and prints what the test asks for.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from plangate.agents.answers import (
    extract_plan_block,
    parse_plan_answer,
    parse_review_answer,
    parse_step_answer,
)
from plangate.agents.base import Failure, PlanRequest, ReviewRequest, StepRequest
from plangate.agents.claude_code import (
    DISALLOWED_READ_ONLY,
    ClaudeCodeAgent,
    agent_environ,
    parse_cli_output,
)
from plangate.agents.prompts import plan_prompt, review_prompt, step_prompt
from plangate.errors import ClaudeCodeError
from plangate.plan import parse_plan, validate_plan

from .conftest import PLAN

PLAN_WITH_CODE = PLAN.replace(
    "Set `X = 2` in `src/app.py`.",
    "Set `X = 2` in `src/app.py`:\n\n```python\nX = 2\n```\n\nand nothing else.",
)

# ------------------------------------------------------------------------------------------
# step answers


def test_a_plain_answer_is_done() -> None:
    outcome = parse_step_answer("Changed X to 2.")
    assert outcome.status == "done"
    assert outcome.escalation is None
    assert outcome.message == "Changed X to 2."
    assert dict(outcome.evidence) == {}


@pytest.mark.parametrize(
    "line",
    [
        "ESCALATE: needs src/other.py",
        "**ESCALATE:** needs src/other.py",
        "ESCALATE : needs   src/other.py ",
        "> ESCALATE: needs src/other.py",
        "`ESCALATE: needs src/other.py`",
    ],
)
def test_an_escalate_line_escalates(line: str) -> None:
    outcome = parse_step_answer(f"I looked at it.\n\n{line}\n")
    assert outcome.status == "escalate"
    assert outcome.escalation == "needs src/other.py"


def test_the_last_escalate_line_counts_and_a_bare_one_still_escalates() -> None:
    assert parse_step_answer("ESCALATE: a\nESCALATE: b").escalation == "b"
    bare = parse_step_answer("ESCALATE:")
    assert bare.status == "escalate" and bare.escalation


def test_escalate_in_prose_or_code_does_not_escalate() -> None:
    text = "I did not need to ESCALATE: it was easy.\n```\nESCALATE: example\n```\n"
    assert parse_step_answer(text).status == "done"


def test_evidence_lines_are_collected() -> None:
    outcome = parse_step_answer(
        "Done.\nEVIDENCE AC1: `reports/a.txt`, reports/b.txt\nEVIDENCE AC2: out.json\n"
        "EVIDENCE AC1: reports/a.txt\n"
    )
    assert dict(outcome.evidence) == {
        "AC1": ("reports/a.txt", "reports/b.txt"),
        "AC2": ("out.json",),
    }


# ------------------------------------------------------------------------------------------
# planner answers


def test_a_fenced_plan_is_taken() -> None:
    outcome = parse_plan_answer(f"Version 2:\n\n```plan\n{PLAN}```\n\nThat is all.")
    assert outcome.plan_text == PLAN
    assert outcome.needs_person is None
    assert validate_plan(parse_plan(outcome.plan_text)) == []


def test_a_plan_with_code_blocks_in_a_longer_fence() -> None:
    outcome = parse_plan_answer(f"````plan\n{PLAN_WITH_CODE}````\n")
    assert outcome.plan_text == PLAN_WITH_CODE


def test_a_plan_with_code_blocks_in_a_three_backtick_fence() -> None:
    # the plan's own ```python block sits inside a ``` fence: still read whole
    outcome = parse_plan_answer(f"```plan\n{PLAN_WITH_CODE}```\nDone.\n")
    assert outcome.plan_text == PLAN_WITH_CODE
    bare = PLAN_WITH_CODE.replace("```python", "```")
    assert parse_plan_answer(f"```plan\n{bare}```\nDone.\n").plan_text == bare


def test_the_last_plan_block_wins_and_tildes_work() -> None:
    draft = PLAN.replace("Bump the answer", "Draft")
    outcome = parse_plan_answer(f"```plan\n{draft}```\nBetter:\n~~~plan\n{PLAN}~~~\n")
    assert outcome.plan_text == PLAN


def test_an_unfenced_plan_that_parses_is_taken() -> None:
    assert parse_plan_answer(f"Here it is.\n\n{PLAN}").plan_text == PLAN


def test_a_broken_fenced_plan_is_still_returned_for_the_engine_to_refuse() -> None:
    outcome = parse_plan_answer("```plan\n# Plan: x\n\nno sections\n```\n")
    assert outcome.plan_text == "# Plan: x\n\nno sections\n"


def test_an_unclosed_plan_block_runs_to_the_end() -> None:
    assert extract_plan_block(f"```plan\n{PLAN}") == (PLAN, (0, len(PLAN.splitlines()) + 1))


def test_no_plan_and_no_person_is_neither() -> None:
    outcome = parse_plan_answer("I could not work it out.")
    assert outcome.plan_text is None and outcome.needs_person is None
    assert outcome.message == "I could not work it out."


def test_needs_person_wins_over_a_plan() -> None:
    outcome = parse_plan_answer(f"```plan\n{PLAN}```\nNEEDS PERSON: pick a database\n")
    assert outcome.plan_text is None
    assert outcome.needs_person == "pick a database"


def test_needs_person_inside_the_plan_is_plan_text() -> None:
    plan = PLAN.replace("Set `X = 2`", "NEEDS PERSON: no.\n\nSet `X = 2`")
    outcome = parse_plan_answer(f"```plan\n{plan}```\n")
    assert outcome.needs_person is None and outcome.plan_text == plan


# ------------------------------------------------------------------------------------------
# review answers


def test_review_answers() -> None:
    assert parse_review_answer("Fine.\nAPPROVED").approved
    assert parse_review_answer("**Approved.**").approved
    sent = parse_review_answer("APPROVED in part.\nSEND BACK: the test is   missing")
    assert not sent.approved and sent.reason == "the test is missing"
    silent = parse_review_answer("Hmm.")
    assert not silent.approved and "no verdict" in silent.reason


# ------------------------------------------------------------------------------------------
# the CLI's output


def test_cli_output_is_parsed() -> None:
    out = json.dumps(
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "result": "hi",
            "session_id": "abc",
        }
    )
    parsed = parse_cli_output(out)
    assert parsed is not None
    assert (parsed.result, parsed.is_error, parsed.session_id, parsed.subtype) == (
        "hi",
        False,
        "abc",
        "success",
    )
    assert parse_cli_output("warning: something\n" + out) == parsed
    assert parse_cli_output("") is None
    assert parse_cli_output("not json") is None
    assert parse_cli_output('{"other": 1}') is None
    events = json.dumps([{"type": "system"}, {"type": "result", "result": "x"}])
    stream = parse_cli_output(events)
    assert stream is not None and stream.result == "x"


# ------------------------------------------------------------------------------------------
# prompts


def _step_request(**changes: Any) -> StepRequest:
    plan = parse_plan(PLAN)
    values: dict[str, Any] = {
        "run_id": "r",
        "workdir": Path("/nowhere"),
        "step": plan.steps[0],
        "plan_text": PLAN,
        "version": 1,
    }
    values.update(changes)
    return StepRequest(**values)


def test_the_step_prompt_gives_the_step_and_the_rules() -> None:
    prompt = step_prompt(
        _step_request(
            reply="Use 2.",
            feedback=(Failure("check", "check `pytest` failed (exit 1)", "boom"),),
        )
    )
    for expected in (
        "Step 1: Change X",
        "Files: `src/app.py`",
        "- AC1: `X` equals 2.",
        "Set `X = 2` in `src/app.py`.",
        "plan version 1",
        "Use 2.",
        "check `pytest` failed (exit 1)",
        "boom",
        "Only touch the files this step names",
        "needs a file the plan does not name",
        "too large for one context",
        "`ESCALATE: <why>`",
        "Do not commit",
    ):
        assert expected in prompt, expected


def test_the_step_prompt_quotes_a_plan_with_code_in_a_longer_fence() -> None:
    prompt = step_prompt(_step_request(plan_text=PLAN_WITH_CODE))
    assert "````markdown\n" + PLAN_WITH_CODE in prompt


def test_the_bare_task_prompt() -> None:
    prompt = step_prompt(_step_request(step=None, plan_text=None, task="Make X 2."))
    assert "Make X 2." in prompt
    assert "Only touch the files" not in prompt
    assert "ESCALATE" in prompt


def test_the_plan_prompt_holds_the_request_and_the_format() -> None:
    request = PlanRequest(
        run_id="r",
        workdir=Path("/nowhere"),
        previous_plan=PLAN,
        task=None,
        failures=(Failure("escalation", "step 1 needs `src/other.py`"),),
        changed_files=("src/app.py",),
        diff="--- a/src/app.py\n+++ b/src/app.py\n-X = 1\n+X = 2\n",
        version=3,
    )
    prompt = plan_prompt(request)
    for expected in (
        "version 3",
        "```plan\n" + PLAN,
        "(escalation) step 1 needs `src/other.py`",
        "- `src/app.py`",
        "+X = 2",
        "must stay exactly as it is",
        "at least one new step",
        "NEEDS PERSON: <why>",
        "### Step 1: <title>",
        "## Acceptance criteria",
    ):
        assert expected in prompt, expected


def test_the_plan_prompt_for_a_task() -> None:
    request = PlanRequest(
        run_id="r",
        workdir=Path("/nowhere"),
        previous_plan=None,
        task="Make X 2.",
        failures=(),
        changed_files=(),
        diff="",
    )
    prompt = plan_prompt(request)
    assert "Make X 2." in prompt and "must stay exactly" not in prompt


def test_the_review_prompt() -> None:
    request = ReviewRequest(
        run_id="r",
        workdir=Path("/nowhere"),
        plan_text=PLAN,
        task=None,
        changed_files=("src/app.py",),
        diff="+X = 2\n",
    )
    prompt = review_prompt(request)
    assert "+X = 2" in prompt and "`APPROVED`" in prompt and "SEND BACK:" in prompt


# ------------------------------------------------------------------------------------------
# the environment


def test_the_environment_is_the_callers_minus_an_enclosing_session() -> None:
    given = {"HOME": "/h", "PATH": "/bin", "CLAUDECODE": "1", "CLAUDE_CODE_ENTRYPOINT": "cli"}
    no_bytecode = {"PYTHONDONTWRITEBYTECODE": "1"}  # no caches left in the worktree
    assert agent_environ(given, base={"OTHER": "x"}) == {
        "HOME": "/h",
        "PATH": "/bin",
        **no_bytecode,
    }
    base = {"HOME": "/real", "ANTHROPIC_API_KEY": "k", "CLAUDECODE": "1"}
    assert agent_environ(None, base=base) == {
        "HOME": "/real",
        "ANTHROPIC_API_KEY": "k",
        **no_bytecode,
    }


# ------------------------------------------------------------------------------------------
# a fake CLI


def fake_claude(tmp_path: Path, stdout: str, exit_code: int = 0, stderr: str = "") -> Path:
    """A ``claude`` that records argv, cwd, stdin and environment, then prints ``stdout``."""
    record = tmp_path / "record.json"
    path = tmp_path / "claude"
    path.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        f"record = {str(record)!r}\n"
        "data = {'argv': sys.argv[1:], 'cwd': os.getcwd(), 'stdin': sys.stdin.read(),\n"
        "        'env': dict(os.environ)}\n"
        "json.dump(data, open(record, 'w'))\n"
        f"sys.stdout.write({stdout!r})\n"
        f"sys.stderr.write({stderr!r})\n"
        f"sys.exit({exit_code})\n",
        encoding="utf-8",
    )
    path.chmod(0o755)
    return path


def recorded(tmp_path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((tmp_path / "record.json").read_text())
    return data


def _result(text: str, **extra: Any) -> str:
    return json.dumps(
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "result": text,
            "session_id": "s1",
            **extra,
        }
    )


def _plan_request(workdir: Path) -> PlanRequest:
    return PlanRequest(
        run_id="r",
        workdir=workdir,
        previous_plan=PLAN,
        task=None,
        failures=(),
        changed_files=(),
        diff="",
    )


def test_the_step_flags(tmp_path: Path) -> None:
    binary = fake_claude(tmp_path, _result("ok"))
    agent = ClaudeCodeAgent(binary=binary, env={"PATH": os.environ["PATH"]}, model="opus")
    outcome = agent.do_step(_step_request(workdir=tmp_path))
    assert outcome.status == "done"
    data = recorded(tmp_path)
    argv = data["argv"]
    assert argv[:3] == ["-p", "--output-format", "json"]
    assert argv[argv.index("--tools") + 1] == "Read,Edit,Write,Bash,Grep,Glob"
    assert argv[argv.index("--allowedTools") + 1] == "Read,Edit,Write,Bash,Grep,Glob"
    assert argv[argv.index("--permission-mode") + 1] == "acceptEdits"
    assert argv[argv.index("--model") + 1] == "opus"
    assert "--disallowedTools" not in argv
    assert not {"--resume", "--continue", "-c", "-r"} & set(argv)
    assert "Step 1: Change X" in data["stdin"]
    assert Path(data["cwd"]) == tmp_path.resolve()
    # the caller's environment exactly, plus the token that finds leftover processes
    assert set(data["env"]) - {"PATH"} <= {
        "PLANGATE_RUN_TOKEN",
        "PWD",
        "LC_CTYPE",
        "PYTHONDONTWRITEBYTECODE",
    }


#: A read-only session's environment with the OS sandbox off, so the fake CLI (a Python
#: script whose interpreter may live in a folder the sandbox hides) can write its record;
#: tests/agents/test_confinement.py runs fakes inside the sandbox.
NO_SANDBOX = {"PLANGATE_BWRAP": "off"}


def test_the_read_only_flags_and_a_fresh_session_every_time(tmp_path: Path) -> None:
    binary = fake_claude(tmp_path, _result("```plan\n" + PLAN + "```"))
    agent = ClaudeCodeAgent(binary=binary, env={"PATH": os.environ["PATH"], **NO_SANDBOX})
    agent.plan(_plan_request(tmp_path))
    first = recorded(tmp_path)["argv"]
    agent.plan(_plan_request(tmp_path))
    second = recorded(tmp_path)["argv"]
    for argv in (first, second):
        assert argv[argv.index("--tools") + 1] == "Read,Grep,Glob"
        # nothing pre-approved: dontAsk mode allows reads in the worktree and refuses others
        assert "--allowedTools" not in argv
        # no settings, hooks, plugins or MCP servers but plangate's own
        assert argv[argv.index("--setting-sources") + 1] == ""
        assert "--strict-mcp-config" in argv
        assert json.loads(argv[argv.index("--settings") + 1]) == {"disableAllHooks": True}
        denied = argv[argv.index("--disallowedTools") + 1].split(",")
        assert {"Edit", "Write", "Bash", "NotebookEdit", "Agent", "WebFetch"} <= set(denied)
        assert denied == list(DISALLOWED_READ_ONLY)
        assert argv[argv.index("--permission-mode") + 1] == "dontAsk"
        assert not {"--resume", "--continue", "-c", "-r", "--fork-session"} & set(argv)
    assert first[first.index("--session-id") + 1] != second[second.index("--session-id") + 1]
    # a HOME and Claude config folder of its own, made for the call and removed after it
    env = recorded(tmp_path)["env"]
    home = Path(env["HOME"])
    assert env["CLAUDE_CONFIG_DIR"] == str(home / ".claude")
    assert home.name.startswith("plangate-readonly-") and not home.exists()
    assert agent.last_isolation is not None and "no operating-system sandbox" in (
        agent.last_isolation
    )


def test_a_non_zero_exit_raises_with_the_cli_message(tmp_path: Path) -> None:
    binary = fake_claude(
        tmp_path, _result("API Error: 401 invalid key", is_error=True), exit_code=1
    )
    agent = ClaudeCodeAgent(binary=binary, env={})
    with pytest.raises(ClaudeCodeError) as caught:
        agent.do_step(_step_request(workdir=tmp_path))
    assert "exit 1" in caught.value.message and "401 invalid key" in caught.value.message
    assert "claude -p" in caught.value.remedy


def test_a_non_zero_exit_without_json_shows_stderr(tmp_path: Path) -> None:
    binary = fake_claude(tmp_path, "", exit_code=2, stderr="error: unknown option --tools")
    with pytest.raises(ClaudeCodeError, match="unknown option --tools"):
        ClaudeCodeAgent(binary=binary, env=NO_SANDBOX).plan(_plan_request(tmp_path))


def test_unparsable_output_raises(tmp_path: Path) -> None:
    binary = fake_claude(tmp_path, "Hello, I am a text answer")
    with pytest.raises(ClaudeCodeError, match="not its JSON result") as caught:
        ClaudeCodeAgent(binary=binary, env={}).do_step(_step_request(workdir=tmp_path))
    assert "--output-format json" in caught.value.remedy


def test_an_error_result_with_exit_zero_raises(tmp_path: Path) -> None:
    binary = fake_claude(
        tmp_path,
        _result("Reached the maximum number of turns", is_error=True, subtype="error_max_turns"),
    )
    with pytest.raises(ClaudeCodeError, match="error_max_turns"):
        ClaudeCodeAgent(binary=binary, env=NO_SANDBOX).review(
            ReviewRequest(
                run_id="r",
                workdir=tmp_path,
                plan_text=None,
                task="t",
                changed_files=(),
                diff="",
            )
        )


def test_a_missing_binary_or_worktree_raises(tmp_path: Path) -> None:
    agent = ClaudeCodeAgent(binary=tmp_path / "no-claude", env={})
    with pytest.raises(ClaudeCodeError, match="cannot start Claude Code"):
        agent.do_step(_step_request(workdir=tmp_path))
    with pytest.raises(ClaudeCodeError, match="does not exist"):
        agent.do_step(_step_request(workdir=tmp_path / "gone"))


def test_a_big_prompt_goes_through_stdin(tmp_path: Path) -> None:
    binary = fake_claude(tmp_path, _result("```plan\n" + PLAN + "```"))
    request = PlanRequest(
        run_id="r",
        workdir=tmp_path,
        previous_plan=PLAN,
        task=None,
        failures=(),
        changed_files=(),
        diff="+x\n" * 200_000,  # far beyond one argument's limit (128 KiB)
    )
    outcome = ClaudeCodeAgent(binary=binary, env=NO_SANDBOX).plan(request)
    assert outcome.plan_text == PLAN
    assert len(recorded(tmp_path)["stdin"]) > 600_000


def test_the_prompts_say_where_the_session_is_confined(tmp_path: Path) -> None:
    step = step_prompt(_step_request(workdir=tmp_path))
    assert "- Change nothing outside this worktree (the main repository, its branches" in step
    for prompt in (plan_prompt(_plan_request(tmp_path)), review_prompt(_review(tmp_path))):
        assert "(Read, Grep, Glob) inside this worktree; you cannot change any" in prompt
        assert "nothing outside it can be read." in prompt


def _review(workdir: Path) -> ReviewRequest:
    return ReviewRequest(
        run_id="r", workdir=workdir, plan_text=None, task="t", changed_files=(), diff=""
    )
