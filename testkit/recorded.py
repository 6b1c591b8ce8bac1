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


def typed_commands(journal: Path) -> list[tuple[str, str]]:
    """The slash commands the journal records as typed, in order: (``/name``, arguments)."""
    found: list[tuple[str, str]] = []
    for line in journal.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        message = record.get("message")
        if record.get("type") != "user" or not isinstance(message, dict):
            continue
        content = message.get("content")
        if isinstance(content, str) and "<command-name>" in content:
            name = content.split("<command-name>")[1].split("</command-name>")[0]
            args = ""
            if "<command-args>" in content:
                args = content.split("<command-args>")[1].split("</command-args>")[0]
            found.append((name, args))
    return found


SKILL_BASE = "Base directory for this skill: "


def skills_loaded(journal: Path) -> list[tuple[str, Path, str]]:
    """Every skill text the CLI put into the conversation, in order: (skill name, the folder
    it was loaded from, the text). The CLI journals it as a meta user record that starts with
    the skill's base directory, after the typed command or the Skill tool's result."""
    found: list[tuple[str, Path, str]] = []
    for line in journal.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        message = record.get("message")
        if record.get("type") != "user" or not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for block in blocks:
            value = block.get("text") if isinstance(block, dict) else None
            if isinstance(value, str) and value.startswith(SKILL_BASE):
                folder = Path(value[len(SKILL_BASE) :].split("\n", 1)[0].strip())
                found.append((folder.name, folder, value))
    return found
