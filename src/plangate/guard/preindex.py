"""The pre-index: the guard's journal index kept current from the fast path, so that a first
phase entry in a long session is not a cold read.

Most guarded calls are not phase entries and never read the journal. From that fast path,
:func:`maybe_start` costs one ``stat`` of the journal, and for a journal of at least
``preindex_min_bytes`` (default 2 MiB) the read of a 21-byte marker. When the journal has
grown by ``preindex_step_bytes`` (default 1 MiB) since the last
pre-index of the session (or none ran yet), it starts a detached process
(:mod:`plangate.hooks.preindex_run`) that makes the read a phase entry makes first, with the
guard's fold, so that the index it saves carries the fold too, and exits.

- ``<index dir>/<session>.preindex`` holds the journal size the last pre-index started at,
  and is the lock: the starter takes ``flock(LOCK_EX | LOCK_NB)`` on it and hands that open
  file to the child, so at most one pre-index per session runs, and the lock is released
  when the child ends, however it ends (no stale lock to clear).
- The child is started as hooks are (:func:`plangate.hook_registry.hook_argv`: the same
  interpreter, ``-S``, plangate's folder), with ``os.posix_spawn`` (``subprocess`` stays off
  the hook path), in a session of its own, with stdin, stdout and stderr on ``/dev/null``:
  Claude Code never waits for it.
- ``preindex=0`` turns it off (these three are settings of ``$PLANGATE_TUNING``,
  :mod:`plangate.tuning`). It decides nothing: the child only writes the
  index that every guarded read verifies before using it (:mod:`plangate.journal.index`),
  and every failure, here or in the child, is swallowed.

Standard library only (hook path).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

SETTING = "preindex"
MIN_BYTES_SETTING = "preindex_min_bytes"
MIN_BYTES = 2 * 1024 * 1024
"""Below this a cold phase entry costs little more than one that goes on from an index."""
STEP_BYTES_SETTING = "preindex_step_bytes"
STEP_BYTES = 1024 * 1024
"""Growth since the last pre-index that starts another: a phase entry parses at most about
this much (a few milliseconds) beyond the index."""
SUFFIX = ".preindex"
CHILD_MODULE = "plangate.hooks.preindex_run"
_MARK = b"%020d\n"
_MARK_BYTES = 21


def marker_file(index_dir: str, session_id: str) -> str:
    """The session's marker and lock file."""
    return os.path.join(index_dir, session_id + SUFFIX)


def maybe_start(payload: Mapping[str, object]) -> bool:
    """Start a pre-index for this call's session when one is due; True when one started.
    Never raises: the fast path's answer does not depend on it."""
    try:
        return _maybe_start(payload)
    except Exception:  # noqa: BLE001 - the pre-index never changes a hook's outcome
        return False


def _maybe_start(payload: Mapping[str, object]) -> bool:
    from plangate.tuning import setting

    if setting(SETTING, 1) == 0:
        return False
    journal, session_id = payload.get("transcript_path"), payload.get("session_id")
    if not isinstance(journal, str) or not isinstance(session_id, str):
        return False
    if os.path.basename(journal) != session_id + ".jsonl" or os.sep in session_id:
        return False  # not a journal the guard would index (the reader checks the layout)
    size = os.stat(journal).st_size
    if size < setting(MIN_BYTES_SETTING, MIN_BYTES):
        return False
    from plangate.locations import journal_index_dir  # only for long sessions

    marker = marker_file(journal_index_dir(), session_id)
    if not _due(_marked(marker), size):
        return False
    return _start(marker, size, journal, session_id, payload)


def _marked(marker: str) -> int | None:
    """The journal size the last pre-index started at, or None (none, or unreadable)."""
    try:
        descriptor = os.open(marker, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return _parse(os.read(descriptor, _MARK_BYTES))
    finally:
        os.close(descriptor)


def _parse(data: bytes) -> int | None:
    text = data.strip()
    return int(text) if text.isdigit() else None


def _due(marked: int | None, size: int) -> bool:
    """A journal that shrank (replaced, rewritten) is due at once."""
    from plangate.tuning import setting

    return marked is None or not 0 <= size - marked < setting(STEP_BYTES_SETTING, STEP_BYTES)


def _start(
    marker: str, size: int, journal: str, session_id: str, payload: Mapping[str, object]
) -> bool:
    import fcntl  # only when a pre-index is due

    from plangate.journal.index import safe_index_dir

    folder = safe_index_dir(os.path.dirname(marker))
    descriptor = folder.marker(os.path.basename(marker))
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # one is running
        if not _due(_parse(os.pread(descriptor, _MARK_BYTES, 0)), size):
            return False  # another hook run started one for this size meanwhile
        os.pwrite(descriptor, _MARK % size, 0)
        from plangate.hook_registry import hook_argv

        words = [journal, session_id, str(payload.get("cwd")), str(payload.get("tool_use_id"))]
        spawn([*hook_argv(CHILD_MODULE), *words, str(descriptor)], keep=descriptor)
        return True
    finally:
        os.close(descriptor)  # the child holds the lock from here on


def spawn(argv: list[str], keep: int | None = None) -> int:
    """Start ``argv`` detached: its own session, stdin/stdout/stderr on ``/dev/null``, and of
    this process's descriptors only ``keep``. Returns its pid; it is never waited for."""
    if keep is not None:
        os.set_inheritable(keep, True)
    null = os.devnull
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0),
    ]
    return os.posix_spawn(argv[0], argv, os.environ, file_actions=actions, setsid=True)


def running(marker: str) -> bool:
    """Whether a pre-index holds the session's lock (tests and benchmarks wait on this)."""
    import fcntl

    try:
        descriptor = os.open(marker, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(descriptor)
    return False
