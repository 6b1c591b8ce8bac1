"""``event_order`` and ``tool_identity``: the events a decision is given must be one order.

The reader hands the guard events in increasing order; these tests give
:func:`plangate.guard.evaluate.check_identities` what a broken reader (or a journal whose
positions repeat) would, and check the seed's codes come out.
"""

from __future__ import annotations

import pytest

from plangate.decisions import reasons
from plangate.guard.evaluate import check_identities
from plangate.guard.state import Refusal
from plangate.journal.events import Event, ToolUse

STAMP = "2026-11-29T20:00:00.000Z"


def _use(order: int, tool_use_id: str) -> ToolUse:
    return ToolUse(order, order, f"msg_{order}", STAMP, tool_use_id, "Read", {"file_path": "/x"})


@pytest.mark.parametrize(
    "events",
    [
        [],
        [_use(2, "toolu_a"), _use(1, "toolu_b")],
        [_use(1, "toolu_a"), _use(1, "toolu_b")],
    ],
    ids=["none", "decreasing", "repeated"],
)
def test_events_out_of_order_are_event_order(events: list[Event]) -> None:
    with pytest.raises(Refusal) as refused:
        check_identities(events)
    assert refused.value.code == reasons.EVENT_ORDER
    assert reasons.disposition(refused.value.code) == reasons.FALLBACK


def test_a_repeated_call_id_is_tool_identity() -> None:
    with pytest.raises(Refusal) as refused:
        check_identities([_use(1, "toolu_a"), _use(2, "toolu_a")])
    assert refused.value.code == reasons.TOOL_IDENTITY


def test_events_in_order_pass() -> None:
    check_identities([_use(1, "toolu_a"), _use(2, "toolu_b")])
