"""A scripted stand-in for the Anthropic Messages API and OpenAI's Responses API, for running
Claude Code and Codex CLI offline."""

from plangate.harness.standin.responses import apply_patch, shell
from plangate.harness.standin.script import (
    ModelRequest,
    Reply,
    Script,
    Text,
    ToolUse,
    as_reply,
    canned_side_reply,
    new_message_id,
    new_tool_use_id,
    text,
    tool_use,
)
from plangate.harness.standin.server import RecordedRequest, StandIn

__all__ = [
    "ModelRequest",
    "RecordedRequest",
    "Reply",
    "Script",
    "StandIn",
    "Text",
    "ToolUse",
    "apply_patch",
    "as_reply",
    "canned_side_reply",
    "new_message_id",
    "new_tool_use_id",
    "shell",
    "text",
    "tool_use",
]
