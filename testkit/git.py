"""Git for tests: one identity, no prompts, and a bounded wait."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

#: The author and committer of every commit a test makes.
GIT_ENV = {
    "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_TERMINAL_PROMPT": "0",
}


def git(cwd: Path | str, *args: str) -> str:
    """``git ARGS`` in ``cwd``; its output. A failure raises ``CalledProcessError``."""
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, **GIT_ENV},
        check=True,
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout
