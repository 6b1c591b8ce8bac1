"""A little disk space kept back, so that a full disk does not lose a gate's error count.

When a stop goes through because the session record could not be written, the error is the
only trace of it that ``plangate report`` counts (``errors.pending.jsonl``). On a full disk
that line cannot be written either. So once a record has been written, the state root keeps
``skill-gates/.reserve``, :data:`RESERVE_BYTES` of zeros; when the pending line meets a full
disk, :func:`release` deletes the reserve and the line is written into the space it held.
The next record written makes a new reserve. Hook path: standard library only.
"""

from __future__ import annotations

import errno
import os

from plangate.state_root import SKILL_GATES, StateRoot

NAME = ".reserve"
RESERVE_BYTES = 64 * 1024
FULL = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))
"""The errors that mean the disk (or the user's quota) is full."""


def keep(state_root: str | None = None) -> bool:
    """Make the reserve if it is missing; True when it is there. Never raises."""
    try:
        folder = StateRoot(state_root).folder(SKILL_GATES)
        if os.path.lexists(folder.file(NAME)):
            return True
        folder.replace(NAME, bytes(RESERVE_BYTES), 0o600)
        return True
    except OSError:
        return False


def release(state_root: str | None = None) -> bool:
    """Delete the reserve, giving its space back; True when there was one. Never raises."""
    try:
        StateRoot(state_root).folder(SKILL_GATES).remove(NAME)
    except OSError:
        return False
    return True


def is_full(error: OSError) -> bool:
    return error.errno in FULL
