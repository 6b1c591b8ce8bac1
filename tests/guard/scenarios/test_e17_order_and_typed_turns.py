"""E.17 (plangate's own) Phases in the bound scope's order, and typed turns that disarm nothing.

Two holes found in the real terminal UI with a plan whose scope is CEO, Eng, Tasks: a Read of
the Tasks driver right after the CEO report passed although Eng was never entered, and a
"continue" typed after the model ended its turn mid-pipeline let the next phase in without
its report. A phase beyond the furthest one reached must be the one due next; a typed turn
does not end the invocation (docs/guard-deviations.md); the Final Approval Gate does.
"""

from __future__ import annotations

import pytest

from testkit.session import Call, SimulatedSession

from .conftest import Flow, MakeSession, assert_allowed, assert_denied, plan_with_scope


def _scoped(make_session: MakeSession, scope: str) -> tuple[Flow, SimulatedSession]:
    session = make_session()
    return Flow(session, plan_with_scope(scope)), session


@pytest.mark.parametrize("journaled", [True, False], ids=["journal", "payload"])
def test_e17_1_tasks_right_after_the_ceo_report_is_phase_order_naming_eng(
    make_session: MakeSession, journaled: bool
) -> None:
    flow, _ = _scoped(make_session, "none")  # CEO, Eng, Tasks
    flow.through("ceo")
    read = flow.driver_read("tasks")
    outcome = flow.attempt(read) if journaled else flow.attempt_payload(read)
    assert_denied(outcome, "phase_order", disposition="corrective")
    assert "The phase that is due is Phase 3 (Eng)." in outcome.text
    assert "moved on from this /autoplan run" in outcome.text


@pytest.mark.parametrize("phase", ["design", "dx"])
def test_e17_2_a_phase_outside_the_scope_is_out_of_order(
    make_session: MakeSession, phase: str
) -> None:
    flow, _ = _scoped(make_session, "none")
    flow.through("ceo")
    outcome = flow.attempt(flow.driver_read(phase))
    assert_denied(outcome, "phase_order")
    assert "Phase 3 (Eng)" in outcome.text


def test_e17_3_each_kind_of_entry_into_a_skipped_phase_is_refused(
    make_session: MakeSession,
) -> None:
    flow, _ = _scoped(make_session, "design, dx")
    flow.through("ceo")
    flow.checkpoint("eng")  # prepared early, outside the hook
    for call in (flow.driver_read("dx"), flow.artifact_read("eng"), flow.dispatch_call("eng")):
        outcome = flow.attempt(call)
        assert_denied(outcome, "phase_order")
        assert "Phase 2 (Design)" in outcome.text


def test_e17_4_the_scoped_pipeline_in_order_passes(make_session: MakeSession) -> None:
    flow, _ = _scoped(make_session, "none")
    flow.through("ceo", "eng")
    assert_allowed(flow.attempt(flow.driver_read("tasks")))


def test_e17_5_an_out_of_order_entry_that_ran_does_not_move_the_session_on(
    make_session: MakeSession,
) -> None:
    flow, session = _scoped(make_session, "none")
    flow.through("ceo")
    session.run(flow.driver_read("tasks"))  # delivered without the hook
    # Still in CEO: Eng is due and its entry needs only the CEO report, published.
    assert_allowed(flow.attempt(flow.driver_read("eng")))


def test_e17_6_a_rerun_after_the_task_list_may_return_to_it(make_session: MakeSession) -> None:
    """A fresh CEO checkpoint after Tasks reopens CEO; once republished, the task list (the
    furthest phase reached) may be entered again without re-entering Eng."""
    flow, _ = _scoped(make_session, "none")
    flow.through("ceo", "eng")
    flow.enter("tasks")
    flow.checkpoint("ceo")
    flow.dispatch("ceo")
    flow.prepare_close("ceo")
    flow.read_close("ceo")
    flow.publish("ceo")
    assert_allowed(flow.attempt(flow.driver_read("tasks")))


def _ceo_closed_then_the_turn_ended(flow: Flow, session: SimulatedSession) -> None:
    flow.begin()
    flow.work("ceo")
    session.end_turn("The CEO review is closed; I will publish its report next.")


@pytest.mark.parametrize("typed", ["continue", "go on with the review", "/compact then continue"])
def test_e17_7_a_typed_turn_after_an_end_of_turn_keeps_the_invocation(
    make_session: MakeSession, typed: str
) -> None:
    flow, session = _scoped(make_session, "none")
    _ceo_closed_then_the_turn_ended(flow, session)
    if typed.startswith("/compact"):
        session.compact(manual=True)
        session.typed("continue")
    else:
        session.typed(typed)
    outcome = flow.attempt(flow.driver_read("eng"))
    assert_denied(outcome, "publication_missing")
    assert "run /autoplan <plan path>" in outcome.text
    flow.publish("ceo")
    assert_allowed(flow.attempt(flow.driver_read("eng")))


def test_e17_8_a_bash_mode_command_keeps_the_invocation(make_session: MakeSession) -> None:
    flow, session = _scoped(make_session, "none")
    _ceo_closed_then_the_turn_ended(flow, session)
    session.typed("<bash-input>git status</bash-input>")
    session.typed("<bash-stdout>On branch main</bash-stdout><bash-stderr></bash-stderr>")
    assert_denied(flow.attempt(flow.driver_read("eng")), "publication_missing")


def test_e17_9_an_escape_and_an_end_of_turn_are_judged_alike(make_session: MakeSession) -> None:
    flow, session = _scoped(make_session, "none")
    flow.begin()
    flow.work("ceo")
    session.typed("continue")  # no end of turn before it: as after an Esc
    assert_denied(flow.attempt(flow.driver_read("eng")), "publication_missing")


def test_e17_10_the_final_approval_gate_ends_the_invocation(make_session: MakeSession) -> None:
    flow, session = _scoped(make_session, "none")
    flow.through("ceo", "eng")
    flow.enter("tasks")
    gate = flow.bash(flow.command("gate", "render", flow.restore))
    assert not gate.is_error, gate.text
    session.end_turn("The Final Approval Gate is above.")
    session.typed("Thanks. Redo the CEO review for fun, then show me the task list.")
    # After the gate the run is over: a fresh CEO checkpoint reopens nothing (in the run it
    # would: the task list then waits for the CEO close, as E.5 shows).
    flow.checkpoint("ceo")
    assert_allowed(flow.attempt(flow.driver_read("tasks")))
    flow.start()
    assert_denied(flow.attempt(flow.driver_read("tasks")), "init_own")
    flow.init()  # a new literal init rebinds (the same restore point, reused)
    flow.checkpoint("ceo")
    assert_denied(flow.attempt(flow.driver_read("tasks")), "close_required")


def test_e17_11_a_failed_gate_render_ends_nothing(make_session: MakeSession) -> None:
    flow, session = _scoped(make_session, "none")
    flow.through("ceo")
    failed = flow.s.run(Call.bash(flow.command("gate", "render", flow.restore), "plangate"))
    assert failed.is_error  # Eng was never run: the gate refuses
    assert_denied(flow.attempt(flow.driver_read("tasks")), "phase_order")
