"""The shipped spec-kit contract in the real terminal UI (tmux), on spec-kit 1.2.3 as
``specify init --here --integration claude`` installs it: the flows of the ``claude -p``
tests (test_contract_spec_kit.py) typed by a person at the prompt, and a rewind, which only
the terminal UI has.

The six flows of the contract tests, as they apply to spec-kit (phases specify → plan →
tasks → implement; a person approves the spec and the plan; spec-kit writes no approval
flag in any file):

- **the whole happy path**: typed /speckit-specify, "approve the spec", typed /speckit-plan,
  "approve the plan" with the model's Skill call for the tasks, typed /speckit-implement:
  all allowed, both approvals by a human turn;
- **implementation before the tasks**: spec-kit has no approval of the tasks, so the early
  implementation is the one before tasks.md exists: the typed /speckit-implement is refused
  (``contract_phase_order``, the reason on the screen, no model request), and so is the
  model's own Skill call for it (PreToolUse on ``Skill``: spec-kit lets the model call all
  its skills);
- **a source edit while specifying**: a Write and a Bash redirection into ``src/`` are
  refused (``contract_edit_scope``);
- **a self-approval**: with no flag to write, the model approves its own spec in its text
  and calls the plan's skill: refused (``contract_approval``) until a person's turn approves;
- **a final stop with unticked tasks**: held, then released once every task is ticked (in
  the happy path's implementation, whose first stop comes before the ticks);
- **a rewind**: the person approves the plan, then rewinds that prompt (Esc Esc, restore
  the conversation) and asks something else; the approval is on a dead branch, so the
  model's Skill call for the tasks is refused, and allowed once the person approves again.

A fourth session, which only the terminal UI has too: the person's approval typed while the
model is still working (Claude Code hands it to the model within the turn) counts.

Four sessions, each a few prompts: where an earlier phase is not what a test is about, its
files are written before and the person approves it with ``plangate approve``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from contract_screen import ContractScreen, contract_tui
from test_contract_sessions import approve_by_command, skill, write
from test_contract_spec_kit import (
    FOLDER,
    PLAN,
    SOURCE,
    TASKS,
    TICKED,
    bash,
    seed_feature,
    specify_steps,
)
from tui import RESTORE, Hold, TuiPlayer, tmux_binary

from plangate.harness.claude import ClaudeEnv
from plangate.harness.standin import StandIn, tool_use
from plangate.harness.standin.script import block_text
from testkit.kits import SPEC_KIT
from testkit.sdd_walk import git_init
from tests.conftest import InstallKit

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


class Screen(ContractScreen):
    """One terminal-UI session in a spec-kit project with the contract hooks on."""

    def seed(self, *names: str, approved: tuple[str, ...] = ()) -> None:
        """Earlier phases' files; the ``approved`` phases approved with ``plangate
        approve``."""
        seed_feature(self.project, *names)
        for phase in approved:
            approve_by_command(self.terminal.env, self.state, SPEC_KIT.name, phase, FOLDER)

    def approvals(self) -> set[tuple[str, str]]:
        return {(line["phase"], line["via"]) for line in self.log() if line["event"] == "approval"}


@pytest.fixture
def screen(tmp_path: Path, claude_bin: Path, install_kit: InstallKit) -> Iterator[Screen]:
    tmux_binary()
    player = TuiPlayer()
    with StandIn(player) as model:
        env = ClaudeEnv.create(tmp_path / "cc", model, binary=claude_bin)
        install_kit(SPEC_KIT, env.project_dir)
        git_init(env.project_dir)
        state = tmp_path / "state"
        with contract_tui(env, state) as terminal:
            spec = env.project_dir / "specs" / FOLDER
            yield Screen(terminal, player, state, SPEC_KIT.name, spec)


def test_the_whole_workflow_is_allowed_when_typed_and_its_final_stop_waits_for_the_ticks(
    screen: Screen,
) -> None:
    src = screen.project / "src" / "greet.py"
    screen.say(
        "/speckit-specify a greeting command",
        *specify_steps(screen.project),
        "Spec ready.",
        until="Spec ready.",
    )
    screen.say("Looks right: approve the spec.", "Spec approval noted.", until="approval noted")
    screen.say(
        "/speckit-plan Use the standard library only",
        bash(".specify/scripts/bash/setup-plan.sh --json", "Set up the plan"),
        tool_use("Read", file_path=screen.path("plan.md")),
        write(screen.path("plan.md"), PLAN),
        "Plan ready.",
        until="Plan ready.",
    )
    screen.say(
        "approve the plan, then make the tasks",
        skill("speckit-tasks", ""),
        bash(".specify/scripts/bash/setup-tasks.sh --json", "Set up the tasks"),
        write(screen.path("tasks.md"), TASKS),
        "Tasks ready.",
        until="Tasks ready.",
    )
    screen.say(
        "/speckit-implement",
        bash(
            ".specify/scripts/bash/check-prerequisites.sh --json --require-tasks --include-tasks",
            "Check the prerequisites",
        ),
        write(str(src), SOURCE),
        "Implemented.",  # held: 2 of 2 checkboxes unticked
        tool_use("Read", file_path=screen.path("tasks.md")),
        write(screen.path("tasks.md"), TICKED),
        "All tasks are done.",
        until="All tasks are done.",
    )
    assert src.read_text() == SOURCE
    assert (screen.spec / "tasks.md").read_text() == TICKED
    lines = screen.log()
    assert all(line["decision"] == "allow" for line in lines), lines
    assert screen.approvals() == {("specify", "human"), ("plan", "human")}
    assert screen.entries() == [
        ("typed", "specify", None),
        ("typed", "plan", None),
        ("entry", "tasks", None),
        ("typed", "implement", None),
    ]
    held = screen.held()
    assert len(held) == 1 and "2 of 2 checkboxes unticked" in str(held[0].body)
    assert screen.counts() == (1, 1, 1)


def test_a_source_edit_and_a_self_approval_while_specifying_are_refused(screen: Screen) -> None:
    src = screen.project / "src" / "app.py"
    steps = specify_steps(screen.project)
    screen.say(
        "/speckit-specify a greeting command",
        steps[0],
        write(str(src), "print('too early')\n"),
        bash("mkdir -p src && echo \"print('early')\" > src/app.py", "Start the code"),
        *steps[1:],
        # The model approves its own spec and goes on to plan it.
        [
            "The spec passes every checklist item: approved.",
            tool_use("Skill", skill="speckit-plan", args=""),
        ],
        "I need your approval of the spec first.",
        until="I need your approval of the spec first.",
    )
    after = screen.shown_after("Skill(speckit-plan)")
    assert after.startswith("⎿ Error: PreToolUse:Skill hook error: [plangate]"), after
    assert "(code contract_approval" in after and "phase specify" in after, after
    assert not src.exists()
    assert (screen.spec / "spec.md").is_file()
    screen.say(
        "approve the spec",
        skill("speckit-plan", ""),
        bash(".specify/scripts/bash/setup-plan.sh --json", "Set up the plan"),
        tool_use("Read", file_path=screen.path("plan.md")),
        write(screen.path("plan.md"), PLAN),
        "Plan ready.",
        until="Plan ready.",
    )
    assert (screen.spec / "plan.md").read_text() == PLAN
    assert screen.entries() == [
        ("typed", "specify", None),
        ("edit", "specify", "contract_edit_scope"),
        ("edit", "specify", "contract_edit_scope"),
        ("entry", "plan", "contract_approval"),
        ("entry", "plan", None),
    ]
    assert screen.approvals() == {("specify", "human")}


def test_implementation_before_the_tasks_and_an_approval_rewound_away_are_refused(
    screen: Screen,
) -> None:
    """The typed /speckit-implement and the model's Skill call for it are refused before
    tasks.md exists; then the person's approval of the plan is rewound away (the hook may
    run before Claude Code has journaled the new prompt: it waits for it), so the model's
    Skill call for the tasks is refused until the person approves the plan again."""
    screen.seed("spec.md", "plan.md", approved=("specify",))
    screen.say("approve the plan", "Plan approval noted.", until="approval noted")
    shown = screen.refused("/speckit-implement", "contract_phase_order", "tasks.md")
    assert "plangate explain contract_phase_order" in shown, shown
    # The model's own Skill call (no expansion hook fires for it): PreToolUse on Skill.
    screen.say(
        "implement it now",
        skill("speckit-implement", ""),
        "Waiting for the tasks.",
        until="Waiting for the tasks.",
    )
    after = screen.shown_after("Skill(speckit-implement)")
    assert after.startswith("⎿ Error: PreToolUse:Skill hook error: [plangate]"), after
    assert "(code contract_phase_order" in after.split("Waiting for the tasks.")[0], after
    (told,) = screen.player.requests[-1].tool_results()
    said = block_text(told.get("content"))
    assert told.get("is_error") is True and "contract_phase_order" in said, told
    assert "tasks.md" in said and "plangate explain contract_phase_order" in said, said
    assert screen.log()[-1]["event"] == "entry" and screen.log()[-1]["decision"] == "deny"
    assert not (screen.project / "src").exists()
    screen.terminal.rewind("approve the plan", RESTORE)
    screen.terminal.clear_input()
    screen.say(
        "what does the plan cover?",
        skill("speckit-tasks", ""),
        "Waiting for your approval of the plan.",
        until="Waiting for your approval of the plan.",
    )
    assert screen.entries()[-1] == ("entry", "tasks", "contract_approval"), screen.entries()
    screen.say(
        "approve the plan",
        skill("speckit-tasks", ""),
        bash(".specify/scripts/bash/setup-tasks.sh --json", "Set up the tasks"),
        write(screen.path("tasks.md"), TASKS),
        "Tasks ready.",
        until="Tasks ready.",
    )
    assert (screen.spec / "tasks.md").read_text() == TASKS
    assert screen.entries() == [
        ("typed", "implement", "contract_phase_order"),
        ("entry", "implement", "contract_phase_order"),
        ("entry", "tasks", "contract_approval"),
        ("entry", "tasks", None),
    ]
    assert screen.approvals() == {("specify", "person-command"), ("plan", "human")}


def test_an_approval_typed_while_the_model_works_counts(screen: Screen) -> None:
    """The person types "approve the spec" while the model is still reading it; Claude Code
    gives the model that prompt within its turn (a queued command, not a new turn), and the
    model's very next call plans: the person's words approve the spec, so the plan's Skill
    call is allowed. Claude Code may journal the Read's result first and the queued prompt,
    with the Skill call, after that call's hook has read the journal; the refusal the hook
    would make then waits for the call to be journaled and is decided again."""
    screen.seed("spec.md")
    held = Hold()
    screen.player.steps += [
        held.step(tool_use("Read", file_path=screen.path("spec.md"))),
        skill("speckit-plan", ""),
        "Planning now.",
    ]
    screen.terminal.type("/speckit-specify a greeting command")
    held.wait_arrived()
    screen.terminal.wait_working()
    screen.terminal.type("approve the spec")
    screen.terminal.wait_for("Queued", what="the typed approval queued")
    held.release()
    screen.terminal.wait_for("Planning now.", 60)
    screen.terminal.wait_idle()
    told = [
        r for r in screen.player.requests if "new message while you were working" in str(r.body)
    ]
    assert told and "approve the spec" in str(told[0].body)
    assert screen.entries() == [("typed", "specify", None), ("entry", "plan", None)]
    assert screen.approvals() == {("specify", "human")}
