"""The hook wire format as Claude Code 2.1 speaks it: what arrives on stdin, what we print.

Outputs are plain dicts with Claude Code's camelCase keys. Every field of a payload is
treated as optional: Claude Code adds fields between versions.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Payload = dict[str, Any]
    Output = dict[str, Any]

PAYLOAD_MAX_BYTES = 64 * 1024
"""A PreToolUse payload up to this size is read whole; a larger one is read field by field,
only as far as the answer needs (:mod:`plangate.hook_io.payload_scan`)."""

ALLOW = "allow"
DENY = "deny"


def pre_tool_use_decision(
    decision: str, reason: str, *, system_message: str | None = None
) -> Output:
    """A PreToolUse permission decision; a deny reason is shown to the model."""
    output: Output = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }
    if system_message:
        output["systemMessage"] = system_message
    return output


def warning(
    system_message: str, *, context: str | None = None, event: str = "PreToolUse"
) -> Output:
    """No decision: the call runs; the person sees the warning (the model never does)."""
    output: Output = {"systemMessage": system_message}
    if context:
        output["hookSpecificOutput"] = {"hookEventName": event, "additionalContext": context}
    return output


def block_stop(reason: str, *, system_message: str | None = None) -> Output:
    """Hold a Stop or SubagentStop: the reason becomes the model's next instruction."""
    output: Output = {"decision": "block", "reason": reason}
    if system_message:
        output["systemMessage"] = system_message
    return output


def no_decision(system_message: str | None = None) -> Output:
    return {"systemMessage": system_message} if system_message else {}
