"""``plangate`` run as a person runs it, from a demo scene: a process, bounded in time."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from plangate.processes import Completed, run_bounded


def plangate(
    *args: str, env: Mapping[str, str], cwd: Path | None = None, timeout: float = 60
) -> Completed:
    """``python -m plangate ARGS`` with ``env`` as its whole environment."""
    return run_bounded([sys.executable, "-m", "plangate", *args], env=env, cwd=cwd, timeout=timeout)
