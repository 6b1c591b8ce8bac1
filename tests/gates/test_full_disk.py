"""A stop let through on a full disk still counts once space returns (issue 24.4).

The state root is a real tmpfs of 1 MiB, filled to the last byte; the real Stop hook runs in
a process. It lets the stop through with ``GATE_STATE`` and keeps the error in the space the
reserve held, so that ``plangate report --expect armed`` exits 3 after space returns.
"""

from __future__ import annotations

import errno
import io
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from plangate.commands.report import EXIT_ERRORED, report
from plangate.gates import space_reserve
from tests.gates.conftest import Env, ceo_session


@pytest.fixture
def small_disk(env: Env) -> Iterator[Path]:
    """``env.state`` as a fresh tmpfs of 1 MiB."""
    env.state.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", str(env.state)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip("mounting a small tmpfs needs root: " + mounted.stderr.decode().strip())
    try:
        yield env.state
    finally:
        subprocess.run(["umount", "-l", str(env.state)], check=False)


def _fill(disk: Path) -> Path:
    """Fill ``disk`` to the last byte; the filler file."""
    filler = disk / "filler"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (64 * 1024, 4096, 1):
            while True:
                try:
                    if os.write(descriptor, b"x" * size) < size:
                        break
                except OSError as error:
                    assert error.errno == errno.ENOSPC
                    break
    finally:
        os.close(descriptor)
    with pytest.raises(OSError):
        (disk / "probe").write_bytes(b"y" * 4096)
    return filler


def _stop(env: Env, text: str, journal: Any) -> dict[str, Any]:
    journal.text(text)
    result = env.hook(env.payload(journal))
    assert result.returncode == 0, result.stderr
    value: dict[str, Any] = json.loads(result.stdout)
    return value


def _report(env: Env, session: str) -> int:
    return report(
        session, "armed", True, io.StringIO(), err=io.StringIO(), state_root=str(env.state)
    )


def test_a_stop_let_through_on_a_full_disk_counts_once_space_returns(
    env: Env, small_disk: Path
) -> None:
    journal = ceo_session(env)
    assert _stop(env, "Done.", journal)["decision"] == "block"
    session = journal.session_id
    reserve = small_disk / "skill-gates" / space_reserve.NAME
    assert reserve.stat().st_size == space_reserve.RESERVE_BYTES
    assert _report(env, session) == 0

    filler = _fill(small_disk)
    output = _stop(env, "Done again.", journal)
    assert "decision" not in output  # the gate failed open
    assert "code=GATE_STATE" in output["systemMessage"]
    assert not reserve.exists()  # given up for the error line

    filler.unlink()  # space returns
    assert _report(env, session) == EXIT_ERRORED
    # The next stop merges the kept error into the record and makes a new reserve.
    assert _stop(env, "Done a third time.", journal)["decision"] == "block"
    assert env.record(session)["gates"]["ceo_review_gate"]["error_count"] == 1
    assert reserve.exists()
    assert _report(env, session) == EXIT_ERRORED


def test_without_the_reserve_the_full_disk_would_lose_the_count(env: Env, small_disk: Path) -> None:
    """The control: the reserve deleted by hand, the same full disk keeps nothing."""
    journal = ceo_session(env)
    assert _stop(env, "Done.", journal)["decision"] == "block"
    (small_disk / "skill-gates" / space_reserve.NAME).unlink()
    filler = _fill(small_disk)
    assert "code=GATE_STATE" in _stop(env, "Done again.", journal)["systemMessage"]
    filler.unlink()
    assert _report(env, journal.session_id) == 0
