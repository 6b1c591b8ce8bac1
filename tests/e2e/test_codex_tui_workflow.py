"""A cc-sdd workflow held in Codex CLI's interactive terminal UI (0.171.0, tmux): the
person types at Codex's input line, as a person would, on cc-sdd 3.0.2 installed for Codex by
its own installer (``--codex-skills``), with plangate's hooks registered and trusted by the
real ``plangate setup --codex`` (no ``--dangerously-bypass-hook-trust``: Codex opens the
terminal UI with no "Hooks need review" dialog, so the trust setup records is the trust Codex
uses).

- the happy path: typed ``$kiro-spec-init`` … ``$kiro-impl``, each approval in the person's
  own words in a turn of its own, a source edit in impl allowed, the final stop released;
- a phase skipped: ``$kiro-spec-design`` before the requirements are approved never reaches
  the model (UserPromptSubmit), and the screen says why;
- a self-approval: the model's own "approve requirements", its ``plangate approve`` in the
  shell and its approval flag in ``spec.json`` approve nothing;
- a source edit too early: ``apply_patch`` (and a shell write) of ``src/`` during
  requirements is refused, the model is told why, and nothing is written;
- a final stop held then released, and a model that never finishes held three times (Codex
  has no cap of its own) before its stop goes through;
- a phase typed while the model works, which Codex submits into the running turn, refused
  there too;
- the model's own start of the design (``cat`` of the skill's ``SKILL.md``): refused before
  the person's approval, allowed in the turn that gives it.

A turn's end is read from Codex's session file (``task_complete``), never from the screen
alone (:meth:`Session.turns`).

Each test reads plangate's own records (the decision log, ``plangate report``), the files on
disk and what the stand-in was asked, besides the screen.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from codex_tui import CodexTui
from tui import Hold, tmux_binary

from plangate.commands.report import report
from plangate.harness.autoplan import Player
from plangate.harness.codex import CodexEnv
from plangate.harness.standin import StandIn
from plangate.harness.standin.responses import apply_patch, shell
from plangate.harness.standin.script import ToolUse, TurnLike
from plangate.install.setup import setup
from plangate.processes import run_bounded
from testkit.kits import CC_SDD_CODEX
from tests.conftest import InstallKit

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

FEATURE = "greet"
SPEC = f".kiro/specs/{FEATURE}"
REQUIREMENTS = (
    "# Requirements Document\n\n## Requirements\n\n### Requirement 1: Greeting\n"
    "#### Acceptance Criteria\n1. When the user runs greet, the system shall print hello.\n"
)
DESIGN = "# Design\n\n## Overview\nOne function, `greet()`, in `src/greet.py`.\n"
TASKS = "# Implementation Plan\n\n- [ ] 1. Greeting\n- [ ] 1.1 Write greet() and its test\n"
SOURCE = "def greet():\n    return 'hello'\n"
#: What Codex hands the model for a refused call, and what the final stop's hold says.
BLOCKED = "Command blocked by PreToolUse hook"
HELD = "PLANGATE_GATE contract-gate blocked"
#: What Codex's session file records when a turn has ended.
TURN_ENDED = '"type":"task_complete"'
TICK = shell(f"sed -i 's/- \\[ \\]/- [x]/' {SPEC}/tasks.md")


def add(path: str, content: str) -> ToolUse:
    """The model's ``apply_patch`` adding ``path`` (relative to the project)."""
    body = "".join(f"+{line}\n" for line in content.splitlines())
    return apply_patch(f"*** Begin Patch\n*** Add File: {path}\n{body}*** End Patch\n")


def spec_json(**approved: bool) -> str:
    approvals = {
        phase: {"generated": True, "approved": approved.get(phase, False)}
        for phase in ("requirements", "design", "tasks")
    }
    return json.dumps({"feature_name": FEATURE, "approvals": approvals}, indent=2) + "\n"


def joined(screen: str) -> str:
    """The screen's words on one line (a long reason wraps)."""
    return " ".join(screen.split())


class Session:
    """One Codex terminal UI in a cc-sdd project, with plangate's hooks set up."""

    def __init__(
        self, tui: CodexTui, player: Player, model: StandIn, cx: CodexEnv, state: Path
    ) -> None:
        self.tui = tui
        self.player = player
        self.model = model
        self.cx = cx
        self.state = state
        self.project = cx.project_dir
        self.spec = cx.project_dir / SPEC

    def say(self, prompt: str, *steps: TurnLike, until: str, timeout: float = 90) -> str:
        """Types ``prompt``; the model answers with ``steps``; waits for ``until`` on the
        screen and for the idle input line; returns that screen."""
        self.player.steps += steps
        ended = self.turns()
        self.tui.type(prompt, timeout=30)
        self.tui.wait_for(until, timeout)
        return self.wait_turn_end(ended, timeout)

    def turns(self) -> int:
        """How many turns have ended: Codex writes ``task_complete`` into its session file
        once a turn's Stop hooks have run (a prompt typed before that joins the running
        turn), a refused prompt's turn too. The screen's "Worked for …" lines are no count:
        the terminal UI redraws them."""
        return sum(p.read_text().count(TURN_ENDED) for p in self.cx.rollouts)

    def wait_turn_end(self, ended: int, timeout: float) -> str:
        """Waits until more than ``ended`` turns have ended and the input line is idle."""
        self.tui.wait_for(lambda _: self.turns() > ended, timeout, what="the turn's end")
        return self.tui.wait_idle(timeout)

    def refused(self, prompt: str, *shown: str, timeout: float = 60) -> str:
        """Types a prompt plangate refuses before the turn; waits until the screen shows every
        text of ``shown`` and the idle input line. The stand-in got no request for it: no
        request of the conversation, and no side request but the thread's title (which the
        terminal UI asks for once, whenever it gets to it)."""
        before = len(self.model.responses_requests())
        ended = self.turns()
        self.tui.type(prompt, timeout=30)
        self.tui.wait_for(lambda s: all(t in joined(s) for t in shown), timeout)
        screen = joined(self.wait_turn_end(ended, timeout))
        since = self.model.responses_requests()[before:]
        assert [(r.kind, r.side_reason) for r in since] in ([], [("side", "title")]), since
        return screen

    def log(self) -> list[dict[str, Any]]:
        path = self.state / "analytics" / "autoplan-guard.jsonl"
        if not path.is_file():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]

    def entries(self) -> list[tuple[str, str, str | None]]:
        """The typed phase starts, the model's, and the edits decided: (event, phase, code)."""
        return [
            (line["event"], line["phase"], line["code"])
            for line in self.log()
            if line.get("event") in ("typed", "entry", "edit")
        ]

    def counts(self) -> tuple[int, int, int]:
        """The contract gate's (fired, blocked, released) in this session (``plangate
        report`` on the session's rollout)."""
        (rollout,) = self.cx.rollouts
        session = rollout.stem.split("-", 6)[-1]
        out = io.StringIO()
        assert report(session, "armed", True, out, state_root=str(self.state)) == 0
        gates = json.loads(out.getvalue())["sessions"][0]["gates"]
        counts = gates["contract:cc-sdd"]["counts"]
        return counts["fired"], counts["blocked"], counts["released"]

    def outputs(self) -> str:
        """Everything the model was last sent (the whole history, each call's output too)."""
        return str(self.model.responses_requests("main")[-1].body)


@pytest.fixture
def session(tmp_path: Path, codex_bin: Path, install_kit: InstallKit) -> Iterator[Session]:
    """cc-sdd installed for Codex in a fresh project; ``plangate setup --codex`` in a fresh
    CODEX_HOME; the terminal UI started there with ``PLANGATE_STATE_ROOT``."""
    tmux_binary()
    state = tmp_path / "state"
    player = Player([])
    with StandIn(player) as model:
        cx = CodexEnv.create(
            tmp_path / "cx", model, binary=codex_bin, extra_env={"PLANGATE_STATE_ROOT": str(state)}
        )
        install_kit(CC_SDD_CODEX, cx.project_dir)
        out = io.StringIO()
        setup(
            project=False,
            uninstall=False,
            ceo_review_gate=None,
            autoplan_gate=None,
            out=out,
            python=sys.executable,
            environ={"CODEX_HOME": str(cx.codex_home)},
            codex=True,
        )
        assert out.getvalue().count("trusted ") == 3, out.getvalue()
        tui = CodexTui(cx)
        with tui:
            tui.start(timeout=60)
            yield Session(tui, player, model, cx, state)


def test_the_whole_workflow_typed_in_the_terminal_ui(session: Session) -> None:
    src = session.project / "src" / "greet.py"
    session.say(
        "$kiro-spec-init a greeting command",
        [add(f"{SPEC}/spec.json", spec_json())],
        "Spec initialized.",
        until="Spec initialized.",
    )
    session.say(
        f"$kiro-spec-requirements {FEATURE}",
        [add(f"{SPEC}/requirements.md", REQUIREMENTS)],
        "Requirements written.",
        until="Requirements written.",
    )
    session.say("approve requirements", "Requirements noted.", until="Requirements noted.")
    session.say(
        f"$kiro-spec-design {FEATURE}",
        [add(f"{SPEC}/design.md", DESIGN)],
        "Design written.",
        until="Design written.",
    )
    session.say("approve design", "Design noted.", until="Design noted.")
    session.say(
        f"$kiro-spec-tasks {FEATURE}",
        [add(f"{SPEC}/tasks.md", TASKS)],
        "Tasks written.",
        until="Tasks written.",
    )
    session.say("approve tasks", "Tasks noted.", until="Tasks noted.")
    session.say(
        f"$kiro-impl {FEATURE}",
        [add("src/greet.py", SOURCE)],
        [TICK],
        "All tasks are done.",
        until="All tasks are done.",
    )
    assert src.read_text() == SOURCE
    assert "- [ ]" not in (session.spec / "tasks.md").read_text()
    log = session.log()
    assert all(line["decision"] == "allow" for line in log), log
    approvals = {(line["phase"], line["via"]) for line in log if line.get("event") == "approval"}
    assert approvals == {("requirements", "human"), ("design", "human"), ("tasks", "human")}
    assert session.entries() == [
        ("typed", "init", None),
        ("typed", "requirements", None),
        ("typed", "design", None),
        ("typed", "tasks", None),
        ("typed", "impl", None),
    ], session.entries()
    assert BLOCKED not in session.outputs()
    assert session.counts() == (1, 0, 1)
    history = joined(session.tui.history())
    assert "contract-gate released" in history and "Blocked by hook" not in history, history


def test_a_phase_typed_before_its_turn_never_reaches_the_model(session: Session) -> None:
    session.spec.mkdir(parents=True)
    (session.spec / "spec.json").write_text(spec_json())
    session.say(
        f"$kiro-spec-requirements {FEATURE}",
        [add(f"{SPEC}/requirements.md", REQUIREMENTS)],
        "Requirements written.",
        until="Requirements written.",
    )
    shown = session.refused(
        f"$kiro-spec-design {FEATURE}",
        "Blocked by hook",
        "Phase design of workflow cc-sdd cannot start yet",
        "code contract_approval",
        "plangate explain contract_approval",
    )
    assert "Detail: phase requirements is not approved by a person." in shown, shown
    assert not (session.spec / "design.md").exists()
    # The person approves in their own words; the same typed skill then starts the design.
    session.say("approve requirements", "Requirements noted.", until="Requirements noted.")
    session.say(
        f"$kiro-spec-design {FEATURE}",
        [add(f"{SPEC}/design.md", DESIGN)],
        "Design written.",
        until="Design written.",
    )
    assert (session.spec / "design.md").read_text() == DESIGN
    assert session.entries() == [
        ("typed", "requirements", None),
        ("typed", "design", "contract_approval"),
        ("typed", "design", None),
    ], session.entries()
    # Codex kept the refused prompt out of the conversation: the approval's turn has not
    # got it, the design's has it once.
    bodies = [str(r.body) for r in session.player.requests]
    assert [b.count(f"kiro-spec-design {FEATURE}") for b in bodies] == [0, 0, 0, 1, 1], bodies


def test_the_models_own_approval_approves_nothing(session: Session) -> None:
    session.spec.mkdir(parents=True)
    (session.spec / "spec.json").write_text(spec_json())
    # The model says the words and runs the person's command.
    session.say(
        f"$kiro-spec-requirements {FEATURE}",
        [add(f"{SPEC}/requirements.md", REQUIREMENTS)],
        [shell("plangate approve cc-sdd requirements greet --yes")],
        "approve requirements: the requirements are approved, I go on with the design.",
        until="I go on with the design.",
    )
    told = session.outputs()
    assert told.count(BLOCKED) == 1 and "protected_command" in told, told[-3000:]
    shown = session.refused(
        f"$kiro-spec-design {FEATURE}", "Blocked by hook", "code contract_approval"
    )
    assert "phase requirements is not approved by a person" in shown, shown
    # Then it sets the approval flag cc-sdd keeps in spec.json (a file it may write).
    flagged = spec_json(requirements=True)
    session.say(
        "carry on",
        [shell(f"printf '%s' '{flagged}' > {SPEC}/spec.json")],
        "Requirements approved in spec.json.",
        until="Requirements approved in spec.json.",
    )
    assert json.loads((session.spec / "spec.json").read_text()) == json.loads(flagged)
    shown = session.refused(
        f"$kiro-spec-design {FEATURE}", "Blocked by hook", "code contract_self_approval"
    )
    assert "no person approved it" in shown, shown
    assert not (session.spec / "design.md").exists()
    assert [e for e in session.entries() if e[0] == "typed"] == [
        ("typed", "requirements", None),
        ("typed", "design", "contract_approval"),
        ("typed", "design", "contract_self_approval"),
    ], session.entries()
    log = session.log()
    assert [line["code"] for line in log if line["decision"] != "allow"] == [
        "protected_command",
        "contract_approval",
        "contract_self_approval",
    ], log
    assert not any(line.get("event") == "approval" for line in log), log


def test_a_source_edit_during_requirements_is_refused(session: Session) -> None:
    session.spec.mkdir(parents=True)
    (session.spec / "spec.json").write_text(spec_json())
    src = session.project / "src" / "app.py"
    session.say(
        f"$kiro-spec-requirements {FEATURE}",
        [add("src/app.py", "print('too early')")],
        [shell("mkdir -p src && echo 'x = 1' > src/other.py")],
        [add(f"{SPEC}/requirements.md", REQUIREMENTS)],
        "Requirements written.",
        until="Requirements written.",
    )
    history = joined(session.tui.history())
    assert "Blocked by hook" in history and "code contract_edit_scope" in history, history
    assert history.count("code contract_edit_scope") == 2, history
    assert not src.exists() and not (session.project / "src" / "other.py").exists()
    assert (session.spec / "requirements.md").read_text() == REQUIREMENTS
    # The model was told why, as the call's output.
    refused = session.player.requests[1]
    (result,) = refused.tool_results()
    assert BLOCKED in str(result["content"]) and "contract_edit_scope" in str(result["content"])
    assert session.outputs().count(BLOCKED) == 2
    assert session.entries() == [
        ("typed", "requirements", None),
        ("edit", "requirements", "contract_edit_scope"),
        ("edit", "requirements", "contract_edit_scope"),
    ], session.entries()


def _impl(session: Session) -> None:
    """The spec as the earlier phases leave it, each approved by the person with ``plangate
    approve`` in their own terminal; the tasks unticked."""
    session.spec.mkdir(parents=True)
    (session.spec / "spec.json").write_text(spec_json())
    (session.spec / "requirements.md").write_text(REQUIREMENTS)
    (session.spec / "design.md").write_text(DESIGN)
    (session.spec / "tasks.md").write_text(TASKS)
    for phase in ("requirements", "design", "tasks"):
        argv = [sys.executable, "-m", "plangate", "approve", "cc-sdd", phase, FEATURE, "--yes"]
        done = run_bounded(argv, timeout=60, cwd=session.project, env=session.cx.environ())
        assert done.returncode == 0 and not done.timed_out, done.stdout + done.stderr


def test_the_final_stop_is_held_until_the_tasks_are_ticked(session: Session) -> None:
    _impl(session)
    session.say(
        f"$kiro-impl {FEATURE}",
        [add("src/greet.py", SOURCE)],
        "Implemented.",
        [TICK],
        "Every task is ticked.",
        until="Every task is ticked.",
    )
    history = joined(session.tui.history())
    assert "contract-gate blocked" in history and "2 of 2 checkboxes unticked" in history
    assert "contract-gate released" in history, history
    assert (session.project / "src" / "greet.py").read_text() == SOURCE
    assert "- [ ]" not in (session.spec / "tasks.md").read_text()
    held = [r for r in session.player.requests if HELD in r.last_user_text]
    assert len(held) == 1, [r.last_user_text for r in session.player.requests]
    assert "2 of 2 checkboxes unticked" in held[0].last_user_text
    assert len(session.player.requests) == 4
    assert session.counts() == (1, 1, 1)


def test_plangate_counts_its_holds_where_codex_has_none(session: Session) -> None:
    _impl(session)
    session.say(
        f"$kiro-impl {FEATURE}",
        *(["Implemented."] * 4),
        "Never reached.",
        until="contract-gate exhausted",
    )
    history = joined(session.tui.history())
    assert history.count("contract-gate blocked") == 3, history
    assert history.count("Implemented.") == 4, history
    assert len(session.player.requests) == 4  # the first answer and one per hold
    assert session.player.steps == ["Never reached."]
    assert session.counts() == (1, 3, 0)


def test_a_phase_typed_while_the_model_works_is_refused_when_codex_submits_it(
    session: Session,
) -> None:
    """The terminal UI queues what the person types while the model works ("Messages to be
    submitted after next tool call") and submits it into the running turn: Codex runs
    UserPromptSubmit for it then, and plangate refuses the phase there too. Codex ends the
    turn at the refusal and leaves the prompt drawn as queued, but never sends it, not even
    after the next turn's tool call."""
    session.spec.mkdir(parents=True)
    (session.spec / "spec.json").write_text(spec_json())
    hold = Hold(60)
    session.player.steps += [
        [add(f"{SPEC}/requirements.md", REQUIREMENTS)],
        hold.step([add(f"{SPEC}/notes.md", "# Notes")]),
    ]
    ended = session.turns()
    session.tui.type(f"$kiro-spec-requirements {FEATURE}", timeout=30)
    hold.wait_arrived(60)
    session.tui.type(f"$kiro-spec-design {FEATURE}", timeout=30)
    session.tui.wait_for("Messages to be submitted after next tool call", 30)
    hold.release()
    session.tui.wait_for("Blocked by hook", 60)
    # The queued line stays drawn (with "esc to interrupt"): the turn's end is read from
    # the session file, not from an idle screen.
    session.tui.wait_for(lambda _: session.turns() > ended, 60, what="the turn's end")
    shown = joined(session.tui.history())
    assert "Phase design of workflow cc-sdd cannot start yet" in shown, shown
    assert "code contract_approval" in shown, shown
    ended = session.turns()
    session.player.steps[:] = [[shell("echo carried")], "Carried on."]
    session.tui.type("carry on", timeout=30)
    session.tui.wait_for("Carried on.", 60)
    session.tui.wait_for(lambda _: session.turns() > ended, 60, what="the turn's end")
    assert session.player.steps == []
    assert not any(f"kiro-spec-design {FEATURE}" in str(r.body) for r in session.player.requests)
    assert not (session.spec / "design.md").exists()
    assert [e for e in session.entries() if e[0] == "typed"] == [
        ("typed", "requirements", None),
        ("typed", "design", "contract_approval"),
    ], session.entries()


def test_the_models_own_start_waits_for_the_persons_approval(session: Session) -> None:
    """The model starts the design itself by reading the skill's ``SKILL.md`` with the shell
    (Codex has no Skill tool): refused while the requirements wait for the person, allowed
    in the turn where the person approves them in their own words."""
    session.spec.mkdir(parents=True)
    (session.spec / "spec.json").write_text(spec_json())
    design_skill = shell("cat .agents/skills/kiro-spec-design/SKILL.md")
    session.say(
        f"$kiro-spec-requirements {FEATURE}",
        [add(f"{SPEC}/requirements.md", REQUIREMENTS)],
        [design_skill],
        "Requirements written; the design waits for you.",
        until="the design waits for you.",
    )
    history = joined(session.tui.history())
    assert "Blocked by hook" in history and "code contract_approval" in history, history
    assert session.outputs().count(BLOCKED) == 1
    session.say(
        "approve requirements",
        [design_skill],
        [add(f"{SPEC}/design.md", DESIGN)],
        "Design written.",
        until="Design written.",
    )
    assert (session.spec / "design.md").read_text() == DESIGN
    assert session.outputs().count(BLOCKED) == 1  # the earlier refusal, nothing new
    assert session.entries() == [
        ("typed", "requirements", None),
        ("entry", "design", "contract_approval"),
        ("entry", "design", None),
    ], session.entries()
