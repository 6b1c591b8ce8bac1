"""Declared checks: shell commands run in the sandbox with a timeout.

The whole output (standard output and error, interleaved) is kept in the store; what is
shown, and given to the planner, is its tail: the last 40 lines, at most 4 KiB. On a
timeout the check's whole process group is killed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

from plangate.plan.model import Check
from plangate.processes import kill_group
from plangate.runs.model import CheckRecord, Failure

DEFAULT_TIMEOUT_SECONDS = 600
TAIL_LINES = 40
TAIL_BYTES = 4096


def tail(text: str, lines: int = TAIL_LINES, max_bytes: int = TAIL_BYTES) -> str:
    """The end of ``text``: its last ``lines`` lines, cut to at most ``max_bytes`` UTF-8 bytes."""
    kept = "\n".join(text.rstrip("\n").splitlines()[-lines:])
    data = kept.encode("utf-8")
    if len(data) > max_bytes:
        kept = data[-max_bytes:].decode("utf-8", errors="ignore")
        newline = kept.find("\n")
        if 0 <= newline < len(kept) - 1:
            kept = kept[newline + 1 :]
    return kept


def run_check(
    check: Check,
    cwd: Path,
    *,
    round_key: str = "",
    index: int = 0,
    default_timeout: int = DEFAULT_TIMEOUT_SECONDS,
) -> CheckRecord:
    """Run one check to its end or its timeout."""
    timeout = check.timeout_seconds or default_timeout
    started = time.monotonic()
    env = dict(os.environ)
    env["PLANGATE_RUN_CHECK"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # no bytecode caches in the worktree
    process = subprocess.Popen(
        check.command,
        shell=True,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    timed_out = False
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        kill_group(process)
        try:
            output, _ = process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            # Something left the process group and holds the pipe open; give up on it.
            if process.stdout is not None:
                process.stdout.close()
            output = b""
            process.wait()
    else:
        # A finished check may leave children behind in its group; they go too.
        _kill_group_quietly(process)
    text = output.decode("utf-8", errors="replace")
    if timed_out:
        text += f"\n[plangate: the check timed out after {timeout}s and was killed]\n"
    return CheckRecord(
        round_key=round_key,
        index=index,
        name=check.name,
        command=check.command,
        exit_code=None if timed_out else process.returncode,
        timed_out=timed_out,
        duration_seconds=round(time.monotonic() - started, 3),
        output=text,
        tail=tail(text),
    )


def _kill_group_quietly(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def summary(record: CheckRecord) -> str:
    """One line: ``check `pytest -q` failed (exit 1)``, ``... timed out after 300s``."""
    if record.timed_out:
        return f"check {record.label} timed out after {round(record.duration_seconds)}s"
    if record.passed:
        return f"check {record.label} passed"
    return f"check {record.label} failed (exit {record.exit_code})"


def failure(record: CheckRecord) -> Failure:
    return Failure("check", summary(record), record.tail)
