"""The pre-index (plangate.guard.preindex): a non-phase call in a long session keeps the
guard's journal index current in a detached process, so that the first phase entry goes on
from the index (decided on the invocation's window with the saved fold) instead of a cold
read, and nothing it does changes an answer.

Real sessions (:class:`testkit.session.SimulatedSession`), the real hook command as a
subprocess, the real detached child. Whether a phase entry went on from the index is told by
what it leaves, never by timing: it appends a delta to the index file the pre-index wrote (a
cold read writes a new snapshot under a new inode).
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from plangate import tuning
from plangate.guard import preindex
from plangate.hook_registry import package_root
from plangate.journal import index as journal_index
from testkit.session import Call, HookOutcome, SimulatedSession
from tests.guard.scenarios import conftest as scenes
from tests.guard.scenarios.conftest import Flow, assert_allowed
from tests.hooks.test_imports import HEAVY_STDLIB

# The guard scenarios' fixtures: sessions in a shared installed HOME whose hooks use the
# journal index for every journal.
shared_home = scenes.shared_home
make_session = scenes.make_session
session = scenes.session
flow = scenes.flow

MiB = 1024 * 1024
WAIT_S = 60.0


def _long_session(session: SimulatedSession, flow: Flow) -> None:
    """About 3 MB of earlier conversation, then an /autoplan run with its CEO phase published."""
    session.typed("Summarise the design notes, please.")
    for n in range(30):
        session.say(f"Part {n}: " + "lorem ipsum " * 8_000, end_turn=n == 29)
    flow.begin()
    flow.complete("ceo")
    assert session.journal_path.stat().st_size > preindex.MIN_BYTES


def _index_dir(session: SimulatedSession) -> str:
    return os.path.join(session.state_root, "journal-index")


def _marker(session: SimulatedSession) -> str:
    return preindex.marker_file(_index_dir(session), session.session_id)


def _non_phase(session: SimulatedSession, **env: str) -> HookOutcome:
    """A Read of a project file (not an /autoplan file): the hook's fast path."""
    notes = os.path.join(session.project_dir, "notes.md")
    with open(notes, "w", encoding="utf-8") as handle:
        handle.write("Some notes.\n")
    outcome = session.guarded(Call.read(notes), env=env)
    assert outcome.returncode == 0 and outcome.output == {}, outcome.stdout
    assert outcome.log == [], "the fast path logs nothing"
    return outcome


def _wait(marker: str) -> None:
    until = time.monotonic() + WAIT_S
    while preindex.running(marker):
        assert time.monotonic() < until, "the pre-index did not end"
        time.sleep(0.01)


def _saved(session: SimulatedSession) -> tuple[int, int, int]:
    """The saved index's file inode, frame count and covered bytes."""
    path = str(session.journal_path)
    found = journal_index.load(
        _index_dir(session), session.session_id, path, os.stat(path), [session.project_dir]
    )
    assert found is not None, "no usable index was saved"
    inode = os.stat(journal_index.index_file(_index_dir(session), session.session_id)).st_ino
    return inode, found.frames, found.boundary


def test_a_non_phase_call_makes_the_first_phase_entry_go_on_from_the_index(
    flow: Flow, session: SimulatedSession
) -> None:
    _long_session(session, flow)
    assert not os.path.exists(journal_index.index_file(_index_dir(session), session.session_id))
    size = session.journal_path.stat().st_size
    _non_phase(session)
    _wait(_marker(session))
    inode, frames, covered = _saved(session)
    with open(_marker(session), "rb") as handle:
        marked = int(handle.read())  # the size when the hook ran: its call's message written
    assert size < marked <= covered
    outcome = flow.attempt(flow.driver_read("design"))
    assert_allowed(outcome, path="journal")
    after = _saved(session)
    assert after[0] == inode and after[1] == frames + 1, "the entry re-read the journal in full"


def test_switched_off_the_first_phase_entry_is_cold(flow: Flow, session: SimulatedSession) -> None:
    _long_session(session, flow)
    _non_phase(session, **{tuning.ENV: tuning.joined("", preindex=0)})
    time.sleep(0.3)  # time for a child, if one had been started, to begin writing
    assert not os.path.exists(_index_dir(session))
    outcome = flow.attempt(flow.driver_read("design"))
    assert_allowed(outcome, path="journal")
    assert _saved(session)[1] == 1  # the snapshot that read wrote


def test_below_the_threshold_nothing_starts(flow: Flow, session: SimulatedSession) -> None:
    _long_session(session, flow)
    size = session.journal_path.stat().st_size
    _non_phase(session, **{tuning.ENV: tuning.joined("", preindex_min_bytes=size + MiB)})
    time.sleep(0.3)
    assert not os.path.exists(_index_dir(session))
    _non_phase(session, **{tuning.ENV: tuning.joined("", preindex_min_bytes=size)})
    _wait(_marker(session))
    assert _saved(session)[2] >= size


def test_only_after_enough_growth_does_another_start(flow: Flow, session: SimulatedSession) -> None:
    _long_session(session, flow)
    _non_phase(session)
    _wait(_marker(session))
    first = Path(_marker(session)).read_bytes()
    session.say("A short reply.")
    _non_phase(session)  # grown by far less than the step
    assert Path(_marker(session)).read_bytes() == first
    session.say("More: " + "lorem ipsum " * (preindex.STEP_BYTES // 12 + 1))
    grown = session.journal_path.stat().st_size
    _non_phase(session)
    _wait(_marker(session))
    assert int(Path(_marker(session)).read_bytes()) >= grown
    assert _saved(session)[2] >= grown


def test_a_running_pre_index_holds_the_lock(flow: Flow, session: SimulatedSession) -> None:
    _long_session(session, flow)
    marker = _marker(session)
    os.makedirs(os.path.dirname(marker))
    held = os.open(marker, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        _non_phase(session)
        time.sleep(0.3)
        assert Path(marker).read_bytes() == b"", "a pre-index started under a held lock"
        assert not os.path.exists(journal_index.index_file(_index_dir(session), session.session_id))
    finally:
        os.close(held)
    # Started twice at once (a step of 0: always due): the second finds the first's child
    # holding the lock, though the process that started it has already let go of it.
    started = _start_twice(session)
    assert started == [True, False]
    _wait(marker)
    assert _start_twice(session)[0] is True
    _wait(marker)


STARTER = """\
import json, sys
sys.path.insert(0, sys.argv[1])
from plangate import tuning
from plangate.guard import preindex
payload = json.loads(sys.argv[2])
print(json.dumps([preindex.maybe_start(payload), preindex.maybe_start(payload)]))
"""


def _start_twice(session: SimulatedSession) -> list[bool]:
    payload = session.payload(Call.read(os.path.join(session.project_dir, "notes.md")))
    env = session.environ({tuning.ENV: tuning.joined("", preindex_step_bytes=0)})
    done = subprocess.run(
        [sys.executable, "-S", "-c", STARTER, package_root(), json.dumps(payload)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    started: list[bool] = json.loads(done.stdout)
    return started


def test_a_broken_state_root_does_not_change_the_answer(
    flow: Flow, session: SimulatedSession, tmp_path: Path
) -> None:
    _long_session(session, flow)
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the state root should be\n")
    _non_phase(session, PLANGATE_STATE_ROOT=str(blocked))
    index_dir = tmp_path / "read-only-state" / "journal-index"
    index_dir.mkdir(parents=True)
    (index_dir / (session.session_id + preindex.SUFFIX)).mkdir()  # the marker is a folder
    _non_phase(session, PLANGATE_STATE_ROOT=str(index_dir.parent))
    assert blocked.read_text() == "a file where the state root should be\n"


DETACH = """\
import sys
sys.path.insert(0, sys.argv[1])
from plangate import tuning
from plangate.guard import preindex
print(preindex.spawn(["/bin/sleep", "30"]), flush=True)
"""


def test_the_child_is_detached_from_the_hooks_pipes() -> None:
    """A hook that starts a process still running 30 s later ends at once: Claude Code,
    reading the hook's stdout and stderr to their end, does not wait for the child."""
    # The run ending at all proves it: its timeout is half the child's 30 s, so a hook that
    # waited for the child would raise TimeoutExpired (no elapsed-time bound needed).
    done = subprocess.run(
        [sys.executable, "-S", "-c", DETACH, package_root()],
        capture_output=True,
        text=True,
        check=True,
        timeout=15,
    )
    pid = int(done.stdout)
    try:
        assert os.getsid(pid) == pid, "not in a session of its own"
        # Once it runs `sleep` (its start-up may hold a file open for a moment), it holds
        # /dev/null three times and nothing else: no pipe of the hook's.
        until = time.monotonic() + 10
        while sorted(os.listdir(f"/proc/{pid}/fd")) != ["0", "1", "2"]:
            assert time.monotonic() < until, os.listdir(f"/proc/{pid}/fd")
            time.sleep(0.01)
        for fd in (0, 1, 2):
            assert os.readlink(f"/proc/{pid}/fd/{fd}") == os.devnull
    finally:
        os.kill(pid, 9)


PROBE = """\
import io, json, sys
sys.path.insert(0, sys.argv[1])
before = set(sys.modules)
from plangate import tuning
from plangate.guard import preindex
from plangate.hooks.pre_tool_use import decide
payload = json.loads(sys.argv[2])
output = decide(payload)
print(json.dumps([output, sorted(set(sys.modules) - before)]))
"""


def test_the_fast_path_that_starts_a_pre_index_stays_light(
    flow: Flow, session: SimulatedSession
) -> None:
    _long_session(session, flow)
    payload = session.payload(Call.read(os.path.join(session.project_dir, "notes.md")))
    done = subprocess.run(
        [sys.executable, "-S", "-c", PROBE, package_root(), json.dumps(payload)],
        env=session.environ(),
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    output, loaded = json.loads(done.stdout)
    assert output == {}
    heavy = sorted(set(loaded) & HEAVY_STDLIB)
    assert heavy == [], f"the fast path loaded {heavy}"
    assert "plangate.guard.evaluate" not in loaded
    _wait(_marker(session))
    assert _saved(session)[2] > 0, "the probe's call started no pre-index"
