"""Writing a file whole, and locking it: plangate's one writer and one lock.

Standard library only, and nothing slow at import: the hooks use both (the decision log, the
journal index, the skill gates' session record).

:func:`replace` writes ``data`` to a new temporary file in the target's folder
(``.<name>.<pid>-<random>.tmp``, created exclusively, never through a symlink), gives it its
mode, then puts it in place in one step: ``rename`` over whatever is there, or, with
``exclusive``, a hard ``link`` that never replaces anything. A reader sees the old bytes or
the new ones, never a part; a failure raises :class:`OSError` and leaves no temporary file.

**The fsync policy.** ``durable=True`` also fsyncs the file before it is put in place and
its folder afterwards, so the new bytes survive a power loss, not only a crash of the
process. Pass it for what a person or a later step relies on: ``config.json``, Claude Code's
``settings.json`` and its backup, the ``/autoplan`` artifacts (the restore point, the init
record, the active plan, the gate) and the skill gates' session record (the count source of
``plangate report`` and of the block cap). Leave it off for what is rebuilt or only
summarises: the journal index (a lost one means one full read) and the trimmed decision log.

:class:`Lock` is an exclusive ``flock`` on a lock file beside what it protects, waited for
up to a timeout (:class:`TimeoutError` after it). The kernel lets go of a lock when its
holder dies, so a crashed process never blocks anyone; the holder deletes the lock file
before it lets go, and a waiter that then wins the lock on the deleted file tries again on
the new one. With ``stale``, a lock held for longer than that (a holder alive but hung) is
taken over: its file is renamed away, and the next contender locks a fresh one.

Neither ever writes through a symbolic link: the temporary file and the lock file are opened
with ``O_NOFOLLOW``, and a rename replaces a link planted at the target rather than what it
points to. The folder they are in is the caller's to check
(:meth:`plangate.state_root.StateRoot.folder`), and every write under the state root goes
through :mod:`plangate.state_root`.
"""

from __future__ import annotations

import errno
import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW
#: A lock file planted as a symbolic link is refused (``ELOOP``), never truncated through.
_LOCK_FLAGS = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
#: ``link`` failing with these means the file system has no hard links, not that the target
#: exists: ``exclusive`` falls back to a rename after checking that nothing is there.
_NO_LINKS = (errno.EPERM, errno.ENOTSUP, errno.EXDEV, errno.EMLINK)


def write_all(descriptor: int, data: bytes) -> None:
    """``os.write`` until every byte is written (it may write fewer than asked)."""
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]


def read_nofollow(path: str, limit: int, start: int = 0) -> bytes:
    """Up to ``limit`` bytes of ``path`` from ``start``, never through a symbolic link
    (``OSError`` with ``ELOOP`` for one)."""
    descriptor = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    try:
        pieces: list[bytes] = []
        while limit > 0:
            piece = os.pread(descriptor, min(limit, 1 << 20), start)
            if not piece:
                break
            pieces.append(piece)
            start += len(piece)
            limit -= len(piece)
        return b"".join(pieces)
    finally:
        os.close(descriptor)


def contains_nofollow(path: str, needle: bytes, limit: int) -> bool:
    """Whether ``needle`` is in the first ``limit`` bytes of ``path``, read 1 MiB at a time
    (memory stays a megabyte whatever the file's size), never through a symbolic link
    (``OSError`` with ``ELOOP`` for one)."""
    keep = max(len(needle) - 1, 0)  # a needle across two reads
    descriptor = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    try:
        tail = b""
        start = 0
        while start < limit:
            piece = os.pread(descriptor, min(limit - start, 1 << 20), start)
            if not piece:
                return False
            if needle in tail + piece[: len(needle)] or needle in piece:
                return True
            tail = piece[len(piece) - keep :] if keep else b""
            start += len(piece)
        return False
    finally:
        os.close(descriptor)


def temporary_name(path: str) -> str:
    """A fresh name beside ``path`` for a file that becomes ``path`` (it ends in ``.tmp``)."""
    folder, name = os.path.split(path)
    return os.path.join(folder, f".{name}.{os.getpid()}-{os.urandom(4).hex()}.tmp")


def replace(
    path: str,
    data: bytes,
    mode: int | None = 0o600,
    *,
    durable: bool = False,
    exclusive: bool = False,
) -> None:
    """Make ``path`` hold exactly ``data``, all at once (see the module docstring).

    ``mode`` is the new file's permission bits, whatever the umask; ``None`` gives it what
    ``open`` would (``0o666`` less the umask). ``exclusive`` refuses with
    :class:`FileExistsError` when ``path`` exists instead of replacing it.
    """
    temporary = temporary_name(path)
    descriptor = os.open(temporary, _CREATE, 0o666 if mode is None else 0o600)
    placed = False
    try:
        try:
            if mode is not None:
                os.fchmod(descriptor, mode)  # the umask may have taken bits away
            write_all(descriptor, data)
            if durable:
                os.fsync(descriptor)
        finally:
            os.close(descriptor)
        if exclusive:
            _link(temporary, path)
        else:
            os.replace(temporary, path)
            placed = True
    finally:
        if not placed:
            remove_quietly(temporary)
    if durable:
        sync_folder(os.path.dirname(path) or ".")


def _link(temporary: str, path: str) -> None:
    try:
        os.link(temporary, path)
    except FileExistsError:
        raise
    except OSError as error:
        if error.errno not in _NO_LINKS:
            raise
        if os.path.lexists(path):
            raise FileExistsError(errno.EEXIST, "File exists", path) from None
        os.rename(temporary, path)


def sync_folder(folder: str) -> None:
    """fsync a folder, so that a rename in it survives a power loss; never raises."""
    try:
        descriptor = os.open(folder, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass  # some file systems refuse to fsync a folder: nothing more can be done
    finally:
        os.close(descriptor)


def remove_quietly(path: str) -> None:
    """Remove ``path`` if it is there. (Not contextlib.suppress: importing contextlib costs a
    hook process a millisecond.)"""
    try:
        os.unlink(path)
    except OSError:
        return


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


class Lock:
    """An exclusive ``flock`` on the file ``path``; a context manager (module docstring).

    Raises :class:`TimeoutError` when the lock stays busy for ``timeout`` seconds, and
    :class:`OSError` when the lock file cannot be opened. ``stale`` (seconds, or ``None``
    for never) takes over a lock held longer than that. The holder's file holds its pid.
    """

    __slots__ = ("path", "timeout", "stale", "poll", "clock", "sleep", "_descriptor")

    def __init__(
        self,
        path: str,
        *,
        timeout: float,
        stale: float | None = None,
        poll: float = 0.01,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.path = path
        self.timeout = timeout
        self.stale = stale
        self.poll = poll
        self.clock = clock  # measures ``timeout``; ``stale`` is the file's age by the wall clock
        self.sleep = sleep
        self._descriptor = -1

    @property
    def held(self) -> bool:
        return self._descriptor >= 0

    def __enter__(self) -> Lock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def acquire(self) -> None:
        deadline = self.clock() + self.timeout
        while True:
            descriptor = os.open(self.path, _LOCK_FLAGS, 0o600)
            try:
                if self._wait(descriptor, deadline):
                    # Stamp the file: the holder's pid, and a modification time that says
                    # since when it is held (what ``stale`` measures).
                    os.ftruncate(descriptor, 0)
                    os.pwrite(descriptor, b"%d\n" % os.getpid(), 0)
                    self._descriptor = descriptor
                    return
            except BaseException:
                os.close(descriptor)
                raise
            os.close(descriptor)  # the file was deleted or taken over: start again

    def _wait(self, descriptor: int, deadline: float) -> bool:
        """Lock ``descriptor``; ``False`` when the path no longer names its file."""
        import fcntl  # only once a lock is wanted: the decision log's hooks never lock

        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                pass
            else:
                return self._names(descriptor)
            if not self._names(descriptor):
                return False
            if self.stale is not None:
                held = os.fstat(descriptor)
                if time.time() - held.st_mtime >= self.stale:
                    self._take_over(held)
                    return False
            if self.clock() >= deadline:
                raise TimeoutError(f"the lock {self.path} was held for over {self.timeout:g} s")
            self.sleep(self.poll)

    def _names(self, descriptor: int) -> bool:
        try:
            return _same_file(os.fstat(descriptor), os.stat(self.path))
        except FileNotFoundError:
            return False

    def _take_over(self, held: os.stat_result) -> None:
        """Rename the stale lock file away (one contender wins); give back a fresh one that
        another contender created in the meantime."""
        grave = f"{self.path}.stale-{os.getpid()}-{os.urandom(4).hex()}"
        try:
            os.rename(self.path, grave)
        except OSError:
            return  # another contender took it over first
        try:
            if not _same_file(os.stat(grave), held):
                try:  # noqa: SIM105 - contextlib would cost the hook path an import
                    os.link(grave, self.path)
                except OSError:
                    pass
        finally:
            remove_quietly(grave)

    def release(self) -> None:
        """Delete the lock file (unless it was taken over) and let go."""
        descriptor, self._descriptor = self._descriptor, -1
        if descriptor < 0:
            return
        try:
            if self._names(descriptor):
                os.unlink(self.path)
        except OSError:
            pass
        finally:
            os.close(descriptor)
