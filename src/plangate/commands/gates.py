"""``plangate gates hook-timeout``: the timeout every gate registration must carry.

Claude Code kills a hook that outlives its registration's ``timeout`` and lets the stop
through without a trace, so a gate must always give up by itself first: its longest deadline
is 20 seconds, and the registration allows 25 (``plangate.hooks.registry.HOOK_TIMEOUT_S``).
Setup and ``plangate settings`` write this number; keep your own settings at or above it.
"""

from __future__ import annotations

from typing import TextIO

from plangate.hooks.registry import HOOK_TIMEOUT_S


def hook_timeout(out: TextIO) -> int:
    """Print the hook timeout in seconds (``25``). Returns 0."""
    out.write(f"{HOOK_TIMEOUT_S}\n")
    return 0
