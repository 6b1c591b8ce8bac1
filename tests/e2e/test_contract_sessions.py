"""Workflow contracts in real Claude Code sessions, on cc-sdd 3.0.2 as npm installs it.

Each test installs cc-sdd into a fresh project (its installer, as ``npx cc-sdd@3.0.2
--claude-skills --yes`` runs it, once per test session, then copied: :mod:`testkit.kits`),
registers plangate's contract hooks through ``--settings`` with the JSON ``plangate settings
--contracts`` prints, and lets the stand-in play the model in ``claude -p``. The real CLI
runs the real PreToolUse, UserPromptExpansion and Stop hooks; the tests read plangate's own
records (the decision log, the session record, the trace log, ``plangate report``) and the
journal.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from plangate.commands.report import report
from plangate.commands.settings import settings_object
from plangate.harness.claude import ClaudeEnv, ClaudeResult
from plangate.harness.standin import Script, StandIn, tool_use
from plangate.harness.standin.script import TurnLike
from testkit.kits import CC_SDD, KitCache, KitMissing
from testkit.recorded import skills_loaded

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(400)]

FEATURE = "greet"
CONTRACTS = settings_object(False, False, contracts=True)
TOOLS = ["Read", "Write", "Edit", "Bash", "Skill"]
REQUIREMENTS = """# Requirements Document

## Introduction
A greeting command.

## Requirements

### Requirement 1: Greeting
**Objective:** As a user, I want a greeting, so that I feel welcome.

#### Acceptance Criteria
1. When the user runs greet, the greeter shall print hello.
"""
DESIGN = "# Design\n\n## Overview\nOne function, `greet()`, in `src/greet.py`.\n"
TASKS = "# Implementation Plan\n\n- [ ] 1. Greeting\n- [ ] 1.1 Write greet() and its test\n"
TICKED = TASKS.replace("- [ ]", "- [x]")


def spec_json(**approved: bool) -> str:
    approvals = {
        phase: {"generated": True, "approved": approved.get(phase, False)}
        for phase in ("requirements", "design", "tasks")
    }
    document = {"feature_name": FEATURE, "language": "en", "approvals": approvals}
    return json.dumps(document, indent=2) + "\n"


@pytest.fixture(scope="session")
def cc_sdd(kit_cache: KitCache) -> Path:
    """A folder cc-sdd 3.0.2's own installer ran in (:mod:`testkit.kits`; a test copies it)."""
    try:
        return kit_cache.template(CC_SDD)
    except KitMissing as error:
        pytest.skip(str(error))


def approve_by_command(
    env: ClaudeEnv, state: Path, workflow: str, phase: str, feature: str
) -> None:
    """``plangate approve WORKFLOW PHASE FEATURE --yes`` in the project, as the person runs
    it from a script (no terminal to confirm on)."""
    done = subprocess.run(
        [sys.executable, "-m", "plangate", "approve", workflow, phase, feature, "--yes"],
        cwd=env.project_dir,
        env=env.environ({"PLANGATE_STATE_ROOT": str(state)}),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


class Kit:
    """A project with cc-sdd installed, a stand-in model and the contract hooks."""

    def __init__(self, env: ClaudeEnv, model: StandIn, script: Script) -> None:
        self.env = env
        self.model = model
        self.script = script
        self.spec = env.project_dir / ".kiro" / "specs" / FEATURE
        self.state = env.home / "plangate-state"
        self.session: str | None = None

    def path(self, name: str) -> str:
        return str(self.spec / name)

    def run(self, prompt: str, *turns: TurnLike) -> ClaudeResult:
        """One ``claude -p`` prompt of the session (resumed after the first)."""
        self.script.add_main(*turns)
        result = self.env.run(
            prompt,
            settings=CONTRACTS,
            resume=self.session,
            allowed_tools=TOOLS,
            timeout=120,
            env={"PLANGATE_STATE_ROOT": str(self.state)},
        )
        assert not result.timed_out, result.describe()
        if result.session_id is not None:
            self.session = result.session_id
        return result

    def approve(self, phase: str) -> None:
        self.approve_in("cc-sdd", phase, FEATURE)

    def approve_in(self, workflow: str, phase: str, feature: str) -> None:
        approve_by_command(self.env, self.state, workflow, phase, feature)

    def log(self) -> list[dict[str, Any]]:
        path = self.state / "analytics" / "autoplan-guard.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]

    def codes(self) -> list[str | None]:
        return [line["code"] for line in self.log() if line.get("event") != "approval"]

    def tool_errors(self, result: ClaudeResult) -> list[str]:
        """The texts of the error tool results in the session journal."""
        assert result.journal_path is not None
        found = []
        for line in result.journal_path.read_text().splitlines():
            record = json.loads(line)
            content = record.get("message", {}).get("content")
            if isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and block.get("is_error"):
                        found.append(json.dumps(block.get("content")))
        return found


@pytest.fixture
def kit(tmp_path: Path, claude_bin: Path, cc_sdd: Path) -> Iterator[Kit]:
    script = Script(fallback="Done.")
    with StandIn(script) as model:
        env = ClaudeEnv.create(tmp_path / "cc", model, binary=claude_bin)
        shutil.copytree(cc_sdd, env.project_dir, dirs_exist_ok=True)
        yield Kit(env, model, script)


Make = Callable[..., Kit]


def write(path: str, content: str) -> TurnLike:
    return tool_use("Write", file_path=path, content=content)


def skill(name: str, args: str = FEATURE) -> TurnLike:
    return tool_use("Skill", skill=name, args=args)


def main_requests(kit: Kit) -> int:
    return len(kit.model.message_requests("main"))


def test_the_whole_workflow_is_allowed_from_spec_init_to_a_finished_implementation(
    kit: Kit,
) -> None:
    src = str(kit.env.project_dir / "src" / "greet.py")
    results = [
        kit.run(
            "/kiro-spec-init a greeting command",
            write(kit.path("spec.json"), spec_json()),
            "Spec initialized.",
        ),
        kit.run(
            f"/kiro-spec-requirements {FEATURE}",
            write(kit.path("requirements.md"), REQUIREMENTS),
            "Requirements written; approve them?",
        ),
        kit.run(
            "Looks right: approve requirements.",
            skill("kiro-spec-design"),
            write(kit.path("design.md"), DESIGN),
            write(kit.path("spec.json"), spec_json(requirements=True)),
            "Design written; approve it?",
        ),
        kit.run(
            "approve design",
            skill("kiro-spec-tasks"),
            write(kit.path("tasks.md"), TASKS),
            write(kit.path("spec.json"), spec_json(requirements=True, design=True)),
            "Tasks written. Approve the tasks?",
        ),
        kit.run(
            "approve tasks",
            write(kit.path("spec.json"), spec_json(requirements=True, design=True, tasks=True)),
            "Tasks approved.",
        ),
        kit.run(
            f"/kiro-impl {FEATURE}",
            write(src, "def greet():\n    return 'hello'\n"),
            write(kit.path("tasks.md"), TICKED),
            "All tasks are done.",
        ),
    ]
    for result in results:
        assert result.ok, result.describe()
        assert kit.tool_errors(result) == []
    assert Path(src).is_file()
    lines = kit.log()
    assert all(line["decision"] == "allow" for line in lines), lines
    approvals = {(line["phase"], line["via"]) for line in lines if line.get("event") == "approval"}
    assert approvals == {("requirements", "human"), ("design", "human"), ("tasks", "human")}
    entries = [(line["event"], line["phase"]) for line in lines if line.get("event") != "approval"]
    assert ("typed", "init") in entries and ("typed", "impl") in entries
    assert ("entry", "design") in entries and ("entry", "tasks") in entries
    out = io.StringIO()
    assert kit.session is not None
    assert report(kit.session, "armed", True, out, state_root=str(kit.state)) == 0
    counts = json.loads(out.getvalue())["sessions"][0]["gates"]["contract:cc-sdd"]["counts"]
    assert (counts["fired"], counts["blocked"], counts["released"]) == (1, 0, 1)


def test_source_edit_self_approval_and_early_implementation_are_refused(kit: Kit) -> None:
    src = kit.env.project_dir / "src" / "app.py"
    kit.run("/kiro-spec-init a greeting command", write(kit.path("spec.json"), spec_json()), "ok")
    during = kit.run(
        f"/kiro-spec-requirements {FEATURE}",
        write(str(src), "print('too early')\n"),
        write(kit.path("requirements.md"), REQUIREMENTS),
        "Requirements written.",
    )
    assert not src.exists()
    assert any("contract_edit_scope" in error for error in kit.tool_errors(during))
    selfish = kit.run(
        "carry on",
        write(kit.path("spec.json"), spec_json(requirements=True)),
        skill("kiro-spec-design"),
        "I need your approval.",
    )
    errors = kit.tool_errors(selfish)
    assert any("contract_self_approval" in error for error in errors), errors
    assert any("contract_approval" in error for error in errors), errors
    assert (
        json.loads(Path(kit.path("spec.json")).read_text())["approvals"]["requirements"]["approved"]
        is False
    )
    kit.run(
        "approve requirements",
        skill("kiro-spec-design"),
        write(kit.path("design.md"), DESIGN),
        "Design.",
    )
    kit.run(
        "approve design",
        skill("kiro-spec-tasks"),
        write(kit.path("tasks.md"), TASKS),
        "Approve the tasks?",
    )
    before = len(kit.model.message_requests("main"))
    earlier = kit.tool_errors(selfish)
    typed = kit.run(f"/kiro-impl {FEATURE}")
    assert len(kit.model.message_requests("main")) == before, "a blocked expansion asks no model"
    assert "contract_approval" in typed.stdout and "phase tasks" in typed.stdout
    by_skill = kit.run("implement it now", skill("kiro-impl"), "Waiting.")
    new = kit.tool_errors(by_skill)[len(earlier) :]
    # cc-sdd marks kiro-impl `disable-model-invocation: true`: Claude Code itself refuses the
    # model's Skill call before any hook runs (the model-invoked phase entries above, design,
    # are refused by plangate's PreToolUse hook: contract_approval).
    assert "kiro-impl" in CC_SDD.typed_only(kit.env.project_dir)
    assert len(new) == 1 and "disable-model-invocation" in new[0], by_skill.describe()
    # ... so nothing is lost: the skill's text never loads, and no hook had a call to decide.
    assert by_skill.journal_path is not None
    assert "kiro-impl" not in [name for name, _, _ in skills_loaded(by_skill.journal_path)]
    assert [line["event"] for line in kit.log() if line.get("phase") == "impl"] == ["typed"]
    events = [(line["event"], line["code"]) for line in kit.log() if line["decision"] == "deny"]
    assert ("edit", "contract_edit_scope") in events
    assert ("edit", "contract_self_approval") in events
    assert ("typed", "contract_approval") in events
    assert ("entry", "contract_approval") in events


def test_a_final_stop_with_unticked_tasks_is_held_then_released(kit: Kit) -> None:
    kit.spec.mkdir(parents=True)
    for name, content in (
        ("spec.json", spec_json(requirements=True, design=True, tasks=True)),
        ("requirements.md", REQUIREMENTS),
        ("design.md", DESIGN),
        ("tasks.md", TASKS),
    ):
        (kit.spec / name).write_text(content)
    for phase in ("requirements", "design", "tasks"):
        kit.approve(phase)
    src = str(kit.env.project_dir / "src" / "greet.py")
    result = kit.run(
        f"/kiro-impl {FEATURE}",
        write(src, "def greet():\n    return 'hello'\n"),
        "Implemented.",
        write(kit.path("tasks.md"), TICKED),
        "Now every task is ticked.",
    )
    assert result.ok, result.describe()
    assert kit.model.saw("PLANGATE_GATE contract-gate blocked")
    assert kit.model.saw("2 of 2 checkboxes unticked")
    approvals = [line["via"] for line in kit.log() if line.get("event") == "approval"]
    assert approvals and set(approvals) == {"person-command"}
    out = io.StringIO()
    assert kit.session is not None
    assert report(kit.session, "armed", True, out, state_root=str(kit.state)) == 0
    counts = json.loads(out.getvalue())["sessions"][0]["gates"]["contract:cc-sdd"]["counts"]
    assert (counts["fired"], counts["blocked"], counts["released"]) == (1, 1, 1)
    trace = (kit.state / "hooks" / "contract-gate.log").read_text()
    assert [w.split("event=")[1].split()[0] for w in trace.splitlines()] == [
        "fired",
        "blocked",
        "released",
    ]
