"""The shipped spec-kit contract in real ``claude -p`` sessions, on spec-kit 1.2.3 as
``specify init --here --integration claude`` installs it (:mod:`testkit.kits`).

spec-kit is of another shape than cc-sdd: no skill takes the feature as an argument (the
model names the folder, ``specs/001-greet``, and the contract learns it from the first file
written there), the kit's own scripts find the feature through ``.specify/feature.json``,
its approvals are the two review gates of its workflow (the spec, the plan) with no flag
in any file, and its skills may all be called by the model. The stand-in plays the model;
the real CLI runs plangate's hooks; the tests read the decision log, the session record and
``plangate report``.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_contract_sessions import Kit, skill, write

from plangate.commands.report import report
from plangate.harness.claude import ClaudeEnv, ClaudeResult
from plangate.harness.standin import Script, StandIn, tool_use
from plangate.harness.standin.script import ModelRequest, TurnLike, block_text
from testkit.kits import SPEC_KIT
from testkit.recorded import skills_loaded
from testkit.sdd_walk import git_init
from tests.conftest import InstallKit

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(400)]

FOLDER = "001-greet"
SPEC = """# Feature Specification: greeting

## User Scenarios & Testing

### User Story 1 - Be greeted (Priority: P1)
A user runs the greeter and is welcomed.

**Acceptance Scenarios**:
1. **Given** a terminal, **When** the user runs greet, **Then** it prints hello.

## Requirements

### Functional Requirements
- **FR-001**: The system MUST print hello when greet runs.

## Success Criteria
- **SC-001**: The greeting appears within one second.
"""
PLAN = """# Implementation Plan: greeting

## Summary
One function, `greet()`, in `src/greet.py`.

## Technical Context
**Language/Version**: Python 3.11
**Testing**: unittest

## Project Structure
- `src/greet.py`
"""
TASKS = """# Tasks: greeting

## Phase 1: User Story 1 - Be greeted (Priority: P1)

- [ ] T001 [US1] Write greet() in src/greet.py
- [ ] T002 [US1] Test greet() in tests/test_greet.py
"""
TICKED = TASKS.replace("- [ ]", "- [X]")  # the kit ticks with a capital X
SOURCE = "def greet():\n    return 'hello'\n"


class SpecKit(Kit):
    """A project with spec-kit installed, the stand-in and the contract hooks on."""

    def __init__(self, env: ClaudeEnv, model: StandIn, script: Script) -> None:
        super().__init__(env, model, script)
        self.spec = env.project_dir / "specs" / FOLDER

    def specify_steps(self) -> list[TurnLike]:
        return specify_steps(self.env.project_dir)

    def seed(self, *names: str) -> None:
        seed_feature(self.env.project_dir, *names)

    def approve_command(self, phase: str) -> None:
        self.approve_in(SPEC_KIT.name, phase, FOLDER)

    def entries(self) -> list[tuple[str, str, str | None]]:
        return [
            (line["event"], line["phase"], line["code"])
            for line in self.log()
            if line.get("event") in ("typed", "entry")
        ]

    def counts(self) -> tuple[int, int, int]:
        out = io.StringIO()
        assert self.session is not None
        assert report(self.session, "armed", True, out, state_root=str(self.state)) == 0
        gates = json.loads(out.getvalue())["sessions"][0]["gates"]
        counts = gates["contract:spec-kit"]["counts"]
        return counts["fired"], counts["blocked"], counts["released"]


def bash(command: str, description: str) -> TurnLike:
    return tool_use("Bash", command=command, description=description)


def pointer(project: Path) -> Path:
    """The kit's feature pointer, through which its scripts find the feature folder."""
    return project / ".specify" / "feature.json"


def specify_steps(project: Path) -> list[TurnLike]:
    """What /speckit-specify asks for: the folder, spec.md, the feature pointer."""
    return [
        bash(f"mkdir -p specs/{FOLDER}", "Create the feature folder"),
        write(str(project / "specs" / FOLDER / "spec.md"), SPEC),
        write(str(pointer(project)), json.dumps({"feature_directory": f"specs/{FOLDER}"})),
    ]


def seed_feature(project: Path, *names: str) -> None:
    """Earlier phases' files (``spec.md``, ``plan.md``, ``tasks.md``), as their skills leave
    them, and the feature pointer."""
    texts = {"spec.md": SPEC, "plan.md": PLAN, "tasks.md": TASKS}
    folder = project / "specs" / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_text(texts[name])
    pointer(project).write_text(json.dumps({"feature_directory": f"specs/{FOLDER}"}) + "\n")


@pytest.fixture
def kit(tmp_path: Path, claude_bin: Path, install_kit: InstallKit) -> Iterator[SpecKit]:
    script = Script(fallback="Done.")
    with StandIn(script) as model:
        env = ClaudeEnv.create(tmp_path / "cc", model, binary=claude_bin)
        install_kit(SPEC_KIT, env.project_dir)
        git_init(env.project_dir)
        yield SpecKit(env, model, script)


def ok(kit: SpecKit, result: ClaudeResult) -> ClaudeResult:
    assert result.ok, result.describe()
    assert kit.tool_errors(result) == [], result.describe()
    return result


def test_the_whole_workflow_is_allowed_from_specify_to_a_finished_implementation(
    kit: SpecKit,
) -> None:
    src = kit.env.project_dir / "src" / "greet.py"
    ok(kit, kit.run("/speckit-specify a greeting command", *kit.specify_steps(), "Spec ready."))
    ok(kit, kit.run("Looks right: approve the spec.", "Noted."))
    ok(
        kit,
        kit.run(
            "/speckit-plan Use the standard library only",
            bash(".specify/scripts/bash/setup-plan.sh --json", "Set up the plan"),
            tool_use("Read", file_path=kit.path("plan.md")),
            write(kit.path("plan.md"), PLAN),
            "Plan ready.",
        ),
    )
    ok(
        kit,
        kit.run(
            "approve the plan, then make the tasks",
            skill("speckit-tasks", ""),
            bash(".specify/scripts/bash/setup-tasks.sh --json", "Set up the tasks"),
            write(kit.path("tasks.md"), TASKS),
            "Tasks ready.",
        ),
    )
    ok(
        kit,
        kit.run(
            "/speckit-implement",
            bash(
                ".specify/scripts/bash/check-prerequisites.sh --json --require-tasks "
                "--include-tasks",
                "Check the prerequisites",
            ),
            write(str(src), SOURCE),
            tool_use("Read", file_path=kit.path("tasks.md")),
            write(kit.path("tasks.md"), TICKED),
            "All tasks are done.",
        ),
    )
    assert src.is_file()
    lines = kit.log()
    assert all(line["decision"] == "allow" for line in lines), lines
    approvals = {(line["phase"], line["via"]) for line in lines if line.get("event") == "approval"}
    assert approvals == {("specify", "human"), ("plan", "human")}
    assert kit.entries() == [
        ("typed", "specify", None),
        ("typed", "plan", None),
        ("entry", "tasks", None),
        ("typed", "implement", None),
    ]
    assert kit.counts() == (1, 0, 1)


def test_implementation_before_the_tasks_exist_is_refused(kit: SpecKit) -> None:
    kit.seed("spec.md", "plan.md")
    kit.approve_command("specify")
    kit.approve_command("plan")
    before = len(kit.model.message_requests("main"))
    typed = kit.run("/speckit-implement")
    assert len(kit.model.message_requests("main")) == before, "a blocked expansion asks no model"
    assert "contract_phase_order" in typed.stdout and "tasks.md" in typed.stdout
    by_skill = kit.run("implement it now", skill("speckit-implement", ""), "Waiting.")
    errors = kit.tool_errors(by_skill)
    assert len(errors) == 1 and "contract_phase_order" in errors[0], by_skill.describe()
    assert kit.entries() == [
        ("typed", "implement", "contract_phase_order"),
        ("entry", "implement", "contract_phase_order"),
    ]


def test_the_models_own_skill_call_for_a_phase_started_too_early_is_refused(
    kit: SpecKit,
) -> None:
    """spec-kit lets the model call every one of its skills (``disable-model-invocation:
    false``), so the model may start /speckit-implement itself through the Skill tool, which
    fires no expansion hook: plangate's PreToolUse hook on ``Skill`` refuses it. The skill's
    text never reaches the conversation, and the model is told the code, the reason and the
    remedy in the Skill call's error result."""
    kit.seed("spec.md", "plan.md")
    kit.approve_command("specify")
    kit.approve_command("plan")
    result = kit.run("carry on", skill("speckit-implement", ""), "Waiting for the tasks.")
    assert result.ok, result.describe()
    offered = json.dumps(kit.model.message_requests("main")[0].body)
    installed = SPEC_KIT.skills(kit.env.project_dir)
    assert set(re.findall(r"- (speckit-[a-z]+): ", offered)) == set(installed), "all offered"
    (line,) = [line for line in kit.log() if line.get("event") == "entry"]
    assert line["decision"] == "deny" and line["code"] == "contract_phase_order", line
    assert (line["workflow"], line["phase"]) == ("spec-kit", "implement"), line
    answered = ModelRequest(kit.model.message_requests("main")[-1].body or {}, "main")
    (told,) = answered.tool_results()
    said = block_text(told.get("content"))
    assert told.get("is_error") is True, told
    assert "contract_phase_order" in said and "tasks.md" in said, said
    assert "plangate explain contract_phase_order" in said, said
    journal = result.journal_path
    assert journal is not None
    assert [name for name, _, _ in skills_loaded(journal)] == [], "the skill never loaded"


def test_a_source_edit_while_specifying_and_a_self_approval_are_refused(kit: SpecKit) -> None:
    src = kit.env.project_dir / "src" / "app.py"
    during = kit.run(
        "/speckit-specify a greeting command",
        *kit.specify_steps()[:1],
        write(str(src), "print('too early')\n"),
        bash("mkdir -p src && echo \"print('early')\" > src/app.py", "Start the code"),
        *kit.specify_steps()[1:],
        # The model approves its own spec and goes on to plan it.
        [
            "The spec passes every checklist item: approved.",
            tool_use("Skill", skill="speckit-plan", args=""),
        ],
        "I need your approval of the spec first.",
    )
    assert during.ok, during.describe()
    assert not src.exists()
    errors = kit.tool_errors(during)
    assert [e for e in errors if "contract_edit_scope" in e] and len(errors) == 3, errors
    assert "contract_approval" in errors[-1] and "phase specify" in errors[-1]
    assert (kit.spec / "spec.md").is_file()
    approved = kit.run("approve the spec", skill("speckit-plan", ""), "Planning.")
    assert kit.tool_errors(approved)[len(errors) :] == []
    denied = [(line["event"], line["code"]) for line in kit.log() if line["decision"] == "deny"]
    assert denied == [
        ("edit", "contract_edit_scope"),
        ("edit", "contract_edit_scope"),
        ("entry", "contract_approval"),
    ]
    assert kit.entries()[-1] == ("entry", "plan", None)


def test_a_final_stop_with_unticked_tasks_is_held_then_released(kit: SpecKit) -> None:
    kit.seed("spec.md", "plan.md", "tasks.md")
    kit.approve_command("specify")
    kit.approve_command("plan")
    result = kit.run(
        "/speckit-implement",
        write(str(kit.env.project_dir / "src" / "greet.py"), SOURCE),
        "Implemented.",
        tool_use("Read", file_path=kit.path("tasks.md")),
        write(kit.path("tasks.md"), TICKED),
        "Now every task is ticked.",
    )
    ok(kit, result)
    assert kit.model.saw("PLANGATE_GATE contract-gate blocked")
    assert kit.model.saw("2 of 2 checkboxes unticked")
    assert kit.counts() == (1, 1, 1)
