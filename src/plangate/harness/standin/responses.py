"""The stand-in's Responses API side: how Codex CLI's requests reach a script, and back.

Standard library only. :class:`~plangate.harness.standin.server.StandIn` serves
``POST /v1/responses`` beside ``/v1/messages``, from the same script and into the same request
record; this module holds what differs:

* :func:`messages_view` translates a Responses request body (``input`` items: ``developer``
  and ``user`` messages, ``function_call``/``custom_tool_call`` items and their outputs) into
  the Messages shape every script reads (``system``, ``messages`` with ``tool_use`` and
  ``tool_result`` blocks, ``tools``), so ``request.last_user_text`` and
  ``request.tool_results()`` mean the same for both CLIs.
* :func:`classify` tells Codex's own side requests (the terminal UI's thread title) from the
  main conversation, by the ``x-codex-turn-metadata`` header.
* :func:`render_response` turns a :class:`~plangate.harness.standin.script.Reply` into output
  items and the server-sent events Codex reads: ``response.created``, then per item
  ``response.output_item.added`` (text as ``response.output_text.delta``) and
  ``response.output_item.done``, then ``response.completed`` with the usage. Codex acts on the
  ``done`` items and reports an error when a stream ends without ``response.completed``.

Tool calls keep the script's vocabulary: ``tool_use("Bash", command=...)`` (Claude Code's
name) becomes Codex's shell tool, a ``function_call`` to ``exec_command`` with ``{"cmd":
...}``; ``tool_use("apply_patch", input=PATCH)`` (or :func:`apply_patch`) becomes a
``custom_tool_call`` whose input is the patch text; any other name is a ``function_call``
with the block's input as its JSON arguments.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterable, Mapping
from typing import Any

from plangate.harness.standin.script import (
    Block,
    JSONObject,
    Reply,
    RequestKind,
    Text,
    ToolUse,
)

#: Codex's shell tool (a function tool) and the name of its one argument that is required.
SHELL_TOOL = "exec_command"
#: Codex's patch tool (a custom tool: its input is the patch text, not JSON).
PATCH_TOOL = "apply_patch"
#: Script names that mean Codex's shell tool.
_SHELL_NAMES = frozenset({"Bash", SHELL_TOOL})
#: Keys a script may put the patch text under (Codex's hooks see it as ``command``).
_PATCH_KEYS = ("input", "patch", "command")
#: ``x-codex-turn-metadata``'s ``thread_source`` of the terminal UI's title request.
_TITLE_SOURCE = "thread_title"


def shell(command: str, **arguments: Any) -> ToolUse:
    """A call to Codex's shell tool: ``shell("ls")`` (``workdir=``, ``yield_time_ms=``…)."""
    return ToolUse(SHELL_TOOL, {"cmd": command, **arguments})


def apply_patch(patch: str) -> ToolUse:
    """A call to Codex's ``apply_patch`` with the whole patch text
    (``*** Begin Patch`` … ``*** End Patch``)."""
    return ToolUse(PATCH_TOOL, {"input": patch})


def new_response_id() -> str:
    return f"resp_{secrets.token_hex(12)}"


def new_call_id() -> str:
    return f"call_{secrets.token_hex(12)}"


# --- requests -----------------------------------------------------------------------------


def _content_text(content: Any) -> str:
    """The text of a Responses message's content (``input_text``/``output_text`` parts) or of
    a call's output (a string, or a list of such parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    if isinstance(content, dict):
        for key in ("output", "content", "text"):
            if key in content:
                return _content_text(content[key])
    return ""


def _call_input(item: Mapping[str, Any]) -> JSONObject:
    if item.get("type") == "custom_tool_call":
        return {"input": item.get("input", "")}
    arguments = item.get("arguments")
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except ValueError:
            return {"arguments": arguments}
        return parsed if isinstance(parsed, dict) else {"arguments": parsed}
    return dict(arguments) if isinstance(arguments, dict) else {}


def _tool_name(tool: Mapping[str, Any]) -> str:
    name = tool.get("name")
    return str(name) if name else str(tool.get("type", ""))


def messages_view(body: Mapping[str, Any]) -> JSONObject:
    """A Responses request body as a Messages one (see the module's documentation).

    ``developer``/``system`` messages (and ``instructions``, when given) make ``system``;
    ``user`` and ``assistant`` messages keep their role, calls become the assistant's
    ``tool_use`` blocks (``id`` = the ``call_id``) and their outputs the user's
    ``tool_result`` blocks. Consecutive items of one role share a message. Reasoning items
    are left out.
    """
    system: list[str] = []
    instructions = body.get("instructions")
    if isinstance(instructions, str) and instructions:
        system.append(instructions)
    messages: list[JSONObject] = []

    def add(role: str, block: JSONObject) -> None:
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].append(block)
        else:
            messages.append({"role": role, "content": [block]})

    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            text_value = _content_text(item.get("content"))
            if role in ("developer", "system"):
                system.append(text_value)
            elif role in ("user", "assistant"):
                add(str(role), {"type": "text", "text": text_value})
        elif kind in ("function_call", "custom_tool_call"):
            add(
                "assistant",
                {
                    "type": "tool_use",
                    "id": str(item.get("call_id", "")),
                    "name": str(item.get("name", "")),
                    "input": _call_input(item),
                },
            )
        elif kind in ("function_call_output", "custom_tool_call_output"):
            add(
                "user",
                {
                    "type": "tool_result",
                    "tool_use_id": str(item.get("call_id", "")),
                    "content": _content_text(item.get("output")),
                },
            )
    tools = body.get("tools")
    return {
        "model": body.get("model", ""),
        "system": "\n\n".join(system),
        "messages": messages,
        "tools": [
            {"name": _tool_name(t), "type": t.get("type")}
            for t in (tools if isinstance(tools, list) else [])
            if isinstance(t, dict)
        ],
        "stream": body.get("stream", False),
    }


def turn_metadata(headers: Mapping[str, str]) -> JSONObject:
    """The ``x-codex-turn-metadata`` header (JSON), or ``{}``."""
    raw = headers.get("x-codex-turn-metadata")
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def classify(headers: Mapping[str, str]) -> tuple[RequestKind, str | None]:
    """``("side", "title")`` for the terminal UI's title request, else ``("main", None)``."""
    if turn_metadata(headers).get("thread_source") == _TITLE_SOURCE:
        return "side", "title"
    return "main", None


# --- replies ------------------------------------------------------------------------------


def _patch_text(tool_input: Mapping[str, Any]) -> str:
    for key in _PATCH_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str):
            return value
    return ""


def output_item(block: Block) -> JSONObject:
    """One reply block as a Responses output item (text, shell call, patch, other call)."""
    if isinstance(block, Text):
        return {
            "type": "message",
            "id": f"msg_{secrets.token_hex(12)}",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": block.text, "annotations": []}],
        }
    call_id = block.id or new_call_id()
    if block.name == PATCH_TOOL:
        return {
            "type": "custom_tool_call",
            "id": f"ctc_{secrets.token_hex(12)}",
            "status": "completed",
            "call_id": call_id,
            "name": PATCH_TOOL,
            "input": _patch_text(block.input),
        }
    arguments = dict(block.input)
    name = block.name
    if name in _SHELL_NAMES:
        name = SHELL_TOOL
        if "cmd" not in arguments and "command" in arguments:
            arguments["cmd"] = arguments.pop("command")
        arguments.pop("description", None)  # Claude Code's Bash field; Codex has none
    return {
        "type": "function_call",
        "id": f"fc_{secrets.token_hex(12)}",
        "status": "completed",
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(arguments),
    }


def _pending(item: JSONObject) -> JSONObject:
    """The item as ``response.output_item.added`` announces it: nothing in it yet."""
    started = {**item, "status": "in_progress"}
    if item["type"] == "message":
        started["content"] = []
    elif item["type"] == "function_call":
        started["arguments"] = ""
    elif item["type"] == "custom_tool_call":
        started["input"] = ""
    return started


def _chunks(value: str, size: int = 40) -> Iterable[str]:
    for i in range(0, len(value), size):
        yield value[i : i + size]


def render_response(
    reply: Reply, model: str, input_tokens: int
) -> tuple[JSONObject, list[tuple[str, JSONObject]]]:
    """The reply as a completed response object and as the list of stream events."""
    response_id = new_response_id()
    items = [output_item(b) for b in reply.blocks]
    output_tokens = max(1, sum(len(json.dumps(i)) for i in items) // 4)
    usage = {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input_tokens + output_tokens,
    }
    response: JSONObject = {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": model,
        "output": items,
        "usage": usage,
    }
    started = {**response, "status": "in_progress", "output": [], "usage": None}
    events: list[tuple[str, JSONObject]] = [("response.created", {"response": started})]
    for index, item in enumerate(items):
        events.append(
            ("response.output_item.added", {"output_index": index, "item": _pending(item)})
        )
        if item["type"] == "message":
            for chunk in _chunks(item["content"][0]["text"]):
                events.append(
                    (
                        "response.output_text.delta",
                        {
                            "item_id": item["id"],
                            "output_index": index,
                            "content_index": 0,
                            "delta": chunk,
                        },
                    )
                )
        events.append(("response.output_item.done", {"output_index": index, "item": item}))
    events.append(("response.completed", {"response": response}))
    numbered = [
        (name, {"type": name, "sequence_number": n, **data})
        for n, (name, data) in enumerate(events)
    ]
    return response, numbered


def tool_calls_of(response: Mapping[str, Any]) -> list[ToolUse]:
    """The calls of a rendered response, as blocks (``input`` as in :func:`messages_view`)."""
    output = response.get("output")
    calls = []
    for item in output if isinstance(output, list) else []:
        if isinstance(item, dict) and item.get("type") in ("function_call", "custom_tool_call"):
            calls.append(
                ToolUse(name=str(item["name"]), input=_call_input(item), id=str(item["call_id"]))
            )
    return calls


__all__ = [
    "PATCH_TOOL",
    "SHELL_TOOL",
    "apply_patch",
    "classify",
    "messages_view",
    "render_response",
    "shell",
    "tool_calls_of",
]
