"""The guard and the skill gates in the real Claude Code terminal UI, driven in tmux.

plangate is set up in a fresh HOME (skills installed, hooks in ~/.claude/settings.json) and the
interactive CLI runs in a private tmux server (:mod:`tui`); the stand-in plays the model. Each
test does what a person does at the keyboard (Esc before a reply, a rewind, "Summarize from
here", /clear, a permission prompt answered No, --continue and --resume, input typed while
the model works) and then checks the guard's decision for the phase entry that follows.

The conversation that counts is the one Claude Code sends to the model: the chain it walks up
from the newest record, with the other blocks of a parallel reply and their results put back.
An abandoned prompt (Esc before any reply, a rewound prompt) is not part of it, so the CEO
entry after one is allowed, and a skip to the Eng phase after "Summarize from here" is
refused for the skip (``phase_order``), as it is without the rewind. After an end of turn in
the middle of the pipeline, nothing the person types ("continue", `/compact` then
"continue", a `!` command) lets the next phase in without the report.

Set PLANGATE_TUI_RECORD=DIR to keep each session's journals, the decision log, the model
requests and a SHAPES.md in DIR/<flow>/.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from tui import RESTORE, SUMMARIZE_FROM, Hold, Tui, TuiPlayer, records, tmux_binary
from tui_record import save_recording

from plangate.harness.autoplan import AutoplanProject, decisions
from plangate.harness.claude import ClaudeEnv
from plangate.harness.standin import StandIn, text, tool_use

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

MakeEnv = Callable[[StandIn], ClaudeEnv]
TOOLS = "Read,Bash,Agent,Edit,Write"
ARGS = ("--permission-mode", "default", "--allowedTools", TOOLS)
FIRST = "first prompt alpha"
SECOND = "second prompt beta"
AUTOPLAN = "/autoplan plan.md"
RECORD_ENV = "PLANGATE_TUI_RECORD"


@dataclass
class Session:
    """One project with plangate set up, its stand-in model and its terminal."""

    flow: str
    autoplan: AutoplanProject
    player: TuiPlayer
    model: StandIn
    tui: Tui
    holds: list[Hold] = field(default_factory=list)

    def hold(self) -> Hold:
        held = Hold()
        self.holds.append(held)
        return held

    def decisions(self) -> list[tuple[str, str | None]]:
        return [(d["decision"], d["code"]) for d in decisions(self.autoplan.state_root)]

    def ceo_entry(self, done: str = "CEO phase entered.") -> None:
        """The model's part of entering Phase 1: init, the Read of the CEO driver, a text."""
        self.player.steps += [self.autoplan.init(), self.autoplan.read_driver("ceo"), done]

    def eng_skip(self, done: str = "Eng phase entered.") -> None:
        """The model skips Phase 1: init, then the Read of the Eng driver."""
        self.player.steps += [self.autoplan.init(), self.autoplan.read_driver("eng"), done]

    def ask(self, prompt: str, reply: str) -> None:
        """Types a prompt the model answers with ``reply``; waits for the answer."""
        self.player.steps.append(reply)
        self.tui.type(prompt)
        self.tui.wait_for(reply)
        self.tui.wait_idle()

    def autoplan_turn(self, done: str) -> None:
        """Types /autoplan (the model's steps are already queued) and waits for ``done``."""
        self.tui.clear_input()
        self.tui.type(AUTOPLAN)
        self.tui.wait_for(done, 30)
        self.tui.wait_idle()


@pytest.fixture
def session(make_env: MakeEnv, request: pytest.FixtureRequest) -> Iterator[Callable[..., Session]]:
    """Makes sessions: a stand-in, a project with `plangate setup ARGS` in a fresh HOME, and
    the CLI started in tmux. Every session is ended afterwards, a failing test included."""
    tmux_binary()  # no tmux: fail here, before anything is started
    made: list[Session] = []
    models: list[StandIn] = []

    def make(flow: str, *setup: str, args: tuple[str, ...] = ARGS) -> Session:
        player = TuiPlayer()
        model = StandIn(player)
        models.append(model)
        model.start()
        autoplan = AutoplanProject(make_env(model))
        autoplan.setup(*setup)
        tui = Tui(autoplan.env, extra_env={"PLANGATE_STATE_ROOT": str(autoplan.state_root)})
        made.append(Session(flow, autoplan, player, model, tui))
        tui.start(*args)
        return made[-1]

    yield make
    for s in made:
        for held in s.holds:
            held.release()
        try:
            if os.environ.get(RECORD_ENV):
                if not s.tui.pane_dead():
                    with contextlib.suppress(AssertionError):
                        s.tui.exit(timeout=10)  # the CLI flushes its journal on the way out
                doc = (request.node.function.__doc__ or "").strip()
                save_recording(
                    Path(os.environ[RECORD_ENV]) / s.flow,
                    f"{s.flow} ({request.node.name})",
                    s.tui,
                    state_root=s.autoplan.state_root,
                    requests=s.player.requests,
                    notes=[doc] if doc else [],
                )
        finally:
            s.tui.close()
    for model in models:
        model.stop()


def _the_entry_was(s: Session, decision: str, code: str | None) -> None:
    logged = s.decisions()
    assert logged, "the guard logged no decision for the phase entry"
    assert logged[-1] == (decision, code), (
        f"the guard decided {logged[-1]} for the phase entry, expected {(decision, code)}; "
        f"all decisions: {logged}"
    )


# --- 1-6: the prompt flows ----------------------------------------------------------------


def test_plain_ceo_entry_is_allowed(session: Callable[..., Session]) -> None:
    """`/autoplan plan.md` as the first prompt; the model runs init and Reads the CEO driver."""
    s = session("plain")
    s.ceo_entry()
    s.autoplan_turn("CEO phase entered.")
    _the_entry_was(s, "allow", None)


def test_esc_on_the_first_prompt_before_any_reply(session: Callable[..., Session]) -> None:
    """A first prompt, the model held; Esc before any reply (the CLI puts the prompt back in
    the input box); the box cleared, then `/autoplan plan.md` and the CEO entry."""
    s = session("esc-first")
    held = s.hold()
    s.player.steps.append(held.step("A reply the CLI never sees."))
    s.tui.type(FIRST)
    held.wait_arrived()
    s.tui.interrupt()
    held.release()
    s.ceo_entry()
    s.autoplan_turn("CEO phase entered.")
    _the_entry_was(s, "allow", None)


def test_rewind_to_the_first_prompt_and_edit_it(session: Callable[..., Session]) -> None:
    """A first prompt answered; double Esc, the first prompt, "Restore conversation"; the
    restored text replaced by `/autoplan plan.md` (the edited first prompt); the CEO entry."""
    s = session("rewind-edit-first")
    s.ask(FIRST, "Answer one.")
    s.tui.rewind(FIRST, RESTORE)
    s.ceo_entry()
    s.autoplan_turn("CEO phase entered.")
    _the_entry_was(s, "allow", None)


def test_esc_resend_then_continue(session: Callable[..., Session]) -> None:
    """A first prompt, the model held, Esc; the restored prompt sent again (Enter) and
    answered; /exit; `claude --continue` in the same pane; `/autoplan plan.md`, CEO entry."""
    s = session("esc-resend-continue")
    held = s.hold()
    s.player.steps += [held.step("A reply the CLI never sees."), "Answer one."]
    s.tui.type(FIRST)
    held.wait_arrived()
    s.tui.interrupt()
    held.release()
    assert s.tui.input_text() == FIRST, "the interrupted prompt is back in the input box"
    s.tui.press("Enter")
    s.tui.wait_for("Answer one.")
    s.tui.exit()
    s.tui.start("--continue", *ARGS)
    s.ceo_entry("CEO phase entered after continue.")
    s.autoplan_turn("CEO phase entered after continue.")
    _the_entry_was(s, "allow", None)


@pytest.mark.parametrize("later", [False, True], ids=["first", "second"])
def test_summarize_from_a_prompt_then_skip_phase_1(
    session: Callable[..., Session], later: bool
) -> None:
    """A first prompt answered (and a second, for the later prompt); double Esc, that prompt,
    "Summarize from here"; then `/autoplan plan.md` where the model skips Phase 1 and Reads
    the Eng driver. On the first prompt Claude Code writes a boundary with neither parent nor
    logical parent; on the second, one whose logical parent is the end of turn one."""
    s = session("summarize-later" if later else "summarize-first")
    s.ask(FIRST, "Answer one.")
    if later:
        s.ask(SECOND, "Answer two.")
    s.tui.rewind(SECOND if later else FIRST, SUMMARIZE_FROM)
    assert s.player.summaries, "the summary request did not reach the model"
    s.eng_skip()
    s.autoplan_turn("Eng phase entered.")
    _the_entry_was(s, "deny", "phase_order")


def test_skipping_phase_1_without_a_rewind(session: Callable[..., Session]) -> None:
    """The same skip as summarize-first, in a plain session: `/autoplan plan.md`, init, then a
    Read of the Eng driver (the baseline for the summarize flows)."""
    s = session("skip-plain")
    s.eng_skip()
    s.autoplan_turn("Eng phase entered.")
    _the_entry_was(s, "deny", "phase_order")


def test_rewind_to_the_second_prompt_and_edit_it(session: Callable[..., Session]) -> None:
    """Two prompts answered; rewind to the second, "Restore conversation"; the restored text
    replaced by `/autoplan plan.md`; the CEO entry."""
    s = session("rewind-later")
    s.ask(FIRST, "Answer one.")
    s.ask(SECOND, "Answer two.")
    s.tui.rewind(SECOND, RESTORE)
    s.ceo_entry()
    s.autoplan_turn("CEO phase entered.")
    _the_entry_was(s, "allow", None)


def test_esc_on_the_second_prompt_before_any_reply(session: Callable[..., Session]) -> None:
    """A first prompt answered; a second prompt, the model held, Esc before any reply; the box
    cleared, then `/autoplan plan.md` and the CEO entry."""
    s = session("esc-later")
    s.ask(FIRST, "Answer one.")
    held = s.hold()
    s.player.steps.append(held.step("A reply the CLI never sees."))
    s.tui.type(SECOND)
    held.wait_arrived()
    s.tui.interrupt()
    held.release()
    s.ceo_entry()
    s.autoplan_turn("CEO phase entered.")
    _the_entry_was(s, "allow", None)


# --- 7: /clear, Esc in a tool call, queued input, --resume/--continue, permission No ------


def test_clear_then_autoplan(session: Callable[..., Session]) -> None:
    """A first prompt answered; /clear (a new journal file); `/autoplan plan.md`, CEO entry."""
    s = session("clear")
    s.ask(FIRST, "Answer one.")
    first = s.tui.journal()
    s.tui.type("/clear")
    s.tui.wait_idle()
    s.tui.wait_journal(lambda _records: True)
    s.ceo_entry()
    s.autoplan_turn("CEO phase entered.")
    assert s.tui.journal() != first, "/clear started no new journal"
    _the_entry_was(s, "allow", None)


def test_esc_in_the_middle_of_a_tool_call(session: Callable[..., Session]) -> None:
    """A first prompt; the model runs a slow Bash command; Esc while it runs; then
    `/autoplan plan.md` and the CEO entry."""
    s = session("esc-tool")
    slow = "python3 -c 'import time; time.sleep(30)'"  # a bare `sleep 30` is refused by the CLI
    s.player.steps.append(tool_use("Bash", command=slow, description="Slow check"))
    s.tui.type("run the slow check")
    s.tui.wait_process("time.sleep(30)")
    s.tui.interrupt()
    s.tui.wait_for("Interrupted")
    s.ceo_entry()
    s.autoplan_turn("CEO phase entered.")
    _the_entry_was(s, "allow", None)


def test_input_typed_while_the_model_works(session: Callable[..., Session]) -> None:
    """`/autoplan plan.md`; init runs; while the model is held before the CEO entry, a note
    is typed and queued; released, the model Reads the CEO driver."""
    s = session("queued")
    held = s.hold()
    s.player.steps += [
        s.autoplan.init(),
        held.step(s.autoplan.read_driver("ceo")),
        "CEO phase entered.",
        "Answer to the queued note.",
    ]
    s.tui.type(AUTOPLAN)
    held.wait_arrived()
    s.tui.wait_working()
    s.tui.type("queued note: look at the notes too")
    s.tui.wait_for("Queued")
    held.release()
    s.tui.wait_for("CEO phase entered.", 30)
    s.tui.wait_idle()
    _the_entry_was(s, "allow", None)


def test_continue_then_resume_then_autoplan(session: Callable[..., Session]) -> None:
    """A first prompt answered, /exit; `claude --continue`, a second prompt answered, /exit;
    `claude --resume <session id>`; `/autoplan plan.md` and the CEO entry."""
    s = session("continue-resume")
    s.ask(FIRST, "Answer one.")
    session_id = s.tui.session_id()
    s.tui.exit()
    s.tui.start("--continue", *ARGS)
    s.ask(SECOND, "Answer two after continue.")
    s.tui.exit()
    s.tui.start("--resume", session_id, *ARGS)
    s.ceo_entry("CEO phase entered after resume.")
    s.autoplan_turn("CEO phase entered after resume.")
    assert s.tui.session_id() == session_id
    _the_entry_was(s, "allow", None)


def test_permission_prompt_answered_no(session: Callable[..., Session]) -> None:
    """Default permission mode without Write allowed: the model Writes a file, the permission
    prompt is answered "No"; then `/autoplan plan.md` and the CEO entry."""
    s = session(
        "permission-no", args=("--permission-mode", "default", "--allowedTools", "Read,Bash,Agent")
    )
    target = s.autoplan.project / "out.txt"
    s.player.steps.append(tool_use("Write", file_path=str(target), content="hi\n"))
    s.tui.type("write the out file")
    s.tui.wait_for("Do you want to create out.txt?")
    s.tui.answer_permission("No")
    s.tui.wait_for("Rejected")
    s.tui.wait_idle()
    assert not target.exists()
    s.ceo_entry()
    s.autoplan_turn("CEO phase entered.")
    _the_entry_was(s, "allow", None)


# --- 8: parallel tool calls -------------------------------------------------------------


def test_parallel_tool_calls_before_the_entry(session: Callable[..., Session]) -> None:
    """`/autoplan plan.md`; init; one reply with a text and two Reads; one reply with a Read,
    a slow Bash and a Read; the CEO entry; then /exit, `claude --continue` and one prompt, so
    that the model request shows the conversation Claude Code rebuilt from the journal."""
    s = session("parallel")
    notes = str(s.autoplan.project / "notes.txt")
    plan = str(s.autoplan.plan)
    slow = "python3 -c 'import time; time.sleep(1)'"
    s.player.steps += [
        s.autoplan.init(),
        [
            text("Reading both."),
            tool_use("Read", file_path=plan),
            tool_use("Read", file_path=notes),
        ],
        [
            tool_use("Read", file_path=notes),
            tool_use("Bash", command=slow, description="Slow"),
            tool_use("Read", file_path=plan),
        ],
        s.autoplan.read_driver("ceo"),
        "CEO phase entered.",
    ]
    s.autoplan_turn("CEO phase entered.")
    _the_entry_was(s, "allow", None)
    s.tui.exit()
    s.tui.start("--continue", *ARGS)
    s.ask("after continue", "Answer after continue.")
    rebuilt = s.player.requests[-1]
    calls = [
        b["id"]
        for m in rebuilt.messages
        if m.get("role") == "assistant" and isinstance(m.get("content"), list)
        for b in m["content"]
        if b.get("type") == "tool_use"
    ]
    results = [
        b["tool_use_id"]
        for m in rebuilt.messages
        if m.get("role") == "user" and isinstance(m.get("content"), list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    assert len(calls) == 7 and sorted(calls) == sorted(results), (calls, results)


# --- 9: an end of turn mid-pipeline, then the person goes on ------------------------------

CEO_CLOSED = "The CEO review is closed; its report comes next."
SCOPE_NONE = "\n\nScope: none\n"


def _ceo_closed_then_the_turn_ends(s: Session) -> None:
    """A plan whose scope is CEO, Eng, Tasks; `/autoplan plan.md`; the model runs the CEO
    phase up to its close Read and ends its turn without publishing the report."""
    plan = s.autoplan.plan.read_text(encoding="utf-8")
    s.autoplan.plan.write_text(plan.replace(" Scope: design\n", SCOPE_NONE), encoding="utf-8")
    a = s.autoplan
    s.player.steps += [
        a.init(),
        a.read_driver("ceo"),
        a.checkpoint("ceo"),
        a.dispatch("ceo"),
        a.prepare_close("ceo"),
        a.read_close("ceo"),
        CEO_CLOSED,
    ]
    s.autoplan_turn(CEO_CLOSED)
    assert s.decisions()[-1] == ("allow", None), s.decisions()


def _continue_into_eng(s: Session) -> None:
    """ "continue" typed; the model Reads the Eng driver without the CEO report."""
    s.player.steps += [s.autoplan.read_driver("eng"), "Eng phase entered."]
    s.tui.type("continue")
    s.tui.wait_for("Eng phase entered.", 30)
    s.tui.wait_idle()


def test_end_of_turn_then_continue(session: Callable[..., Session]) -> None:
    """The CEO phase closed, the turn ended without the report; "continue" typed; the model
    Reads the Eng driver: refused for the missing report (gstack would have let it in)."""
    s = session("continue")
    _ceo_closed_then_the_turn_ends(s)
    _continue_into_eng(s)
    _the_entry_was(s, "deny", "publication_missing")


def test_end_of_turn_then_compact_then_continue(session: Callable[..., Session]) -> None:
    """The same, with `/compact` between the end of turn and "continue"."""
    s = session("compact-continue")
    _ceo_closed_then_the_turn_ends(s)
    s.tui.type("/compact")
    s.tui.wait_for("Compacted", 30)
    s.tui.wait_idle()
    _continue_into_eng(s)
    _the_entry_was(s, "deny", "publication_missing")


def test_end_of_turn_then_a_bash_mode_command(session: Callable[..., Session]) -> None:
    """The same, with a `!` bash-mode command instead: Claude Code runs it and sends it to
    the model, which answers by Reading the Eng driver."""
    s = session("bang")
    _ceo_closed_then_the_turn_ends(s)
    s.player.steps += [s.autoplan.read_driver("eng"), "Eng phase entered."]
    s.tui.send("!")
    s.tui.send("echo plangate-bang-$((6*7))")
    s.tui.wait_for("plangate-bang-$((6*7))")
    s.tui.press("Enter")
    s.tui.wait_for("plangate-bang-42", 20)
    s.tui.wait_for("Eng phase entered.", 30)
    s.tui.wait_idle()
    assert any("<bash-input>" in json.dumps(r) for r in records(s.tui.journal()))
    _the_entry_was(s, "deny", "publication_missing")


# --- the skill gates ----------------------------------------------------------------------

RANKED = """cat >> {plan} <<'EOF'

## Top risks

1. The index can go stale when a note is edited outside the app.
2. The search page has no way to page through many results.
EOF"""


def _gate_run(s: Session) -> dict[str, Any]:
    session_id = s.tui.session_id()
    path = s.autoplan.state_root / "skill-gates" / session_id / "record.json"
    assert path.is_file(), f"no skill-gate record at {path}"
    record = json.loads(path.read_text(encoding="utf-8"))
    runs = record["gates"]["ceo_review_gate"]["runs"]
    assert len(runs) == 1, runs
    (run,) = runs.values()
    assert isinstance(run, dict)
    return run


def test_ceo_review_gate_holds_a_final_stop_not_a_question(
    session: Callable[..., Session],
) -> None:
    """With the CEO-review gate on: a typed `/plan-ceo-review plan.md` whose turn ends asking
    the user a question is not held; the next turn's final stop without ranked top risks is
    held; after the risks are written, the stop goes through."""
    s = session("ceo-review-gate", "--ceo-review-gate")
    s.player.steps.append("I see two risks in the plan. Which one should I rank first?")
    s.tui.type("/plan-ceo-review plan.md")
    s.tui.wait_for("Which one should I rank first?")
    s.tui.wait_idle()
    waiting = _gate_run(s)
    assert waiting["blocked"] == 0 and waiting.get("waiting") == "question", waiting
    s.player.steps += [
        "The review is done.",  # held: no ranked top risks anywhere
        tool_use("Bash", command=RANKED.format(plan=s.autoplan.plan), description="Add risks"),
        "The top risks are ranked in plan.md.",
    ]
    s.tui.type("rank them yourself")
    s.tui.wait_for("The top risks are ranked in plan.md.", 30)
    s.tui.wait_idle()
    run = _gate_run(s)
    assert run["blocked"] == 1 and run["fired_at"] and run["released_at"], run
    held = [r for r in s.player.requests if "blocked" in r.last_user_text]
    assert held, "the block reason did not reach the model"
