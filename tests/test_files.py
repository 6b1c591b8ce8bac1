"""plangate's one whole-file writer (``files.replace``) and its one lock (``files.Lock``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from plangate import files
from testkit.clock import FakeClock


class Write(NamedTuple):
    name: str
    before: bytes | None  # what ``path`` holds first (None: nothing; b"->" a symlink)
    mode: int | None
    durable: bool
    exclusive: bool
    after: bytes  # what ``path`` holds afterwards
    after_mode: int
    fsyncs: int  # durable: the file, then (once it is in place) its folder
    error: type[OSError] | None = None


WRITES = [
    Write("a new private file", None, 0o600, False, False, b"new", 0o600, 0),
    Write("mode None is open's default", None, None, False, False, b"new", 0o644, 0),
    Write("any mode, whatever the umask", None, 0o664, False, False, b"new", 0o664, 0),
    Write("replaces what is there", b"old", 0o640, False, False, b"new", 0o640, 0),
    Write("durable: the file and its folder", b"old", 0o600, True, False, b"new", 0o600, 2),
    Write("exclusive creates", None, 0o444, True, True, b"new", 0o444, 2),
    Write("exclusive never replaces", b"old", 0o444, True, True, b"old", 0o600, 1, FileExistsError),
    Write("a symlink is replaced, not followed", b"->", 0o600, False, False, b"new", 0o600, 0),
]


@pytest.fixture
def umask_022() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.mark.parametrize("case", WRITES, ids=[case.name for case in WRITES])
def test_replace(
    case: Write, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, umask_022: None
) -> None:
    path = tmp_path / "file"
    target = tmp_path / "target"
    if case.before == b"->":
        target.write_bytes(b"target")
        path.symlink_to(target)
    elif case.before is not None:
        path.write_bytes(case.before)
        path.chmod(0o600)
    synced: list[int] = []
    real_fsync = os.fsync

    def fsync(descriptor: int) -> None:
        synced.append(descriptor)
        real_fsync(descriptor)

    monkeypatch.setattr(os, "fsync", fsync)
    if case.error is None:
        files.replace(str(path), b"new", case.mode, durable=case.durable, exclusive=case.exclusive)
    else:
        with pytest.raises(case.error):
            files.replace(
                str(path), b"new", case.mode, durable=case.durable, exclusive=case.exclusive
            )
    assert not path.is_symlink()
    assert path.read_bytes() == case.after
    assert path.stat().st_mode & 0o777 == case.after_mode
    assert len(synced) == case.fsyncs
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["file"] + (["target"] if case.before == b"->" else [])
    )
    if case.before == b"->":
        assert target.read_bytes() == b"target"


def test_a_failed_write_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "file"
    path.write_bytes(b"old")

    def full(descriptor: int, data: object) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(OSError, match="No space"):
        files.replace(str(path), b"new", durable=True)
    monkeypatch.undo()
    assert path.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["file"]


def test_a_missing_folder_is_an_error_and_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        files.replace(str(tmp_path / "missing" / "file"), b"new")
    assert os.listdir(tmp_path) == []


# -- the lock ----------------------------------------------------------------------------


class Hold(NamedTuple):
    name: str
    holder: str  # "none", "alive" (a lock held now) or "left" (a file a dead holder left)
    age: float  # seconds since the holder took it
    stale: float | None
    acquired: bool


HOLDS = [
    Hold("a free lock", "none", 0, None, True),
    Hold("a file a dead holder left is free", "left", 3600, None, True),
    Hold("a held lock times out", "alive", 0, None, False),
    Hold("without stale, an old lock still times out", "alive", 3600, None, False),
    Hold("a lock held under stale is waited for", "alive", 20, 30, False),
    Hold("a lock held over stale is taken over", "alive", 31, 30, True),
]


@pytest.mark.parametrize("case", HOLDS, ids=[case.name for case in HOLDS])
def test_lock(case: Hold, tmp_path: Path) -> None:
    path = tmp_path / "thing.lock"
    holder = files.Lock(str(path), timeout=0)
    if case.holder == "alive":
        holder.acquire()
    elif case.holder == "left":
        path.write_bytes(b"12345\n")
    if case.holder != "none":
        stamp = time.time() - case.age
        os.utime(path, (stamp, stamp))
    clock = FakeClock()
    lock = files.Lock(str(path), timeout=0.2, stale=case.stale, clock=clock, sleep=clock.sleep)
    try:
        if case.acquired:
            with lock:
                assert path.read_bytes() == b"%d\n" % os.getpid()
                assert lock.held
            assert clock.elapsed == 0  # never waited
        else:
            with pytest.raises(TimeoutError, match="held for over 0.2 s"):
                lock.acquire()
            assert not lock.held
            assert 0.2 <= clock.elapsed < 0.2 + 2 * lock.poll  # the whole timeout, polled
    finally:
        holder.release()
    # Whoever lets go last, no lock file is left behind, and nothing else either.
    assert os.listdir(tmp_path) == []


HOLD_AND_DIE = """
import sys, time
from plangate import files
files.Lock(sys.argv[1], timeout=5).acquire()
print("held", flush=True)
time.sleep(60)
"""


def test_a_holder_that_dies_lets_go_at_once(tmp_path: Path) -> None:
    path = str(tmp_path / "thing.lock")
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD_AND_DIE, path], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None and process.stdout.readline() == "held\n"
        with pytest.raises(TimeoutError):
            files.Lock(path, timeout=0.1).acquire()
    finally:
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=10)
    with files.Lock(path, timeout=0.5):  # no stale timeout needed: the kernel let go
        pass


def test_one_lock_at_a_time_across_threads(tmp_path: Path) -> None:
    import threading

    path = str(tmp_path / "counter.lock")
    counter = tmp_path / "counter"
    counter.write_text("0")

    def bump() -> None:
        for _ in range(25):
            with files.Lock(path, timeout=10):
                value = int(counter.read_text())
                time.sleep(0.0002)
                counter.write_text(str(value + 1))

    workers: list[Callable[[], None]] = [bump] * 4
    threads = [threading.Thread(target=work) for work in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counter.read_text() == "100"


@pytest.mark.parametrize(
    ("at", "limit", "found"),
    [
        (0, 1 << 22, True),
        ((1 << 20) - 3, 1 << 22, True),  # across the first two reads
        ((2 << 20) - 1, 1 << 22, True),
        ((3 << 20) + 17, 1 << 22, True),
        ((3 << 20) + 17, 3 << 20, False),  # past the limit
        ((1 << 20) - 3, (1 << 20) + 2, False),  # only its first five bytes within it
    ],
)
def test_a_search_reads_a_megabyte_at_a_time(
    tmp_path: Path, at: int, limit: int, found: bool
) -> None:
    """``contains_nofollow`` finds a word wherever it stands within the limit, a read's
    boundary included, and nothing past it."""
    data = bytearray(b"x" * (4 << 20))
    data[at : at + 8] = b"autoplan"
    path = tmp_path / "journal.jsonl"
    path.write_bytes(bytes(data))
    assert files.contains_nofollow(str(path), b"autoplan", limit) is found
    assert not files.contains_nofollow(str(path), b"autoplans", limit)


def test_a_search_never_follows_a_link(tmp_path: Path) -> None:
    target = tmp_path / "real.jsonl"
    target.write_bytes(b"autoplan\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    with pytest.raises(OSError):
        files.contains_nofollow(str(link), b"autoplan", 1 << 20)
