"""E.3 One message, one phase: the batch rule."""

from __future__ import annotations

import time

import pytest

from testkit.session import Call, SimulatedSession

from .conftest import Flow, assert_allowed, assert_denied, assert_unverified


def _ceo_checkpointed(flow: Flow) -> None:
    flow.begin()
    flow.enter("ceo")
    flow.checkpoint("ceo")


def test_e03_16_same_phase_siblings_share_a_message(flow: Flow, session: SimulatedSession) -> None:
    _ceo_checkpointed(flow)
    # Journal path, the sibling still pending.
    first, second = flow.artifact_read("ceo", "review-input.md"), flow.artifact_read("ceo")
    session.message(calls=[first, second], run=False)
    assert_allowed(session.hook(second), path="journal")
    session.execute(first)
    session.execute(second)
    # Payload path, the sibling done.
    third, fourth = flow.artifact_read("ceo", "manifest.json"), flow.driver_read("ceo")
    message = session.message(calls=[third, fourth], journal=1, run=[third])
    assert third.answered and not fourth.journaled
    assert_allowed(session.hook(fourth), path="payload")
    session.flush(message)


def test_e03_17_sibling_entering_another_phase_is_cross_phase_batch(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.begin()
    flow.complete("ceo")
    # Journal path: both calls written.
    ceo_read, design_read = flow.artifact_read("ceo"), flow.driver_read("design")
    session.message(calls=[ceo_read, design_read], run=False)
    outcome = session.hook(design_read)
    assert_denied(outcome, "cross_phase_batch", disposition="fallback", path="journal")
    session.execute(ceo_read)  # the same-phase sibling runs
    # Payload path: the hook fires before Claude Code wrote the call, while its sibling runs;
    # the guard waits for the journal, which then shows both calls in one message.
    ceo_again, design_again = flow.artifact_read("ceo"), flow.driver_read("design")
    message = session.message(calls=[ceo_again, design_again], journal=1, run=False)

    def catch_up() -> None:
        time.sleep(0.15)
        session.flush(message)

    outcome = session.hook(design_again, during=catch_up)
    assert_denied(outcome, "cross_phase_batch", path="journal")


def test_e03_18_guarded_entry_pending_in_an_earlier_message_is_entry_pending(
    flow: Flow, session: SimulatedSession
) -> None:
    _ceo_checkpointed(flow)
    session.message(calls=[flow.artifact_read("ceo")], run=False)
    current = flow.artifact_read("ceo", "review-input.md")
    session.message(calls=[current], run=False)
    outcome = session.hook(current)
    assert_denied(outcome, "entry_pending", disposition="transient", path="journal")
    assert "Wait" in outcome.text


@pytest.mark.slow
def test_e03_19_pending_unguarded_bash_is_journal_lag_on_the_payload_path(
    flow: Flow, session: SimulatedSession
) -> None:
    _ceo_checkpointed(flow)
    session.message("Checking the tests first.", [Call.bash("true")], run=False)
    session.say("Now the reviewer prompt.", end_turn=False)
    read = flow.artifact_read("ceo")
    session.message(calls=[read], journal=False, run=False)
    outcome = session.hook(read)
    assert_unverified(outcome, "journal_lag", path="payload")
    # The wait itself is proven on an injected clock (tests/guard/test_observe.py); a lower
    # bound on the real one only says the hook waited, and load cannot break it.
    assert outcome.elapsed >= 1.9
