"""The one hook runner: stdin → a policy's decision → the event's answer and exit code.

Every hook entry module (:mod:`plangate.hooks`) is a :class:`Policy` and ``run(POLICY)``.
The policy says, for its event, everything that differs between hooks:

- the events it answers (the first is the default form of its answer: ``PreToolUse``,
  ``Stop``, ``SubagentStop``, ``UserPromptExpansion``, or Codex's ``UserPromptSubmit``);
- whether it fails closed (an unusable payload is the ``hook_input`` denial, a crash the
  ``installation`` denial, each logged) or open (its own outcomes, ``{}`` by default);
- how many bytes of payload it reads whole, and the reader of a larger one, if any (none:
  a larger payload is unusable input);
- a ``before`` step that may answer first (the Stop hooks' hold, :mod:`plangate.audit_hold`);
- its deadline, and the answer when a decision runs past it.

:func:`run` is the one place a decision, an unusable payload or a crash becomes the bytes a
hook prints and its exit code (:func:`render`). A decision function answers with an
:data:`Output` already in the event's wire form, with :data:`None` (nothing to say: ``{}``),
with :data:`SILENT` (print nothing), or with an :class:`Answer`, a
:class:`~plangate.decisions.reasons.Decision` that :func:`render` writes in the event's form:

    event                 verified allow   unverified          refusal
    PreToolUse            {}               warning, no decision  permissionDecision deny
    Stop, SubagentStop    {}               systemMessage       {"decision": "block", ...}
    UserPromptExpansion   {}               systemMessage       the reason on stderr, exit 2
    UserPromptSubmit      {}               systemMessage       {"decision": "block", ...}

A verified allow is ``{}`` in every form, never an explicit ``"allow"``: Codex CLI takes an
explicit allow for a failed hook. Nothing escapes as a traceback: Claude Code lets a call
through a hook that exits 1, and ignores one it kills, so even a failing crash outcome
prints one fixed line and exits 0.

Hook path: standard library and plangate's foundations only; the code table and the
decision log are imported only when a decision is written or logged here.
"""

from __future__ import annotations

import sys

from plangate import jsonio
from plangate.hook_io import runtime
from plangate.hook_io.protocol import PAYLOAD_MAX_BYTES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import BinaryIO, TextIO

    from plangate.decisions.reasons import Decision
    from plangate.hook_io.protocol import Output, Payload

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


class Answer:
    """A decision to write in the event's form, with the facts its text is filled with
    (``{phase}``, ``{workflow}``)."""

    __slots__ = ("decision", "facts")

    def __init__(self, decision: Decision, facts: dict[str, str] | None = None) -> None:
        self.decision = decision
        self.facts = facts

    def reason(self) -> str:
        """The refusal's full text, as the model or the person reads it."""
        from plangate.decisions import reasons

        decision = self.decision
        assert decision.code is not None and not decision.allowed
        return reasons.deny_reason(
            decision.code, decision.claude_code_version, decision.detail, self.facts
        )


class _Silent:
    """The answer that prints nothing (exit 0)."""


SILENT = _Silent()

if TYPE_CHECKING:
    Result = Output | Answer | _Silent | None
    """What a decision, a ``before`` step or an outcome answers (see the module docstring)."""
    Outcome = Callable[[BaseException], Result]


class Deadline:
    """A decision's deadline: ``env`` in milliseconds, between ``min_ms`` (and
    :data:`~plangate.hook_io.runtime.DEADLINE_FLOOR_MS`) and ``max_ms``, else ``default_ms``."""

    __slots__ = ("env", "default_ms", "max_ms", "min_ms")

    def __init__(self, env: str, default_ms: int, max_ms: int, min_ms: int = 0) -> None:
        self.env = env
        self.default_ms = default_ms
        self.max_ms = max_ms
        self.min_ms = min_ms

    def seconds(self) -> float:
        return runtime.deadline_seconds(self.env, self.default_ms, self.max_ms, self.min_ms)


class Policy:
    """How one hook runs (see the module docstring). ``closed`` gives the default outcomes
    of a hook that holds a gate: ``hook_input`` for an unusable payload and ``installation``
    for a crash, each logged with ``log_event`` (no event field when None); an open hook
    answers ``{}`` unless given ``bad_input`` and ``crash``."""

    __slots__ = (
        "events",
        "decide",
        "closed",
        "log_event",
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
        log_event: str | None = None,
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
        self.events = events
        self.decide = decide
        self.closed = closed
        self.log_event = log_event
        self.max_bytes = max_bytes
        self.large = large
        self.before = before
        default = refused(log_event) if closed else _let_through
        self.bad_input = bad_input or default
        self.crash = crash or default
        self.deadline = deadline
        self.on_deadline = on_deadline


def _let_through(error: BaseException) -> Result:
    return {}


def refused(log_event: str | None) -> Outcome:
    """A closed hook's outcome: ``hook_input`` for an unusable payload, ``installation``
    for anything else, logged (with ``log_event``) and written in the event's form."""

    def outcome(error: BaseException) -> Result:
        from plangate.decisions import log, reasons

        if isinstance(error, runtime.HookInputError):
            decision = reasons.Decision.deny(reasons.HOOK_INPUT, detail=error.detail)
        else:
            decision = reasons.Decision.deny(reasons.INSTALLATION, detail=type(error).__name__)
        log.append_decision(decision, extra={"event": log_event} if log_event else None)
        return Answer(decision)

    return outcome


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
                payload = runtime.parse_payload(head)
                named = payload.get("hook_event_name")
                if named in policy.events:
                    event = str(named)
                result = decide(policy, payload)
            elif policy.large is None:
                size = runtime.size_text(policy.max_bytes)
                raise runtime.HookInputError(f"the hook payload is over {size}")
            else:
                large = policy.large
                result = _in_time(policy, {}, lambda: large(head, source))
        except runtime.HookInputError as error:
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
    seconds = policy.deadline.seconds()
    cancel = runtime.alarm(seconds)
    try:
        return work()
    except runtime.DeadlinePassed:
        pass
    finally:
        if cancel is not None:
            cancel()
    return policy.on_deadline(payload, f"no decision within the guard's {seconds:g} s deadline")


def render(event: str, result: Result) -> tuple[str | None, str | None, int]:
    """What a hook prints for ``result``: the stdout line, the stderr text and the exit code."""
    if isinstance(result, _Silent):
        return None, None, 0
    if result is None:
        return "{}", None, 0
    if not isinstance(result, Answer):
        return jsonio.dumps(result), None, 0
    decision = result.decision
    if decision.code is None:
        return "{}", None, 0  # never an explicit allow: Codex CLI rejects one
    if event == PRE_TOOL_USE:
        return jsonio.dumps(decision.output(result.facts)), None, 0
    from plangate.decisions import reasons
    from plangate.hook_io import protocol

    if decision.allowed:
        notice = reasons.unverified_notice(
            decision.code, decision.claude_code_version, decision.detail
        )
        return jsonio.dumps(protocol.no_decision(notice)), None, 0
    reason = result.reason()
    if event == PROMPT_EXPANSION:
        return None, reason, BLOCK_EXIT
    return jsonio.dumps(protocol.block_stop(reason)), None, 0


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
