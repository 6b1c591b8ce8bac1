"""Writing a file whole, so that readers see the old bytes or the new ones.

Standard library only: the hooks use it for the decision log and the journal index.
"""

from __future__ import annotations

import os


def write_all(descriptor: int, data: bytes) -> None:
    """``os.write`` until every byte is written (it may write fewer than asked)."""
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]


def replace_private(path: str, temporary: str, data: bytes) -> None:
    """Write ``data`` to the new file ``temporary`` (0600, in ``path``'s folder), then rename
    it over ``path``. Raises OSError, and then leaves no temporary file behind."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    flags |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(temporary, flags, 0o600)
        try:
            write_all(descriptor, data)
        finally:
            os.close(descriptor)
        os.replace(temporary, path)
    except OSError:
        remove_quietly(temporary)
        raise


def remove_quietly(path: str) -> None:
    """Remove ``path`` if it is there. (Not contextlib.suppress: importing contextlib costs a
    hook process a millisecond.)"""
    try:
        os.unlink(path)
    except OSError:
        return
