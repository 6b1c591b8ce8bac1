"""E.16 The plugin's skill names: `/plangate:autoplan` is /autoplan, `/other:autoplan` is not."""

from __future__ import annotations

import pytest

from testkit.session import SimulatedSession

from .conftest import Flow, assert_denied


@pytest.mark.parametrize(
    ("command", "code"),
    [
        ("/autoplan", "init_own"),
        ("/plangate:autoplan", "init_own"),  # plangate's plugin: needs its own init too
        # Another plugin's skill: a typed request, which does not end the invocation.
        ("/other:autoplan", "publication_missing"),
    ],
)
def test_e16_a_second_invocation_by_name(
    flow: Flow, session: SimulatedSession, command: str, code: str
) -> None:
    flow.begin()
    flow.work("ceo")
    session.end_turn("Paused after the CEO close.")
    flow.start(f"{command} plan.md")
    assert_denied(flow.attempt(flow.driver_read("design")), code)
