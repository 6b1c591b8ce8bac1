"""Real process chains with an ancestry the test controls, for :mod:`plangate.agent_session`.

:func:`run_detached` starts ``argv`` below a process that left the test's own ancestry (it
forked, its parent exited, it called ``setsid``): whatever runs the test suite (a terminal, CI,
a coding agent) is not above the command, so the only agent process or marker above it is
one the test put there. :func:`fake_claude` is a shell whose executable is named ``claude``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from plangate import agent_session

LAUNCHER = """
import os, subprocess, sys
if os.fork():
    os._exit(0)
os.setsid()
code = subprocess.call(sys.argv[2:])
with open(sys.argv[1], "w") as handle:
    handle.write(str(code))
"""

PROBE = (
    "import json; from plangate import agent_session as a; s = a.detect(); "
    "print(json.dumps(None if s is None else [s.signal, s.evidence, s.pid]))"
)
"""A Python program that prints what :func:`plangate.agent_session.detect` finds."""


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The test's environment without any agent marker, with ``extra``."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in agent_session.MARKERS and not key.startswith("CLAUDE_CODE_")
    }
    env.update(extra or {})
    return env


def run_detached(
    argv: list[str],
    env: dict[str, str],
    cwd: str | Path | None = None,
    timeout: float = 60,
) -> Done:
    """Run ``argv`` below a detached launcher (module docstring) and wait for it."""
    with tempfile.TemporaryDirectory() as folder:
        status = Path(folder) / "status"
        done = subprocess.run(
            [sys.executable, "-c", LAUNCHER, str(status), *argv],
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return Done(int(status.read_text()), done.stdout, done.stderr)


def fake_claude(folder: Path, name: str = "claude") -> Path:
    """A copy of ``/bin/sh`` at ``folder/name``: a process whose executable is ``claude``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    shutil.copy(os.path.realpath("/bin/sh"), path)
    path.chmod(0o755)
    return path


def shell(script: str, *args: str, sh: str | Path = "/bin/sh") -> list[str]:
    """``sh -c SCRIPT sh ARGS…``; the script ends in ``exit $?`` so the shell stays above
    the command it runs (rather than exec'ing it) and exits with its status."""
    return [str(sh), "-c", script + "\nexit $?", "sh", *args]
