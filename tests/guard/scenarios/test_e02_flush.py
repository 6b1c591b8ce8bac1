"""E.2 The flush rule: a report counts once a later journaled record follows it."""

from __future__ import annotations

from testkit.session import Call, SimulatedSession

from .conftest import Flow, assert_allowed, assert_denied, report


def _ceo_closed(flow: Flow) -> None:
    flow.begin()
    flow.work("ceo")


def test_e02_09_report_in_the_guarded_reads_message_is_unflushed(
    flow: Flow, session: SimulatedSession
) -> None:
    _ceo_closed(flow)
    read = flow.driver_read("design")
    session.message(report("ceo"), [read], run=False)
    outcome = session.hook(read)
    assert_denied(outcome, "publication_unflushed", disposition="corrective", path="journal")
    assert "`true autoplan-published ceo`" in outcome.text
    assert "<phase>" not in outcome.text and "Detail:" not in outcome.text


def test_e02_10_report_sharing_the_message_stays_unflushed_when_fully_written(
    flow: Flow, session: SimulatedSession
) -> None:
    _ceo_closed(flow)
    noop = Call.bash("true autoplan-published ceo")
    read = flow.driver_read("design")
    # The whole message is written, and even its no-op already has a result.
    session.message(report("ceo"), [noop, read], run=[noop])
    assert noop.answered
    outcome = session.hook(read)
    assert_denied(outcome, "publication_unflushed", path="journal")


def test_e02_11_partly_written_message_is_unflushed_on_the_payload_path(
    flow: Flow, session: SimulatedSession
) -> None:
    _ceo_closed(flow)
    read = flow.driver_read("design")
    session.message(report("ceo"), [read], journal=1, run=False)  # the text only
    outcome = session.hook(read)
    assert_denied(outcome, "publication_unflushed", path="payload")


def test_e02_12_after_the_publication_message_both_paths_allow(
    flow: Flow, session: SimulatedSession
) -> None:
    _ceo_closed(flow)
    flow.publish("ceo")
    first = flow.driver_read("design")
    assert_allowed(flow.attempt_payload(first), path="payload")
    second = flow.driver_read("design")
    assert_allowed(flow.attempt(second), path="journal")


def test_e02_13_second_unflushed_report_in_the_invocation_is_publication_repeat(
    flow: Flow, session: SimulatedSession
) -> None:
    _ceo_closed(flow)
    first = flow.driver_read("design")
    session.message(report("ceo"), [first], run=False)
    assert_denied(session.hook(first), "publication_unflushed")
    # The model closes again (a fresh packet, so only a later report counts) and publishes in
    # its own message, but Claude Code has written only the text when the next entry comes.
    flow.prepare_close("ceo")
    flow.read_close("ceo")
    noop = Call.bash("true autoplan-published ceo")
    session.message(report("ceo"), [noop], journal=1, run=False)
    again = flow.driver_read("design")
    session.message(calls=[again], journal=False, run=False)
    outcome = session.hook(again)
    assert_denied(outcome, "publication_repeat", disposition="fallback", path="payload")
    assert "Fallback:" in outcome.text


def test_e02_14_denied_read_after_the_report_flushes_it(
    flow: Flow, session: SimulatedSession
) -> None:
    _ceo_closed(flow)
    read = flow.driver_read("design")
    session.message(report("ceo"), [read], run=False)
    assert_denied(session.hook(read), "publication_unflushed")
    assert read.answered and read.is_error  # the denial is the later journaled record
    assert_allowed(flow.attempt(flow.driver_read("design")), path="journal")


def test_e02_15_old_template_recovers_by_publishing_separately(
    flow: Flow, session: SimulatedSession
) -> None:
    _ceo_closed(flow)
    old = flow.driver_read("design")
    session.message(report("ceo"), [old], journal=1, run=False)
    assert_denied(session.hook(old), "publication_unflushed", path="payload")
    flow.publish("ceo")
    assert_allowed(flow.attempt_payload(flow.driver_read("design")), path="payload")
