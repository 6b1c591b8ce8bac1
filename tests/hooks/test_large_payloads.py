"""PreToolUse payloads over 64 KiB, through the real hook process (issue 24.3).

A call the guard does not decide is answered ``{}`` whatever its size, and the hook reads no
more of it than it takes to see that; a phase entry that large is ``entry_too_large``.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from plangate.autoplan import layout

ENTRY = (
    "from plangate.hooks.pre_tool_use import main; "
    "from plangate.hook_io.runtime import run_process; run_process(main)"
)
SESSION = "0f3e2c1a-1111-4222-8333-444455556666"
BIG = 70 * 1024


def _environ(state: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLANGATE_", "CLAUDE"))}
    env["PLANGATE_STATE_ROOT"] = str(state)
    return env


def _payload(tmp_path: Path, tool_name: str, tool_input: dict[str, Any], **extra: Any) -> bytes:
    payload: dict[str, Any] = {
        "session_id": SESSION,
        "transcript_path": str(tmp_path / "session.jsonl"),
        "cwd": str(tmp_path),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool_name,
        "tool_input": tool_input,
        "tool_use_id": "toolu_01",
    }
    payload.update(extra)
    return json.dumps(payload).encode()


def _run(tmp_path: Path, data: bytes) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", ENTRY],
        input=data,
        capture_output=True,
        env=_environ(tmp_path / "state"),
        timeout=60,
    )
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    lines = done.stdout.decode().splitlines()
    assert len(lines) == 1, lines
    value: dict[str, Any] = json.loads(lines[0])
    return value


def _logged(tmp_path: Path) -> list[str]:
    log = tmp_path / "state" / "analytics" / "autoplan-guard.jsonl"
    if not log.exists():
        return []
    return [json.loads(line)["code"] for line in log.read_text().splitlines()]


def _reviewer_prompt(rest: str) -> str:
    return layout.reviewer_line(layout.REVIEW_PHASES[0]) + "\n" + rest


@pytest.mark.parametrize(
    ("tool_name", "tool_input", "extra"),
    [
        ("Agent", {"description": "explore", "prompt": "Explore the repo.\n" + "x" * BIG}, {}),
        ("Agent", {"prompt": "Look into:\n" + 'é"\\\n' * (BIG // 2)}, {}),
        ("Agent", {"prompt": _reviewer_prompt("x" * BIG)}, {"agent_id": "a1b2c3"}),
        ("Bash", {"command": "echo " + "y" * (3 * 1024 * 1024)}, {}),
        ("Read", {"file_path": "/tmp/notes.md", "pages": "z" * BIG}, {}),
    ],
    ids=["explore", "escaped", "inside-a-subagent", "bash", "read"],
)
def test_a_large_call_the_guard_does_not_decide_is_answered_empty(
    tmp_path: Path, tool_name: str, tool_input: dict[str, Any], extra: dict[str, Any]
) -> None:
    data = _payload(tmp_path, tool_name, tool_input, **extra)
    assert len(data) > 64 * 1024
    assert _run(tmp_path, data) == {}
    assert _logged(tmp_path) == []  # nothing was decided, so nothing was logged


def test_a_large_phase_entry_has_a_code_of_its_own(tmp_path: Path) -> None:
    data = _payload(tmp_path, "Agent", {"prompt": _reviewer_prompt("x" * BIG)})
    output = _run(tmp_path, data)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny"
    reason = output["permissionDecisionReason"]
    assert "entry_too_large" in reason and "dispatchPrompt" in reason
    assert "plangate setup" not in reason
    assert _logged(tmp_path) == ["entry_too_large"]


def test_a_large_phase_read_has_the_same_code(tmp_path: Path) -> None:
    driver = next(iter(layout.DRIVER_FILES.values()))
    path = tmp_path / "skills" / layout.SKILL_NAME / layout.SECTIONS_DIR / driver
    data = _payload(tmp_path, "Read", {"file_path": str(path), "pages": "z" * BIG})
    output = _run(tmp_path, data)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny"
    assert _logged(tmp_path) == ["entry_too_large"]


def test_a_small_payload_is_still_decided_whole(tmp_path: Path) -> None:
    """The limit did not move: a payload under it that is not PreToolUse is hook_input."""
    data = _payload(tmp_path, "Agent", {"prompt": "x"}, hook_event_name="Stop")
    assert _run(tmp_path, data)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert _logged(tmp_path) == ["hook_input"]


def test_a_huge_call_is_answered_after_reading_its_head(tmp_path: Path) -> None:
    """1 GiB offered on stdin: the hook answers after the first chunks and stops reading."""
    head = _payload(tmp_path, "Agent", {"prompt": "PLACEHOLDER"})
    before, after = head.split(b"PLACEHOLDER")
    written = 0
    chunk = b"Summarise this. " * 65536  # 1 MiB
    with subprocess.Popen(
        [sys.executable, "-c", ENTRY],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=_environ(tmp_path / "state"),
    ) as process:
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(before)
            while written < 1024 * len(chunk):
                process.stdin.write(chunk)
                written += len(chunk)
            process.stdin.write(after)
        except BrokenPipeError:
            pass  # the hook answered and left: what it did not need was never read
        with contextlib.suppress(BrokenPipeError):
            process.stdin.close()
        answer = process.stdout.read()
        assert process.wait(timeout=60) == 0
    assert json.loads(answer) == {}
    assert written < 64 * 1024 * 1024
