"""The one hook runner: stdin → a policy's decision → the event's answer and exit code.

Every hook entry module (:mod:`plangate.hooks`) is a :class:`Policy` and ``run(POLICY)``;
:func:`run_process` is the whole life of the process around it. The policy says, for its
event, everything that differs between hooks:

- the events it answers (the first is the default form of its answer: ``PreToolUse``,
  ``Stop``, ``SubagentStop``, ``UserPromptExpansion``, or Codex's ``UserPromptSubmit``);
- whether it fails closed (its outcomes refuse: ``hook_input`` for an unusable payload,
  ``installation`` for a crash, :func:`plangate.hooks.closed`) or open (its own outcomes,
  ``{}`` by default: the call or the stop goes through);
- how many bytes of payload it reads whole, and the reader of a larger one, if any (none:
  a larger payload is unusable input);
- a ``before`` step that may answer first (the Stop hooks' hold, :mod:`plangate.audit_hold`);
- its deadline (``(env, default_ms, max_ms, min_ms)``), and the answer when a decision runs
  past it (a real-time alarm, so even one long read is cut short, below the registration
  timeout).

:func:`run` is the one place a decision, an unusable payload or a crash becomes the bytes a
hook prints and its exit code (:func:`render`). A decision function answers with an
``Output`` already in the event's wire form, with None (nothing to say: ``{}``), with
:data:`SILENT` (print nothing), or with an :class:`Answer`: a decision
(:class:`plangate.decisions.reasons.Decision`) that :func:`render` writes in the event's form:

    event                 verified allow   unverified             refusal
    PreToolUse            {}               warning, no decision   permissionDecision deny
    Stop, SubagentStop    {}               systemMessage          {"decision": "block", ...}
    UserPromptExpansion   {}               systemMessage          the reason on stderr, exit 2
    UserPromptSubmit      {}               systemMessage          {"decision": "block", ...}

A verified allow is ``{}`` in every form, never an explicit ``"allow"``: Codex CLI takes an
explicit allow for a failed hook. Nothing escapes as a traceback: Claude Code lets a call
through a hook that exits 1 and ignores one it kills, so even a failing crash outcome prints
one fixed line and exits 0.

The runner lives here, in the module every registered hook command already imports for
:func:`run_process`, so that it costs a hook no module of its own; it writes a decision
through the decision's own methods and so imports nothing of :mod:`plangate.decisions`.
Standard library only.
"""

from __future__ import annotations

import os
import sys
import time

from plangate import jsonio
from plangate.hook_io.protocol import PAYLOAD_MAX_BYTES, block_stop, no_decision

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import BinaryIO, NoReturn, Protocol, TextIO, TypeVar

    T = TypeVar("T")

    from plangate.hook_io.protocol import Output, Payload

    class Judged(Protocol):
        """What :func:`render` needs of a decision (``plangate.decisions.reasons.Decision``)."""

        code: str | None

        @property
        def allowed(self) -> bool: ...

        def output(self, facts: dict[str, str] | None = None) -> Output: ...

        def reason(self, facts: dict[str, str] | None = None) -> str: ...

        def notice(self) -> str: ...


PRE_TOOL_USE = "PreToolUse"
STOP = "Stop"
SUBAGENT_STOP = "SubagentStop"
PROMPT_EXPANSION = "UserPromptExpansion"
PROMPT_SUBMIT = "UserPromptSubmit"
"""Codex CLI's event for a typed ``$skill``; Claude Code's is :data:`PROMPT_EXPANSION`."""
BLOCK_EXIT = 2
"""The exit code that blocks a ``UserPromptExpansion`` (its reason on stderr)."""
CRASH_OUTPUT = {"systemMessage": "plangate hook failed unexpectedly"}
"""What is printed when even a policy's crash outcome fails."""


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


class Answer:
    """A decision to write in the event's form, with the facts its text is filled with
    (``{phase}``, ``{workflow}``); :data:`SILENT`, the answer without one, prints nothing."""

    __slots__ = ("decision", "facts")

    def __init__(self, decision: Judged | None, facts: dict[str, str] | None = None) -> None:
        self.decision = decision
        self.facts = facts

    def reason(self) -> str:
        """The refusal's full text, as the model or the person reads it."""
        if self.decision is None:
            raise ValueError("no decision, no reason")
        return self.decision.reason(self.facts)


SILENT = Answer(None)
"""The answer that prints nothing (exit 0)."""

if TYPE_CHECKING:
    Result = Output | Answer | None
    """What a decision, a ``before`` step or an outcome answers (see the module docstring)."""
    Outcome = Callable[[BaseException], Result]
    Deadline = tuple[str, int, int, int]
    """``(env, default_ms, max_ms, min_ms)``: a deadline from ``env`` in milliseconds,
    between ``min_ms`` (and :data:`DEADLINE_FLOOR_MS`) and ``max_ms``, else ``default_ms``
    (:func:`deadline_seconds`)."""


class Policy:
    """How one hook runs (see the module docstring). A ``closed`` hook holds a gate: it
    names the outcomes that refuse (:func:`plangate.hooks.closed`); an open hook answers
    ``{}`` to an unusable payload and to a crash unless given outcomes of its own."""

    __slots__ = (
        "events",
        "decide",
        "closed",
        "max_bytes",
        "large",
        "before",
        "bad_input",
        "crash",
        "deadline",
        "on_deadline",
    )

    def __init__(
        self,
        events: tuple[str, ...],
        decide: Callable[[Payload], Result],
        *,
        closed: bool,
        max_bytes: int = PAYLOAD_MAX_BYTES,
        large: Callable[[bytes, BinaryIO], Result] | None = None,
        before: Callable[[Payload], Result] | None = None,
        bad_input: Outcome | None = None,
        crash: Outcome | None = None,
        deadline: Deadline | None = None,
        on_deadline: Callable[[Payload, str], Result] | None = None,
    ) -> None:
        if (deadline is None) != (on_deadline is None):
            raise ValueError("a deadline needs its outcome, and the other way round")
        if closed and (bad_input is None or crash is None):
            raise ValueError("a closed hook names the outcomes that refuse")
        self.events = events
        self.decide = decide
        self.closed = closed
        self.max_bytes = max_bytes
        self.large = large
        self.before = before
        self.bad_input = bad_input or _let_through
        self.crash = crash or _let_through
        self.deadline = deadline
        self.on_deadline = on_deadline


def _let_through(error: BaseException) -> Result:
    return {}


def run(
    policy: Policy,
    *,
    stdin: BinaryIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """One hook call: read the payload, decide, print the answer; returns the exit code."""
    source = stdin if stdin is not None else sys.stdin.buffer
    event = policy.events[0]
    try:
        try:
            head = source.read(policy.max_bytes + 1)
            if len(head) <= policy.max_bytes:
                payload = parse_payload(head)
                named = payload.get("hook_event_name")
                if named in policy.events:
                    event = str(named)
                result = decide(policy, payload)
            elif policy.large is None:
                size = size_text(policy.max_bytes)
                raise HookInputError(f"the hook payload is over {size}")
            else:
                large = policy.large
                result = _in_time(policy, {}, lambda: large(head, source))
        except HookInputError as error:
            result = policy.bad_input(error)
        said = render(event, result)
    except BaseException as error:  # noqa: BLE001 - the one place a hook failure becomes an outcome
        said = _crashed(policy, event, error)
    return _say(said, stdout if stdout is not None else sys.stdout, stderr)


def decide(policy: Policy, payload: Payload) -> Result:
    """The policy's answer to a payload read whole: its ``before`` step, then its decision
    within its deadline."""
    if policy.before is not None:
        held = policy.before(payload)
        if held is not None:
            return held
    return _in_time(policy, payload, lambda: policy.decide(payload))


def _in_time(policy: Policy, payload: Payload, work: Callable[[], Result]) -> Result:
    if policy.deadline is None or policy.on_deadline is None:
        return work()
    seconds = deadline_seconds(*policy.deadline)
    cancel = alarm(seconds)
    try:
        return work()
    except DeadlinePassed:
        pass
    finally:
        if cancel is not None:
            cancel()
    return policy.on_deadline(payload, f"no decision within the guard's {seconds:g} s deadline")


def render(event: str, result: Result) -> tuple[str | None, str | None, int]:
    """What a hook prints for ``result``: the stdout line, the stderr text and the exit code."""
    if result is None:
        return "{}", None, 0
    if not isinstance(result, Answer):
        return jsonio.dumps(result), None, 0
    decision = result.decision
    if decision is None:
        return None, None, 0  # SILENT
    if decision.code is None:
        return "{}", None, 0  # never an explicit allow: Codex CLI rejects one
    if event == PRE_TOOL_USE:
        return jsonio.dumps(decision.output(result.facts)), None, 0
    if decision.allowed:
        return jsonio.dumps(no_decision(decision.notice())), None, 0
    reason = result.reason()
    if event == PROMPT_EXPANSION:
        return None, reason, BLOCK_EXIT
    return jsonio.dumps(block_stop(reason)), None, 0


def _crashed(
    policy: Policy, event: str, error: BaseException
) -> tuple[str | None, str | None, int]:
    try:
        return render(event, policy.crash(error))
    except Exception:  # noqa: BLE001 - even the failure outcome failed: print a fixed line
        return jsonio.dumps(CRASH_OUTPUT), None, 0


def _say(said: tuple[str | None, str | None, int], sink: TextIO, errors: TextIO | None) -> int:
    line, text, code = said
    try:
        if line is not None:
            sink.write(line + "\n")
            sink.flush()
        if text is not None:
            stream = errors if errors is not None else sys.stderr
            stream.write(text + "\n")
            stream.flush()
    except (OSError, ValueError):
        pass  # Claude Code closed the pipe: nothing more can be said
    return code
