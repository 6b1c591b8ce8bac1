"""The run's error log: what an unexpected error in a run was, and its traceback.

An unexpected exception in a run's turn (anything but an error of a stage, which makes the
run wait on a person) is a bug. The turn ends ``errored``: the run shows one line
(:func:`describe`: the exception, the stage it came from, its message) and the path of the
log file that holds the traceback, ``<state root>/runs/<run id>/errors.log`` (appended to,
one entry a turn; :func:`path`).
"""

from __future__ import annotations

import os
import traceback
from datetime import UTC, datetime
from pathlib import Path

from plangate.runs.host import host_name
from plangate.runs.model import RunRecord
from plangate.state_root import RUNS, StateRoot

LOG_NAME = "errors.log"
MESSAGE_LIMIT = 300  # characters of the exception's message in the one line

# The workflow's stages, by the function that carries each (innermost first wins).
STAGES = {
    "prepare": "preparing the turn",
    "carry_out": "carrying out a step",
    "run_checks": "running the checks",
    "run_gate": "the evidence gate",
    "review": "the review",
    "spend": "spending an attempt",
    "replan": "re-planning",
    "wait": "ending the turn",
    "finish": "ending the turn",
    "_turn": "the turn",
}
_HERE = str(Path(__file__).resolve().parent)


def stage_of(error: BaseException) -> str | None:
    """The stage the error came from, judged from its traceback (``None`` without one)."""
    found = None
    for frame in traceback.extract_tb(error.__traceback__):
        in_runs = str(Path(frame.filename).resolve().parent) == _HERE
        if in_runs and frame.name in STAGES:
            found = STAGES[frame.name]
    return found


def describe(error: BaseException) -> str:
    """One line: ``ZeroDivisionError in running the checks: division by zero``."""
    message = " ".join(str(error).split())
    if len(message) > MESSAGE_LIMIT:
        message = message[: MESSAGE_LIMIT - 1] + "…"
    stage = stage_of(error)
    where = f" in {stage}" if stage else ""
    return f"{type(error).__name__}{where}: {message}" if message else type(error).__name__ + where


def traceback_text(error: BaseException) -> str:
    """The whole traceback; a note instead where the error has none (it was recorded by
    DBOS before the turn resumed in this process, and only its type and message were kept)."""
    text = "".join(traceback.format_exception(error))
    if error.__traceback__ is None:
        text = (
            "(no traceback: the error was recorded before the turn resumed in this process)\n"
            + text
        )
    return text


def path(run_id: str, run: RunRecord | None) -> Path:
    """The run's log: in the run's folder (the one that holds its worktree)."""
    if run is not None:
        return Path(run.worktree).parent / LOG_NAME
    return Path(StateRoot().file(RUNS, run_id, LOG_NAME))


def write(log: Path, run_id: str, turn: int, error: str, trace: str) -> str:
    """Append an entry to ``log`` (in the state root: one ``O_APPEND`` write, never through a
    link); its path, or why it could not be written."""
    stamp = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    entry = (
        f"== {stamp} run {run_id} turn {turn} on {host_name()} "
        f"(process {os.getpid()})\n{error}\n\n{trace.rstrip()}\n\n"
    )
    try:
        StateRoot().within(str(log.parent)).append(log.name, entry.encode("utf-8"))
    except (OSError, ValueError) as problem:
        return f"{log} (not written: {getattr(problem, 'strerror', None) or problem})"
    return str(log)
