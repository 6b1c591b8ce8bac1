"""E.10 Claude Code's "file unchanged" (dedup) replies and cached ranges."""

from __future__ import annotations

import os

import pytest

from testkit.session import DEDUP_REPLY, Call, SimulatedSession

from .conftest import Flow, assert_allowed, assert_denied


def _closing(flow: Flow) -> str:
    flow.begin()
    flow.enter("ceo")
    flow.checkpoint("ceo")
    flow.dispatch("ceo")
    return str(flow.prepare_close("ceo")["closePacketPath"])


def _dedup(
    session: SimulatedSession, path: str, *, is_error: bool | None = None, **options: int
) -> Call:
    read = Call.read(path, **options)  # type: ignore[arg-type]
    session.message(calls=[read], run=False)
    session.result(
        read,
        DEDUP_REPLY,
        is_error=is_error,
        tool_use_result={"type": "text", "file": {"filePath": path}},
    )
    return read


def test_e10_72_cached_reentry_after_a_fresh_init_does_not_carry_the_publication(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.through("ceo")
    flow.restore = os.path.join(flow.artifacts, "plan-restore-2.md")
    flow.init()
    cached = session.run(Call.read(flow.driver("ceo"), dedup=True))
    assert cached.text == DEDUP_REPLY
    assert_denied(flow.attempt(flow.driver_read("design")), "close_required")


def test_e10_73_cached_close_still_needs_the_publication(
    flow: Flow, session: SimulatedSession
) -> None:
    packet = _closing(flow)
    flow.read_close("ceo")
    cached = session.run(Call.read(packet, dedup=True))
    assert cached.text == DEDUP_REPLY
    assert_denied(flow.attempt(flow.driver_read("design")), "publication_missing")


def test_e10_74_cached_incomplete_close_ranges_never_become_complete(
    flow: Flow, session: SimulatedSession
) -> None:
    packet = _closing(flow)
    session.run(Call.read(packet, offset=1, limit=10))
    cached = session.run(Call.read(packet, offset=1, limit=10, dedup=True))
    assert cached.text == DEDUP_REPLY
    flow.publish("ceo")
    assert_denied(flow.attempt(flow.driver_read("design")), "close_incomplete")


def _forged_full(session: SimulatedSession, packet: str, **changes: object) -> None:
    """A full close Read whose result was altered."""
    read = Call.read(packet)
    session.message(calls=[read], run=False)
    session.execute(read, write=False)
    assert read.pending_result is not None
    content, is_error, side_car, extra = read.pending_result
    file_info = dict(side_car["file"])
    file_info.update(changes)
    session.result(
        read, content, is_error=is_error, tool_use_result={"type": "text", "file": file_info}
    )


RANGES = {
    "plain": True,
    "cache_chain": True,
    "same_range_twice": True,
    "dedup_without_prior": False,
    "failed_cache": False,
    "wrong_total": False,
    "foreign_path": False,
    "stale_body": False,
    "limit_smaller_than_delivered": False,
}


@pytest.mark.parametrize("kind", list(RANGES))
def test_e10_75_which_close_reads_establish_coverage(
    flow: Flow, session: SimulatedSession, kind: str
) -> None:
    packet = _closing(flow)
    lines = int(flow.closes["ceo"]["lines"])
    if kind == "plain":
        flow.read_close("ceo")
    elif kind == "cache_chain":
        flow.read_close("ceo")
        session.run(Call.read(packet, dedup=True))
        session.run(Call.read(packet, dedup=True))
    elif kind == "same_range_twice":
        flow.read_close("ceo")
        flow.read_close("ceo")
    elif kind == "dedup_without_prior":
        _dedup(session, packet)
    elif kind == "failed_cache":
        _dedup(session, packet, is_error=True)
    elif kind == "wrong_total":
        _forged_full(session, packet, totalLines=lines + 5)
    elif kind == "foreign_path":
        _forged_full(session, packet, filePath=flow.plan)
    elif kind == "stale_body":
        _forged_full(session, packet, content="# Current phase close packet\n(stale)\n")
    elif kind == "limit_smaller_than_delivered":
        read = Call.read(packet, limit=5)
        session.message(calls=[read], run=False)
        full = Call.read(packet)
        session.execute(full, write=False)
        assert full.pending_result is not None
        content, _, side_car, _ = full.pending_result
        session.result(read, content, is_error=None, tool_use_result=side_car)
    flow.publish("ceo")
    outcome = flow.attempt(flow.driver_read("design"))
    if RANGES[kind]:
        assert_allowed(outcome)
    else:
        assert_denied(outcome, "close_incomplete")


def test_e10_76_unverified_cached_initial_entry_cannot_establish_a_phase(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.begin()
    _dedup(session, flow.driver("design"))  # no earlier Read of it anywhere
    assert_denied(flow.attempt(flow.driver_read("eng")), "phase_order")


def test_e10_76b_after_an_unverified_cached_entry_the_ceo_entry_is_allowed(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.begin()
    _dedup(session, flow.driver("design"))
    assert_allowed(flow.attempt(flow.driver_read("ceo")))
