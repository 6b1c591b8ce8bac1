"""Declared checks: shell commands run in the sandbox with a timeout.

The whole output (standard output and error, interleaved) is kept in the store; what is
shown, and given to the planner, is its tail: the last 40 lines, at most 4 KiB. When a check
ends or times out, everything it started is killed, a process that left its session too.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

from plangate.errors import CheckError
from plangate.plan.model import Check
from plangate.processes import run_bounded
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
    run_id: str = "",
) -> CheckRecord:
    """Run one check to its end or its timeout (:func:`plangate.processes.run_bounded`:
    whatever it leaves running, in its group or in sessions of its own, is killed).
    :class:`~plangate.errors.CheckError` when it cannot be started at all.

    The check runs under a token named after the run, the round and its place
    (:func:`check_token`): when the worker was killed (kill -9, of its process group too)
    while the check ran, the resumed run's attempt ends what is still running of it before
    it starts the check again."""
    timeout = check.timeout_seconds or default_timeout
    started = time.monotonic()
    env = dict(os.environ)
    env["PLANGATE_RUN_CHECK"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # no bytecode caches in the worktree
    try:
        done = run_bounded(
            check.command,
            shell=True,
            cwd=cwd,
            env=env,
            merge_stderr=True,
            timeout=timeout,
            token=check_token(run_id, round_key, index),
        )
    except OSError as error:
        raise CheckError(
            f"cannot run the check `{check.command}` in {cwd}: {error.strerror or error}",
            "check that the run's worktree exists and /bin/sh can be started",
        ) from error
    text = done.stdout
    if done.timed_out:
        text += f"\n[plangate: the check timed out after {timeout}s and was killed]\n"
    if done.held:
        text += "\n[plangate: a process the check left behind kept its output open]\n"
    return CheckRecord(
        round_key=round_key,
        index=index,
        name=check.name,
        command=check.command,
        exit_code=None if done.timed_out else done.returncode,
        timed_out=done.timed_out,
        duration_seconds=round(time.monotonic() - started, 3),
        output=text,
        tail=tail(text),
    )


def check_token(run_id: str, round_key: str, index: int) -> str:
    """The process token of one check of one round of one run: the same on every attempt."""
    name = f"plangate-check:{run_id}:{round_key}:{index}".encode()
    return hashlib.sha256(name).hexdigest()[:16]


def summary(record: CheckRecord) -> str:
    """One line: ``check `pytest -q` failed (exit 1)``, ``... timed out after 300s``."""
    if record.timed_out:
        return f"check {record.label} timed out after {round(record.duration_seconds)}s"
    if record.passed:
        return f"check {record.label} passed"
    return f"check {record.label} failed (exit {record.exit_code})"


def failure(record: CheckRecord) -> Failure:
    return Failure("check", summary(record), record.tail)
