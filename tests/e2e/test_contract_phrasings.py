"""Only a person's own words approve, in real Claude Code sessions with the stand-in playing
the model (docs/contracts.md, "What counts as a person's approval").

- ``claude -p``, resumed for each prompt, on cc-sdd 3.0.2 as npm installs it: the person
  types the issue's four phrasings that hold the approval words but do not approve (negated,
  quoted, questioned twice); after each, the model's Skill call for the design is refused by
  plangate's PreToolUse hook (``contract_approval``). A plain approval then lets the same
  call through. The fixtures are test_contract_sessions.py's.
- The terminal UI (tmux) on spec-kit 1.2.3 as ``specify init`` installs it: the same for the
  plan, typed at the prompt (negated, questioned, quoted), then "approve the plan, then make
  the tasks". The fixtures are test_contract_spec_kit_tui.py's.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_contract_sessions import (
    DESIGN,
    FEATURE,
    REQUIREMENTS,
    Kit,
    cc_sdd,
    kit,
    skill,
    spec_json,
    write,
)
from test_contract_spec_kit import TASKS, bash
from test_contract_spec_kit_tui import Screen, screen

from plangate.harness.claude import ClaudeResult

__all__ = ["cc_sdd", "kit", "screen"]  # the fixtures

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(400)]

NOT_APPROVALS = (
    "don't approve requirements yet",
    'my teammate wants me to type "approve requirements" but I am not ready',
    "should I approve requirements?",
    "requirements approved? not yet, I still have questions",
)


def entries(kit: Kit) -> list[tuple[str, str | None]]:
    """The design phase's entry decisions in the decision log: (decision, code)."""
    return [
        (line["decision"], line["code"])
        for line in kit.log()
        if line.get("event") == "entry" and line.get("phase") == "design"
    ]


def test_negated_quoted_and_questioned_words_do_not_approve_plain_ones_do(kit: Kit) -> None:
    kit.run("/kiro-spec-init a greeting command", write(kit.path("spec.json"), spec_json()), "ok")
    kit.run(
        f"/kiro-spec-requirements {FEATURE}",
        write(kit.path("requirements.md"), REQUIREMENTS),
        "Requirements written. Type 'approve requirements' to go on to the design.",
    )
    seen = 0
    results: list[ClaudeResult] = []
    for said in NOT_APPROVALS:
        result = kit.run(said, skill("kiro-spec-design"), "I will wait for your approval.")
        assert result.ok, result.describe()
        errors = kit.tool_errors(result)
        new, seen = errors[seen:], len(errors)
        assert len(new) == 1 and "contract_approval" in new[0], (said, new)
        assert "phase requirements is not approved by a person" in new[0], new
        results.append(result)
    assert not Path(kit.path("design.md")).exists()
    assert entries(kit) == [("deny", "contract_approval")] * len(NOT_APPROVALS)
    plain = kit.run(
        "Looks right: approve requirements.",
        skill("kiro-spec-design"),
        write(kit.path("design.md"), DESIGN),
        "Design written; approve it?",
    )
    assert plain.ok, plain.describe()
    assert kit.tool_errors(plain)[seen:] == [], plain.describe()
    assert Path(kit.path("design.md")).read_text() == DESIGN
    assert entries(kit)[-1] == ("allow", None)
    approvals = [(line["phase"], line["via"]) for line in kit.log() if line["event"] == "approval"]
    assert approvals == [("requirements", "human")]
    assert all(result.session_id == kit.session for result in results), "one conversation"


def test_in_the_terminal_ui_typed_words_that_do_not_approve_leave_the_tasks_refused(
    screen: Screen,
) -> None:
    """spec-kit: the spec approved with ``plangate approve``, the plan written; the person
    types about the plan, and after each phrasing the model calls the tasks' skill."""
    screen.seed("spec.md", "plan.md", approved=("specify",))
    not_approvals = (
        "don't approve the plan yet",
        "approve the plan? I have not read it all",
        'the checklist says to type "approve the plan" when it is reviewed',
    )
    for number, said in enumerate(not_approvals, 1):
        waiting = f"Waiting for your approval ({number})."
        screen.say(said, skill("speckit-tasks", ""), waiting, until=waiting)
        after = screen.shown_after("Skill(speckit-tasks)")
        assert after.startswith("⎿ Error: PreToolUse:Skill hook error: [plangate]"), after
        assert "(code contract_approval" in after.split(waiting)[0], after
        assert screen.entries()[-1] == ("entry", "tasks", "contract_approval"), said
    assert not (screen.spec / "tasks.md").exists()
    screen.say(
        "approve the plan, then make the tasks",
        skill("speckit-tasks", ""),
        bash(".specify/scripts/bash/setup-tasks.sh --json", "Set up the tasks"),
        write(screen.path("tasks.md"), TASKS),
        "Tasks ready.",
        until="Tasks ready.",
    )
    assert (screen.spec / "tasks.md").read_text() == TASKS
    assert screen.entries() == [("entry", "tasks", "contract_approval")] * 3 + [
        ("entry", "tasks", None)
    ]
    assert screen.approvals() == {("specify", "person-command"), ("plan", "human")}
