"""Loads, final stops, session kinds and the transcript readers."""

from __future__ import annotations

from pathlib import Path

import pytest

from plangate.gates import skill_loads
from plangate.gates.transcript import matching_text, read_agent, read_main
from plangate.journal.events import AssistantText, Event
from testkit.journals import Journal, use_id
from tests.gates.conftest import Env


@pytest.mark.parametrize(
    ("source", "entrypoint", "environ", "kind"),
    [
        ("sdk", "cli", {}, "headless"),
        ("typed", "sdk-cli", {}, "interactive"),
        (None, "sdk-cli", {}, "headless"),
        (None, "sdk-py", {}, "headless"),
        (None, "cli", {"CLAUDE_CODE_SESSION_ATTENDED": "0"}, "interactive"),
        (None, None, {"CLAUDE_CODE_ENTRYPOINT": "sdk-ts"}, "headless"),
        (None, None, {"CLAUDE_CODE_ENTRYPOINT": "cli"}, "interactive"),
        (None, None, {"CLAUDE_CODE_SESSION_ATTENDED": "0"}, "headless"),
        (None, None, {}, "interactive"),
    ],
)
def test_session_kind(
    source: str | None, entrypoint: str | None, environ: dict[str, str], kind: str
) -> None:
    assert skill_loads.session_kind(source, entrypoint, environ) == kind


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("Which plan should I review?", "question"),
        ("Which plan should I review?**", "question"),
        ("Should I go on?)\n", "question"),
        ("STATUS: NEEDS_CONTEXT\nI need the plan.", "status"),
        ("Any questions?\n\nSTATUS: DONE", None),
        ("The review is in plan.md.", None),
        ("", None),
    ],
)
def test_asks_the_user(text: str, why: str | None) -> None:
    assert skill_loads.asks_the_user([], text) == why


def _events(journal: Journal, tmp_path: Path) -> list[Event]:
    from plangate.journal import read_journal

    path = journal.write(tmp_path / f"{journal.session_id}.jsonl")
    return read_journal(str(path), full=True).events


def test_loads_by_project_skill_read_and_by_plugin_skill_name(env: Env, tmp_path: Path) -> None:
    project_skill = env.project / ".claude" / "skills" / "autoplan" / "SKILL.md"
    project_skill.parent.mkdir(parents=True)
    project_skill.write_text("x")
    journal = env.journal()
    journal.prompt("go")
    read = journal.tool_use("Read", {"file_path": ".claude/skills/autoplan/SKILL.md"})
    journal.read_result(use_id(read), str(project_skill), ["x"])
    skill = journal.tool_use("Skill", {"skill": "plangate:autoplan", "args": "p.md --ceo-only"})
    journal.tool_result(use_id(skill), "Launching skill: autoplan")
    other = journal.tool_use("Read", {"file_path": str(env.project / "notes.md")})
    journal.read_result(use_id(other), str(env.project / "notes.md"), ["x"])
    events = _events(journal, tmp_path)
    files = skill_loads.skill_files("autoplan", str(env.project))
    found = skill_loads.loads(events, "autoplan", files, str(env.project))
    assert [(load.via, load.arguments) for load in found] == [
        ("read", ""),
        ("skill", "p.md --ceo-only"),
    ]
    assert skill_loads.run_events(events, found[-1])[0].order > found[-1].event.order


def test_waiting_reviewers_from_the_payload_ignores_other_tasks() -> None:
    tasks = [
        {"id": "b1", "type": "shell", "status": "running"},
        {"id": "a1", "type": "subagent", "status": "completed"},
        {"id": "a2", "type": "subagent", "status": "running"},
        "garbage",
    ]
    assert skill_loads.waiting_reviewers([], tasks) == ["a2"]
    assert skill_loads.waiting_reviewers([], None) == []


def test_matching_text() -> None:
    events: list[Event] = [
        AssistantText(1, 3, "m1", "t", "First."),
        AssistantText(2, 7, "m2", "t", "Second part\nof the answer."),
    ]
    assert matching_text(events, "Second part of the answer.", None) == 7
    assert matching_text(events, "Intro.\n\nSecond part\nof the answer.", None) == 7
    assert matching_text(events, "Second part of the answer.", 7) is None  # not newer
    assert matching_text(events, "First.", None) is None  # not the last text
    assert matching_text(events, "", None) == -1
    assert matching_text(events, None, None) == -1


def test_read_agent_skips_an_unfinished_line_and_other_agents(tmp_path: Path) -> None:
    journal = Journal(cwd="/repo")
    journal.subagent("Review it", agent_id="a1", parent=None)
    done = journal.text("Reviewed.")
    done["isSidechain"], done["agentId"] = True, "a1"
    foreign = journal.subagent([{"type": "text", "text": "other"}], role="assistant", agent_id="zz")
    assert foreign["agentId"] == "zz"
    path = journal.write(tmp_path / "agent-a1.jsonl", trailing=b'{"partial": ')
    view = read_agent(str(path), "a1")
    texts = [e.text for e in view.events if isinstance(e, AssistantText)]
    assert texts == ["Reviewed."]
    assert view.entrypoint == "sdk-cli" and view.version == "2.1.332"
    assert not read_agent(str(tmp_path / "missing.jsonl"), "a1").exists


def test_read_main_refusal_is_gate_transcript(tmp_path: Path) -> None:
    from plangate.gates.errors import GateError

    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\xff\xfe\n")
    with pytest.raises(GateError) as raised:
        read_main(str(path), "s")
    assert raised.value.code == "GATE_TRANSCRIPT"


def test_plugin_names_and_folder_count_and_other_plugins_do_not(env: Env, tmp_path: Path) -> None:
    plugin_skill = env.state / "claude-plugin" / "plangate" / "skills" / "autoplan" / "SKILL.md"
    plugin_skill.parent.mkdir(parents=True)
    plugin_skill.write_text("x")
    other_skill = tmp_path / "other-plugin" / "skills" / "autoplan" / "SKILL.md"
    other_skill.parent.mkdir(parents=True)
    other_skill.write_text("x")
    journal = env.journal()
    journal.slash_command("other:autoplan", "a.md")
    journal.text("Not ours.")
    journal.slash_command("plangate:autoplan", "p.md")
    for name in ("other:autoplan", "autoplan", "plangate:autoplan"):
        call = journal.tool_use("Skill", {"skill": name, "args": name})
        journal.tool_result(use_id(call), "Launching skill")
    for path in (other_skill, plugin_skill):
        read = journal.tool_use("Read", {"file_path": str(path)})
        journal.read_result(use_id(read), str(path), ["x"])
    events = _events(journal, tmp_path)
    files = skill_loads.skill_files("autoplan", str(env.project))
    assert str(plugin_skill) in files
    found = skill_loads.loads(events, "autoplan", files, str(env.project))
    assert [(load.via, load.arguments) for load in found] == [
        ("command", "p.md"),
        ("skill", "autoplan"),
        ("skill", "plangate:autoplan"),
        ("read", ""),
    ]
    assert found[-1].event.input == {"file_path": str(plugin_skill)}  # type: ignore[attr-defined]
