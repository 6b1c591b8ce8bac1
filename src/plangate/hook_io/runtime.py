"""What every hook process runs on: the payload parsed, deadlines, the process's end.

:func:`parse_payload` turns the bytes on stdin into the payload object (or
:class:`HookInputError`); :func:`alarm` and :func:`within` give work a hard deadline (a
real-time alarm, so even one long read is cut short) below the registration timeout;
:func:`run_process` is the whole life of a process a registered hook command starts. The
one hook runner, which reads a payload, decides and answers as each event's policy says, is
:mod:`plangate.decisions.runner`.
"""

from __future__ import annotations

import os
import sys
import time

from plangate import jsonio

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NoReturn, TextIO, TypeVar

    T = TypeVar("T")

    from plangate.hook_io.protocol import Payload


class HookInputError(Exception):
    """The payload is unusable: too large, not UTF-8, not JSON, or not a JSON object."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def size_text(max_bytes: int) -> str:
    """``64 KiB``, ``16 MiB``: a payload limit as messages name it."""
    return f"{max_bytes // 1024} KiB" if max_bytes < 1024 * 1024 else f"{max_bytes >> 20} MiB"


def parse_payload(data: bytes) -> Payload:
    """The payload object in ``data``; :class:`HookInputError` when it cannot be used."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise HookInputError("the hook payload is not UTF-8") from None
    try:
        value = jsonio.loads(text)
    except jsonio.JSONError:
        raise HookInputError("the hook payload is not JSON") from None
    if not isinstance(value, dict):
        raise HookInputError("the hook payload is not a JSON object")
    return value


def run_process(main: Callable[[], int], defer: bool = True) -> NoReturn:
    """The whole life of a process started by a registered hook command
    (:func:`plangate.hook_registry.hook_command`): ``main()``, its output flushed, deferred
    work left to a detached child (:mod:`plangate.deferred`), then ``os._exit``, which skips the
    interpreter's teardown. Freeing every module and object costs every hook call 2 to 3 ms,
    and tens of milliseconds after a long journal was read, for nothing: plangate writes its
    files through descriptors it closes (:mod:`plangate.files`, the logs), so no buffer holds
    anything the teardown would write. With ``defer`` false, deferred work is done before
    the process ends (a process that is itself in the background). Every call leaves one
    line in the hook-call trace after its answer (:mod:`plangate.hook_io.trace`), the fast
    ``{}`` ones too, so that ``plangate audit`` can tell a call no hook decided."""
    from plangate import deferred
    from plangate.hook_io import trace

    began = time.time()
    if defer:
        deferred.accept()
    kept = trace.keep() if defer else None  # a background process is no hook call
    code = main()
    _flush(sys.stdout)
    _flush(sys.stderr)
    if kept is not None:
        trace.record(kept[0], kept[1], code, main.__module__, began)
    if deferred.pending():
        _detach()
    os._exit(code)


def _detach() -> None:
    """Leave the deferred work to a detached child, or do it now when none can be started.
    Returns in the parent only."""
    from plangate import deferred

    fork = getattr(os, "fork", None)  # none on Windows
    try:
        child = fork() if fork is not None else -1
    except OSError:
        child = -1
    if child < 0:
        try:
            deferred.drain()
        except Exception:  # noqa: BLE001 - the answer is out; the work is a cache
            deferred.forget()
        return
    if child:
        deferred.forget()
        return
    code = 0
    try:
        os.setsid()
        quiet = os.open(os.devnull, os.O_RDWR)
        for stream in (0, 1, 2):
            os.dup2(quiet, stream)
        deferred.drain()
    except BaseException:  # noqa: BLE001 - nobody is left to tell; the work is a cache
        code = 1
    finally:
        os._exit(code)


class DeadlinePassed(BaseException):
    """The alarm went off. A ``BaseException``, so that no ``except Exception`` on the way
    swallows it."""


def alarm(
    seconds: float, raising: type[BaseException] = DeadlinePassed
) -> Callable[[], None] | None:
    """Raise ``raising`` in the main thread after ``seconds`` of real time; returns the
    cancel, or None where no alarm can be set (not the main thread, no ``SIGALRM``). Once
    cancelled, a signal already on its way raises nothing."""
    try:
        # Only decisions that read a journal need it; the C module, because ``signal``
        # itself imports ``enum`` and with it milliseconds of every guarded call's start-up.
        import _signal as signal  # type: ignore[import-not-found]

        armed = [True]

        def expire(signum: int, frame: object) -> None:
            if armed[0]:
                raise raising

        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    except (ImportError, ValueError, OSError, AttributeError):
        return None

    def cancel() -> None:
        armed[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)

    return cancel


def within(seconds: float, work: Callable[[], T]) -> T | None:
    """``work()``, or None when it has not finished within ``seconds``."""
    cancel = alarm(seconds)
    try:
        return work()
    except DeadlinePassed:
        return None
    finally:
        if cancel is not None:
            cancel()


DEADLINE_FLOOR_MS = 3_000
"""No hook deadline from the environment is shorter: Claude Code's settings ``env`` block
reaches the hooks, so whatever can write a settings file can set it, and a decision cut
short allows. 3 s covers the 2 s a read waits for Claude Code to journal the call plus the
decision itself on a busy 2-core machine."""


def deadline_seconds(env_name: str, default_ms: int, max_ms: int, min_ms: int = 0) -> float:
    """A deadline from ``env_name`` in milliseconds, clamped to ``min_ms``..``max_ms`` and
    never under :data:`DEADLINE_FLOOR_MS`; a value that is not a positive whole number gives
    ``default_ms``."""
    text = os.environ.get(env_name, "").strip()
    value = int(text) if text.isascii() and text.isdigit() else 0
    floor = max(min_ms, DEADLINE_FLOOR_MS)
    return (max(floor, min(value, max_ms)) if value > 0 else default_ms) / 1000.0


def _flush(stream: TextIO) -> None:
    try:
        stream.flush()
    except (OSError, ValueError):
        return  # Claude Code closed the pipe: nothing more can be said
