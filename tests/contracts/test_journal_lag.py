"""A contract decision waits for Claude Code to journal the current call.

In the terminal UI, Claude Code writes a prompt's record asynchronously: the PreToolUse hook
of the model's first call can start before the prompt and the call are in the journal (seen
in tests/e2e/test_contract_tui.py: a hook's copy of the journal ended on the rewound
approval's "Noted" reply). The newest record is then on the branch the person rewound away,
so a read that anchors there counts a rewound approval. The contracts' read waits (a bounded
poll) until the call is journaled, and the live chain through it decides.

A prompt typed while the model works (a queued command) may be journaled, with the model's
next call, after that call's hook has read the journal (seen in
tests/e2e/test_contract_spec_kit_tui.py: the read ended on the tool result, or on the turn's
prompt). A refusal for a missing approval then waits, within the same bound, for the call
itself, and is decided again on the journal.
"""

from __future__ import annotations

import io
import shutil
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from plangate.contracts import evaluate
from plangate.journal.settle import POLL_SECONDS
from testkit.journals import use_id
from tests.contracts.conftest import (
    DESIGN,
    FEATURE,
    REQUIREMENTS,
    TASKS,
    Project,
    spec_json,
    through_requirements,
    typed_refusal,
)
from tests.contracts.test_rules import code_of, log_lines


def test_a_call_journaled_late_after_a_rewind_is_decided_on_the_live_chain(
    project: Project,
) -> None:
    through_requirements(project)
    branch = project.journal.leaf
    project.person("approve requirements")
    project.journal.text("Noted, thank you.")
    journal = project.save()  # what the hook first sees: it ends on the rewound branch
    written = journal.read_bytes()
    project.journal.leaf = branch  # the rewind: the next prompt is the approval's sibling
    project.person("what does requirement 1 mean?")
    payload = _design_call(project, journal)
    timer = _late(project, journal, written)  # Claude Code's write, after the hook started
    decided = _decide_during(timer, payload, None)
    assert code_of(decided) == "contract_approval", decided


def test_a_call_after_a_journaled_prompt_is_decided_without_waiting(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The prompt the call answers is journaled (the call itself not yet): the chain through
    it is the live one, so nothing is waited for."""
    through_requirements(project)
    project.person("approve requirements")
    waits: list[float] = []
    monkeypatch.setattr(time, "sleep", waits.append)  # the read's poll
    payload = project.payload("Skill", {"skill": "kiro-spec-design", "args": FEATURE})
    assert code_of(evaluate.pre_tool_use(payload, None)) is None
    assert waits == []


def test_a_journal_that_stays_behind_is_decided_on_what_is_written(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wait is bounded: a call never journaled is decided on the newest record."""
    through_requirements(project)
    monkeypatch.setattr(evaluate, "JOURNAL_WAIT_SECONDS", 0.2)
    payload = project.payload("Skill", {"skill": "kiro-spec-design", "args": FEATURE})
    assert code_of(evaluate.pre_tool_use(payload, None)) == "contract_approval"


def test_a_subagents_call_is_not_waited_for(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A subagent's call is journaled in its own file: the main chain ends with the Agent
    dispatch, and no wait would ever see the call there."""
    through_requirements(project)
    project.journal.tool_use("Agent", {"subagent_type": "general-purpose", "prompt": "write"})
    waits: list[float] = []
    monkeypatch.setattr(time, "sleep", waits.append)  # the read's poll
    target = project.spec / "requirements.md"
    payload = project.payload(
        "Write", {"file_path": str(target), "content": "# R\n"}, agent_id="a1b2c3"
    )
    evaluate.pre_tool_use(payload, [str(target)])
    assert waits == []


def test_a_typed_command_opening_a_new_session_is_decided_on_the_files(
    project: Project,
) -> None:
    """The first prompt of a new session: Claude Code has not made the project's journal
    folder yet (seen in the terminal UI). No journal holds no approval, so the approvals
    recorded with ``plangate approve`` and the files decide, as for a journal not written
    yet: the unapproved tasks refuse /kiro-impl, never a silent run."""
    from plangate.commands.approve import approve

    project.write_spec("spec.json", spec_json())
    for name, text in (("requirements.md", REQUIREMENTS), ("design.md", DESIGN)):
        project.write_spec(name, text)
    for phase in ("requirements", "design"):
        assert approve("cc-sdd", phase, FEATURE, str(project.dir), io.StringIO()) == 0
    project.write_spec("tasks.md", TASKS)
    payload = project.expansion("kiro-impl", FEATURE)
    journal = Path(payload["transcript_path"])
    shutil.rmtree(journal.parent)  # the new session's folder is not made yet
    reason = typed_refusal(payload)
    assert reason is not None and "contract_approval" in reason and "phase tasks" in reason


def _read_of_requirements(project: Project) -> None:
    """The model reads the requirements once more (the chain ends mid-turn, on the Read's
    result), stamped now: a prompt after it is later than every artifact change."""
    project.journal._clock = datetime.now(UTC)
    use = project.journal.tool_use("Read", {"file_path": str(project.spec / "requirements.md")})
    project.journal.tool_result(use_id(use), "1. Greet.")


def _late(project: Project, journal: Path, written: bytes) -> threading.Timer:
    """Claude Code's later write of what the journal builder holds now, 0.3 s after the hook
    started (the read's first look sees ``written`` only)."""
    later = project.journal.write(project.dir.parent / "later.jsonl").read_bytes()
    assert later.startswith(written)

    def append() -> None:
        with journal.open("ab") as handle:
            handle.write(later[len(written) :])

    return threading.Timer(0.3, append)


def _decide_during(
    timer: threading.Timer, payload: dict[str, Any], paths: list[str] | None
) -> dict[str, Any]:
    """The hook's decision while ``timer`` (Claude Code's late write) runs beside it."""
    timer.start()
    try:
        return dict(evaluate.pre_tool_use(payload, paths))
    finally:
        timer.join()


def _design_call(project: Project, journal: Path) -> dict[str, Any]:
    call_id = project.journal.new_tool_use_id()
    tool_input = {"skill": "kiro-spec-design", "args": FEATURE}
    project.journal.tool_use("Skill", tool_input, tool_use_id=call_id)
    return {
        "session_id": project.journal.session_id,
        "transcript_path": str(journal),
        "cwd": str(project.dir),
        "hook_event_name": "PreToolUse",
        "tool_name": "Skill",
        "tool_input": tool_input,
        "tool_use_id": call_id,
    }


@pytest.mark.parametrize("first_look", ["result", "prompt"])
def test_an_approval_typed_while_the_model_works_journaled_after_the_hook_started_counts(
    project: Project, first_look: str
) -> None:
    """The race of docs/contracts.md ("Approvals"): the hook's first look ends on the Read's
    result, or (seen in the terminal UI) on the turn's prompt, the Read not written yet;
    Claude Code then writes the rest, the queued approval and the call. The refusal for the
    missing approval waits for the call, and is decided again: allowed."""
    through_requirements(project)
    project.person("check the requirements once more")
    if first_look == "prompt":
        journal = project.save()  # what the hook first sees: it ends on the prompt
        _read_of_requirements(project)
    else:
        _read_of_requirements(project)
        journal = project.save()  # what the hook first sees: it ends on the tool result
    written = journal.read_bytes()
    project.journal._clock = datetime.now(UTC)
    project.journal.queued_prompt("approve requirements")
    payload = _design_call(project, journal)
    timer = _late(project, journal, written)
    decided = _decide_during(timer, payload, None)
    assert code_of(decided) is None, decided
    approvals = [line for line in log_lines(project) if line.get("event") == "approval"]
    assert [(line["phase"], line["via"]) for line in approvals] == [("requirements", "human")]


def test_a_call_journaled_late_without_an_approval_is_still_refused(project: Project) -> None:
    """Waiting for the call changes nothing when no person approved before it: refused."""
    through_requirements(project)
    _read_of_requirements(project)
    journal = project.save()
    written = journal.read_bytes()
    project.journal.queued_prompt("looks fine to me")
    payload = _design_call(project, journal)
    timer = _late(project, journal, written)
    decided = _decide_during(timer, payload, None)
    assert code_of(decided) == "contract_approval", decided


def test_a_refusal_waits_for_the_call_within_the_reads_bound(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call never journaled: the refusal waits at most the read's bound, then stands
    (fail-closed)."""
    through_requirements(project)
    _read_of_requirements(project)
    monkeypatch.setattr(evaluate, "JOURNAL_WAIT_SECONDS", 0.2)
    now = [0.0]
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    monkeypatch.setattr(time, "sleep", sleep)
    payload = project.payload("Skill", {"skill": "kiro-spec-design", "args": FEATURE})
    assert code_of(evaluate.pre_tool_use(payload, None)) == "contract_approval"
    assert waits and sum(waits) <= evaluate.JOURNAL_WAIT_SECONDS + POLL_SECONDS


def test_a_refusal_with_the_call_journaled_does_not_wait(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the call in the journal, every prompt the model saw before it is there too: the
    refusal is made at once."""
    through_requirements(project)
    _read_of_requirements(project)
    payload = _design_call(project, project.save())
    project.save()
    waits: list[float] = []
    monkeypatch.setattr(time, "sleep", waits.append)  # the read's poll
    assert code_of(evaluate.pre_tool_use(payload, None)) == "contract_approval"
    assert waits == []


def test_a_self_approval_journaled_before_a_late_approval_is_decided_again(
    project: Project,
) -> None:
    """The flag edit (contract_self_approval while no person approved) waits for the call
    too: the queued approval written with it makes the edit a person's approval's."""
    through_requirements(project)
    _read_of_requirements(project)
    journal = project.save()
    written = journal.read_bytes()
    project.journal._clock = datetime.now(UTC)
    project.journal.queued_prompt("approve requirements")
    spec = project.spec / "spec.json"
    call_id = project.journal.new_tool_use_id()
    tool_input = {"file_path": str(spec), "content": spec_json(requirements=True)}
    project.journal.tool_use("Write", tool_input, tool_use_id=call_id)
    payload = {
        "session_id": project.journal.session_id,
        "transcript_path": str(journal),
        "cwd": str(project.dir),
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": tool_input,
        "tool_use_id": call_id,
    }
    timer = _late(project, journal, written)
    decided = _decide_during(timer, payload, [str(spec)])
    assert code_of(decided) is None, decided


APPROVED_NOTES = """\
[workflow]
name = "notes"
skills = ["notes"]
variables = { topic = 1 }
paths = { dir = "notes/{topic}" }

[[phase]]
name = "draft"
entry = ["notes"]

[[phase.artifact]]
path = "{dir}/draft.md"

[phase.approval]
words = ["approve the draft"]

[[phase]]
name = "review"
reads = ["{dir}/review.md"]
"""


def test_a_read_entry_after_a_queued_approval_journaled_late_is_allowed(project: Project) -> None:
    """A Read that enters a phase (the contract's ``reads``) settles as a Skill call does."""
    from plangate.hooks.contract_pre_tool_use import decide

    folder = project.dir / ".plangate" / "contracts"
    folder.mkdir(parents=True)
    (folder / "notes.toml").write_text(APPROVED_NOTES)
    project.person("/notes greet")
    project.skill("notes", "greet")
    project.write(project.dir / "notes" / "greet" / "draft.md", "# Draft\n")
    journal = project.save()  # what the hook first sees: it ends on the Write's result
    written = journal.read_bytes()
    project.journal._clock = datetime.now(UTC)
    project.journal.queued_prompt("approve the draft")
    review = str(project.dir / "notes" / "greet" / "review.md")
    call_id = project.journal.new_tool_use_id()
    project.journal.tool_use("Read", {"file_path": review}, tool_use_id=call_id)
    payload = {
        "session_id": project.journal.session_id,
        "transcript_path": str(journal),
        "cwd": str(project.dir),
        "hook_event_name": "PreToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": review},
        "tool_use_id": call_id,
    }
    timer = _late(project, journal, written)
    timer.start()
    try:
        decided = decide(payload)
    finally:
        timer.join()
    assert decided == {}, decided
    lines = [line for line in log_lines(project) if line.get("workflow") == "notes"]
    assert [(line["phase"], line["event"]) for line in lines] == [
        ("draft", "approval"),
        ("review", "entry"),
    ]
