"""The contract decisions, in process, on real files and journals written where Claude Code
keeps them (the real reader, the real fold, the real decision log)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from plangate.commands.approve import approve
from plangate.contracts import evaluate
from tests.contracts.conftest import (
    DESIGN,
    FEATURE,
    TASKS,
    Project,
    spec_json,
    through_requirements,
    typed_refusal,
)


def code_of(output: dict[str, object]) -> str | None:
    hook = output.get("hookSpecificOutput")
    if not isinstance(hook, dict) or hook.get("permissionDecision") != "deny":
        return None
    reason = str(hook["permissionDecisionReason"])
    return reason.split("(code ", 1)[1].split(",", 1)[0]


def skill(project: Project, name: str, args: str = FEATURE) -> str | None:
    """The model's Skill call, journaled as Claude Code journals it: the call before its
    hook runs, its result (refused, or the skill launched) after."""
    tool_input = {"skill": name, "args": args}
    payload = project.journaled("Skill", tool_input)
    code = code_of(evaluate.pre_tool_use(payload, None))
    project.answered(payload, code, f"Launching skill: {name}")
    return code


def write(project: Project, path: Path, content: str) -> str | None:
    """The model's Write, journaled as :func:`skill` is (the file is not written)."""
    payload = project.journaled("Write", {"file_path": str(path), "content": content})
    code = code_of(evaluate.pre_tool_use(payload, [str(path)]))
    project.answered(payload, code, f"File created successfully at: {path}")
    return code


def bash(project: Project, command: str) -> str | None:
    from plangate.hooks.contract_pre_tool_use import decide

    payload = project.payload("Bash", {"command": command})
    return code_of(decide(payload))


def log_lines(project: Project) -> list[dict[str, object]]:
    path = project.state / "analytics" / "autoplan-guard.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_phase_before_the_earlier_one_ran_is_out_of_order(project: Project) -> None:
    project.journal.prompt("go")
    assert skill(project, "kiro-spec-design") == "contract_phase_order"
    assert skill(project, "kiro-spec-init", "a greeting command") is None


def test_unapproved_requirements_refuse_design_until_a_person_approves(project: Project) -> None:
    through_requirements(project)
    assert skill(project, "kiro-spec-design") == "contract_approval"
    project.journal.prompt("looks fine to me")  # not the contract's words
    assert skill(project, "kiro-spec-design") == "contract_approval"
    project.person("Approve requirements, thanks.")
    assert skill(project, "kiro-spec-design") is None
    lines = log_lines(project)
    assert {
        "workflow": "cc-sdd",
        "phase": "requirements",
        "event": "approval",
        "via": "human",
    }.items() <= lines[-2].items()
    assert lines[-1]["decision"] == "allow" and lines[-1]["phase"] == "design"
    assert [line["code"] for line in lines[:2]] == ["contract_approval", "contract_approval"]


def test_an_approval_before_the_artifact_changed_does_not_count(project: Project) -> None:
    through_requirements(project)
    project.person("approve requirements")
    project.write(
        project.spec / "requirements.md",
        project.spec.joinpath("requirements.md").read_text() + "\n2. More.\n",
    )
    assert skill(project, "kiro-spec-design") == "contract_approval"


def test_an_artifact_short_of_its_contract_is_refused(project: Project) -> None:
    through_requirements(project)
    project.write(
        project.spec / "requirements.md", "# Requirements Document\n\n## Requirements\nTBD\n"
    )
    project.person("approve requirements")
    assert skill(project, "kiro-spec-design") == "contract_artifact"


def test_source_edits_during_requirements_are_refused_spec_edits_are_not(project: Project) -> None:
    through_requirements(project)
    assert write(project, project.dir / "src" / "app.py", "print(1)\n") == "contract_edit_scope"
    assert write(project, project.spec / "notes.md", "x\n") is None
    assert bash(project, "echo x > src/app.py") == "contract_edit_scope"
    assert bash(project, "cat > .kiro/specs/greet/extra.md <<'EOF'\n> quoted\nEOF") is None
    assert bash(project, "ls -la src | wc -l") is None


def test_self_approval_by_the_model_is_refused(project: Project) -> None:
    through_requirements(project)
    spec = project.spec / "spec.json"
    assert write(project, spec, spec_json(requirements=True)) == "contract_self_approval"
    # a flag already written (here by Bash, which the guard cannot read) is refused at entry
    spec.write_text(spec_json(requirements=True))
    assert skill(project, "kiro-spec-design") == "contract_self_approval"
    project.person("approve requirements")
    assert write(project, spec, spec_json(requirements=True)) is None
    assert skill(project, "kiro-spec-design") is None


def test_plangate_approve_counts_until_the_artifact_changes(project: Project) -> None:
    through_requirements(project)
    out = __import__("io").StringIO()
    assert approve("cc-sdd", "requirements", FEATURE, str(project.dir), out) == 0
    assert skill(project, "kiro-spec-design") is None
    (project.spec / "requirements.md").write_text(REQUIREMENTS_CHANGED)
    assert skill(project, "kiro-spec-design") == "contract_approval"


REQUIREMENTS_CHANGED = "# Requirements\n\n## Requirements\n1. Changed.\n"


def test_an_approve_record_keeps_its_digest_across_hash_modules(tmp_path: Path) -> None:
    """``plangate approve`` records hold a SHA-256 over each artifact's path and the SHA-256
    of its bytes (``missing`` for a file not there): the hook's built-in hash module gives
    the digest ``hashlib`` gave, so records written before still count."""
    import hashlib

    from plangate.contracts import approvals

    present = tmp_path / "requirements.md"
    present.write_bytes(b"# Requirements\n\xc3\xa9\n")
    files = [str(present), str(tmp_path / "design.md")]
    expected = hashlib.sha256()
    expected.update(files[0].encode("utf-8") + b"\0")
    expected.update(hashlib.sha256(present.read_bytes()).digest())
    expected.update(files[1].encode("utf-8") + b"\0" + b"missing")
    assert approvals.digest(files) == expected.hexdigest()
    assert approvals.digest([]) == hashlib.sha256(b"").hexdigest()


def test_impl_before_tasks_are_approved_is_refused_typed_and_by_skill(project: Project) -> None:

    through_requirements(project)
    project.person("approve requirements")
    project.skill("kiro-spec-design", FEATURE)
    project.write(project.spec / "design.md", DESIGN)
    project.person("approve design")
    project.skill("kiro-spec-tasks", FEATURE)
    project.write(project.spec / "tasks.md", TASKS)
    assert skill(project, "kiro-impl") == "contract_approval"
    reason = typed_refusal(project.expansion("kiro-impl", FEATURE))
    assert reason is not None and "contract_approval" in reason and "phase tasks" in reason
    project.person("approve tasks")
    assert skill(project, "kiro-impl") is None
    assert typed_refusal(project.expansion("kiro-impl", FEATURE)) is None
    # in impl, source edits are allowed
    project.skill("kiro-impl", FEATURE)
    assert write(project, project.dir / "src" / "greet.py", "def greet(): ...\n") is None


def test_a_rewound_approval_does_not_count(project: Project) -> None:
    """The person approved, then rewound that prompt and asked something else: the approval
    is on a dead branch, which the live chain leaves out."""
    through_requirements(project)
    branch = project.journal.leaf
    project.person("approve requirements")
    project.journal.text("Approved.")
    project.journal.leaf = branch  # the rewind: the next prompt is a sibling
    project.person("what does requirement 1 mean?")
    assert skill(project, "kiro-spec-design") == "contract_approval"


def test_an_approval_typed_while_the_model_works_counts(project: Project) -> None:
    """Claude Code gives the model a prompt the person typed during its turn within that
    turn (a queued command): the person's words approve as a prompt of their own does, and
    only when they come after the artifact's last change."""
    through_requirements(project)
    project.journal.text("Checking the requirements once more.")
    project.journal._clock = datetime.now(UTC)
    project.journal.queued_prompt("looks fine to me")
    assert skill(project, "kiro-spec-design") == "contract_approval"
    project.journal.queued_prompt("approve requirements")
    project.write(project.spec / "requirements.md", REQUIREMENTS_CHANGED)  # changed after it
    assert skill(project, "kiro-spec-design") == "contract_approval"
    project.journal._clock = datetime.now(UTC)
    project.journal.queued_prompt("approve requirements")
    assert skill(project, "kiro-spec-design") is None
    (approval,) = [line for line in log_lines(project) if line.get("event") == "approval"]
    assert (approval["phase"], approval["via"]) == ("requirements", "human")


def test_no_contract_no_decision(project: Project, tmp_path: Path) -> None:
    for folder in (project.dir / ".claude").iterdir():
        __import__("shutil").rmtree(folder)
    project.journal.prompt("go")
    assert evaluate.pre_tool_use(project.payload("Skill", {"skill": "kiro-impl"}), None) == {}
    assert not (project.state / "analytics" / "autoplan-guard.jsonl").exists()


def test_a_broken_project_contract_refuses_skills_with_its_own_code(project: Project) -> None:
    folder = project.dir / ".plangate" / "contracts"
    folder.mkdir(parents=True)
    (folder / "mine.toml").write_text("[workflow]\nname = 1\n")
    project.journal.prompt("go")
    assert skill(project, "anything") == "contract_invalid"
    payload = project.payload("Skill", {"skill": "anything"})
    reason = evaluate.pre_tool_use(payload, None)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "mine.toml:2" in reason


def test_a_rewind_after_an_indexed_read_is_decided_on_the_live_chain(project: Project) -> None:
    """A decision read the journal (and saved the contracts' index) while the approval was
    live; after the rewind the next read goes on from that index, and the live chain drops
    the approval."""
    through_requirements(project)
    branch = project.journal.leaf
    project.person("approve requirements")
    assert skill(project, "kiro-spec-design") is None
    project.journal.text("Approved.")
    project.journal.leaf = branch
    project.person("what does requirement 1 mean?")
    assert skill(project, "kiro-spec-design") == "contract_approval"
    index = project.state / "contract-index"
    assert any(index.iterdir()), "the contract reads keep their own index"
