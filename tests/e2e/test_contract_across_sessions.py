"""A cc-sdd workflow outlives its conversation, in the real terminal UI (tmux) on cc-sdd 3.0.2
as installed: ``/clear``, a fresh ``claude`` and ``claude --continue`` each go on with the
workflow where the last conversation left it (docs/contracts.md, "A workflow across
conversations").

In each test the person runs the requirements phase and approves it in a first conversation;
then, in the next one, the model's first call writes ``src/`` (refused: the workflow is still
in requirements) and its Skill call for the design is allowed on the approval given before
(logged ``via earlier-conversation``; with ``--continue`` the same journal holds it, ``via
human``). After ``/clear``, a rewind in the second conversation withdraws the design's
approval given there. On spec-kit 1.2.3 as installed: ``/clear`` and a fresh ``claude`` (the
spec approved before stands, a source write after is refused), and ``/compact`` while
planning, then the next phase and a source write.
"""

from __future__ import annotations

import io
import json

import pytest
from test_contract_sessions import DESIGN, FEATURE, REQUIREMENTS, skill, write
from test_contract_spec_kit import bash, specify_steps
from test_contract_spec_kit_tui import Screen as SpecKitScreen
from test_contract_spec_kit_tui import screen as spec_kit
from test_contract_tui import Screen, cc_sdd, screen
from tui import RESTORE

from plangate.commands.contract import status
from plangate.contracts.progress import EARLIER

__all__ = ["cc_sdd", "screen", "spec_kit"]
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]


def first_conversation(screen: Screen) -> str:
    """The requirements written and approved by the person; returns the journal's name."""
    screen.say(
        f"/kiro-spec-requirements {FEATURE}",
        write(screen.path("requirements.md"), REQUIREMENTS),
        "Requirements written.",
        until="Requirements written.",
    )
    screen.say("approve requirements", "Noted, thank you.", until="Noted, thank you.")
    return screen.terminal.session_id()


def second_conversation_goes_on(screen: Screen, via: str) -> None:
    """The model's first call writes source (refused), then it enters the design (allowed on
    the requirements' approval, logged ``via``)."""
    src = screen.project / "src" / "greet.py"
    screen.say(
        "good morning: carry on with the workflow",
        write(str(src), "def greet():\n    return 'hello'\n"),
        "Source refused, as it should be.",
        until="Source refused",
    )
    assert not src.exists()
    screen.say(
        "go on with the design",
        skill("kiro-spec-design"),
        write(screen.path("design.md"), DESIGN),
        "Design written.",
        until="Design written.",
    )
    assert screen.entries()[-2:] == [
        ("edit", "requirements", "contract_edit_scope"),
        ("entry", "design", None),
    ], screen.entries()
    approvals = [line for line in screen.log() if line.get("event") == "approval"]
    assert (approvals[-1]["phase"], approvals[-1]["via"]) == ("requirements", via)


def launch_args(screen: Screen | SpecKitScreen) -> list[str]:
    return screen.terminal.launches[0][1:]


def test_after_clear_the_workflow_goes_on_and_a_rewind_there_still_withdraws(
    screen: Screen,
) -> None:
    first = first_conversation(screen)
    screen.terminal.type("/clear")
    screen.terminal.wait_idle()
    second_conversation_goes_on(screen, EARLIER)
    assert screen.terminal.session_id() != first, "/clear started no new journal"
    screen.say("approve design", "Design approval noted.", until="Design approval noted.")
    screen.terminal.rewind("approve design", RESTORE)
    screen.terminal.clear_input()
    screen.say(
        "what does the design say?",
        skill("kiro-spec-tasks"),
        "Waiting for your approval.",
        until="Waiting for your approval.",
    )
    assert screen.entries()[-1] == ("entry", "tasks", "contract_approval"), screen.entries()


def test_a_fresh_claude_goes_on_with_the_workflow(
    screen: Screen, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = first_conversation(screen)
    screen.terminal.exit()  # its status: tmux does not always report one (docs/codex.md)
    screen.terminal.start(*launch_args(screen))
    second_conversation_goes_on(screen, EARLIER)
    assert screen.terminal.session_id() != first
    out = io.StringIO()
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(screen.state))  # the session's state root
    assert status(str(screen.project), True, out) == 0
    (shown,) = json.loads(out.getvalue())["workflows"]
    assert (shown["workflow"], shown["phase"]) == ("cc-sdd", "design")
    assert shown["next"]["phase"] == "tasks" and shown["next"]["ready"] is False


def test_claude_continue_goes_on_in_the_same_journal(screen: Screen) -> None:
    first = first_conversation(screen)
    screen.terminal.exit()  # its status: tmux does not always report one (docs/codex.md)
    screen.terminal.start("--continue", *launch_args(screen))
    second_conversation_goes_on(screen, "human")
    assert screen.terminal.session_id() == first


def test_spec_kit_after_clear_goes_on_with_the_workflow(spec_kit: SpecKitScreen) -> None:
    src = spec_kit.project / "src" / "app.py"
    spec_kit.say(
        "/speckit-specify a greeting command",
        *specify_steps(spec_kit.project),
        "Spec ready.",
        until="Spec ready.",
    )
    spec_kit.say("approve the spec", "Spec approval noted.", until="Spec approval noted.")
    first = spec_kit.terminal.session_id()
    spec_kit.terminal.type("/clear")
    spec_kit.terminal.wait_idle()
    spec_kit.say(
        "carry on",
        bash("mkdir -p src && echo \"print('early')\" > src/app.py", "Start the code"),
        "Source refused, as it should be.",
        until="Source refused",
    )
    assert not src.exists()
    spec_kit.say(
        "plan it now",
        skill("speckit-plan", ""),
        "Planning.",
        until="Planning.",
    )
    assert spec_kit.terminal.session_id() != first
    assert spec_kit.entries()[-2:] == [
        ("edit", "specify", "contract_edit_scope"),
        ("entry", "plan", None),
    ], spec_kit.entries()
    approvals = [line for line in spec_kit.log() if line.get("event") == "approval"]
    assert (approvals[-1]["phase"], approvals[-1]["via"]) == ("specify", EARLIER)


def test_spec_kit_a_fresh_claude_goes_on_with_the_workflow(spec_kit: SpecKitScreen) -> None:
    """The spec approved in a first conversation; a fresh ``claude`` in the project: a source
    write is refused (still specifying), the plan's Skill call is allowed on that approval."""
    spec_kit.say(
        "/speckit-specify a greeting command",
        *specify_steps(spec_kit.project),
        "Spec ready.",
        until="Spec ready.",
    )
    spec_kit.say("approve the spec", "Spec approval noted.", until="Spec approval noted.")
    first = spec_kit.terminal.session_id()
    spec_kit.terminal.exit()  # its status: tmux does not always report one
    spec_kit.terminal.start(*launch_args(spec_kit))
    spec_kit.say(
        "good morning",
        bash("mkdir -p src && echo \"print('early')\" > src/app.py", "Start the code"),
        skill("speckit-plan", ""),
        "Planning.",
        until="Planning.",
    )
    assert spec_kit.terminal.session_id() != first
    assert not (spec_kit.project / "src" / "app.py").exists()
    assert spec_kit.entries()[-2:] == [
        ("edit", "specify", "contract_edit_scope"),
        ("entry", "plan", None),
    ], spec_kit.entries()


def test_spec_kit_compact_then_the_next_phase_and_a_source_write(
    spec_kit: SpecKitScreen,
) -> None:
    """``/compact`` while planning; then the person approves the plan and types
    ``/speckit-tasks``; the model's immediate source write is refused in tasks, whichever
    record the hook reads first."""
    spec_kit.seed("spec.md", "plan.md", approved=("specify",))
    spec_kit.say("/speckit-plan", "Plan is ready.", until="Plan is ready.")
    spec_kit.terminal.type("/compact")
    spec_kit.terminal.wait_for("Compacted", 60)
    spec_kit.terminal.wait_idle()
    spec_kit.say("approve the plan", "Plan approval noted.", until="Plan approval noted.")
    spec_kit.say(
        "/speckit-tasks",
        bash("mkdir -p src && echo \"print('early')\" > src/app.py", "Start the code"),
        "Tasks next.",
        until="Tasks next.",
    )
    assert not (spec_kit.project / "src" / "app.py").exists()
    assert spec_kit.entries()[-2:] == [
        ("typed", "tasks", None),
        ("edit", "tasks", "contract_edit_scope"),
    ], spec_kit.entries()
