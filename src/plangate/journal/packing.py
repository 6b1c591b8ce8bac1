"""Light events as plain values, for the journal index's events file. Standard library only."""

from __future__ import annotations

from plangate.journal.events import (
    AssistantText,
    EndTurn,
    Event,
    HumanTurn,
    QueuedPrompt,
    ReadRange,
    TaskNotification,
    ToolResult,
    ToolUse,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_KINDS: tuple[type[Event], ...] = (
    ToolUse,
    ToolResult,
    AssistantText,
    EndTurn,
    HumanTurn,
    TaskNotification,
    QueuedPrompt,
)
_KIND_CODES = {kind: code for code, kind in enumerate(_KINDS)}
_TOOL_RESULT = _KIND_CODES[ToolResult]
_FILE_FIELD = 8  # a ToolResult tuple: kind, four Event fields, id, text, is_error, file


def pack(event: Event) -> tuple[object, ...]:
    """An event as plain values: its kind's code, then its fields in constructor order."""
    code = _KIND_CODES[type(event)]
    head = (code, event.order, event.record, event.message_id, event.timestamp)
    if isinstance(event, ToolUse):
        return (*head, event.tool_use_id, event.name, event.input)
    if isinstance(event, ToolResult):
        file = event.file
        packed_file = (
            None
            if file is None
            else (file.file_path, file.start_line, file.num_lines, file.total_lines, file.content)
        )
        return (
            *head,
            event.tool_use_id,
            event.text,
            event.is_error,
            packed_file,
            event.is_async,
            event.text_starts_json,
        )
    if isinstance(event, AssistantText):
        return (*head, event.text)
    if isinstance(event, HumanTurn):
        return (
            *head,
            event.text,
            event.command,
            event.arguments,
            event.source,
            event.prompt_id,
            event.entrypoint,
        )
    if isinstance(event, TaskNotification):
        return (*head, event.tool_use_id, event.status)
    if isinstance(event, QueuedPrompt):
        return (*head, event.text)
    return head


def unpack(item: tuple[Any, ...]) -> Event:
    code: int = item[0]
    if code == _TOOL_RESULT and item[_FILE_FIELD] is not None:
        item = (*item[:_FILE_FIELD], ReadRange(*item[_FILE_FIELD]), *item[_FILE_FIELD + 1 :])
    event: Event = _KINDS[code](*item[1:])
    return event
