"""The shipped cc-sdd contract in the real terminal UI (tmux), on cc-sdd 3.0.2: the flows of
the ``claude -p`` tests (test_contract_sessions.py) typed by a person at the prompt, and a
rewind, which only the terminal UI has.

Each test starts the CLI in tmux with plangate's contract hooks (``--settings``), types the
prompts, waits for the stand-in's last words on the screen and for the idle prompt, then reads
plangate's own records (the decision log, ``plangate report``) and the files. Where an
earlier phase is not what a test is about, its files are written before and the person
approves it with ``plangate approve``, so that each session stays a few prompts long.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from contract_screen import ContractScreen, contract_tui
from test_contract_sessions import (
    DESIGN,
    FEATURE,
    REQUIREMENTS,
    TASKS,
    TICKED,
    approve_by_command,
    cc_sdd,
    skill,
    spec_json,
    write,
)
from tui import RESTORE, TuiPlayer, tmux_binary

from plangate.harness.claude import ClaudeEnv
from plangate.harness.standin import StandIn

__all__ = ["cc_sdd"]  # the session fixture, shared with the -p tests
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]


class Screen(ContractScreen):
    """One terminal-UI session in a cc-sdd project with the contract hooks on."""

    def seed(self, phases: tuple[str, ...], **approved: bool) -> None:
        """The files of ``phases`` as their skills leave them; ``approved`` phases approved
        by the person with ``plangate approve``."""
        texts = {"requirements": REQUIREMENTS, "design": DESIGN, "tasks": TASKS}
        (self.spec / "spec.json").write_text(spec_json(**approved))
        for phase in phases:
            (self.spec / f"{phase}.md").write_text(texts[phase])
        for phase, yes in approved.items():
            if yes:
                approve_by_command(self.terminal.env, self.state, "cc-sdd", phase, FEATURE)


@pytest.fixture
def screen(tmp_path: Path, claude_bin: Path, cc_sdd: Path) -> Iterator[Screen]:
    tmux_binary()
    player = TuiPlayer()
    with StandIn(player) as model:
        env = ClaudeEnv.create(tmp_path / "cc", model, binary=claude_bin)
        shutil.copytree(cc_sdd, env.project_dir, dirs_exist_ok=True)
        spec = env.project_dir / ".kiro" / "specs" / FEATURE
        spec.mkdir(parents=True)
        (spec / "spec.json").write_text(spec_json())
        state = tmp_path / "state"
        with contract_tui(env, state) as terminal:
            yield Screen(terminal, player, state, "cc-sdd", spec)


def test_the_whole_workflow_is_allowed_when_typed(screen: Screen) -> None:
    src = screen.project / "src" / "greet.py"
    screen.say(
        "/kiro-spec-init a greeting command",
        write(screen.path("spec.json"), spec_json()),
        "Spec initialized.",
        until="Spec initialized.",
    )
    screen.say(
        f"/kiro-spec-requirements {FEATURE}",
        write(screen.path("requirements.md"), REQUIREMENTS),
        "Requirements written.",
        until="Requirements written.",
    )
    screen.say(
        "approve requirements",
        skill("kiro-spec-design"),
        write(screen.path("design.md"), DESIGN),
        "Design written.",
        until="Design written.",
    )
    screen.say(
        "approve design",
        skill("kiro-spec-tasks"),
        write(screen.path("tasks.md"), TASKS),
        "Tasks written.",
        until="Tasks written.",
    )
    screen.say("approve tasks", "Tasks approved.", until="Tasks approved.")
    screen.say(
        f"/kiro-impl {FEATURE}",
        write(str(src), "def greet():\n    return 'hello'\n"),
        write(screen.path("tasks.md"), TICKED),
        "All tasks are done.",
        until="All tasks are done.",
    )
    assert src.is_file()
    lines = screen.log()
    assert all(line["decision"] == "allow" for line in lines), lines
    approvals = {(line["phase"], line["via"]) for line in lines if line.get("event") == "approval"}
    assert approvals == {("requirements", "human"), ("design", "human"), ("tasks", "human")}
    assert screen.entries() == [
        ("typed", "init", None),
        ("typed", "requirements", None),
        ("entry", "design", None),
        ("entry", "tasks", None),
        ("typed", "impl", None),
    ]
    assert screen.counts() == (1, 0, 1)


def test_a_typed_kiro_impl_before_the_tasks_are_approved_is_refused(screen: Screen) -> None:
    screen.seed(("requirements", "design", "tasks"), requirements=True, design=True)
    asked = len(screen.player.requests)
    screen.terminal.type(f"/kiro-impl {FEATURE}")
    shown = screen.terminal.wait_for("contract_approval", 30)
    screen.terminal.wait_idle()
    assert "phase tasks" in " ".join(shown.split()), shown
    assert len(screen.player.requests) == asked, "a blocked expansion asks no model"
    assert screen.entries() == [("typed", "impl", "contract_approval")]


def test_a_source_edit_and_a_self_approval_during_requirements_are_refused(
    screen: Screen,
) -> None:
    src = screen.project / "src" / "app.py"
    screen.say(
        f"/kiro-spec-requirements {FEATURE}",
        write(str(src), "print('too early')\n"),
        write(screen.path("requirements.md"), REQUIREMENTS),
        write(screen.path("spec.json"), spec_json(requirements=True)),
        "Requirements written and approved.",
        until="Requirements written and approved.",
    )
    assert not src.exists()
    assert (screen.spec / "requirements.md").is_file()
    spec = json.loads((screen.spec / "spec.json").read_text())
    assert spec["approvals"]["requirements"]["approved"] is False
    assert screen.entries() == [
        ("typed", "requirements", None),
        ("edit", "requirements", "contract_edit_scope"),
        ("edit", "requirements", "contract_self_approval"),
    ]


def test_a_final_stop_with_unticked_tasks_is_held_then_released(screen: Screen) -> None:
    screen.seed(("requirements", "design", "tasks"), requirements=True, design=True, tasks=True)
    screen.say(
        f"/kiro-impl {FEATURE}",
        write(str(screen.project / "src" / "greet.py"), "def greet():\n    return 'hello'\n"),
        "Implemented.",  # held: 2 of 2 checkboxes unticked
        write(screen.path("tasks.md"), TICKED),
        "Now every task is ticked.",
        until="Now every task is ticked.",
    )
    held = screen.held()
    assert held and "2 of 2 checkboxes unticked" in str(held[0].body)
    assert screen.counts() == (1, 1, 1)


def test_an_approval_rewound_away_does_not_count(screen: Screen) -> None:
    """The person approves the requirements, then rewinds that prompt and asks something
    else. The approval is now on a dead branch of the journal, so the model's Skill call for
    the design phase is refused (``contract_approval``): the live chain decides, not the
    file's bytes (the hook may run before Claude Code has journaled the new prompt: it waits
    for it)."""
    screen.say(
        f"/kiro-spec-requirements {FEATURE}",
        write(screen.path("requirements.md"), REQUIREMENTS),
        "Requirements written.",
        until="Requirements written.",
    )
    screen.say("approve requirements", "Noted, thank you.", until="Noted, thank you.", timeout=30)
    screen.terminal.rewind("approve requirements", RESTORE)
    screen.terminal.clear_input()
    screen.say(
        "what does requirement 1 mean?",
        skill("kiro-spec-design"),
        "Waiting for your approval.",
        until="Waiting for your approval.",
    )
    log = screen.log()
    assert screen.entries()[-1] == ("entry", "design", "contract_approval"), screen.entries()
    assert not any(line.get("event") == "approval" for line in log)
