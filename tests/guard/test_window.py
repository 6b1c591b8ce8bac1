"""Where the guard's window begins (plangate.guard.fold.window_start): at the human turn
before the first init that can hold the binding, so that the init which binds the invocation
is always inside the window (the decision never needs a record before it)."""

from __future__ import annotations

import pytest

from plangate.guard.fold import BAD, OK, WAITING, Init, window_start
from plangate.guard.world import OS

P = ["/p/plan.md", "/p/.plangate/tmp/autoplan/plan-restore-1.md"]
Q = ["/p/other.md", "/p/.plangate/tmp/autoplan/other-restore-1.md"]
TURNS = [0, 10, 20, 30, 40]


def init(at: int, plans: list[str], status: str = OK) -> Init:
    return Init(at, plans, f"toolu_{at}", status)


@pytest.mark.parametrize(
    ("inits", "start"),
    [
        ([], 40),  # no init: the latest turn (the decision asks for one)
        ([init(12, P)], 10),
        ([init(12, P), init(32, Q)], 30),  # another plan's init rebinds
        ([init(12, P), init(32, P)], 10),  # a re-run of the same plans keeps the binding
        ([init(12, P), init(22, Q, BAD), init(32, P)], 10),  # a failed one binds nothing
        ([init(12, P), init(22, Q, WAITING), init(32, P)], 10),  # nor one with no result
        ([init(2, Q), init(12, P), init(22, Q, BAD), init(32, P)], 10),
        ([init(12, P), init(32, Q, BAD)], 30),  # the last init decides (it fails: a refusal)
    ],
)
def test_the_window_holds_every_init_that_can_bind(inits: list[Init], start: int) -> None:
    assert window_start(TURNS, inits, OS) == start
