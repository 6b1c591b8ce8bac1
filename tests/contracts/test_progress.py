"""A workflow outlives its conversation (:mod:`plangate.contracts.progress`): in process, on
real files and journals, each later conversation a new journal of the same project (what
``/clear``, a new ``claude`` or a fork leave Claude Code's hooks to read)."""

from __future__ import annotations

import json
import sys
import uuid
from datetime import UTC, datetime

import pytest

from plangate.contracts import progress
from testkit.journals import Journal
from tests.contracts.conftest import (
    DESIGN,
    REQUIREMENTS,
    TASKS,
    Project,
    spec_json,
    stop,
)
from tests.contracts.test_rules import log_lines, skill, write


def through_requirements(project: Project) -> None:
    """spec-init and requirements ran, each entry decided by the contract hook (which keeps
    the workflow's progress); the requirements are written."""
    project.journal.prompt("/kiro-spec-init a greeting command")
    assert skill(project, "kiro-spec-init", "a greeting command") is None
    project.write(project.spec / "spec.json", spec_json())
    assert skill(project, "kiro-spec-requirements") is None
    project.write(project.spec / "requirements.md", REQUIREMENTS)
    project.journal.text("Requirements written. Approve them to continue.")


def next_conversation(project: Project) -> None:
    """A new conversation in the same project: a new journal, nothing of the old one in it."""
    project.journal = Journal(
        cwd=str(project.dir), start=datetime.now(UTC), session_id=str(uuid.uuid4())
    )
    project.journal.typed_prompt("good morning")


def live(project: Project) -> list[progress.Progress]:
    return progress.live(str(project.dir), str(project.state))


def test_edit_limits_hold_from_a_later_conversations_first_call(project: Project) -> None:
    through_requirements(project)
    assert write(project, project.dir / "src" / "greet.py", "x = 1\n") == "contract_edit_scope"
    next_conversation(project)
    assert write(project, project.dir / "src" / "greet.py", "x = 1\n") == "contract_edit_scope"
    assert write(project, project.spec / "requirements.md", "# Requirements\n") is None
    (kept,) = live(project)
    assert (kept.workflow, kept.phase, kept.values) == (
        "cc-sdd",
        "requirements",
        {"feature": "greet"},
    )


def test_an_approval_given_before_clear_stands_after_it(project: Project) -> None:
    """The person approves, the model answers (its final stop reads the approval), the person
    clears the conversation: the next phase starts in the new one, resting on that approval."""
    through_requirements(project)
    project.person("approve requirements")
    stop(project, "Noted: requirements approved.")
    next_conversation(project)
    assert skill(project, "kiro-spec-design") is None
    entry = [line for line in log_lines(project) if line.get("event") == "approval"][-1]
    assert (entry["phase"], entry["via"]) == ("requirements", progress.EARLIER)


def test_an_approval_withdrawn_by_a_rewind_no_longer_carries(project: Project) -> None:
    """The approval's turn is rewound away in the first conversation before it ends: its
    last final stop reads a live chain without it, so the next conversation has none."""
    through_requirements(project)
    text = project.journal.text("Requirements written.")
    project.person("approve requirements")
    stop(project, "Noted.")
    project.journal.typed_prompt("let us look again first", parent=text["uuid"])  # the rewind
    stop(project, "Looking again.")
    next_conversation(project)
    assert skill(project, "kiro-spec-design") == "contract_approval"


def test_a_changed_artifact_makes_an_earlier_approval_stale(project: Project) -> None:
    through_requirements(project)
    project.person("approve requirements")
    stop(project, "Noted.")
    next_conversation(project)
    (project.spec / "requirements.md").write_text(REQUIREMENTS + "\nChanged overnight.\n")
    assert skill(project, "kiro-spec-design") == "contract_approval"


def test_a_conversations_own_approval_is_read_from_its_journal_only(project: Project) -> None:
    """What the store holds for this very conversation never approves in it: a rewind in it
    withdraws the approval at once."""
    through_requirements(project)
    text = project.journal.text("Requirements written.")
    project.person("approve requirements")
    stop(project, "Noted.")
    project.journal.typed_prompt("wait, not yet", parent=text["uuid"])
    assert skill(project, "kiro-spec-design") == "contract_approval"


def test_the_final_stop_released_with_done_met_ends_the_workflow(project: Project) -> None:
    through_requirements(project)
    project.person("approve requirements")
    skill(project, "kiro-spec-design")
    project.write(project.spec / "design.md", DESIGN)
    project.person("approve design")
    skill(project, "kiro-spec-tasks")
    project.write(project.spec / "tasks.md", TASKS)
    project.write(project.spec / "spec.json", spec_json(requirements=True, design=True))
    project.person("approve tasks")
    assert skill(project, "kiro-impl") is None
    next_conversation(project)
    held = stop(project, "Done for today.")
    assert held.get("decision") == "block"  # the workflow's tasks are not ticked
    project.write(project.spec / "tasks.md", TASKS.replace("[ ]", "[x]"))
    assert stop(project, "All ticked.").get("decision") is None
    assert live(project) == []
    (ended,) = progress.instances(str(project.dir), str(project.state))
    assert ended.ended is not None and ended.ended["why"] == progress.DONE
    next_conversation(project)
    assert write(project, project.dir / "src" / "other.py", "y = 2\n") is None


@pytest.mark.parametrize("damage", ["text", "link"])
def test_a_damaged_store_is_no_progress_and_no_crash(project: Project, damage: str) -> None:
    through_requirements(project)
    assert write(project, project.dir / "src" / "greet.py", "x = 1\n") == "contract_edit_scope"
    (kept,) = live(project)
    path = kept.path
    import os

    os.remove(path)
    if damage == "text":
        with open(path, "w") as handle:
            handle.write("{not json")
    else:
        os.symlink(str(project.dir / "elsewhere.json"), path)
        (project.dir / "elsewhere.json").write_text(json.dumps(kept.document))
    assert live(project) == []
    next_conversation(project)
    assert write(project, project.dir / "src" / "greet.py", "x = 1\n") is None


def test_status_shows_the_phase_the_approvals_and_what_comes_next(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    from plangate.commands.contract import status

    through_requirements(project)
    project.person("approve requirements")
    stop(project, "Noted.")
    next_conversation(project)
    (project.dir / "src").mkdir()
    (project.dir / "src" / "stray.py").write_text("x = 1\n")  # outside requirements' limits
    assert status(str(project.dir), True, sys.stdout) == 0
    (shown,) = json.loads(capsys.readouterr().out)["workflows"]
    assert (shown["workflow"], shown["phase"], shown["values"]) == (
        "cc-sdd",
        "requirements",
        {"feature": "greet"},
    )
    (approval,) = shown["approvals"]
    assert approval["phase"] == "requirements" and approval["via"] == "human"
    assert approval["counts"] is True
    assert approval["files"] == [".kiro/specs/greet/requirements.md"]
    assert shown["next"] == {"phase": "design", "ready": True, "code": None, "needs": ""}
    assert shown["outside"] == ["src/stray.py"]
    assert status(str(project.dir), False, sys.stdout) == 0
    text = capsys.readouterr().out
    assert "next       design: may start" in text
    assert "outside    changed outside requirements's editable paths: src/stray.py" in text
    (project.spec / "requirements.md").write_text(REQUIREMENTS + "\nChanged.\n")
    status(str(project.dir), False, sys.stdout)
    text = capsys.readouterr().out
    assert "(stale: changed since)" in text
    assert "next       design: needs: phase requirements is not approved by a person" in text


@pytest.mark.parametrize("verb", ["end", "reset"])
def test_a_person_ends_or_resets_a_workflow(
    project: Project, verb: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from plangate.commands.contract import finish

    through_requirements(project)
    assert finish(verb, "cc-sdd", "greet", str(project.dir), sys.stdout) == 0
    assert live(project) == []
    kept = progress.instances(str(project.dir), str(project.state))
    assert len(kept) == (1 if verb == "end" else 0)
    next_conversation(project)
    assert write(project, project.dir / "src" / "greet.py", "x = 1\n") is None
    assert finish(verb, "cc-sdd", None, str(project.dir), sys.stdout) == 1
    assert "No live workflow cc-sdd" in capsys.readouterr().out


def test_an_approval_before_a_conversations_first_phase_start_counts_at_its_next(
    project: Project,
) -> None:
    """A later conversation: the person approves the requirements, the model starts the
    design (its first workflow call here), the person approves the design: the tasks rest on
    both approvals, the first given in this conversation before its run began."""
    through_requirements(project)
    next_conversation(project)
    project.person("approve requirements")
    assert skill(project, "kiro-spec-design") is None
    project.write(project.spec / "design.md", DESIGN)
    project.person("approve design")
    assert skill(project, "kiro-spec-tasks") is None
