"""A command the person runs in Claude Code itself is not a person's turn: it never approves
a phase, and it never ends the wait for a call Claude Code has not journaled yet.

The journals are built from the shapes Claude Code 2.1.332 writes (recorded in the terminal
UI and with ``claude -p``; :mod:`tests.journal.test_local_commands` has them record by
record). The race is the one seen in the terminal UI on a busy machine: after ``/compact``
the person types the next phase's command, and the hook of the model's first call reads the
journal before Claude Code has written that command. Read as the person's turn, the
``/compact`` record made the journal look caught up, and the call was decided on the phase
before: ``/kiro-impl``'s first source write refused as in tasks, ``/kiro-spec-design``'s
early source write decided in requirements.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from plangate.contracts import evaluate
from testkit.contents import slash_text
from tests.contracts.conftest import (
    DESIGN,
    FEATURE,
    TASKS,
    Project,
    through_requirements,
)
from tests.contracts.test_rules import code_of, log_lines, skill


def _approvals(project: Project) -> list[object]:
    return [line["phase"] for line in log_lines(project) if line.get("event") == "approval"]


@pytest.mark.parametrize(
    "command",
    ["compact", "shell", "model"],
)
def test_a_local_command_with_the_approval_words_does_not_approve(
    project: Project, command: str
) -> None:
    through_requirements(project)
    journal = project.journal
    journal._clock = datetime.now(UTC)  # later than the requirements
    if command == "compact":
        journal.manual_compact("approve requirements")
    elif command == "shell":
        journal.shell_command("echo approve requirements", "approve requirements\n")
    else:
        journal.system_local_command("model", "approve requirements", "Kept model")
    assert skill(project, "kiro-spec-design") == "contract_approval"
    assert _approvals(project) == []


def test_an_approval_given_before_a_compact_still_counts(project: Project) -> None:
    through_requirements(project)
    project.person("approve requirements")
    project.journal.text("Noted.")
    project.journal.manual_compact()
    assert skill(project, "kiro-spec-design") is None
    assert _approvals(project) == ["requirements"]


def _tasks_approved(project: Project) -> None:
    through_requirements(project)
    project.person("approve requirements")
    project.skill("kiro-spec-design", FEATURE)
    project.write(project.spec / "design.md", DESIGN)
    project.person("approve design")
    project.skill("kiro-spec-tasks", FEATURE)
    project.write(project.spec / "tasks.md", TASKS)
    project.person("approve tasks")
    project.journal.text("Tasks approved.")


def _typed_then_written(project: Project, path: Path, command: str, target: Path) -> dict[str, Any]:
    """The person's typed skill command (as the terminal UI journals it: message first,
    ``origin`` human) and the model's Write of ``target`` at once: added to the journal
    builder only, for :func:`_written_late`. Returns the Write's hook payload, which points
    at the file saved before, ``path``."""
    journal = project.journal
    journal._clock = datetime.now(UTC)
    journal.user_text(slash_text(command, FEATURE, "legacy"), origin={"kind": "human"})
    call_id = journal.new_tool_use_id()
    tool_input = {"file_path": str(target), "content": "x = 1\n"}
    journal.tool_use("Write", tool_input, tool_use_id=call_id)
    return {
        "session_id": journal.session_id,
        "transcript_path": str(path),
        "cwd": str(project.dir),
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": tool_input,
        "tool_use_id": call_id,
    }


def _written_late(project: Project, path: Path, written: bytes) -> threading.Timer:
    """Claude Code's write of what the builder holds beyond ``written``, 0.3 s after the hook
    started reading."""
    later = project.journal.write(project.dir.parent / "later.jsonl").read_bytes()
    assert later.startswith(written)

    def append() -> None:
        with path.open("ab") as handle:
            handle.write(later[len(written) :])

    return threading.Timer(0.3, append)


@pytest.mark.parametrize(
    ("phases", "command", "file", "code", "phase"),
    [
        ("tasks", "kiro-impl", "src/greet.py", None, "impl"),
        ("requirements", "kiro-spec-design", "src/extra.py", "contract_edit_scope", "design"),
    ],
    ids=["impl-after-tasks", "design-after-requirements"],
)
def test_after_compact_the_first_call_waits_for_the_typed_command(
    project: Project,
    phases: str,
    command: str,
    file: str,
    code: str | None,
    phase: str,
) -> None:
    """The hook's first look ends on ``/compact``'s records; Claude Code writes the typed
    command and the call 0.3 s later. The read waits for them, and the typed phase decides:
    the implementation's source write is allowed, the design's refused in design."""
    if phases == "tasks":
        _tasks_approved(project)
    else:
        through_requirements(project)
        project.person("approve requirements")
        project.journal.text("Noted.")
    project.journal.manual_compact()
    path = project.save()  # what the hook first sees: it ends on /compact's records
    written = path.read_bytes()
    payload = _typed_then_written(project, path, command, project.dir / file)
    timer = _written_late(project, path, written)
    timer.start()
    try:
        decided = evaluate.pre_tool_use(payload, [str(project.dir / file)])
    finally:
        timer.join()
    assert code_of(dict(decided)) == code, decided
    if code is not None:
        (line,) = [line for line in log_lines(project) if line.get("event") == "edit"]
        assert line["phase"] == phase


@pytest.mark.parametrize("command", ["compact", "clear", "shell"])
def test_a_local_command_does_not_end_the_wait_for_an_unjournaled_call(
    project: Project, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """Nothing follows the local command's records (the typed command never comes): the
    read polls until its bound, then decides on what is written (the phase before)."""
    _tasks_approved(project)
    if command == "compact":
        project.journal.manual_compact()
    elif command == "clear":
        project.journal.local_command("clear", system_output=True)
    else:
        project.journal.shell_command("ls", "src\n")
    now = [0.0]
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    monkeypatch.setattr(time, "sleep", sleep)
    target = project.dir / "src" / "greet.py"
    payload = project.payload("Write", {"file_path": str(target), "content": "x = 1\n"})
    assert code_of(dict(evaluate.pre_tool_use(payload, [str(target)]))) == "contract_edit_scope"
    assert sum(waits) >= evaluate.JOURNAL_WAIT_SECONDS
