"""Deferred work (plangate.deferred): a hook process answers first and finishes later.

A process started as registered hooks are (``run_process``) leaves deferred work to a
detached child: the parent's exit and the end of its output pipe do not wait for it, and the
work still gets done. In-process callers (tests, commands) and a process started with
``defer=False`` get it done at once. The journal reader defers the index save of a long
journal's first read, and the saved index is the one a synchronous save writes.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from plangate import deferred, tuning
from plangate.hook_registry import hook_command
from plangate.journal import frames
from plangate.journal import index as journal_index
from testkit.journals import Journal
from tests.conftest import SRC

SLOW_WORK = """
import os, sys, time
from plangate import deferred

def main():
    target = sys.argv[1]
    def work():
        time.sleep(float(sys.argv[2]))
        with open(target + ".tmp", "w") as handle:
            handle.write(str(os.getsid(0)) + " " + str(os.getppid()))
        os.replace(target + ".tmp", target)
    def broken():
        raise RuntimeError("a bug in deferred work")
    if sys.argv[2] == "broken":
        work = broken
    deferred.defer(work, 10**12)  # over any threshold
    print("answered", flush=False)  # left in the buffer: run_process flushes it
    return 3
"""


def _run(
    tmp_path: Path, defer: bool, sleep: float | str, fork: bool = True
) -> tuple[float, subprocess.CompletedProcess[str]]:
    module = tmp_path / "slow_hook.py"
    module.write_text(SLOW_WORK)
    entry = (
        ("" if fork else "import os; del os.fork; ")  # as on Windows
        + f"import sys; sys.path[:0] = [{SRC!r}, {str(tmp_path)!r}]; "
        "from slow_hook import main; from plangate.hook_io.runtime import run_process; "
        f"run_process(main, defer={defer})"
    )
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-S", "-c", entry, str(tmp_path / "done"), str(sleep)],
        capture_output=True,  # pipes, as Claude Code reads a hook: EOF must not wait
        text=True,
        timeout=30,
    )
    return time.monotonic() - started, done


def _wait_for(path: Path, seconds: float) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists():
            return path.read_text()
        time.sleep(0.05)
    raise AssertionError(f"{path} was never written")


def test_a_hook_process_answers_before_its_deferred_work_is_done(tmp_path: Path) -> None:
    took, done = _run(tmp_path, defer=True, sleep=2.0)
    assert (done.returncode, done.stdout, done.stderr) == (3, "answered\n", "")
    assert took < 1.5, f"the hook's answer waited for its deferred work ({took:.2f} s)"
    assert not (tmp_path / "done").exists()
    session, parent = _wait_for(tmp_path / "done", 10).split()
    assert int(session) != os.getsid(0)  # detached: a session of its own
    assert int(parent) != os.getpid()


def test_without_deferral_the_work_is_done_before_the_process_ends(tmp_path: Path) -> None:
    took, done = _run(tmp_path, defer=False, sleep=0.5)
    assert (done.returncode, done.stdout) == (3, "answered\n")
    assert took >= 0.5
    assert (tmp_path / "done").exists()


def test_without_fork_the_work_is_done_before_the_answer_ends(tmp_path: Path) -> None:
    took, done = _run(tmp_path, defer=True, sleep=0.5, fork=False)
    assert (done.returncode, done.stdout, done.stderr) == (3, "answered\n", "")
    assert took >= 0.5 and (tmp_path / "done").exists()


def test_deferred_work_that_fails_never_changes_the_answer(tmp_path: Path) -> None:
    for fork in (True, False):
        _, done = _run(tmp_path, defer=True, sleep="broken", fork=fork)
        assert (done.returncode, done.stdout, done.stderr) == (3, "answered\n", "")


def test_in_process_work_is_not_deferred_and_drain_runs_what_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    done: list[str] = []
    deferred.defer(lambda: done.append("at once"), 10**12)
    assert done == ["at once"] and deferred.pending() == 0
    monkeypatch.setattr(deferred, "_accepting", [True])
    monkeypatch.setenv(tuning.ENV, tuning.joined(defer_min_bytes=100))
    deferred.defer(lambda: done.append("small"), 99)
    deferred.defer(lambda: done.append("later"), 100)
    assert done == ["at once", "small"] and deferred.pending() == 1
    deferred.drain()
    assert done == ["at once", "small", "later"] and deferred.pending() == 0


def _index_values(state: Path) -> list[object]:
    (path,) = (state / "journal-index").glob("*.index")
    read = frames.read(str(path), journal_index._key)
    assert read is not None
    return read[0]


def test_a_journals_index_is_saved_after_the_answer_and_equals_a_synchronous_one(
    tmp_path: Path,
) -> None:
    """The reader, started as hooks are, defers the save of a first read's index (here for
    any size): the index the detached child writes is the one a synchronous save writes."""
    root = Path(str(tmp_path.resolve()))
    config, project = root / "claude", root / "project"
    project.mkdir()
    journal = Journal(cwd=str(project))
    for number in range(40):
        journal.session(f"Read notes.txt, then run a command, then answer. ({number})")
    path = journal.write_layout(config)
    values = {}
    for name, min_bytes in (("deferred", "0"), ("synchronous", str(10**12))):
        state = root / name
        env = dict(os.environ, PLANGATE_STATE_ROOT=str(state))
        env[tuning.ENV] = tuning.joined(defer_min_bytes=int(min_bytes))
        command = hook_command("plangate.journal.__main__")
        arguments = " ".join(
            map(shlex.quote, [str(path), journal.session_id, str(project), str(config)])
        )
        done = subprocess.run(
            f"{command} {arguments}",
            shell=True,
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert done.returncode == 0 and '"status":"ready"' in done.stdout, done
        if name == "deferred":
            _wait_for_index(state)
        values[name] = _index_values(state)
    assert values["deferred"] == values["synchronous"]


def _wait_for_index(state: Path) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        found = list((state / "journal-index").glob("*.index"))
        if found and frames.read(str(found[0]), journal_index._key) is not None:
            return
        time.sleep(0.05)
    raise AssertionError("the deferred index save never wrote the index")
