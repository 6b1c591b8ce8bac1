"""The guard's pre-index in a real Claude Code session (plangate.guard.preindex).

The real CLI runs the registered hook on an Agent call that dispatches no reviewer (a
non-phase call; an ordinary Read no longer starts the guard at all, by its ``if``
conditions) in a first turn. With the pre-index's threshold lowered to this small journal,
that hook run starts the detached pre-index; once it has ended, the session is resumed
with /autoplan, whose first phase entry (the CEO driver Read after init) finds the index it
saved: its read goes on from it and appends a delta to the same file. Switched off, the same
entry is a cold read (the guard's fold from record 0), which writes the index's first
snapshot. Both sessions' decisions are the same.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from plangate import tuning
from plangate.guard import preindex
from plangate.harness.autoplan import AutoplanProject, Player, decisions
from plangate.harness.claude import ClaudeEnv
from plangate.harness.standin import StandIn, tool_use
from plangate.journal import index as journal_index
from testkit.recorded import tool_calls, tool_results

pytestmark = pytest.mark.e2e

MakeEnv = Callable[[StandIn], ClaudeEnv]
WAIT_S = 60.0


@pytest.fixture
def autoplan(make_env: MakeEnv) -> Iterator[Callable[[Player], AutoplanProject]]:
    made: list[StandIn] = []

    def make(player: Player) -> AutoplanProject:
        model = StandIn(player)
        model.__enter__()
        made.append(model)
        project = AutoplanProject(make_env(model))
        project.setup()
        return project

    yield make
    for model in made:
        model.__exit__(None, None, None)


def _session(make: Callable[[Player], AutoplanProject], on: bool) -> None:
    """A turn that asks a subagent about the notes, then, resumed, /autoplan's init and its
    first phase entry."""
    player = Player([])
    project = make(player)
    env = {tuning.ENV: tuning.joined("", index_min_bytes=0, preindex_min_bytes=0, preindex=int(on))}
    # A first turn, so that the journal exists when the Agent's hook runs (Claude Code may
    # not have written a new session's file yet when its first tool call's hook runs).
    player.steps = ["Hello."]
    opening = project.run("Hello.", player, env=env)
    assert opening.ok, opening.describe()
    index_dir = project.state_root / "journal-index"

    def markers() -> list[Path]:
        return list(index_dir.glob("*" + preindex.SUFFIX)) if index_dir.exists() else []

    def after_the_pre_index(_request: object) -> str:
        # The run's end kills every process that carries its token (ClaudeEnv), the
        # detached pre-index too: on a busy machine it was still reading when the model's
        # last reply ended the run, and no index was saved. So the turn waits for it.
        until = time.monotonic() + WAIT_S
        while on and (not markers() or preindex.running(str(markers()[0]))):
            assert time.monotonic() < until, "the pre-index did not end"
            time.sleep(0.01)
        return "The notes have two lines."

    player.steps = [
        tool_use(
            "Agent",
            description="Count the notes",
            prompt="How many lines does notes.txt have?",
            subagent_type="general-purpose",
            run_in_background=False,
        ),
        after_the_pre_index,
    ]
    first = project.run("Summarise notes.txt, please.", player, env=env, resume=opening.session_id)
    assert first.ok, first.describe()
    found = markers()
    assert len(found) == (1 if on else 0), found
    assert not found or not preindex.running(str(found[0]))
    assert first.journal_path is not None
    before = _saved(project, first.journal_path)
    assert (before is not None) == on, _describe(project, first.journal_path, found)
    player.steps = [project.init(), project.read_driver("ceo"), "CEO phase started."]
    second = project.run("/autoplan plan.md", player, env=env, resume=first.session_id)
    assert second.ok, second.describe()
    assert second.journal_path is not None and second.journal_path == first.journal_path
    results = tool_results(second.journal_path)
    reads = [
        results[call_id]
        for call_id, tool, tool_input in tool_calls(second.journal_path)
        if tool == "Read" and call_id in results
    ]
    assert len(reads) == 1 and not any(is_error for is_error, _ in reads), reads
    logged = [(d["decision"], d["code"]) for d in decisions(project.state_root)]
    assert logged == [("allow", None)], logged  # the CEO entry; the Agent call logs nothing
    after = _saved(project, second.journal_path)
    assert after is not None
    if before is not None:
        # The entry's read went on from the pre-index's index: deltas on the same file, no
        # new snapshot (a later read of the hook run may add one more delta if the journal
        # grew in between, as the call itself being journaled).
        assert after[0] == before[0] and before[1] < after[1] <= before[1] + 2, (before, after)
    else:  # a cold read: the index it started, a snapshot (and the later read's delta)
        assert 1 <= after[1] <= 2, after


def _describe(project: AutoplanProject, journal: Path, markers: list[Path]) -> str:
    index_dir = project.state_root / "journal-index"
    listing = (
        sorted((p.name, p.stat().st_size) for p in index_dir.iterdir())
        if index_dir.exists()
        else []
    )
    marked = [m.read_bytes() for m in markers]
    return f"journal {journal.stat().st_size} bytes; index dir {listing}; markers {marked}"


def _saved(project: AutoplanProject, journal: Path) -> tuple[int, int] | None:
    """The session's usable journal index: its file's inode and frame count."""
    index_dir = str(project.state_root / "journal-index")
    session_id = journal.name.removesuffix(".jsonl")
    found = journal_index.load(
        index_dir, session_id, str(journal), os.stat(journal), [str(project.project)]
    )
    if found is None:
        return None
    return os.stat(journal_index.index_file(index_dir, session_id)).st_ino, found.frames


@pytest.mark.parametrize("on", [True, False], ids=["pre-index", "switched-off"])
def test_a_non_phase_call_readies_the_index_for_the_first_phase_entry(
    autoplan: Callable[[Player], AutoplanProject], tmp_path: Path, on: bool
) -> None:
    _session(autoplan, on)
