"""What a file holds after a Write, Edit or MultiEdit call (for approval-flag checks).
Standard library only (hook path)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return ""


def _apply(text: str, old: object, new: object, every: object) -> str:
    if not isinstance(old, str) or not isinstance(new, str) or not old:
        return text
    return text.replace(old, new) if every is True else text.replace(old, new, 1)


def after(tool: str, tool_input: dict[str, Any], path: str) -> str | None:
    """The file's text once the call ran, or None when the call's effect is not known."""
    if tool == "Write":
        content = tool_input.get("content")
        return content if isinstance(content, str) else None
    if tool == "Edit":
        return _apply(
            _read(path),
            tool_input.get("old_string"),
            tool_input.get("new_string"),
            tool_input.get("replace_all"),
        )
    if tool == "MultiEdit":
        text = _read(path)
        edits = tool_input.get("edits")
        if not isinstance(edits, list):
            return None
        for item in edits:
            if isinstance(item, dict):
                text = _apply(
                    text, item.get("old_string"), item.get("new_string"), item.get("replace_all")
                )
        return text
    return None
