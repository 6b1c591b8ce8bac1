"""The hook runner: one JSON line on stdout, exit 0, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ENTRY = textwrap.dedent(
    """
    import sys
    from plangate.hook_io import runtime

    def decide(payload):
        if payload.get("crash"):
            raise RuntimeError("boom")
        if payload.get("unserializable"):
            return {"x": object()}
        return {"seen": payload.get("tool_name")}

    def bad_input(error):
        return {"outcome": "hook_input", "detail": error.detail}

    def crash(error):
        if "boom" in str(error) and len(sys.argv) > 1:
            raise ValueError("the failure outcome fails too")
        return {"outcome": "installation", "detail": type(error).__name__}

    policy = runtime.Policy(
        ("PreToolUse",), decide, closed=True, bad_input=bad_input, crash=crash
    )
    raise SystemExit(runtime.run(policy))
    """
)


def run_entry(stdin: bytes, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-c", ENTRY, *args], input=stdin, capture_output=True, timeout=30
    )


def single_line(result: subprocess.CompletedProcess[bytes]) -> dict[str, object]:
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    assert len(lines) == 1, lines
    value = json.loads(lines[0])
    assert isinstance(value, dict)
    return value


def test_decision_is_one_json_line() -> None:
    result = run_entry(b'{"tool_name": "Read"}')
    assert single_line(result) == {"seen": "Read"}
    assert result.stderr == b""


@pytest.mark.parametrize(
    ("stdin", "detail"),
    [
        (b"", "the hook payload is not JSON"),
        (b"not json", "the hook payload is not JSON"),
        (b"[1, 2]", "the hook payload is not a JSON object"),
        (b'"text"', "the hook payload is not a JSON object"),
        (b'{"a": "\xff"}', "the hook payload is not UTF-8"),
        (b'{"a": "' + b"x" * (64 * 1024) + b'"}', "the hook payload is over 64 KiB"),
    ],
)
def test_bad_input_is_the_hook_input_outcome(stdin: bytes, detail: str) -> None:
    assert single_line(run_entry(stdin)) == {"outcome": "hook_input", "detail": detail}


def test_payload_of_exactly_64_kib_is_read() -> None:
    body = b'{"tool_name": "' + b"x" * (64 * 1024 - 17) + b'"}'
    assert len(body) == 64 * 1024
    assert single_line(run_entry(body))["seen"] == "x" * (64 * 1024 - 17)


def test_exception_becomes_documented_outcome_not_traceback() -> None:
    result = run_entry(b'{"crash": true}')
    assert single_line(result) == {"outcome": "installation", "detail": "RuntimeError"}
    assert b"Traceback" not in result.stderr


def test_unwritable_output_becomes_documented_outcome() -> None:
    assert single_line(run_entry(b'{"unserializable": true}')) == {
        "outcome": "installation",
        "detail": "JSONError",
    }


def test_failing_failure_outcome_still_prints_one_line_and_exits_zero() -> None:
    result = run_entry(b'{"crash": true}', "fail-the-failure")
    assert single_line(result) == {"systemMessage": "plangate hook failed unexpectedly"}


def test_closed_stdout_does_not_raise() -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", ENTRY],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    process.stdout.close()
    _, stderr = process.communicate(b'{"tool_name": "Read"}', timeout=30)
    assert process.returncode == 0
    assert b"Traceback" not in stderr


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("", 10.0), ("1", 3.0), ("2999", 3.0), ("4500", 4.5), ("99999", 20.0), ("x", 10.0)],
)
def test_the_guard_deadline_has_a_floor_and_a_ceiling(
    value: str, seconds: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plangate.hook_io.runtime import deadline_seconds
    from plangate.hooks import pre_tool_use

    monkeypatch.setenv(pre_tool_use.DEADLINE_ENV, value)
    found = deadline_seconds(
        pre_tool_use.DEADLINE_ENV,
        pre_tool_use.DEFAULT_DEADLINE_MS,
        pre_tool_use.MAX_DEADLINE_MS,
        pre_tool_use.MIN_DEADLINE_MS,
    )
    assert found == seconds


def test_the_deadline_floor_outlasts_the_journal_wait() -> None:
    from plangate.guard.observe import DEADLINE_SECONDS
    from plangate.hooks.pre_tool_use import MIN_DEADLINE_MS

    assert MIN_DEADLINE_MS >= DEADLINE_SECONDS * 1000 + 500


def test_a_registration_from_an_earlier_setup_still_runs(tmp_path: Path) -> None:
    """Settings written by an earlier ``plangate setup`` import ``run_process`` from
    ``plangate.hooks.runtime``: such a command still answers as the hook does."""
    from tests.conftest import SRC

    old = (
        "import sys; sys.path.insert(0, sys.argv.pop(1)); "
        "from plangate.hooks.pre_tool_use import main; "
        "from plangate.hooks.runtime import run_process; run_process(main)"
    )
    payload = {
        "hook_event_name": "PreToolUse",
        "tool_name": "Read",
        "session_id": "s",
        "tool_use_id": "toolu_1",
        "cwd": str(tmp_path),
        "transcript_path": str(tmp_path / "s.jsonl"),
        "tool_input": {"file_path": str(tmp_path / "notes.md")},
    }
    env = {"PATH": "/usr/bin:/bin", "PLANGATE_STATE_ROOT": str(tmp_path / "state")}
    result = subprocess.run(
        [sys.executable, "-S", "-c", old, SRC],
        input=json.dumps(payload).encode(),
        capture_output=True,
        timeout=30,
        env=env,
        cwd=tmp_path,
    )
    assert single_line(result) == {}
    assert result.stderr == b""


EVENTS = ["PreToolUse", "Stop", "SubagentStop", "UserPromptExpansion", "UserPromptSubmit"]


@pytest.mark.parametrize("event", EVENTS)
def test_a_verified_allow_is_an_empty_answer_in_every_form(event: str) -> None:
    """Never an explicit allow: Codex CLI takes one for a failed hook."""
    from plangate.decisions.reasons import Decision
    from plangate.hook_io.runtime import SILENT, Answer, render

    assert render(event, Answer(Decision.allow())) == ("{}", None, 0)
    assert render(event, None) == ("{}", None, 0)
    assert render(event, SILENT) == (None, None, 0)
    assert render(event, {"k": 1}) == ('{"k":1}', None, 0)


@pytest.mark.parametrize("event", EVENTS)
def test_a_refusal_is_written_in_its_events_form(event: str) -> None:
    from plangate.decisions import reasons
    from plangate.hook_io.runtime import Answer, render

    decision = reasons.Decision.deny(reasons.PHASE_ORDER, detail="ceo")
    reason = reasons.deny_reason(reasons.PHASE_ORDER, None, "ceo")
    line, text, code = render(event, Answer(decision))
    if event == "PreToolUse":
        assert line is not None and json.loads(line) == decision.output()
        assert (text, code) == (None, 0)
    elif event == "UserPromptExpansion":
        assert (line, text, code) == (None, reason, 2)  # blocked: the reason on stderr
    else:
        assert line is not None and json.loads(line) == {"decision": "block", "reason": reason}
        assert (text, code) == (None, 0)
