"""The events of one journal record, light (for the index) or in full (for a decision).

:class:`EventBuilder` turns a parsed record into :mod:`plangate.journal.events`: tool calls and
their results, assistant text, the end of a turn, typed prompts (with their slash command),
background-task notifications and prompts a person typed while the model worked. Like
:mod:`.records`, every field is optional and checked for its type. Standard library only
(hook path).
"""

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
    strip_cwd_reset,
)
from plangate.journal.records import Record, valid_timestamp

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


INPUT_KEEP_BYTES = 4096
"""Tool inputs (and typed prompts) of records up to this size are kept in the index."""


class EventBuilder:
    """Turns a raw record into events.

    ``full`` keeps content (texts, inputs, result bodies); otherwise only what an index
    needs is kept, and :func:`plangate.journal.reader` reloads records in full on demand.
    Tool inputs of at most ``input_keep_bytes`` (as a record) are kept even in the index.
    """

    __slots__ = ("full", "input_keep_bytes")

    def __init__(self, full: bool, input_keep_bytes: int = INPUT_KEEP_BYTES) -> None:
        self.full = full
        self.input_keep_bytes = input_keep_bytes

    def build(
        self, raw: dict[str, Any], record: Record, base: int
    ) -> tuple[tuple[Event, ...], int]:
        """Events of one record with orders starting at ``base``, and the slots it used."""
        message = raw.get("message")
        if record.agent or record.metadata:
            return (), 0
        if not isinstance(message, dict):
            return self._queued_notification(raw, record, base)
        message_id = message.get("id")
        message_id = message_id if isinstance(message_id, str) else None
        timestamp = raw.get("timestamp")
        timestamp = timestamp if isinstance(timestamp, str) else ""
        emit = record.stamped  # valid_timestamp(timestamp), judged once for the record
        content = message.get("content")
        events: list[Event] = []
        slot = 0
        role = record.role
        keep = self.full or record.length <= self.input_keep_bytes
        if isinstance(content, str):
            if role == "user":
                notification = _task_notification(content) if _from_system(raw) else None
                if notification is not None:
                    if emit:
                        tool_use_id, status = notification
                        events.append(
                            TaskNotification(
                                base + slot,
                                record.index,
                                message_id,
                                timestamp,
                                tool_use_id,
                                status,
                            )
                        )
                    slot += 1
                elif _human_turn(raw):
                    if emit:
                        events.append(_human_event(raw, content, base + slot, record, keep))
                    slot += 1
            elif role == "assistant" and content.strip():
                if emit:
                    text = content if self.full else None
                    events.append(
                        AssistantText(base + slot, record.index, message_id, timestamp, text)
                    )
                slot += 1
        elif isinstance(content, list):
            tool_use_result = raw.get("toolUseResult")
            human_texts: list[str] | None = [] if role == "user" and _human_turn(raw) else None
            for block in content:
                order = base + slot
                slot += 1
                if not emit or not isinstance(block, dict):
                    continue
                block_type = block.get("type")
                if role == "assistant":
                    if block_type == "tool_use":
                        use_id, name, tool_input = (
                            block.get("id"),
                            block.get("name"),
                            block.get("input"),
                        )
                        if (
                            isinstance(use_id, str)
                            and isinstance(name, str)
                            and isinstance(tool_input, dict)
                        ):
                            events.append(
                                ToolUse(
                                    order,
                                    record.index,
                                    message_id,
                                    timestamp,
                                    use_id,
                                    name,
                                    tool_input if keep else None,
                                )
                            )
                    elif block_type == "text":
                        text = block.get("text")
                        if isinstance(text, str) and text.strip():
                            events.append(
                                AssistantText(
                                    order,
                                    record.index,
                                    message_id,
                                    timestamp,
                                    text if self.full else None,
                                )
                            )
                elif role == "user":
                    if block_type == "tool_result":
                        use_id = block.get("tool_use_id")
                        if isinstance(use_id, str):
                            events.append(
                                _result_event(
                                    block,
                                    tool_use_result,
                                    order,
                                    record,
                                    message_id,
                                    timestamp,
                                    self.full,
                                )
                            )
                    elif block_type == "text" and human_texts is not None:
                        text = block.get("text")
                        if isinstance(text, str):
                            human_texts.append(text)
            if human_texts:
                events.append(_human_event(raw, "\n".join(human_texts), base + slot, record, keep))
                slot += 1
        if role == "assistant" and message.get("stop_reason") == "end_turn":
            if emit:
                events.append(EndTurn(base + slot, record.index, message_id, timestamp))
            slot += 1
        return tuple(events), slot

    def _queued_notification(
        self, raw: dict[str, Any], record: Record, base: int
    ) -> tuple[tuple[Event, ...], int]:
        """Claude Code 2.1.3xx delivers a background agent's report mid-turn as a
        ``queued_command`` attachment instead of a user record, and so a prompt the person
        typed while the model worked (:class:`QueuedPrompt`)."""
        prompt = _queued_prompt(raw)
        notification = _task_notification(prompt) if prompt is not None else None
        typed = notification is None and prompt is not None and _typed_by_a_person(raw)
        if notification is None and not typed:
            return (), 0
        timestamp = raw.get("timestamp")
        if not isinstance(timestamp, str) or not valid_timestamp(timestamp):
            return (), 1
        if typed:
            keep = self.full or record.length <= self.input_keep_bytes
            return (QueuedPrompt(base, record.index, None, timestamp, prompt if keep else None),), 1
        assert notification is not None
        tool_use_id, status = notification
        event = TaskNotification(base, record.index, None, timestamp, tool_use_id, status)
        return (event,), 1


def _queued_prompt(raw: dict[str, Any]) -> str | None:
    attachment = raw.get("attachment")
    if raw.get("type") != "attachment" or not isinstance(attachment, dict):
        return None
    if attachment.get("type") != "queued_command":
        return None
    prompt = attachment.get("prompt")
    return prompt if isinstance(prompt, str) else None


def _typed_by_a_person(raw: dict[str, Any]) -> bool:
    """The queued command is a prompt a person typed (``commandMode`` prompt, ``origin.kind``
    human), not a task notification or any other producer's."""
    attachment = raw["attachment"]
    origin = attachment.get("origin")
    return (
        attachment.get("commandMode") == "prompt"
        and isinstance(origin, dict)
        and origin.get("kind") == "human"
    )


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            block.get("text", "")
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
        ]
        return "\n".join(text for text in texts if isinstance(text, str))
    return ""


def _result_event(
    block: dict[str, Any],
    tool_use_result: object,
    order: int,
    record: Record,
    message_id: str | None,
    timestamp: str,
    full: bool,
) -> ToolResult:
    content = block.get("content")
    text = _result_text(content) if full else None
    file_range = None
    is_async = False
    if isinstance(tool_use_result, dict):
        file_info = tool_use_result.get("file")
        if isinstance(file_info, dict) and isinstance(file_info.get("filePath"), str):
            delivered = file_info.get("content") if full else None
            file_range = ReadRange(
                file_info["filePath"],
                _int_or_none(file_info.get("startLine")),
                _int_or_none(file_info.get("numLines")),
                _int_or_none(file_info.get("totalLines")),
                delivered if isinstance(delivered, str) else None,
            )
        is_async = (
            tool_use_result.get("isAsync") is True
            or tool_use_result.get("status") == "async_launched"
        )
    return ToolResult(
        order,
        record.index,
        message_id,
        timestamp,
        block["tool_use_id"],
        text,
        block.get("is_error") is True,
        file_range,
        is_async,
        _starts_json(text if text is not None else content),
    )


def _starts_json(content: object) -> bool:
    """Whether a result's text starts with ``{`` (a command that printed JSON), without
    joining a large result's text just to look at its first character."""
    if isinstance(content, list):
        first = next(
            (b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"),
            None,
        )
        content = first
    return isinstance(content, str) and content.lstrip()[:1] == "{"


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


INTERRUPT_MARKER = "[Request interrupted by user"


def _from_system(raw: dict[str, Any]) -> bool:
    """A user record Claude Code wrote itself (a notification), not one a person typed."""
    origin = raw.get("origin")
    if isinstance(origin, dict):
        return origin.get("kind") == "task-notification"
    return raw.get("promptSource") not in ("typed", "sdk")


LOCAL_COMMAND_OUTPUT = (
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
)
SHELL_COMMAND = ("<bash-input>", "<bash-stdout>", "<bash-stderr>")
"""A ``!`` command the person ran in Claude Code's shell mode, and its output: Claude Code
2.1.332 journals each as a user record with neither ``promptSource`` nor ``origin``."""
LOCAL_COMMAND_NAME = "<command-name>"
"""How Claude Code lays out the record of a command it runs itself (``/compact``,
``/clear``; ``/model`` and ``/context`` get ``local_command`` system records): the name
first, then the indented message and arguments. A command sent to the model (a skill,
``/init``) is written with ``<command-message>`` first."""

HEAD_CHARS = 256


def local_command(raw: dict[str, Any]) -> bool:
    """Whether a user record is what Claude Code writes for a command it ran itself, not a
    prompt the person sent the model: the caveat and output of a local command, a ``!``
    shell command and its output (whatever else the record says), and the record of a
    local command (``/compact``, ``/clear``): laid out name first and without the marks
    Claude Code puts on every prompt it sends the model (``promptSource``, ``origin``)."""
    text = _first_text(raw)
    if text is None:
        return False
    head = text[:HEAD_CHARS].lstrip()  # a long output is not copied to look at its start
    if head.startswith((*LOCAL_COMMAND_OUTPUT, *SHELL_COMMAND)):
        return True
    return (
        head.startswith(LOCAL_COMMAND_NAME)
        and raw.get("promptSource") is None
        and raw.get("origin") is None
    )


def _first_text(raw: dict[str, Any]) -> str | None:
    """A user record's text, or its first text block's."""
    message = raw.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        first = next((b for b in content if isinstance(b, dict) and b.get("type") == "text"), None)
        content = first.get("text") if first is not None else None
    return content if isinstance(content, str) else None


def _human_turn(raw: dict[str, Any]) -> bool:
    # Most user records are tool results: their side-car says so first.
    if raw.get("toolUseResult") is not None or raw.get("sourceToolUseID") is not None:
        return False
    if raw.get("isMeta") is True or raw.get("isCompactSummary") is True:
        return False
    if local_command(raw):
        return False
    message = raw.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str) and content.lstrip().startswith(INTERRUPT_MARKER):
        return False
    if isinstance(content, list) and _starts_with_interrupt(content):
        return False
    if raw.get("isVisibleInTranscriptOnly") is True:
        return False
    origin = raw.get("origin")
    return not isinstance(origin, dict) or origin.get("kind") in (None, "human")


def _starts_with_interrupt(content: list[Any]) -> bool:
    first = content[0] if content else None
    text = first.get("text") if isinstance(first, dict) else None
    return isinstance(text, str) and text.startswith(INTERRUPT_MARKER)


def _human_event(
    raw: dict[str, Any], text: str, order: int, record: Record, keep: bool
) -> HumanTurn:
    command, arguments = slash_command(text)
    source = raw.get("promptSource")
    prompt_id = raw.get("promptId")
    entrypoint = raw.get("entrypoint")
    timestamp = raw.get("timestamp")
    return HumanTurn(
        order,
        record.index,
        None,
        timestamp if isinstance(timestamp, str) else "",
        text if keep else None,
        command,
        arguments,
        source if isinstance(source, str) else None,
        prompt_id if isinstance(prompt_id, str) else None,
        entrypoint if isinstance(entrypoint, str) else None,
    )


def slash_command(text: str) -> tuple[str | None, str | None]:
    """``(name, arguments)`` of a slash-command expansion, or ``(None, None)``.

    Claude Code writes ``/autoplan plan.md`` as ``<command-message>``, ``<command-name>`` and
    optional ``<command-args>`` tags, one per line: older versions in that order, 2.1.3xx with
    the name first and the other lines indented. Nothing else may be in the text.
    """
    tags: dict[str, str] = {}
    for line in text.strip().split("\n"):
        line = line.strip()
        for tag in ("command-message", "command-name", "command-args"):
            inner = _tag(line, tag)
            if inner is not None:
                if tag in tags:
                    return None, None
                tags[tag] = inner
                break
        else:
            return None, None
    name, message = tags.get("command-name"), tags.get("command-message")
    if name is None or message is None or name != "/" + message:
        return None, None
    return message, tags.get("command-args")


def _tag(line: str, tag: str) -> str | None:
    opening, closing = f"<{tag}>", f"</{tag}>"
    if line.startswith(opening) and line.endswith(closing):
        inner = line[len(opening) : len(line) - len(closing)]
        if opening not in inner and closing not in inner:
            return inner
    return None


def _task_notification(content: str) -> tuple[str, str | None] | None:
    head = content.lstrip()
    if not head.startswith("<task-notification>"):
        return None
    tool_use_id = _between(content, "<tool-use-id>", "</tool-use-id>")
    if tool_use_id is None or not 0 < len(tool_use_id) <= 160:
        return None
    if any(not (ch.isascii() and (ch.isalnum() or ch in "_-")) for ch in tool_use_id):
        return None
    return tool_use_id, _between(content, "<status>", "</status>")


def _between(text: str, start: str, end: str) -> str | None:
    begin = text.find(start)
    if begin < 0:
        return None
    begin += len(start)
    stop = text.find(end, begin)
    return text[begin:stop] if stop >= 0 else None


def clean_bash_result(event: ToolResult) -> None:
    if event.text is not None:
        event.text = strip_cwd_reset(event.text)
        event.text_starts_json = event.text.lstrip().startswith("{")
