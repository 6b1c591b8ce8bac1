"""Work a hook process finishes after it has answered Claude Code.

Claude Code waits for a hook's process to end before the tool call goes on, and some of
what a hook does serves only later hook runs: saving the journal index after the first read
of a long session takes tens of milliseconds at 100 MB. A process started by a registered
hook command (:func:`plangate.hook_io.runtime.run_process`) accepts such work: :func:`defer`
keeps it, and once the answer is written and flushed, ``run_process`` forks. The parent
ends at once; the child, in a session of its own with its standard streams on ``/dev/null``
(so no pipe of Claude Code's stays open), does the work (:func:`drain`) and ends. Anywhere
else (tests, the commands) deferred work runs at once, as if it had not been deferred, and
so does all of it when no child can be started. Work that something in the same process is
about to need runs first: :func:`drain`. Deferred work must not raise and must not need
anything the process closes before it answers (an open file descriptor). Standard library
only (hook path).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

MIN_BYTES_SETTING = "defer_min_bytes"
"""Its name in ``PLANGATE_TUNING`` (:mod:`plangate.tuning`)."""
MIN_BYTES = 8 * 1024 * 1024
"""Index saves of journals this long or longer are deferred: below it a save costs less than
a fork (and the test suite's hook runs, on small journals, stay in step)."""

_pending: list[Callable[[], None]] = []
_accepting = [False]


def accept() -> None:
    """From now on, :func:`defer` keeps work for after the answer (a hook process only)."""
    _accepting[0] = True


def min_bytes() -> int:
    from plangate.tuning import setting

    return setting(MIN_BYTES_SETTING, MIN_BYTES)


def defer(work: Callable[[], None], size: int) -> None:
    """Run ``work`` after the answer when this is a hook process and ``size`` (the bytes the
    work is about) reaches :func:`min_bytes`; else now."""
    if _accepting[0] and size >= min_bytes():
        _pending.append(work)
    else:
        work()


def pending() -> int:
    return len(_pending)


def drain() -> None:
    """Run the deferred work now, oldest first."""
    while _pending:
        _pending.pop(0)()


def forget() -> None:
    """Drop the deferred work (a parent whose child does it)."""
    _pending.clear()
