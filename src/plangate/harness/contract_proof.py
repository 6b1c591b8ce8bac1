"""A real session that proves the workflow contract hooks fire and refuse a phase too early.

The project gets a contract of its own, written here (nothing of a kit's): a workflow of two
skills, ``plangate-live-draft`` then ``plangate-live-publish``, where the draft phase must
leave ``notes/draft.md`` with an ``Outline`` heading. The model starts the publish phase
first (refused: ``contract_phase_order``), then drafts, writes the note and publishes
(allowed). What counts is the contract's own lines in the decision log: a hook that did not
start leaves none, and that is a failed proof. ``plangate doctor --live`` runs it on the
user's registration, ``plangate demo`` on a fresh ``plangate setup`` with the contracts on.
"""

from __future__ import annotations

from pathlib import Path

from plangate.decisions.contract_codes import CONTRACT_PHASE_ORDER
from plangate.harness.autoplan import decisions
from plangate.harness.proofs import Proof, Session, unfinished
from plangate.harness.standin import tool_use
from plangate.harness.standin.script import TurnLike

WORKFLOW = "plangate-live"
DRAFT = "plangate-live-draft"
PUBLISH = "plangate-live-publish"
CONTRACT = f"""# A two-phase workflow for `plangate doctor --live` and `plangate demo`.
[workflow]
name = "{WORKFLOW}"
skills = ["{DRAFT}", "{PUBLISH}"]

[[phase]]
name = "draft"
entry = ["{DRAFT}"]
editable = ["notes/**"]

[[phase.artifact]]
path = "notes/draft.md"
headings = ["Outline"]

[[phase]]
name = "publish"
entry = ["{PUBLISH}"]
"""
SKILL = """---
name: {name}
description: {what} (a plangate live check).
---

{what}.
"""
NOTE = "# Note\n\n## Outline\n\n- why\n- how\n"
EXPECTED = [
    ("deny", CONTRACT_PHASE_ORDER, "publish"),
    ("allow", None, "draft"),
    ("allow", None, "publish"),
]
TOOLS = ("Read", "Write", "Skill")
NAMES = ["start publish (too early)", "start draft", "start publish"]


CONTRACT_FILE = f".plangate/contracts/{WORKFLOW}.toml"


def write_contract(project: Path) -> None:
    """The contract in ``project/.plangate/contracts/``, its two skills in the project's
    ``.claude/skills/``."""
    path = project / CONTRACT_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(CONTRACT, encoding="utf-8")
    for name, what in ((DRAFT, "Draft the note"), (PUBLISH, "Publish the note")):
        skill = project / ".claude" / "skills" / name
        skill.mkdir(parents=True, exist_ok=True)
        (skill / "SKILL.md").write_text(SKILL.format(name=name, what=what), encoding="utf-8")


def contract_proof(session: Session, timeout: float) -> Proof:
    """The publish phase started before the draft (refused with the contract's code), then
    the draft, its note and the publish phase (allowed)."""
    name = "workflow contract"
    project = session.project
    write_contract(project.project)
    note = project.project / "notes" / "draft.md"
    steps: list[TurnLike] = [
        tool_use("Skill", skill=PUBLISH),
        tool_use("Skill", skill=DRAFT),
        tool_use("Write", file_path=str(note), content=NOTE),
        tool_use("Skill", skill=PUBLISH),
        "The note is published.",
    ]
    result = session.run("Draft the note, then publish it.", steps, timeout, TOOLS)
    if not result.ok:
        return unfinished(name, result)
    entries = [
        entry
        for entry in decisions(project.state_root)
        if entry.get("workflow") == WORKFLOW and entry.get("event") in ("entry", "typed")
    ]
    got = [(entry["decision"], entry["code"], entry.get("phase")) for entry in entries]
    lines = [
        f"{label:26} {entry['decision']}{' ' + entry['code'] if entry['code'] else ''}"
        for label, entry in zip(NAMES, entries, strict=False)
    ]
    if not entries:
        detail = "the contract decided nothing: its PreToolUse hook did not run"
        return Proof(name, False, detail, lines)
    if got != EXPECTED:
        return Proof(name, False, f"unexpected contract decisions: {got}", lines)
    detail = "refused a phase started before the one it needs (contract_phase_order), then allowed"
    return Proof(name, True, detail, lines)
