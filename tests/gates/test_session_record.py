"""The session record: atomic, 0600, under a lock that waits 3 s and takes over after 30 s."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from plangate import files
from plangate.gates import session_record
from plangate.gates.errors import GateError

SESSION = "0b1c7275-0705-4388-8338-5aa9c0a4c4cd"


def _bump(record: dict[str, object]) -> None:
    record["n"] = int(record.get("n", 0)) + 1  # type: ignore[call-overload]


def test_update_creates_a_private_record(tmp_path: Path) -> None:
    record = session_record.update(SESSION, _bump, state_root=str(tmp_path))
    path = Path(session_record.record_path(SESSION, str(tmp_path)))
    assert json.loads(path.read_text()) == record
    assert record["n"] == 1 and record["schema"] == 1 and record["session"] == SESSION
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    assert sorted(os.listdir(path.parent)) == ["record.json"]  # no lock or temp left behind


def _held(folder: Path) -> files.Lock:
    """The session lock for someone else to hold (another open file: flock tells them apart)."""
    folder.mkdir(parents=True, exist_ok=True)
    return files.Lock(str(folder / session_record.LOCK), timeout=0)


def test_a_held_lock_is_waited_for_then_gate_locked(tmp_path: Path) -> None:
    folder = Path(session_record.session_folder(SESSION, str(tmp_path)))
    with _held(folder):
        started = time.monotonic()
        with pytest.raises(GateError) as raised:
            session_record.update(SESSION, _bump, state_root=str(tmp_path), wait=0.3)
        assert raised.value.code == "GATE_LOCKED"
        # Real time: the lock is a real flock another open file holds, waited for through
        # update(). The lower bound is the point (it waited); the upper one only says it
        # gave up, far below what a loaded machine could add.
        assert 0.3 <= time.monotonic() - started < 30
        # Never released by others: the holder's file, with its pid, is still there.
        assert (folder / session_record.LOCK).read_bytes() == b"%d\n" % os.getpid()
    assert sorted(os.listdir(folder)) == []


def test_a_lock_left_by_a_dead_hook_is_free(tmp_path: Path) -> None:
    folder = Path(session_record.session_folder(SESSION, str(tmp_path)))
    folder.mkdir(parents=True)
    (folder / session_record.LOCK).write_bytes(b"a hook killed before it cleaned up")
    record = session_record.update(SESSION, _bump, state_root=str(tmp_path), wait=0)
    assert record["n"] == 1
    assert sorted(os.listdir(folder)) == ["record.json"]


def test_a_lock_held_for_over_30_seconds_is_taken_over(tmp_path: Path) -> None:
    folder = Path(session_record.session_folder(SESSION, str(tmp_path)))
    with _held(folder) as hung:
        old = time.time() - 31
        os.utime(folder / session_record.LOCK, (old, old))
        record = session_record.update(SESSION, _bump, state_root=str(tmp_path), wait=1)
        assert record["n"] == 1
        assert sorted(os.listdir(folder)) == ["record.json"]
        assert hung.held  # the hung hook still holds its own (now nameless) file
    assert sorted(os.listdir(folder)) == ["record.json"]  # and its release removes nothing


def test_a_lock_held_for_under_30_seconds_is_not_taken_over(tmp_path: Path) -> None:
    folder = Path(session_record.session_folder(SESSION, str(tmp_path)))
    with _held(folder):
        young = time.time() - 20
        os.utime(folder / session_record.LOCK, (young, young))
        with pytest.raises(GateError) as raised:
            session_record.update(SESSION, _bump, state_root=str(tmp_path), wait=0.1)
        assert raised.value.code == "GATE_LOCKED"


@pytest.mark.parametrize(
    "content", [b"{not json", b"[]", b'{"schema": 2}', b'{"schema": 1, "gates": []}', b"\xff"]
)
def test_an_unusable_record_is_gate_state(tmp_path: Path, content: bytes) -> None:
    path = Path(session_record.record_path(SESSION, str(tmp_path)))
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    with pytest.raises(GateError) as raised:
        session_record.update(SESSION, _bump, state_root=str(tmp_path))
    assert raised.value.code == "GATE_STATE"
    assert path.read_bytes() == content  # never overwritten


def test_an_unwritable_state_root_is_gate_state(tmp_path: Path) -> None:
    blocker = tmp_path / "state"
    blocker.write_text("a file where the folder should be")
    with pytest.raises(GateError) as raised:
        session_record.update(SESSION, _bump, state_root=str(blocker))
    assert raised.value.code == "GATE_STATE"


def test_old_session_folders_are_cleaned_but_not_the_current_one(tmp_path: Path) -> None:
    root = tmp_path
    for name, age_days in (("old", 8), ("recent", 6), ("current", 30)):
        session_record.update(name, _bump, state_root=str(root))
        folder = Path(session_record.session_folder(name, str(root)))
        stamp = time.time() - age_days * 86400
        for path in (folder / "record.json", folder):
            os.utime(path, (stamp, stamp))
    removed = session_record.clean_old("current", str(root))
    assert removed == ["old"]
    assert sorted(session_record.sessions(str(root))) == ["current", "recent"]


def test_cleaning_never_deletes_through_a_linked_skill_gates_folder(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    old = elsewhere / "old-session"
    old.mkdir(parents=True)
    (old / "record.json").write_text("the user's own file")
    stamp = time.time() - 30 * 86400
    for path in (old / "record.json", old):
        os.utime(path, (stamp, stamp))
    root = tmp_path / "state"
    root.mkdir()
    (root / session_record.FOLDER).symlink_to(elsewhere)
    assert session_record.clean_old("current", str(root)) == []
    assert (old / "record.json").read_text() == "the user's own file"


WORKER = textwrap.dedent(
    """
    import sys
    from plangate.gates import session_record

    def bump(record):
        counts = record.setdefault("counts", {})
        counts[sys.argv[2]] = counts.get(sys.argv[2], 0) + 1

    for _ in range(int(sys.argv[3])):
        session_record.update(sys.argv[1], bump, state_root=sys.argv[4])
    """
)
READER = textwrap.dedent(
    """
    import json, os, sys, time
    path, done = sys.argv[1], sys.argv[2]
    bad = reads = 0
    end = time.monotonic() + 60
    while time.monotonic() < end and not os.path.exists(done):
        reads += 1
        try:
            with open(path, "rb") as stream:
                json.loads(stream.read())
        except FileNotFoundError:
            pass
        except ValueError:
            bad += 1
    print(bad, reads)
    """
)


def test_concurrent_processes_lose_nothing_and_never_corrupt_the_record(tmp_path: Path) -> None:
    workers, rounds = 6, 40
    path = session_record.record_path(SESSION, str(tmp_path))
    done = tmp_path / "done"
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, path, str(done)], stdout=subprocess.PIPE, text=True
    )
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, SESSION, f"w{n}", str(rounds), str(tmp_path)]
        )
        for n in range(workers)
    ]
    for process in processes:
        assert process.wait(timeout=60) == 0
    done.touch()
    out, _ = reader.communicate(timeout=60)
    bad, reads = out.split()
    assert bad == "0" and int(reads) > 0
    record = json.loads(Path(path).read_text())
    assert record["counts"] == {f"w{n}": rounds for n in range(workers)}
    assert sorted(os.listdir(Path(path).parent)) == ["record.json"]
