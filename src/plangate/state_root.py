"""The state root: the one owner of the files plangate keeps there, and of every write in it.

plangate keeps its files in the state root (``~/.plangate`` unless ``$PLANGATE_STATE_ROOT``
names another folder: :func:`plangate.locations.state_root`). The agent plangate watches
runs as the same user and can write there too, so it can plant a symbolic link where
plangate keeps a file or a folder. Every write of plangate's under the state root goes
through this module (``tests/test_state_root_writes.py`` holds the rest of ``src/`` to it):

- :class:`StateRoot` knows the root and names what is kept in it (the constants below);
  :meth:`StateRoot.folder` gives a :class:`Folder` only after checking the root and every
  folder on the way down: each is created (mode 0700) where it is missing, and one that is
  a symbolic link, is not a folder, or belongs to another user is refused with
  :class:`UnsafeFolder` (``STATE_FOLDER_UNSAFE``, with the remedy).
- A :class:`Folder` writes the files in it, never through a link: :meth:`~Folder.append`
  (one ``write`` with ``O_APPEND | O_NOFOLLOW``), :meth:`~Folder.create` (a new file,
  ``O_EXCL | O_NOFOLLOW``), :meth:`~Folder.replace` (the whole file by a rename, which
  replaces a planted link rather than writing through it: :func:`plangate.files.replace`),
  :meth:`~Folder.rename` (a log's rotation), :meth:`~Folder.remove`; it reads with
  ``O_NOFOLLOW`` (:meth:`~Folder.read`) and locks (:meth:`~Folder.lock`, an ``flock`` with
  a timeout and a lock file deleted by its holder: :class:`plangate.files.Lock`;
  :meth:`~Folder.hold`, a plain ``flock`` on a lock file that stays).

What the state root is trusted for: ``docs/state-root.md``. Standard library only, and
nothing slow at import (hook path).
"""

from __future__ import annotations

import errno
import os
import stat

from plangate import files, locations
from plangate.errors import StateError

# What plangate keeps in the state root (docs/state-root.md, the README's list).
CONFIG = "config.json"
"""The settings (:mod:`plangate.config`); ``config.json.lock`` beside it while one changes."""
ANALYTICS = "analytics"
"""``autoplan-guard.jsonl`` (the decision log) and ``hook-calls.jsonl`` (the hook trace)."""
DECISION_LOG = "autoplan-guard.jsonl"
HOOK_TRACE = "hook-calls.jsonl"
HOOK_TRACE_OLD = "hook-calls.1.jsonl"
GATE_LOGS = "hooks"
"""The skill gates' trace logs, ``<gate>.log`` and ``<gate>.log.1``."""
SKILL_GATES = "skill-gates"
"""One folder per session (``record.json``, ``record.lock``, ``errors.pending.jsonl``) and
the space reserve ``.reserve``."""
AUDIT_HOLDS = "audit-holds"
"""One empty marker per stop held for unguarded calls (:mod:`plangate.audit_hold`)."""
APPROVALS = "contract-approvals.jsonl"
"""The signed approvals of ``plangate approve``."""
APPROVAL_KEY = "approval.key"
"""The key that signs them (32 random bytes, made on first use)."""
CONTRACT_DRIFT = "contract-drift"
"""A snapshot of the project per contract phase, and a pointer to the latest."""
CONTRACT_PROGRESS = "contract-progress"
"""A workflow's progress across conversations, one file (and its lock) per instance."""
CONTRACT_RUNS = "contract-runs"
"""One marker per session the model started itself inside a workflow."""
CONTRACT_INDEX = "contract-index"
"""The contracts' journal index (:mod:`plangate.journal.index`)."""
JOURNAL_INDEX = "journal-index"
"""The guard's journal index and pre-index markers (:mod:`plangate.journal.index`)."""
CACHE = "cache"
CONTRACTS_CACHE = "contracts.json"
"""The parsed contracts, by path (:mod:`plangate.contracts.compiled`)."""
LOGS = "logs"
"""Crash logs, ``crash-<UTC time>-<pid>.log``."""
RUNS = "runs"
"""One folder per governed run (its worktree, ``errors.log``) and ``WORKER_LOG``."""
WORKER_LOG = "worker.log"
"""The output of the background workers ``plangate run`` and the viewer start."""
RUNS_DATABASE = "runs.db"
"""The runs' SQLite database (DBOS's and plangate's tables)."""
MARKETPLACE = "claude-plugin"
"""The plugin marketplace ``plangate setup --plugin`` writes."""
CEO_PLANS = "ceo-plans"
"""Read only: the CEO reviews /plan-ceo-review writes (also ``projects/<slug>/ceo-plans``)."""

UNSAFE = "STATE_FOLDER_UNSAFE"
REMEDY = (
    "remove it (plangate creates a real folder in its place), or point PLANGATE_STATE_ROOT "
    "at a folder of your own; see docs/state-root.md"
)
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)
APPEND_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | CLOEXEC | NOFOLLOW
"""How a state log is opened for one appended line: never through a link."""
CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | CLOEXEC | NOFOLLOW
"""How a new state file is made: never one that is there, never through a link."""


class UnsafeFolder(StateError, OSError):
    """A folder of the state root that plangate refuses to write in (an :class:`OSError`
    too, so that every writer's failure handling covers it)."""

    def __init__(self, message: str) -> None:
        StateError.__init__(self, f"{UNSAFE}: {message}", REMEDY)


class StateRoot:
    """The state root at ``path`` (default :func:`plangate.locations.state_root`); nothing
    is checked or created until :meth:`folder` is called."""

    __slots__ = ("path",)

    def __init__(self, path: str | None = None) -> None:
        self.path = path if path is not None else locations.state_root()

    def file(self, *parts: str) -> str:
        """The path of ``<root>/<parts…>``, for reading or showing; nothing is checked."""
        return os.path.join(self.path, *parts)

    def folder(self, *parts: str, create: bool = True) -> Folder:
        """``<root>/<parts…>`` after checking each folder from the root down (module
        docstring). With ``create`` false, a missing folder raises
        :class:`FileNotFoundError`. Other failures raise :class:`OSError`."""
        path = self.path
        if create and not os.path.lexists(path):
            parent = os.path.dirname(path)
            if parent and not os.path.isdir(parent):
                os.makedirs(parent, 0o700, exist_ok=True)  # above the root: not plangate's
        check_folder(path, create)
        for part in parts:
            path = os.path.join(path, part)
            check_folder(path, create)
        return Folder(path)

    def holds(self, path: str) -> bool:
        """Whether ``path`` lies in the root (the root itself included), as spelled."""
        relative = os.path.relpath(os.path.abspath(path), os.path.abspath(self.path))
        return relative != os.pardir and not relative.startswith(os.pardir + os.sep)

    def place(self, path: str) -> str:
        """The folder ``path`` for a file another program writes (SQLite, git): checked
        from the root down (:meth:`within`) when it lies in the root, else made as it is
        (a place the person chose). Returns ``path``."""
        if self.holds(path):
            self.within(path)
        else:
            os.makedirs(path, 0o700, exist_ok=True)
        return path

    def within(self, path: str) -> Folder:
        """The folder ``path``, which must lie under the root (:class:`ValueError` if not),
        checked from the root down as :meth:`folder` does."""
        relative = os.path.relpath(os.path.abspath(path), os.path.abspath(self.path))
        if relative == os.curdir:
            return self.folder()
        if relative == os.pardir or relative.startswith(os.pardir + os.sep):
            raise ValueError(f"{path} is not in the state root {self.path}")
        return self.folder(*relative.split(os.sep))


class Folder:
    """A folder of the state root, checked (:meth:`StateRoot.folder`); its files by name."""

    __slots__ = ("path",)

    def __init__(self, path: str) -> None:
        self.path = path

    def file(self, name: str) -> str:
        return os.path.join(self.path, name)

    def folder(self, name: str, create: bool = True) -> Folder:
        """The folder ``name`` in this one, checked as :meth:`StateRoot.folder` checks."""
        path = os.path.join(self.path, name)
        check_folder(path, create)
        return Folder(path)

    def names(self) -> list[str]:
        return os.listdir(self.path)

    def append(self, name: str, data: bytes) -> int:
        """Append ``data`` to the file ``name`` in one write (``O_APPEND``, created 0600,
        never through a link); the file's size after it. A short write raises ``OSError``
        (ENOSPC), as does anything else that fails."""
        descriptor = self.appending(name)
        try:
            written = os.write(descriptor, data)
            size = os.fstat(descriptor).st_size
        finally:
            os.close(descriptor)
        if written != len(data):
            raise OSError(errno.ENOSPC, "No space left on device")
        return size

    def appending(self, name: str, *, truncate: bool = False, create: bool = True) -> int:
        """A descriptor that appends to the file ``name`` (``O_APPEND``, created 0600 unless
        ``create`` is false, emptied first with ``truncate``, never through a link), for a
        child process's output or a run of writes; the caller closes it."""
        flags = APPEND_FLAGS if create else APPEND_FLAGS & ~os.O_CREAT
        return os.open(self.file(name), flags | (os.O_TRUNC if truncate else 0), 0o600)

    def marker(self, name: str) -> int:
        """A read-write descriptor on the file ``name`` (created 0600, never through a
        link), for a marker a process locks and rewrites in place; the caller closes it."""
        return os.open(self.file(name), os.O_RDWR | os.O_CREAT | CLOEXEC | NOFOLLOW, 0o600)

    def create(self, name: str, data: bytes = b"", *, durable: bool = False) -> str:
        """Make the new file ``name`` (0600) holding ``data``; its path.
        :class:`FileExistsError` when something is there already (a link included)."""
        path = self.file(name)
        descriptor = os.open(path, CREATE_FLAGS, 0o600)
        try:
            if data:
                files.write_all(descriptor, data)
            if durable:
                os.fsync(descriptor)
        finally:
            os.close(descriptor)
        return path

    def replace(
        self,
        name: str,
        data: bytes,
        mode: int | None = 0o600,
        *,
        durable: bool = False,
        exclusive: bool = False,
    ) -> str:
        """Make the file ``name`` hold exactly ``data``, at once (:func:`plangate.files.replace`);
        its path."""
        path = self.file(name)
        files.replace(path, data, mode, durable=durable, exclusive=exclusive)
        return path

    def rename(self, name: str, new: str) -> None:
        """Rename the file ``name`` to ``new`` in this folder, replacing what ``new`` was."""
        os.replace(self.file(name), self.file(new))

    def remove(self, name: str) -> None:
        """Remove the file ``name``; :class:`OSError` when it cannot be."""
        os.unlink(self.file(name))

    def remove_folder(self, name: str) -> None:
        """Remove the folder ``name`` and the files in it (a link is removed, never
        followed); :class:`OSError` when one cannot be."""
        inner = self.file(name)
        for entry in os.listdir(inner):
            os.unlink(os.path.join(inner, entry))
        os.rmdir(inner)

    def remove_tree(self, name: str) -> None:
        """Remove the folder ``name`` and everything in it (links inside are removed, never
        followed); :class:`OSError` when it cannot be."""
        import shutil  # only for this: too slow an import for the hook path

        shutil.rmtree(self.file(name))

    def read(self, name: str, limit: int, start: int = 0) -> bytes:
        """Up to ``limit`` bytes of the file ``name`` from ``start``, never through a link."""
        return files.read_nofollow(self.file(name), limit, start)

    def lock(
        self,
        name: str,
        *,
        timeout: float,
        stale: float | None = None,
        poll: float = 0.01,
        kind: type[files.Lock] = files.Lock,
    ) -> files.Lock:
        """A :class:`plangate.files.Lock` (or ``kind``, a subclass) on the lock file
        ``name``, not yet taken: use it as a context manager."""
        return kind(self.file(name), timeout=timeout, stale=stale, poll=poll)

    def hold(self, name: str) -> Hold:
        """A plain exclusive ``flock`` on the lock file ``name`` (created 0600, never
        through a link, left in place), waited for as long as it takes."""
        return Hold(self.file(name))


class Hold:
    """A blocking exclusive ``flock`` on a lock file that stays; a context manager."""

    __slots__ = ("path", "descriptor")

    def __init__(self, path: str) -> None:
        self.path = path
        self.descriptor = -1

    def __enter__(self) -> Hold:
        import fcntl  # only once a lock is wanted

        flags = os.O_RDWR | os.O_CREAT | NOFOLLOW | CLOEXEC
        self.descriptor = os.open(self.path, flags, 0o600)
        try:
            fcntl.flock(self.descriptor, fcntl.LOCK_EX)
        except BaseException:
            os.close(self.descriptor)
            raise
        return self

    def __exit__(self, *_: object) -> None:
        os.close(self.descriptor)  # releases the lock


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
