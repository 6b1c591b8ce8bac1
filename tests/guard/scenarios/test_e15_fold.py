"""E.15 The guard's fold: a read that goes on from the journal index decides on the
invocation's window, as a cold read (the fold from record 0) does.

Every in-process scenario decision is also made cold (:mod:`.in_process`), and the two must
agree. These tests make sure that the check ran, and that an indexed read really reads the
window alone (its verdict's events are the window's, ``Verdict.window`` set).
"""

from __future__ import annotations

from plangate.guard.evaluate import read_ahead
from plangate.journal.verdict import Verdict
from testkit.session import Call, SimulatedSession

from .conftest import Flow, assert_allowed, assert_denied
from .in_process import FakeClock, InProcessHooks, hook_process_state


def hooks_of(session: SimulatedSession) -> InProcessHooks:
    hooks = session.run_hook
    assert isinstance(hooks, InProcessHooks)
    return hooks


def indexed_read(session: SimulatedSession, call: Call) -> Verdict:
    """The read a phase entry of ``call`` makes first, as the hook would make it."""
    payload = session.payload(call)
    with hook_process_state(session.environ(), session.cwd, FakeClock()):
        verdict = read_ahead(payload)
    assert verdict is not None and verdict.ready, verdict
    return verdict


def test_e15_1_a_full_cycle_decides_on_windows(flow: Flow, session: SimulatedSession) -> None:
    flow.begin()
    assert_allowed(flow.attempt(flow.driver_read("ceo")))  # the first read is cold
    for phase, later in (("ceo", "design"), ("design", "dx"), ("dx", "eng"), ("eng", "tasks")):
        flow.work(phase, enter=False)
        assert_denied(flow.attempt(flow.driver_read(later)), "publication_missing")
        flow.publish(phase)
        assert_allowed(flow.attempt(flow.driver_read(later)))
    assert hooks_of(session).cold_checks == 9  # every decision, also made cold
    verdict = indexed_read(session, flow.driver_read("tasks"))
    assert verdict.window is not None  # the index's fold named the window


def test_e15_2_a_second_invocation_moves_the_window(flow: Flow, session: SimulatedSession) -> None:
    flow.through("ceo")
    assert_allowed(flow.attempt(flow.driver_read("design")))
    before = indexed_read(session, flow.driver_read("design")).window
    assert before is not None
    second = Flow(session, name="second")
    second.start()  # a new /autoplan turn: its own init is needed before any phase entry
    assert_denied(second.attempt(second.driver_read("ceo")), "init_own")
    second.init()
    assert_denied(second.attempt(second.driver_read("design")), "phase_order")
    assert_allowed(second.attempt(second.driver_read("ceo")))
    after = indexed_read(session, second.driver_read("design")).window
    assert after is not None and after.cut_order > before.cut_order
    assert hooks_of(session).cold_checks >= 4
