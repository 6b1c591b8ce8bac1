"""E.4 Background reviewers, and typed turns around them: nothing typed disarms the guard.

gstack ends the invocation at a request typed after the turn ended and every background
reviewer reported back; plangate ends it only at its Final Approval Gate or a new init
(docs/guard-deviations.md), so E.21's typed turns keep it armed too."""

from __future__ import annotations

from testkit.session import SimulatedSession

from .conftest import Flow, assert_allowed, assert_denied


def _ceo_closed_with_background_reviewer(flow: Flow):  # type: ignore[no-untyped-def]
    flow.begin()
    flow.enter("ceo")
    flow.checkpoint("ceo")
    reviewer = flow.dispatch("ceo", run_in_background=True)
    assert reviewer.background and "Async agent launched" in (reviewer.text or "")
    flow.prepare_close("ceo")
    flow.read_close("ceo")
    return reviewer


def test_e04_20_typed_turn_while_a_background_reviewer_runs_keeps_the_guard_armed(
    flow: Flow, session: SimulatedSession
) -> None:
    _ceo_closed_with_background_reviewer(flow)
    session.end_turn("The CEO reviewer is still running; I will continue when it reports.")
    session.typed("How is it going?")
    outcome = flow.attempt(flow.driver_read("design"))
    assert_denied(outcome, "publication_missing", path="journal")


def test_e04_21_typed_turn_after_the_notification_and_turn_end_keeps_the_guard_armed(
    flow: Flow, session: SimulatedSession
) -> None:
    reviewer = _ceo_closed_with_background_reviewer(flow)
    session.end_turn("Waiting for the CEO reviewer.")
    session.notify(reviewer)  # a new turn: the task notification
    session.end_turn("The reviewer reported; findings noted.")
    session.typed("Thanks. Show me the design checklist.")
    outcome = flow.attempt(flow.driver_read("design"))
    assert_denied(outcome, "publication_missing", path="journal")
    assert "moved on from this /autoplan run" in outcome.text


def test_e04_21b_notification_absorbed_mid_turn_counts_too(
    flow: Flow, session: SimulatedSession
) -> None:
    reviewer = _ceo_closed_with_background_reviewer(flow)
    session.notify(reviewer)  # queued_command attachment while the turn runs
    session.end_turn("Done for now.")
    session.typed("Unrelated: show me the design checklist.")
    assert_denied(flow.attempt(flow.driver_read("design")), "publication_missing", path="journal")


def test_e04_22_captured_string_false_run_in_background_with_payload_without_it(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.begin()
    flow.enter("ceo")
    flow.checkpoint("ceo")
    dispatch = flow.dispatch_call("ceo", run_in_background="false")
    outcome = flow.attempt(dispatch, drop=["run_in_background"])
    assert_allowed(outcome, path="journal")
    assert dispatch.record is not None
    assert dispatch.record["message"]["content"][0]["input"]["run_in_background"] == "false"
    assert not dispatch.background
