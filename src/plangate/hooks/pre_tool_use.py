"""The phase publication guard: Claude Code's PreToolUse hook for ``Read`` and ``Agent``.

Run as ``python -m plangate.hooks.pre_tool_use``. Most calls are not phase entries: they
are answered at once (``{}``, or an explicit allow for /autoplan's own files), and only the
standard library and plangate's hook-path modules are loaded; in a long session such a call
may also start the pre-index, a detached process that keeps the journal index current
(:mod:`plangate.guard.preindex`). A phase-entry call loads the
decision machinery, reads the session journal and decides; every decision is logged.
An unexpected error is the ``installation`` denial: a broken guard never lets a call through.
A decision not made within the guard's deadline (``PLANGATE_GUARD_DEADLINE_MS``, 10 s by
default, at least 3 s and at most 20 s: below the 25 s the hook is registered with) is the
unverified ``guard_timeout``, logged like every decision, so Claude Code never kills the hook
silently.

A payload over 64 KiB is read field by field (:mod:`plangate.hook_io.payload_scan`) only as far
as it takes to tell whether the call enters a phase: one that does not is answered as any
other (``{}``) whatever its size; a phase entry that large is ``entry_too_large``, since the
guard decides only a call it has read whole.
"""

from __future__ import annotations

import os

from plangate.guard import calls
from plangate.hook_io import protocol, runtime
from plangate.hooks import closed
from plangate.journal.paths import is_owned_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO

    from plangate.decisions import reasons
    from plangate.hook_io.payload_scan import Scan
    from plangate.hook_io.protocol import Output, Payload

OWNED_READ_REASON = "[plangate] Reading an /autoplan section or phase artifact."
DEADLINE_ENV = "PLANGATE_GUARD_DEADLINE_MS"
DEFAULT_DEADLINE_MS = 10_000
MAX_DEADLINE_MS = 20_000
#: The floor: the guard's 2 s wait for Claude Code to journal the call
#: (:data:`plangate.guard.observe.DEADLINE_SECONDS`) plus a margin. A lower deadline would end
#: decisions that were going to deny, which would make the variable an off switch.
MIN_DEADLINE_MS = 3_000
READ_MAX_BYTES = 16 * 1024 * 1024
"""How much of a large payload is read to place its call: a phase entry's head is read at
once, but only the end of the payload shows that no ``agent_id`` makes it a subagent's."""


def decide(payload: Payload) -> Output:
    if payload.get("hook_event_name") != "PreToolUse" or not isinstance(
        payload.get("tool_name"), str
    ):
        return _denied_input("not a PreToolUse payload")
    tool_name = payload["tool_name"]
    if tool_name not in ("Read", "Agent") or payload.get("agent_id") is not None:
        return {}  # not ours to decide: other tools, and calls inside subagents
    tool_input = payload.get("tool_input")
    valid = (
        is_owned_path(payload.get("cwd"))
        and is_owned_path(payload.get("transcript_path"))
        and isinstance(payload.get("session_id"), str)
        and isinstance(payload.get("tool_use_id"), str)
        and isinstance(tool_input, dict)
    )
    if not valid:
        return _denied_input("a payload field is missing")
    assert isinstance(tool_input, dict)
    call = calls.classify(tool_name, tool_input, payload["cwd"])
    if call is None:
        from plangate.guard import preindex  # not a phase decision's: only this path's

        preindex.maybe_start(payload)  # a long session's index kept current, in the background
        return _owned_read(payload, tool_input) or {}
    # Only a phase entry gets here: the decision, its reasons and its log are loaded now,
    # so that the fast path above (most calls) imports none of them.
    from plangate.decisions import log
    from plangate.guard.evaluate import evaluate

    outcome = evaluate(payload, call)
    decision = _decision(
        outcome.code, outcome.path, outcome.version, outcome.detail, outcome.keys, outcome.shapes
    )
    log.append_decision(decision)
    output = decision.output()
    if decision.code is None and tool_name == "Read":
        return _owned_read(payload, tool_input) or output
    return output


def _decision(
    code: str | None,
    path: str,
    version: str | None,
    detail: str,
    keys: list[str],
    shapes: list[str],
) -> reasons.Decision:
    from plangate.decisions import reasons

    if code is None:
        return reasons.Decision.allow(path, version)
    if reasons.disposition(code) == reasons.UNVERIFIED:
        return reasons.Decision.unverified(
            code,
            detail=detail or None,
            path=path,
            claude_code_version=version,
            record_shapes=shapes,
        )
    return reasons.Decision.deny(
        code, detail=detail or None, path=path, claude_code_version=version, unknown_keys=keys
    )


def _denied(decision: reasons.Decision) -> Output:
    from plangate.decisions import log

    log.append_decision(decision)
    return decision.output()


def _denied_input(detail: str) -> Output:
    from plangate.decisions import reasons

    return _denied(reasons.Decision.deny(reasons.HOOK_INPUT, detail=detail))


def _owned_read(payload: Payload, tool_input: dict[str, object]) -> Output | None:
    """Approve /autoplan's own files outside the working folder, which Claude Code would
    otherwise ask about once the skill's turn is over. Never overrides a denial."""
    if payload.get("tool_name") != "Read":
        return None
    file_path = tool_input.get("file_path")
    if not isinstance(file_path, str):
        return None
    path = calls.resolve(file_path, str(payload["cwd"]))
    from plangate.guard.owned import owned_by_autoplan

    if owned_by_autoplan(path, str(os.environ.get("CLAUDE_PROJECT_DIR") or payload["cwd"])):
        return protocol.pre_tool_use_decision(protocol.ALLOW, OWNED_READ_REASON)
    return None


def decide_large(head: bytes, stream: BinaryIO) -> Output:
    """The answer to a payload over the limit (see the module docstring)."""
    from plangate.hook_io.payload_scan import scan

    seen = scan(head, stream, lambda found: _placed(found) is not None, read_max=READ_MAX_BYTES)
    place = _placed(seen)
    if place == _BAD:
        return _denied_input("not a PreToolUse payload")
    if place == _FIELD:
        return _denied_input("a payload field is missing")
    if place == _ENTRY:
        return _entry_too_large(f"the {seen.fields['tool_name']} call's input is over 64 KiB")
    if place == _OTHER:
        tool_input = seen.fields.get("tool_input")
        read = (
            seen.fields.get("tool_name") == "Read"
            and is_owned_path(seen.fields.get("cwd"))
            and ("tool_input", "file_path") not in seen.cut
        )
        if read and isinstance(tool_input, dict):
            return _owned_read(seen.fields, tool_input) or {}
        return {}
    return _entry_too_large("the payload could not be read far enough to place the call")


_BAD, _FIELD, _OTHER, _ENTRY = "bad", "field", "other", "entry"


def _placed(seen: Scan) -> str | None:
    """What the fields seen so far make of the call: not a PreToolUse payload, a Read
    without the cwd to place it, not a call the guard decides, a phase entry; None while
    more is needed."""
    fields = seen.fields
    event, tool_name = fields.get("hook_event_name"), fields.get("tool_name")
    if not isinstance(event, str) or not isinstance(tool_name, str):
        return _BAD if seen.ended else None
    if event != "PreToolUse" or ("tool_name",) in seen.cut:
        return _BAD
    if tool_name not in ("Read", "Agent") or fields.get("agent_id") is not None:
        return _OTHER
    tool_input = fields.get("tool_input")
    field = "prompt" if tool_name == "Agent" else "file_path"
    value = tool_input.get(field) if isinstance(tool_input, dict) else None
    whole = ("tool_input", field) not in seen.cut
    cwd = fields.get("cwd")
    if not isinstance(value, str):
        return _OTHER if seen.ended else None
    if tool_name == "Read" and not is_owned_path(cwd):
        return _FIELD if seen.ended else None  # a Read path needs the cwd to be placed
    if tool_name == "Agent":
        entry = calls.classify(tool_name, {"prompt": value}, "/") is not None
    else:
        # A path cut at 64 KiB is no path Claude Code can read: it enters no phase.
        entry = whole and calls.classify(tool_name, {"file_path": value}, str(cwd)) is not None
    if not entry:
        return _OTHER
    return _ENTRY if seen.ended else None  # an agent_id further on: a subagent's call


def _entry_too_large(detail: str) -> Output:
    from plangate.decisions import reasons

    return _denied(reasons.Decision.deny(reasons.ENTRY_TOO_LARGE, detail=detail))


def _timed_out(payload: Payload, detail: str) -> Output:
    """A decision past the deadline: the unverified ``guard_timeout``, logged."""
    from plangate.decisions import reasons

    return _denied(reasons.Decision.unverified(reasons.GUARD_TIMEOUT, detail=detail))


POLICY = runtime.Policy(
    (runtime.PRE_TOOL_USE,),
    decide,
    closed=True,
    bad_input=closed(None),
    crash=closed(None),
    large=decide_large,
    deadline=(DEADLINE_ENV, DEFAULT_DEADLINE_MS, MAX_DEADLINE_MS, MIN_DEADLINE_MS),
    on_deadline=_timed_out,
)
"""Fails closed (``hook_input``, ``installation``); a payload over 64 KiB goes to
:func:`decide_large`; past the deadline, the unverified ``guard_timeout``."""


def main() -> int:
    return runtime.run(POLICY)


if __name__ == "__main__":
    raise SystemExit(main())
