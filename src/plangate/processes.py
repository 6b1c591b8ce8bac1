"""Ending the processes plangate starts: their process group, and strays found by a token.

The Claude Code CLI runs its Bash tool in process groups of its own, so killing the CLI's
group misses them; every process started for one run inherits :data:`RUN_TOKEN_ENV` and is
found by it in ``/proc`` afterwards.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from typing import Any

RUN_TOKEN_ENV = "PLANGATE_RUN_TOKEN"
"""Set to a fresh token for each process tree plangate starts; see :func:`end_marked`."""


def kill_group(process: subprocess.Popen[Any]) -> None:
    """Kill the process group ``process`` leads (it was started with a new session)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        if process.poll() is None:
            process.kill()


def marked_pids(token: str) -> list[int]:
    """The processes whose environment carries this token (Linux ``/proc``)."""
    marker = f"{RUN_TOKEN_ENV}={token}".encode()
    me = os.getpid()
    found: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                environ = handle.read()
        except OSError:
            continue
        if marker in environ.split(b"\0"):
            found.append(int(entry))
    return found


def end_marked(token: str, rounds: int = 3) -> list[int]:
    """Kill the processes carrying this token; returns their ids.

    Only processes started under the token carry it, so nothing else is touched; a few rounds
    catch children started while their parents were being ended.
    """
    ended: list[int] = []
    for _ in range(rounds):
        pids = marked_pids(token)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                ended.append(pid)
            except OSError:
                pass
        time.sleep(0.05)
    return ended
