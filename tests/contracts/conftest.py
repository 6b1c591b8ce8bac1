"""A cc-sdd-shaped project with its session journal, for the contracts' in-process tests.

The project holds the kiro skills folders (empty SKILL.md files: the shipped contract only
asks whether a skill is installed), and the journal is written where Claude Code keeps it,
so the real reader's identity checks apply.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from testkit.journals import Journal, use_id

KIRO_SKILLS = (
    "kiro-spec-init",
    "kiro-spec-requirements",
    "kiro-spec-design",
    "kiro-spec-tasks",
    "kiro-impl",
)
FEATURE = "greet"

REQUIREMENTS = """# Requirements Document

## Introduction
A greeting command.

## Requirements

### Requirement 1: Greeting
#### Acceptance Criteria
1. When the user runs greet, the system shall print hello.
"""
DESIGN = "# Design\n\n## Overview\nOne function, `greet()`.\n"
TASKS = "# Implementation Plan\n\n- [ ] 1. Greeting\n- [ ] 1.1 Write greet() and its test\n"


def spec_json(**approved: bool) -> str:
    approvals = {
        phase: {"generated": True, "approved": approved.get(phase, False)}
        for phase in ("requirements", "design", "tasks")
    }
    return json.dumps(
        {"feature_name": FEATURE, "phase": "tasks-generated", "approvals": approvals}, indent=2
    )


class Project:
    """The project folder, Claude Code's config folder, the state root, and one session."""

    def __init__(self, root: Path) -> None:
        self.dir = root / "project"
        self.config = root / "claude"
        self.state = root / "state"
        for skill in KIRO_SKILLS:
            folder = self.dir / ".claude" / "skills" / skill
            folder.mkdir(parents=True)
            (folder / "SKILL.md").write_text(f"---\nname: {skill}\n---\n")
        self.spec = self.dir / ".kiro" / "specs" / FEATURE
        self.journal = Journal(cwd=str(self.dir), start=datetime.now(UTC))

    def write_spec(self, name: str, text: str) -> None:
        self.spec.mkdir(parents=True, exist_ok=True)
        (self.spec / name).write_text(text)

    def skill(self, name: str, args: str = "") -> str:
        use = self.journal.tool_use("Skill", {"skill": name, "args": args})
        self.journal.tool_result(use_id(use), f"Launching skill: {name}")
        return use_id(use)

    def write(self, path: Path, text: str) -> None:
        """The model's Write of ``path`` (the file is written too)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        use = self.journal.tool_use("Write", {"file_path": str(path), "content": text})
        path.write_text(text)
        self.journal.tool_result(use_id(use), f"File created successfully at: {path}")

    def person(self, text: str) -> None:
        """A typed prompt, stamped now: later than every file written so far."""
        self.journal._clock = datetime.now(UTC)
        self.journal.typed_prompt(text)

    def save(self) -> Path:
        return self.journal.write_layout(self.config, project_dir=str(self.dir))

    def payload(self, tool: str, tool_input: dict[str, Any], **extra: Any) -> dict[str, Any]:
        path = self.save()
        return {
            "session_id": self.journal.session_id,
            "transcript_path": str(path),
            "cwd": str(self.dir),
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_use_id": self.journal.new_tool_use_id(),
            **extra,
        }

    def journaled(self, tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
        """:meth:`payload` for a call that is in the journal when its hook runs, as Claude
        Code writes it (most often; :mod:`tests.contracts.test_journal_lag` has the rest)."""
        use = self.journal.tool_use(tool, tool_input)
        payload = self.payload(tool, tool_input)
        payload["tool_use_id"] = use_id(use)
        return payload

    def answered(self, payload: dict[str, Any], code: str | None, result: str) -> None:
        """The journaled call's result: the hook's refusal (an error), or ``result``."""
        use = str(payload["tool_use_id"])
        if code is None:
            self.journal.tool_result(use, result)
        else:
            self.journal.tool_result(use, f"PreToolUse hook error: {code}", is_error=True)

    def expansion(self, name: str, args: str) -> dict[str, Any]:
        path = self.save()
        return {
            "session_id": self.journal.session_id,
            "transcript_path": str(path),
            "cwd": str(self.dir),
            "hook_event_name": "UserPromptExpansion",
            "expansion_type": "slash_command",
            "command_name": name,
            "command_args": args,
            "command_source": "projectSettings",
            "prompt": f"/{name} {args}",
        }

    def env(self) -> dict[str, str]:
        return {
            "CLAUDE_CONFIG_DIR": str(self.config),
            "PLANGATE_STATE_ROOT": str(self.state),
            "HOME": str(self.config.parent),
        }


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Project]:
    made = Project(tmp_path)
    for key, value in made.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    yield made


def through_requirements(project: Project) -> None:
    """spec-init and requirements ran; the requirements are written."""
    project.journal.prompt("/kiro-spec-init a greeting command")
    project.skill("kiro-spec-init", "a greeting command")
    project.write(project.spec / "spec.json", spec_json())
    project.skill("kiro-spec-requirements", FEATURE)
    project.write(project.spec / "requirements.md", REQUIREMENTS)
    project.journal.text("Requirements written. Approve them to continue.")


def implementing(project: Project, *, typed: bool = True) -> None:
    """Every phase approved by the person, then the implementation begun (``typed``: through
    a typed ``/kiro-impl``, else by the model's Skill call alone)."""
    through_requirements(project)
    project.person("approve requirements")
    project.skill("kiro-spec-design", FEATURE)
    project.write(project.spec / "design.md", DESIGN)
    project.person("approve design")
    project.skill("kiro-spec-tasks", FEATURE)
    project.write(project.spec / "tasks.md", TASKS)
    project.person("approve tasks")
    if typed:
        project.journal.prompt("/kiro-impl greet")
    project.skill("kiro-impl", FEATURE)


def stop_payload(project: Project, path: Path, message: str) -> dict[str, Any]:
    """Claude Code's Stop payload for the journal at ``path``, its last text ``message``."""
    return {
        "session_id": project.journal.session_id,
        "transcript_path": str(path),
        "cwd": str(project.dir),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "last_assistant_message": message,
    }


def stop(project: Project, message: str = "All done.") -> dict[str, object]:
    """The contracts' Stop hook deciding a final stop after ``message`` (its stderr kept)."""
    import io

    from plangate.contracts import stop_gate

    project.journal.text(message)
    path = project.save()
    return stop_gate.decide(stop_payload(project, path, message), "Stop", stderr=io.StringIO())


def typed_refusal(payload: dict[str, Any]) -> str | None:
    """The typed-skill hook's refusal text for ``payload`` (None: the command runs)."""
    from plangate.hooks import prompt_expansion

    answer = prompt_expansion.decide(payload)
    return None if answer is None else answer.reason()
