"""stdin → decision → one JSON line on stdout, exit 0. Never a traceback.

Claude Code treats a hook's exit 1 as a non-blocking error and lets the action through, so a
crash must never be how a hook ends, and neither may its own timeout: a hook it kills is
ignored without a word. :func:`run_hook` reads the payload (a JSON object of at most 64 KiB;
a larger one goes to the entry point's own reader, :mod:`.payload_scan`, or is the
``hook_input`` outcome), calls the decision function, and turns any unexpected
exception into the entry point's documented failure outcome. :func:`within` gives a part of
the decision a hard deadline (a real-time alarm, so even one long read is cut short) below the
registration timeout, and the entry point says what passing it means.
"""

from __future__ import annotations

import os
import sys
import time

from plangate import jsonio
from plangate.hook_io.protocol import PAYLOAD_MAX_BYTES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import BinaryIO, NoReturn, TextIO, TypeVar

    T = TypeVar("T")

    from plangate.hook_io.protocol import Output, Payload

HOOK_INPUT = "hook_input"


class HookInputError(Exception):
    """The payload is unusable: too large, not UTF-8, not JSON, or not a JSON object."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def read_payload(stream: BinaryIO, max_bytes: int = PAYLOAD_MAX_BYTES) -> Payload:
    """The payload object, read whole; :class:`HookInputError` when it cannot be used (over
    ``max_bytes`` included)."""
    data = stream.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise HookInputError(f"the hook payload is over {_size(max_bytes)}")
    return parse_payload(data)


def _size(max_bytes: int) -> str:
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


def run_hook(
    decide: Callable[[Payload], Output],
    *,
    on_bad_input: Callable[[HookInputError], Output],
    on_crash: Callable[[BaseException], Output],
    on_large: Callable[[bytes, BinaryIO], Output] | None = None,
    stdin: BinaryIO | None = None,
    stdout: TextIO | None = None,
) -> int:
    """Run one hook invocation; always returns 0 (the process exit code).

    A payload over :data:`PAYLOAD_MAX_BYTES` goes to ``on_large`` with the bytes read so far
    and the stream (it reads on only as far as it needs), else it is ``hook_input``."""
    source = stdin if stdin is not None else sys.stdin.buffer
    sink = stdout if stdout is not None else sys.stdout
    try:
        try:
            head = source.read(PAYLOAD_MAX_BYTES + 1)
            if len(head) <= PAYLOAD_MAX_BYTES:
                output = decide(parse_payload(head))
            elif on_large is None:
                raise HookInputError(f"the hook payload is over {_size(PAYLOAD_MAX_BYTES)}")
            else:
                output = on_large(head, source)
        except HookInputError as error:
            output = on_bad_input(error)
        line = jsonio.dumps(output)
    except Exception as error:  # noqa: BLE001 - the one place a hook failure becomes an outcome
        line = _crash_line(on_crash, error)
    _emit(sink, line)
    return 0


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


def _crash_line(on_crash: Callable[[BaseException], Output], error: BaseException) -> str:
    try:
        return jsonio.dumps(on_crash(error))
    except Exception:  # noqa: BLE001 - even the failure outcome failed: print a fixed line
        return jsonio.dumps({"systemMessage": "plangate hook failed unexpectedly"})


def _flush(stream: TextIO) -> None:
    try:
        stream.flush()
    except (OSError, ValueError):
        return  # Claude Code closed the pipe: nothing more can be said


def _emit(sink: TextIO, line: str) -> None:
    try:
        sink.write(line + "\n")
        sink.flush()
    except OSError:
        # Claude Code closed our stdout; nothing more can be said.
        pass
