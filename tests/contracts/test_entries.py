"""Phase entries by a Read or an Agent dispatch: decided by the contracts' PreToolUse hook
(refused when too early, logged as a Skill entry is), and the ``if`` conditions setup
derives for them from the contracts it knows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from plangate.contracts import compiled, entries
from plangate.contracts.discovery import library_dir
from plangate.contracts.loader import load_file
from plangate.hooks.contract_pre_tool_use import decide
from testkit.journals import use_id
from tests.contracts.conftest import Project, project

__all__ = ["project"]

NOTES = """\
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
reads = [".claude/skills/notes/phases/review.md", "{dir}/review-*.md"]
agents = ["notes-reviewer"]
editable = ["{dir}/review.md"]

[[phase]]
name = "publish"
reads = ["~/notes-phases/publish.md", "/srv/notes/publish.md"]
"""
DRAFT = "# Draft\n\n## Outline\n- one\n"


def notes_contract(project: Project) -> Path:
    folder = project.dir / ".plangate" / "contracts"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "notes.toml"
    path.write_text(NOTES)
    phases = project.dir / ".claude" / "skills" / "notes" / "phases"
    phases.mkdir(parents=True, exist_ok=True)
    (phases / "review.md").write_text("# Review the draft\n")
    return path


def log_lines(project: Project) -> list[dict[str, Any]]:
    path = project.state / "analytics" / "autoplan-guard.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def started(project: Project) -> None:
    project.person("/notes greet")
    project.skill("notes", "greet")


def denied_code(output: object) -> str | None:
    assert isinstance(output, dict)
    if not output:
        return None
    specific = output["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny"
    reason = str(specific["permissionDecisionReason"])
    return next(code for code in ("contract_artifact", "contract_phase_order") if code in reason)


def test_the_conditions_of_each_kind_of_read_template(project: Project) -> None:
    contract = load_file(str(notes_contract(project)))
    assert entries.conditions([contract]) == (
        "Agent",
        "Read(**/.claude/skills/notes/phases/review.md)",
        "Read(**/notes/*/review-*.md)",  # the named path expanded, the variable any name
        "Read(//srv/notes/publish.md)",  # absolute: from the file system's root
        "Read(~/notes-phases/publish.md)",
    )
    assert entries.conditions([]) == ()
    assert entries.read_condition("../shared/phase.md", contract) == "Read"  # out of the project


def test_a_read_that_enters_a_phase_too_early_is_refused_then_allowed(project: Project) -> None:
    notes_contract(project)
    started(project)
    phase_file = project.dir / ".claude" / "skills" / "notes" / "phases" / "review.md"
    read = project.payload("Read", {"file_path": str(phase_file)})
    output = decide(read)
    assert denied_code(output) == "contract_artifact"  # draft.md is not written yet
    assert "notes/greet/draft.md" in json.dumps(output)
    assert "plangate explain contract_artifact" in json.dumps(output)
    (line,) = [entry for entry in log_lines(project) if entry.get("workflow") == "notes"]
    assert (line["phase"], line["event"], line["code"]) == ("review", "entry", "contract_artifact")

    project.write(project.dir / "notes" / "greet" / "draft.md", DRAFT)
    read = project.payload("Read", {"file_path": str(phase_file)})
    assert decide(read) == {}
    assert log_lines(project)[-1]["code"] is None  # the allowed entry is logged too

    # A Read no phase names is not decided (nor logged).
    count = len(log_lines(project))
    other = project.payload("Read", {"file_path": str(project.dir / "README.md")})
    assert decide(other) == {}
    assert len(log_lines(project)) == count


def test_a_read_of_another_features_file_enters_nothing(project: Project) -> None:
    notes_contract(project)
    started(project)
    project.write(project.dir / "notes" / "greet" / "draft.md", DRAFT)
    own = project.payload("Read", {"file_path": str(project.dir / "notes/greet/review-a.md")})
    assert decide(own) == {}  # enters review: the draft is there
    other = project.payload("Read", {"file_path": str(project.dir / "notes/bye/review-a.md")})
    count = len(log_lines(project))
    assert decide(other) == {}  # the bound topic is greet: not this run's file
    assert len(log_lines(project)) == count


def test_an_agent_dispatch_that_enters_too_early_is_refused(project: Project) -> None:
    notes_contract(project)
    started(project)
    agent = {"subagent_type": "notes-reviewer", "prompt": "Review it", "description": "review"}
    assert denied_code(decide(project.payload("Agent", agent))) == "contract_artifact"
    other = {"subagent_type": "general-purpose", "prompt": "x", "description": "y"}
    assert decide(project.payload("Agent", other)) == {}


def test_a_phase_entered_by_a_read_is_the_current_phase(project: Project) -> None:
    notes_contract(project)
    started(project)
    project.write(project.dir / "notes" / "greet" / "draft.md", DRAFT)
    phase_file = project.dir / ".claude" / "skills" / "notes" / "phases" / "review.md"
    use = project.journal.tool_use("Read", {"file_path": str(phase_file)})
    project.journal.read_result(use_id(use), str(phase_file), ["# Review the draft"])
    write = project.payload(
        "Write", {"file_path": str(project.dir / "notes/greet/draft.md"), "content": DRAFT}
    )
    output = decide(write)
    assert "contract_edit_scope" in json.dumps(output)  # review may edit review.md only
    assert log_lines(project)[-1]["phase"] == "review"


def test_the_contracts_known_and_the_workflows_a_registration_misses(project: Project) -> None:
    notes_contract(project)
    known = entries.known(str(project.dir))
    names = sorted(contract.name for contract in known)
    shipped = sorted(load_file(str(path)).name for path in Path(library_dir()).glob("*.toml"))
    assert len(shipped) >= 2
    assert names == sorted(["notes", *shipped])  # the library's, whether it applies or not
    wanted = entries.conditions(known)
    assert entries.uncovered(known, wanted) == []
    assert entries.uncovered(known, wanted[1:]) == ["notes"]
    assert entries.uncovered(known, ["Read", "Agent"]) == []  # every Read starts the hook


# -- a contract that does not parse keeps its Read and Agent entries ---------------------------


def refusal(output: object) -> str:
    """The denial's reason, asserting it is contract_invalid."""
    assert isinstance(output, dict) and output, output
    specific = output["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny"
    reason = str(specific["permissionDecisionReason"])
    assert "contract_invalid" in reason, reason
    return reason


def phase_read(project: Project) -> dict[str, Any]:
    phase_file = project.dir / ".claude" / "skills" / "notes" / "phases" / "review.md"
    return project.payload("Read", {"file_path": str(phase_file)})


BROKEN_SYNTAX = NOTES.replace('name = "review"', 'name = "review')  # line 17: unterminated
BROKEN_FIELD = NOTES.replace('headings = ["Outline"]', 'headings = ["Outline"]\nmin_item = 1')


def test_a_broken_contract_refuses_what_its_last_good_version_made_a_phase_entry(
    project: Project,
) -> None:
    path = notes_contract(project)
    started(project)
    assert denied_code(decide(phase_read(project))) == "contract_artifact"  # parsed: kept

    path.write_text(BROKEN_SYNTAX.replace("review-*.md", "second-look-*.md"))
    reason = refusal(decide(phase_read(project)))
    assert ".plangate/contracts/notes.toml:17" in reason
    assert "by its last good version this Read enters phase review" in reason
    assert "plangate contract check .plangate/contracts/notes.toml" in reason
    line = log_lines(project)[-1]
    assert (line["workflow"], line["phase"], line["event"]) == ("notes", "review", "entry")
    assert (line["code"], line["disposition"]) == ("contract_invalid", "corrective")

    # The last good version's entries (its glob and its agent), and the entry the edit that
    # broke the file renamed, as the broken file names it.
    review_a = project.payload("Read", {"file_path": str(project.dir / "notes/x/review-a.md")})
    refusal(decide(review_a))
    agent = {"subagent_type": "notes-reviewer", "prompt": "Review it", "description": "review"}
    assert "this Agent enters phase review" in refusal(decide(project.payload("Agent", agent)))
    second = project.payload("Read", {"file_path": str(project.dir / "notes/x/second-look-a.md")})
    assert "by the broken file this Read enters phase" in refusal(decide(second))

    # Nothing else is refused: an ordinary Read, another agent, the broken file itself.
    count = len(log_lines(project))
    assert decide(project.payload("Read", {"file_path": str(project.dir / "README.md")})) == {}
    other = {"subagent_type": "general-purpose", "prompt": "x", "description": "y"}
    assert decide(project.payload("Agent", other)) == {}
    assert decide(project.payload("Read", {"file_path": str(path)})) == {}
    relative = project.payload("Read", {"file_path": ".plangate/contracts/notes.toml"})
    assert decide(relative) == {}
    assert len(log_lines(project)) == count

    # Broken another way: still the last good version, and what the broken file names.
    path.write_text(BROKEN_FIELD.replace("review-*.md", "second-look-*.md"))
    reason = refusal(decide(phase_read(project)))
    assert "unknown key 'min_item'" in reason and "its last good version" in reason
    assert "by the broken file this Read enters phase review" in refusal(decide(second))

    path.write_text(NOTES)  # fixed: decided in full again
    assert denied_code(decide(phase_read(project))) == "contract_artifact"
    project.write(project.dir / "notes" / "greet" / "draft.md", DRAFT)
    assert decide(phase_read(project)) == {}
    assert log_lines(project)[-1]["code"] is None


def test_with_no_good_version_the_entries_the_broken_file_names_are_refused(
    project: Project,
) -> None:
    path = notes_contract(project)
    started(project)
    path.write_text(BROKEN_FIELD)  # valid TOML, a bad key: the whole document is read
    reason = refusal(decide(phase_read(project)))
    assert "notes.toml:15" in reason
    assert "by the broken file this Read enters phase review" in reason
    publish = project.payload("Read", {"file_path": "/srv/notes/publish.md"})
    assert "enters phase publish" in refusal(decide(publish))

    path.write_text(BROKEN_SYNTAX)  # a syntax error: the lines that parse on their own
    reason = refusal(decide(phase_read(project)))
    assert "notes.toml:17" in reason and "enters phase phase 2" in reason  # its name is the error
    agent = {"subagent_type": "notes-reviewer", "prompt": "Review it", "description": "review"}
    refusal(decide(project.payload("Agent", agent)))
    assert decide(project.payload("Read", {"file_path": str(project.dir / "README.md")})) == {}

    # The one thing it cannot know: entries on the line that is broken (docs/contracts.md).
    path.write_text(NOTES.replace('"{dir}/review-*.md"]', '"{dir}/review-*.md"'))
    assert decide(phase_read(project)) == {}
    skill = project.payload("Skill", {"skill": "notes", "args": "greet"})
    assert "contract_invalid" in json.dumps(decide(skill))  # its skill starts stay refused


def test_a_broken_contract_beside_a_skill_keeps_its_entries(project: Project) -> None:
    folder = project.dir / ".claude" / "skills" / "notes"
    (folder / "phases").mkdir(parents=True)
    (folder / "phases" / "review.md").write_text("# Review\n")
    path = folder / "plangate.toml"
    path.write_text(NOTES)
    started(project)
    assert denied_code(decide(phase_read(project))) == "contract_artifact"
    path.write_text(BROKEN_SYNTAX)
    reason = refusal(decide(phase_read(project)))
    assert ".claude/skills/notes/plangate.toml:17" in reason and "last good version" in reason
    ((item, fallback),) = entries.survey(str(project.dir)).broken
    assert "): the skill notes and its Read and Agent" in entries.broken_note(item, fallback)[0]
    assert decide(project.payload("Read", {"file_path": str(folder / "SKILL.md")})) == {}


def test_setup_keeps_the_good_versions_without_warming_the_hooks_cache(project: Project) -> None:
    path = notes_contract(project)
    found = entries.survey(str(project.dir), record=True)
    assert "notes" in [contract.name for contract in found.contracts] and not found.broken
    cache = json.loads(Path(compiled.cache_path()).read_text())
    kept = cache["entries"][str(path)]
    assert len(kept.pop(compiled.SEAL)) == 64
    assert kept == {
        "fallback": {"kind": "good", "contract": compiled.to_dict(load_file(str(path)))}
    }  # no digest: the hook parses the file itself

    path.write_text(BROKEN_SYNTAX)
    found = entries.survey(str(project.dir))
    ((item, fallback),) = found.broken
    assert item.path == str(path) and item.error is not None and item.error.line == 17
    assert fallback is not None and fallback[1] == compiled.GOOD
    assert "notes" in [contract.name for contract in found.covered()]  # setup registers it
    message, remedy = entries.broken_note(item, fallback)
    assert f"{path}:17 does not parse" in message
    assert "registered from its last good version" in message
    assert f"`plangate contract check {path}`" in remedy
    started(project)
    assert "its last good version" in refusal(decide(phase_read(project)))
