"""cc-sdd 3.0.2, installed by its own installer, walked through its phases in real sessions.

No plangate hook or contract is registered here: these tests prove the ground the workflow
contracts stand on. The kit's skills load when the person types them (kiro-impl too, which the
model may not call), the model's steps leave the files each phase should leave in
``.kiro/specs/<feature>/``, spec.json gets the fields the skills name, and the implementation
ends with every task ticked — in ``claude -p`` runs and in the terminal UI. The contract tests
play the same turns (:mod:`testkit.sdd_walk`) with plangate's hooks on and assert on its
decisions.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from tui import Tui, TuiPlayer

from plangate.harness.autoplan import Player
from plangate.harness.claude import ClaudeEnv
from plangate.harness.standin import StandIn
from testkit.kits import CC_SDD, SPEC_KIT
from testkit.recorded import skills_loaded, tool_calls, tool_results, typed_commands
from testkit.sdd_walk import (
    TOOLS,
    CcSddFeature,
    SpecKitFeature,
    Turn,
    TurnResult,
    git_init,
    walk,
)
from tests.conftest import InstallKit

pytestmark = pytest.mark.e2e

MakeEnv = Callable[[StandIn], ClaudeEnv]


@dataclass
class KitSession:
    env: ClaudeEnv
    player: Player
    feature: CcSddFeature


def kit_session(make_env: MakeEnv, install_kit: InstallKit, player: Player) -> Iterator[KitSession]:
    with StandIn(player) as model:
        env = make_env(model)
        install_kit(CC_SDD, env.project_dir)
        git_init(env.project_dir)
        yield KitSession(env, player, CcSddFeature(env.project_dir))


@pytest.fixture
def session(make_env: MakeEnv, install_kit: InstallKit) -> Iterator[KitSession]:
    yield from kit_session(make_env, install_kit, Player([]))


@pytest.fixture
def tui_session(make_env: MakeEnv, install_kit: InstallKit) -> Iterator[KitSession]:
    yield from kit_session(make_env, install_kit, TuiPlayer())


def assert_turn_loaded_its_skill(project: Path, journal: Path, turn: Turn) -> None:
    """The typed command is journaled, and the skill's text came from the installed kit."""
    if turn.skill is None:
        return
    name, _, args = turn.prompt.removeprefix("/").partition(" ")
    assert (f"/{name}", args) in typed_commands(journal), turn.name
    loaded = [(skill, folder) for skill, folder, _ in skills_loaded(journal)]
    assert (turn.skill, project / ".claude" / "skills" / turn.skill) in loaded, turn.name


def assert_writes_succeeded(journal: Path) -> None:
    results = tool_results(journal)
    for use_id, name, tool_input in tool_calls(journal):
        if name in ("Write", "Edit"):
            failed, body = results[use_id]
            assert not failed, f"{name} {tool_input.get('file_path')}: {body}"


def test_the_whole_flow_runs_in_print_sessions(session: KitSession) -> None:
    feature = session.feature
    turns = feature.happy_path()
    done: list[TurnResult] = walk(session.env, session.player, turns)
    assert [d.turn.name for d in done] == [t.name for t in turns]
    for step in done:
        assert step.result.ok, f"{step.turn.name}: {step.result.describe()}"
        journal = step.result.journal_path
        assert journal is not None and journal.is_file(), step.turn.name
        assert_turn_loaded_its_skill(feature.project, journal, step.turn)
        assert_writes_succeeded(journal)
        for path in step.turn.leaves:
            assert path.is_file(), f"{step.turn.name} left no {path}"
        if step.turn.skill is not None:
            # The model was given the skill's own text, with the arguments the person typed.
            body = json.dumps(step.requests[0].body)
            typed_args = step.turn.prompt.partition(" ")[2]
            assert "Base directory for this skill" in body and typed_args in body

    # One conversation: the last turn's model request still holds the first typed command.
    assert feature.description in json.dumps(done[-1].requests[0].body)

    # The phases' files, as the kit's templates shape them.
    spec = json.loads(feature.spec.read_text())
    assert spec["phase"] == "tasks-generated"
    assert all(
        spec["approvals"][p] == {"generated": True, "approved": True} for p in spec["approvals"]
    )
    assert "### Requirement 1:" in feature.requirements.read_text()
    assert "## Requirements Traceability" in feature.design.read_text()
    assert feature.open_tasks() == []
    assert feature.tasks.read_text().count("- [x]") == 3

    # The implementation is real: its tests pass here too, and kiro-impl's commit is there.
    check = subprocess.run(
        ["python3", "-m", "unittest", "-q", "test_notes_search"],
        cwd=feature.project,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert check.returncode == 0, check.stderr
    log = subprocess.run(
        ["git", "log", "--name-only", "--format=%s"],
        cwd=feature.project,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert "notes search: find notes by a word" in log and "notes_search.py" in log


def test_the_typed_only_skills_are_not_offered_to_the_model(session: KitSession) -> None:
    """kiro-impl and kiro-discovery are typed-only (``disable-model-invocation``): the list
    of skills the CLI offers the model's Skill tool leaves them out and has the other 15."""
    feature = session.feature
    (first,) = walk(session.env, session.player, [feature.spec_init()])
    assert first.result.ok, first.result.describe()
    listing = json.dumps(first.requests[0].body)
    offered = set(re.findall(r"- (kiro-[a-z-]+): ", listing))
    installed = set(CC_SDD.skills(feature.project))
    assert offered == installed - {"kiro-impl", "kiro-discovery"}
    assert len(offered) == 15


def test_the_first_two_phases_run_in_the_terminal_ui(tui_session: KitSession) -> None:
    feature, player = tui_session.feature, tui_session.player
    turns = [feature.spec_init(), feature.requirements_phase()]
    with Tui(tui_session.env) as tui:
        tui.start("--permission-mode", "default", "--allowedTools", ",".join(TOOLS))
        for turn in turns:
            player.steps = list(turn.steps)
            tui.type(turn.prompt)
            tui.wait_for(turn.last_words.replace("`", "")[:24], timeout=60)
            tui.wait_idle(timeout=60)
        tui.exit()
        journal = tui.journal()
    for turn in turns:
        assert_turn_loaded_its_skill(feature.project, journal, turn)
        for path in turn.leaves:
            assert path.is_file(), f"{turn.name} left no {path}"
    assert_writes_succeeded(journal)
    spec = json.loads(feature.spec.read_text())
    assert spec["phase"] == "requirements-generated"
    assert spec["approvals"]["requirements"] == {"generated": True, "approved": False}
    assert "#### Acceptance Criteria" in feature.requirements.read_text()


def test_spec_kit_specify_then_plan_with_its_own_script(
    make_env: MakeEnv, install_kit: InstallKit
) -> None:
    """The second kit, of another shape: no feature argument, no approval flags; the plan
    phase is entered by the model running the kit's script, which finds the feature through
    ``.specify/feature.json`` and copies the plan template into the feature folder."""
    player = Player([])
    with StandIn(player) as model:
        env = make_env(model)
        install_kit(SPEC_KIT, env.project_dir)
        git_init(env.project_dir)
        feature = SpecKitFeature(env.project_dir)
        turns = [feature.specify(), feature.plan_setup()]
        done = walk(env, player, turns)
    assert [d.result.ok for d in done] == [True, True], done[-1].result.describe()
    for step in done:
        journal = step.result.journal_path
        assert journal is not None
        assert_turn_loaded_its_skill(feature.project, journal, step.turn)
        assert_writes_succeeded(journal)
        for path in step.turn.leaves:
            assert path.is_file(), f"{step.turn.name} left no {path}"
    journal = done[-1].result.journal_path
    assert journal is not None
    (setup,) = [use for use, name, _ in tool_calls(journal) if name == "Bash"][-1:]
    failed, printed = tool_results(journal)[setup]
    assert not failed, printed
    assert json.loads(printed.splitlines()[-1])["FEATURE_DIR"] == str(feature.feature_dir)
    assert "# Implementation Plan" in feature.plan.read_text()


def test_the_model_may_call_phase_skills_but_not_kiro_impl(session: KitSession) -> None:
    """The model's Skill call loads a phase skill (journaled after the tool result, with its
    ``sourceToolUseID``); for typed-only kiro-impl the CLI itself answers with an error."""
    feature = session.feature
    status = Turn(
        name="status",
        prompt="Where is the notes-search spec at?",
        steps=(feature.skill("kiro-spec-status"), feature.skill("kiro-impl"), "Checked."),
    )
    (turn,) = walk(session.env, session.player, [status], allowed_tools=[*TOOLS, "Skill"])
    assert turn.result.ok, turn.result.describe()
    journal = turn.result.journal_path
    assert journal is not None
    results = tool_results(journal)
    outcome = {
        tool_input["skill"]: results[use]
        for use, name, tool_input in tool_calls(journal)
        if name == "Skill"
    }
    assert outcome["kiro-spec-status"] == (False, "Launching skill: kiro-spec-status")
    failed, said = outcome["kiro-impl"]
    assert failed and "disable-model-invocation" in said
    assert [name for name, _, _ in skills_loaded(journal)] == ["kiro-spec-status"]
    assert typed_commands(journal) == []


OFF_THE_PATH: dict[str, Callable[[CcSddFeature], list[Turn]]] = {
    "impl_before_approval": CcSddFeature.impl_before_approval,
    "self_approval": CcSddFeature.self_approval,
    "source_edit_in_requirements": CcSddFeature.source_edit_in_requirements,
    "stop_with_open_tasks": CcSddFeature.stop_with_open_tasks,
}


@pytest.mark.parametrize("variant", list(OFF_THE_PATH))
def test_without_a_contract_nothing_holds_the_kit_to_its_phases(
    session: KitSession, variant: str
) -> None:
    """The baseline the workflow contracts change: with only the kit's prose, each way off
    the path goes through to its end (the contract tests assert refusals and holds here)."""
    feature = session.feature
    turns = OFF_THE_PATH[variant](feature)
    done = walk(session.env, session.player, turns)
    assert [d.result.ok for d in done] == [True] * len(turns), done[-1].result.describe()
    spec = json.loads(feature.spec.read_text())
    if variant == "impl_before_approval":
        assert spec["approvals"]["tasks"]["approved"] is False
        assert feature.source.is_file() and feature.open_tasks() == []
    elif variant == "self_approval":
        assert spec["approvals"]["tasks"]["approved"] is True
        assert not any("approve the tasks" in t.prompt for t in turns)
    elif variant == "source_edit_in_requirements":
        assert spec["phase"] == "requirements-generated" and feature.source.is_file()
    else:
        assert [line[:9] for line in feature.open_tasks()] == ["- [ ] 1. ", "- [ ] 1.2"]
