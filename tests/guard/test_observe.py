"""The guard's read loop (plangate.guard.observe) on an injected clock.

The scenarios run the real hook as a process, on the real clock; how long the loop waits is
proven here instead, in-process: ``observe`` takes ``clock`` and ``sleep``, and a fake clock
that only advances when the loop sleeps shows the 2 s lag wait with no real waiting (and no
elapsed-time assertion that a busy machine could break).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from plangate.guard.fold import GuardTracker
from plangate.guard.observe import (
    DEADLINE_SECONDS,
    JOURNAL,
    NONE,
    PAYLOAD,
    Observation,
    observe,
)
from plangate.guard.state import Installation
from plangate.guard.world import World
from plangate.journal.owners import project_owners
from testkit.session import Call, SimulatedSession
from tests.guard.scenarios import conftest as scenes
from tests.guard.scenarios.conftest import Flow

shared_home = scenes.shared_home
make_session = scenes.make_session
session = scenes.session
flow = scenes.flow


class FakeClock(World):
    """The real files, and virtual seconds that pass only when the loop sleeps; ``at`` runs
    once at a time."""

    def __init__(self, at: float = -1.0, then: Callable[[], object] | None = None) -> None:
        self.now = 0.0
        self.sleeps = 0
        self.at, self.then = at, then

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps += 1
        self.now += seconds
        if self.then is not None and self.now >= self.at:
            then, self.then = self.then, None
            then()


def _observe(session: SimulatedSession, journal: str, call: Call, fake: FakeClock) -> Observation:
    return observe(
        journal,
        session_id=os.path.basename(journal).removesuffix(".jsonl"),
        tool_use_id=call.id,
        owners=project_owners(session.project_dir),
        config_dir=session.config_dir,
        tracker=GuardTracker(Installation(session.plangate, [], session.cwd), journal),
        world=fake,
    )


def test_a_journal_that_never_appears_is_journal_missing_after_the_wait(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.through("ceo")
    missing = session.journal_path.with_name("0d2c1b7e-2222-4333-8444-555566667777.jsonl")
    fake = FakeClock()
    seen = _observe(session, str(missing), flow.driver_read("design"), fake)
    assert (seen.code, seen.path) == ("journal_missing", NONE)
    assert DEADLINE_SECONDS <= fake.now < DEADLINE_SECONDS + 0.1


def test_a_journal_that_appears_within_the_wait_is_read(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.through("ceo")
    read = flow.driver_read("design")
    session.message(calls=[read], journal=False, run=False)
    aside = session.journal_path.with_suffix(".aside")
    os.rename(session.journal_path, aside)
    fake = FakeClock(1.0, lambda: os.rename(aside, session.journal_path))
    seen = _observe(session, str(session.journal_path), read, fake)
    assert (seen.code, seen.path) == (None, PAYLOAD)
    assert 1.0 <= fake.now < DEADLINE_SECONDS


def test_a_result_still_unwritten_at_the_deadline_is_journal_lag(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.begin()
    flow.checkpoint("ceo")
    session.message("Checking the tests first.", [Call.bash("true")], run=False)
    read = flow.artifact_read("ceo")
    session.message(calls=[read], journal=False, run=False)
    fake = FakeClock()
    seen = _observe(session, str(session.journal_path), read, fake)
    assert (seen.code, seen.path) == ("journal_lag", PAYLOAD)
    assert fake.now >= DEADLINE_SECONDS and fake.sleeps >= DEADLINE_SECONDS / 0.05 - 1


def test_a_result_written_within_the_wait_ends_it(flow: Flow, session: SimulatedSession) -> None:
    flow.begin()
    flow.checkpoint("ceo")
    pending = Call.bash("true")
    session.message("Checking the tests first.", [pending], run=False)
    read = flow.artifact_read("ceo")
    session.message(calls=[read], journal=False, run=False)
    fake = FakeClock(0.5, lambda: session.execute(pending))
    seen = _observe(session, str(session.journal_path), read, fake)
    assert (seen.code, seen.path) == (None, PAYLOAD)
    assert 0.5 <= fake.now < DEADLINE_SECONDS


def test_the_current_call_journaled_is_decided_at_once(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.begin()
    flow.checkpoint("ceo")
    session.message("Checking the tests first.", [Call.bash("true")], run=False)
    read = flow.artifact_read("ceo")
    session.message(calls=[read], run=False)
    fake = FakeClock()
    seen = _observe(session, str(session.journal_path), read, fake)
    assert (seen.code, seen.path, fake.sleeps) == (None, JOURNAL, 0)
