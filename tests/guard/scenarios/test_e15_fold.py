"""E.15 The guard's history fold: decisions after the first read the invocation's window.

Every scenario runs with ``PLANGATE_GUARD_FOLD_CHECK`` (see ``conftest.fold_trace``), so each
windowed decision is also made in full and must agree. These tests make sure the window is
really taken, and that a session growing past an earlier invocation still agrees.
"""

from __future__ import annotations

from pathlib import Path

from testkit.session import SimulatedSession

from .conftest import Flow, assert_allowed, assert_denied


def windowed(trace: Path) -> list[str]:
    return trace.read_text(encoding="utf-8").splitlines() if trace.exists() else []


def test_e15_1_a_full_cycle_decides_on_windows(flow: Flow, fold_trace: Path) -> None:
    flow.begin()
    assert_allowed(flow.attempt(flow.driver_read("ceo")))  # the first read is in full
    for phase, later in (("ceo", "design"), ("design", "dx"), ("dx", "eng"), ("eng", "tasks")):
        flow.work(phase, enter=False)
        assert_denied(flow.attempt(flow.driver_read(later)), "publication_missing")
        flow.publish(phase)
        assert_allowed(flow.attempt(flow.driver_read(later)))
    lines = windowed(fold_trace)
    assert len(lines) == 8, lines  # every decision after the first, each checked in full
    assert all(line.startswith("windowed ") for line in lines)


def test_e15_2_a_second_invocation_moves_the_window(
    flow: Flow, session: SimulatedSession, fold_trace: Path
) -> None:
    flow.through("ceo")
    assert_allowed(flow.attempt(flow.driver_read("design")))
    before = len(windowed(fold_trace))
    second = Flow(session, name="second")
    second.start()  # a new /autoplan turn: its own init is needed before any phase entry
    assert_denied(second.attempt(second.driver_read("ceo")), "init_own")
    second.init()
    assert_denied(second.attempt(second.driver_read("design")), "phase_order")
    assert_allowed(second.attempt(second.driver_read("ceo")))
    assert len(windowed(fold_trace)) == before + 3
