"""What a real Claude Code session journaled, read plainly: its tool calls and their results.

For end-to-end tests that check a real journal independently of plangate's reader.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def tool_results(journal: Path) -> dict[str, tuple[bool, str]]:
    """Every tool result in the journal by tool use id: (is_error, text)."""
    found: dict[str, tuple[bool, str]] = {}
    for line in journal.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        message = record.get("message")
        if record.get("type") != "user" or not isinstance(message, dict):
            continue
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                body = block.get("content")
                if isinstance(body, list):
                    body = "\n".join(b.get("text", "") for b in body if isinstance(b, dict))
                found[str(block.get("tool_use_id"))] = (block.get("is_error") is True, str(body))
    return found


def tool_calls(journal: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """Every tool call in the journal: (id, name, input), in file order."""
    calls: list[tuple[str, str, dict[str, Any]]] = []
    for line in journal.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        message = record.get("message")
        if record.get("type") != "assistant" or not isinstance(message, dict):
            continue
        for block in message.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                calls.append((str(block["id"]), str(block["name"]), dict(block["input"])))
    return calls
