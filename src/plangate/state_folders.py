"""The state root's folders, checked before plangate writes in them.

The agent plangate watches runs as the same user and can write in the state root, so it can
plant a symbolic link where plangate keeps a file or a folder. :func:`state_folder` gives
the path of a folder under the state root only after checking the root and every folder on
the way down: each is created (mode 0700) where it is missing, and one that is a symbolic
link, is not a folder, or belongs to another user is refused with :class:`UnsafeFolder`
(``STATE_FOLDER_UNSAFE``, with the remedy). The files in it are then opened with
``O_NOFOLLOW`` or written by rename (:mod:`plangate.files`), so no write of plangate's goes
through a link. What the state root is trusted for: ``docs/state-root.md``.

Standard library only (hook path).
"""

from __future__ import annotations

import errno
import os
import stat

from plangate import locations
from plangate.errors import StateError

UNSAFE = "STATE_FOLDER_UNSAFE"
REMEDY = (
    "remove it (plangate creates a real folder in its place), or point PLANGATE_STATE_ROOT "
    "at a folder of your own; see docs/state-root.md"
)
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)
APPEND_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | CLOEXEC | NOFOLLOW
"""How a state log is opened for one appended line: never through a link."""


class UnsafeFolder(StateError, OSError):
    """A folder of the state root that plangate refuses to write in (an :class:`OSError`
    too, so that every writer's failure handling covers it)."""

    def __init__(self, message: str) -> None:
        StateError.__init__(self, f"{UNSAFE}: {message}", REMEDY)


def state_folder(*parts: str, root: str | None = None, create: bool = True) -> str:
    """``<root>/<parts…>`` after checking each folder from the root down (module docstring).

    ``root`` defaults to :func:`plangate.locations.state_root`. With ``create`` false, a
    missing folder raises :class:`FileNotFoundError`. Other failures raise :class:`OSError`.
    """
    path = root if root is not None else locations.state_root()
    if create and not os.path.lexists(path):
        parent = os.path.dirname(path)
        if parent and not os.path.isdir(parent):
            os.makedirs(parent, 0o700, exist_ok=True)  # above the root: not plangate's
    check_folder(path, create)
    for part in parts:
        path = os.path.join(path, part)
        check_folder(path, create)
    return path


def append_to(path: str, data: bytes) -> int:
    """Append ``data`` to the state file ``path`` in one write (``O_APPEND``, created 0600,
    never through a link); the file's size after it. A short write raises ``OSError``
    (ENOSPC), as does anything else that fails."""
    descriptor = os.open(path, APPEND_FLAGS, 0o600)
    try:
        written = os.write(descriptor, data)
        size = os.fstat(descriptor).st_size
    finally:
        os.close(descriptor)
    if written != len(data):
        raise OSError(errno.ENOSPC, "No space left on device")
    return size


def check_folder(path: str, create: bool = True) -> None:
    """Refuse ``path`` unless it is a real folder of this user's; create it if missing."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        if not create:
            raise
        try:  # noqa: SIM105 - contextlib would cost the hook path an import
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass  # another hook made it first; checked below like any other
        info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        raise UnsafeFolder(f"{path} is a symbolic link")
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeFolder(f"{path} is not a folder")
    owner = getattr(os, "geteuid", None)
    if owner is not None and info.st_uid != owner():
        raise UnsafeFolder(f"{path} belongs to another user (uid {info.st_uid})")
