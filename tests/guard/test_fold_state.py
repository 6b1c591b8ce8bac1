"""The guard fold's state: a typed record in memory, a dict of 14 keys in the journal index.

A fold continued from the index must save what a fold from record 0 saves, also when a fact
the index already holds changes (an init whose result comes in a later read).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from plangate import tuning
from plangate.guard.fold import OK, WAITING, GuardState, GuardTracker
from plangate.guard.state import Installation
from plangate.journal import index as journal_index
from plangate.journal.reader import read_journal
from testkit.session import Call, SimulatedSession
from tests.guard.scenarios import conftest as scenes
from tests.guard.scenarios.conftest import Flow

shared_home = scenes.shared_home
make_session = scenes.make_session
session = scenes.session
flow = scenes.flow

SAVED_KEYS = {
    *("count", "disarm", "snapshots", "turns", "inits", "chosen", "bash"),
    *("uses", "orphans", "noted", "ran", "pending", "repeated", "cut"),
}


def _tracker(session: SimulatedSession) -> GuardTracker:
    installation = Installation(session.plangate, [], session.cwd)
    return GuardTracker(installation, str(session.journal_path))


def _saved(session: SimulatedSession, index_dir: Path) -> dict[str, Any]:
    """Read the journal with the guard's fold, going on from the index in ``index_dir``;
    the fold's state as the index file then holds it."""
    path = str(session.journal_path)
    tracker = _tracker(session)
    owners = [session.project_dir]
    verdict = read_journal(
        path,
        session_id=session.session_id,
        owners=owners,
        config_dir=session.config_dir,
        index_dir=str(index_dir),
        tracker=tracker,
        select=tracker.select,
    )
    assert verdict.ready, verdict.reason
    saved = journal_index.load(str(index_dir), session.session_id, path, os.stat(path), owners)
    assert saved is not None and saved.tracker_key == tracker.key
    tracked: dict[str, Any] = saved.tracked
    return tracked


def test_the_saved_state_keeps_its_keys_and_loads_back(
    flow: Flow, session: SimulatedSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(tuning.ENV, "index_min_bytes=0")
    flow.begin()
    flow.work("ceo")
    saved = _saved(session, tmp_path / "index")
    assert set(saved) == SAVED_KEYS
    state = GuardState.load(saved)
    assert [(init.status, init.plans) for init in state.inits] == [(OK, [flow.plan, flow.restore])]
    assert state.dump() == saved
    # A fold changes the loaded state in place, never the saved dict it came from.
    state.turns.append(10**6)
    state.inits[0].status = WAITING
    state.pending["toolu_x"] = None
    assert 10**6 not in saved["turns"]
    assert saved["inits"][0][3] == OK and "toolu_x" not in saved["pending"]


def test_an_init_answered_in_a_later_read_is_saved_as_a_cold_fold_saves_it(
    flow: Flow, session: SimulatedSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(tuning.ENV, "index_min_bytes=0")
    flow.start()
    init = Call.bash(
        flow.command("autoplan", "init", flow.plan, flow.plan, flow.restore), "plangate"
    )
    session.message(None, [init], run=False)  # the call is journaled, its result not yet
    first = _saved(session, tmp_path / "continued")
    assert [entry[3] for entry in first["inits"]] == [WAITING]
    session.execute(init)
    assert not init.is_error, init.text
    continued = _saved(session, tmp_path / "continued")
    cold = _saved(session, tmp_path / "cold")
    assert [entry[3] for entry in continued["inits"]] == [OK]
    assert continued == cold
