"""Local commands in the real terminal UI (tmux), on cc-sdd 3.0.2 as installed: what the
person runs in Claude Code itself (``/compact``, ``/model``, a ``!`` shell command) is not a
turn of the conversation. It never approves a phase, and it never ends the wait for a call
Claude Code has not journaled yet.

Claude Code 2.1.332 journals ``/compact`` as a compact boundary, the summary, a caveat, a user
record with the command's tags and one with its output; ``!cmd`` as a user record
``<bash-input>`` and one with its output, which the model is then asked to answer. Before
the fix the command's record was read as the person's turn: after ``/compact`` the hook of
the model's first call, reading the journal before Claude Code had written the next typed
command, took the journal for caught up and decided on the phase before it; and
``!echo approve requirements`` approved the requirements.
"""

from __future__ import annotations

import pytest
from test_contract_sessions import DESIGN, FEATURE, REQUIREMENTS, TASKS, TICKED, skill, write
from test_contract_tui import Screen, cc_sdd, screen

__all__ = ["cc_sdd", "screen"]  # the fixtures, shared with the other terminal-UI tests
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

SOURCE = "def greet():\n    return 'hello'\n"


def compact(screen: Screen, instructions: str = "") -> None:
    """``/compact`` (with ``instructions``) at the idle prompt; waits until it is done."""
    screen.terminal.type(f"/compact {instructions}".strip())
    screen.terminal.wait_for("Compacted", 60)
    screen.terminal.wait_idle()


def test_compact_during_tasks_then_kiro_impl_and_its_first_source_write(screen: Screen) -> None:
    """The person approves the tasks, compacts, and types ``/kiro-impl``; the model's first
    call writes the source at once. The hook of that write may read the journal before
    Claude Code wrote the typed command: it waits for it, and the implementation phase
    decides (allowed)."""
    screen.seed(("requirements", "design"), requirements=True, design=True)
    screen.say(
        f"/kiro-spec-tasks {FEATURE}",
        write(screen.path("tasks.md"), TASKS),
        "Tasks written.",
        until="Tasks written.",
    )
    screen.say("approve tasks", "Tasks approved.", until="Tasks approved.")
    compact(screen)
    src = screen.project / "src" / "greet.py"
    screen.say(
        f"/kiro-impl {FEATURE}",
        write(str(src), SOURCE),
        write(screen.path("tasks.md"), TICKED),
        "All tasks are done.",
        until="All tasks are done.",
    )
    assert src.read_text() == SOURCE
    assert screen.entries() == [("typed", "tasks", None), ("typed", "impl", None)]


def test_compact_during_requirements_then_design_and_an_early_source_write(
    screen: Screen,
) -> None:
    """The person approves the requirements, compacts, and types ``/kiro-spec-design``; the
    model's first call writes a source file: refused in design as it is without the
    ``/compact`` (``contract_edit_scope``), whichever record the hook first reads."""
    screen.say(
        f"/kiro-spec-requirements {FEATURE}",
        write(screen.path("requirements.md"), REQUIREMENTS),
        "Requirements written.",
        until="Requirements written.",
    )
    screen.say("approve requirements", "Noted.", until="Noted.")
    compact(screen)
    extra = screen.project / "src" / "extra.py"
    screen.say(
        f"/kiro-spec-design {FEATURE}",
        write(str(extra), "EXTRA = 1\n"),
        write(screen.path("design.md"), DESIGN),
        "Design written.",
        until="Design written.",
    )
    assert not extra.exists()
    assert (screen.spec / "design.md").read_text() == DESIGN
    assert screen.entries() == [
        ("typed", "requirements", None),
        ("typed", "design", None),
        ("edit", "design", "contract_edit_scope"),
    ]


def test_a_shell_command_with_the_approval_words_does_not_approve(screen: Screen) -> None:
    """``!echo approve requirements``: Claude Code runs it, journals its input and output,
    and asks the model, whose Skill call for the design phase is refused
    (``contract_approval``): neither record is the person's turn."""
    screen.say(
        f"/kiro-spec-requirements {FEATURE}",
        write(screen.path("requirements.md"), REQUIREMENTS),
        "Requirements written.",
        until="Requirements written.",
    )
    screen.player.steps += [skill("kiro-spec-design"), "Waiting for your approval."]
    terminal = screen.terminal
    terminal.send("!")
    terminal.send("echo approve requirements")
    terminal.wait_for("echo approve requirements")
    terminal.press("Enter")
    terminal.wait_for("Waiting for your approval.", 60)
    terminal.wait_idle()
    assert screen.entries() == [
        ("typed", "requirements", None),
        ("entry", "design", "contract_approval"),
    ]
    assert not any(line.get("event") == "approval" for line in screen.log())


def test_compact_instructions_and_model_with_the_approval_words_do_not_approve(
    screen: Screen,
) -> None:
    """``/compact approve requirements`` (the words are instructions for the summary) and
    ``/model`` never approve: the typed ``/kiro-spec-design`` after them is refused."""
    screen.say(
        f"/kiro-spec-requirements {FEATURE}",
        write(screen.path("requirements.md"), REQUIREMENTS),
        "Requirements written.",
        until="Requirements written.",
    )
    compact(screen, "approve requirements")
    terminal = screen.terminal
    terminal.type("/model")
    terminal.wait_for("Select model", 20)
    terminal.press("Escape")
    terminal.wait_idle()
    shown = screen.refused(f"/kiro-spec-design {FEATURE}", "contract_approval")
    assert "phase requirements" in shown, shown
    assert screen.entries() == [
        ("typed", "requirements", None),
        ("typed", "design", "contract_approval"),
    ]
