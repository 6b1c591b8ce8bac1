"""Phase entries by a Read or an Agent dispatch in real ``claude -p`` sessions.

A project's own three-phase contract (draft → review → publish) enters review by a Read of
the skill's ``phases/review.md`` or by a ``notes-reviewer`` dispatch. The contract hooks are
registered as ``plangate settings --contracts`` prints them for the project, with the
review Read's ``if`` condition derived from the contract: the real CLI starts the hook for
that Read (and refuses it while the draft is missing) and for no other Read. Registered
without the derived entries, the same too-early Read goes through: the condition is what
lets it reach the hook. Broken after setup, the contract still refuses that Read
(``contract_invalid``, from the version setup saw) until it is fixed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from plangate.commands.settings import settings_object
from plangate.harness.claude import ClaudeEnv, ClaudeResult
from plangate.harness.standin import Script, StandIn, tool_use
from plangate.harness.standin.script import TurnLike

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

TOOLS = ["Read", "Write", "Skill", "Agent"]
CONTRACT = """\
[workflow]
name = "notes"
skills = ["notes"]
variables = { topic = 1 }
paths = { dir = "notes/{topic}" }

[[phase]]
name = "draft"
entry = ["notes"]
editable = ["{dir}/**"]

[[phase.artifact]]
path = "{dir}/draft.md"
headings = ["Outline"]

[[phase]]
name = "review"
reads = [".claude/skills/notes/phases/review.md"]
agents = ["notes-reviewer"]
editable = ["{dir}/review.md"]

[[phase.artifact]]
path = "{dir}/review.md"

[[phase]]
name = "publish"
entry = ["notes-publish"]
"""
SKILL = """---
name: notes
description: Write a note in three phases (draft, review, publish).
---
Draft the note under notes/<topic>/draft.md, then read phases/review.md and follow it.
"""
REVIEWER = """---
name: notes-reviewer
description: Reviews a note's draft.
---
Review the draft.
"""
DRAFT = "# Draft\n\n## Outline\n- hello\n"


class Notes:
    def __init__(self, env: ClaudeEnv, model: StandIn, script: Script, state: Path) -> None:
        self.env = env
        self.model = model
        self.script = script
        self.state = state
        project = env.project_dir
        (project / ".plangate" / "contracts").mkdir(parents=True)
        (project / ".plangate" / "contracts" / "notes.toml").write_text(CONTRACT)
        skill = project / ".claude" / "skills" / "notes"
        (skill / "phases").mkdir(parents=True)
        (skill / "SKILL.md").write_text(SKILL)
        self.phase_file = skill / "phases" / "review.md"
        self.phase_file.write_text("# Review\n\nCheck the draft's outline.\n")
        (project / ".claude" / "agents").mkdir(parents=True)
        (project / ".claude" / "agents" / "notes-reviewer.md").write_text(REVIEWER)
        (project / "README.md").write_text("# A project\n")
        self.draft = project / "notes" / "greet" / "draft.md"

    def settings(self, project: Path) -> dict[str, Any]:
        return settings_object(False, False, contracts=True, project=str(project))

    def run(self, prompt: str, settings: dict[str, Any], *turns: TurnLike) -> ClaudeResult:
        self.script.add_main(*turns)
        result = self.env.run(
            prompt,
            settings=settings,
            allowed_tools=TOOLS,
            timeout=120,
            env={"PLANGATE_STATE_ROOT": str(self.state)},
        )
        assert not result.timed_out, result.describe()
        assert result.ok, result.describe()
        return result

    def log(self) -> list[dict[str, Any]]:
        path = self.state / "analytics" / "autoplan-guard.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]

    def journal(self, result: ClaudeResult) -> str:
        assert result.journal_path is not None
        return result.journal_path.read_text()

    def tool_errors(self, result: ClaudeResult) -> list[str]:
        assert result.journal_path is not None
        found = []
        for line in result.journal_path.read_text().splitlines():
            content = json.loads(line).get("message", {}).get("content")
            if isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and block.get("is_error"):
                        found.append(json.dumps(block.get("content")))
        return found


@pytest.fixture
def notes(tmp_path: Path, claude_bin: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Notes]:
    state = tmp_path / "plangate-state"
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(state))  # the contracts setup knows
    script = Script(fallback="Done.")
    with StandIn(script) as model:
        env = ClaudeEnv.create(tmp_path / "cc", model, binary=claude_bin)
        yield Notes(env, model, script, state)


def read(path: Path) -> TurnLike:
    return tool_use("Read", file_path=str(path))


def test_a_too_early_read_phase_entry_is_refused_then_allowed(notes: Notes) -> None:
    settings = notes.settings(notes.env.project_dir)
    groups = settings["hooks"]["PreToolUse"]
    (entries,) = [g for g in groups if "contract_pre_tool_use" in g["hooks"][0]["command"]][1:]
    assert [h["if"] for h in entries["hooks"]] == [
        "Agent",
        "Read(**/.claude/skills/notes/phases/review.md)",
    ]
    early = notes.run(
        "/notes greet",
        settings,
        read(notes.env.project_dir / "README.md"),
        read(notes.phase_file),
        tool_use("Agent", subagent_type="notes-reviewer", description="review", prompt="Go."),
        "The review has to wait for the draft.",
    )
    errors = notes.tool_errors(early)
    assert len(errors) == 2, early.describe()
    assert all("contract_artifact" in error and "draft.md" in error for error in errors)
    assert all("plangate explain contract_artifact" in error for error in errors)
    refused = [(line["event"], line["phase"], line["code"]) for line in notes.log()]
    assert refused.count(("entry", "review", "contract_artifact")) == 2
    assert not any(line.get("phase") == "draft" and line["code"] for line in notes.log())

    later = notes.run(
        "/notes greet",
        settings,
        tool_use("Write", file_path=str(notes.draft), content=DRAFT),
        read(notes.phase_file),
        "Reviewing now.",
    )
    assert notes.tool_errors(later) == []
    assert notes.log()[-1]["event"] == "entry" and notes.log()[-1]["code"] is None
    assert notes.log()[-1]["phase"] == "review"


def test_without_the_derived_entries_the_same_read_is_not_decided(
    notes: Notes, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "no-contracts-here"
    elsewhere.mkdir()
    settings = notes.settings(elsewhere)  # the library's cc-sdd only: no entry conditions
    commands = [g["hooks"][0]["command"] for g in settings["hooks"]["PreToolUse"]]
    assert sum("contract_pre_tool_use" in command for command in commands) == 1
    early = notes.run("/notes greet", settings, read(notes.phase_file), "Read it.")
    assert notes.tool_errors(early) == []
    assert not any(line.get("phase") == "review" for line in notes.log())
    assert os.path.exists(notes.phase_file)


def test_a_broken_contract_refuses_its_read_entry_until_it_is_fixed(notes: Notes) -> None:
    """Set up while the contract parses (setup keeps that version), then broken: the Read
    its last good version made the review phase's entry is refused with contract_invalid,
    naming the file and line; fixed, the same Read is decided in full again."""
    settings = notes.settings(notes.env.project_dir)
    contract = notes.env.project_dir / ".plangate" / "contracts" / "notes.toml"
    contract.write_text(CONTRACT.replace('name = "review"', 'name = "review'))  # line 17
    broken = notes.run(
        "Review the note.",
        settings,
        read(notes.env.project_dir / "README.md"),
        read(notes.phase_file),
        "The contract has to be fixed first.",
    )
    (error,) = notes.tool_errors(broken)
    assert "contract_invalid" in error and ".plangate/contracts/notes.toml:17" in error
    assert "by its last good version this Read enters phase review" in error
    assert "plangate contract check .plangate/contracts/notes.toml" in error
    assert "plangate explain contract_invalid" in error
    assert "Check the draft" not in notes.journal(broken)  # the file was not read
    line = notes.log()[-1]
    assert (line["workflow"], line["phase"], line["event"]) == ("notes", "review", "entry")
    assert (line["code"], line["disposition"]) == ("contract_invalid", "corrective")

    contract.write_text(CONTRACT)
    fixed = notes.run(
        "/notes greet",
        settings,
        tool_use("Write", file_path=str(notes.draft), content=DRAFT),
        read(notes.phase_file),
        "Reviewing now.",
    )
    assert notes.tool_errors(fixed) == []
    assert "Check the draft" in notes.journal(fixed)
    last = notes.log()[-1]
    assert (last["phase"], last["event"], last["code"]) == ("review", "entry", None)
