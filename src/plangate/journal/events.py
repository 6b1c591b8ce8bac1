"""Typed events read from a journal, in conversation order.

Every event carries ``order`` (its position in causal order: records are ordered by parent
links and file position, never by timestamps, and each content block takes one slot),
``record`` (the physical line index of the record it came from) and the record's
``message_id``. Plain ``__slots__`` classes: :mod:`dataclasses` and :mod:`typing` cost a hook
process tens of milliseconds to import.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DEDUP_REPLY = (
    "Wasted call \u2014 file unchanged since your last Read. "
    "Refer to that earlier tool_result instead."
)
CWD_RESET_PREFIX = "Shell cwd was reset to "


class Event:
    __slots__ = ("order", "record", "message_id", "timestamp")
    kind = "event"

    def __init__(self, order: int, record: int, message_id: str | None, timestamp: str) -> None:
        self.order = order
        self.record = record
        self.message_id = message_id
        self.timestamp = timestamp

    def _fields(self) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        for cls in type(self).__mro__:
            for name in getattr(cls, "__slots__", ()):
                fields.setdefault(name, getattr(self, name))
        return fields

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self._fields().items())
        return f"{type(self).__name__}({inner})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Event)
            and type(other) is type(self)
            and self._fields() == other._fields()
        )

    __hash__ = None  # type: ignore[assignment]

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind}
        for key, value in self._fields().items():
            data[key] = value.as_dict() if isinstance(value, ReadRange) else value
        return data


class ReadRange:
    """What a Read delivered: the file and the lines (1-based) it covered."""

    __slots__ = ("file_path", "start_line", "num_lines", "total_lines", "content")

    def __init__(
        self,
        file_path: str,
        start_line: int | None,
        num_lines: int | None,
        total_lines: int | None,
        content: str | None = None,
    ) -> None:
        self.file_path = file_path
        self.start_line = start_line
        self.num_lines = num_lines
        self.total_lines = total_lines
        self.content = content  # the delivered lines; kept only when records load in full

    @property
    def is_dedup_witness(self) -> bool:
        """Claude Code's "file unchanged" reply names the file and nothing else."""
        return self.start_line is None and self.num_lines is None

    @property
    def end_line(self) -> int | None:
        if self.start_line is None or self.num_lines is None:
            return None
        return self.start_line + self.num_lines - 1

    @property
    def covers_whole_file(self) -> bool:
        return (
            self.start_line == 1
            and self.num_lines is not None
            and self.total_lines is not None
            and self.num_lines >= self.total_lines
        )

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ReadRange) and self.as_dict() == other.as_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ReadRange({self.as_dict()!r})"


class ToolUse(Event):
    """The model called a tool. ``input`` is None when the reader kept only the index."""

    __slots__ = ("tool_use_id", "name", "input")
    kind = "tool_use"

    def __init__(
        self,
        order: int,
        record: int,
        message_id: str | None,
        timestamp: str,
        tool_use_id: str,
        name: str,
        input: dict[str, Any] | None,
    ) -> None:
        super().__init__(order, record, message_id, timestamp)
        self.tool_use_id = tool_use_id
        self.name = name
        self.input = input


class ToolResult(Event):
    """A tool's result. ``text`` is None when only the index was kept."""

    __slots__ = ("tool_use_id", "text", "is_error", "file", "is_async", "text_starts_json")
    kind = "tool_result"

    def __init__(
        self,
        order: int,
        record: int,
        message_id: str | None,
        timestamp: str,
        tool_use_id: str,
        text: str | None,
        is_error: bool,
        file: ReadRange | None,
        is_async: bool,
        text_starts_json: bool,
    ) -> None:
        super().__init__(order, record, message_id, timestamp)
        self.tool_use_id = tool_use_id
        self.text = text
        self.is_error = is_error
        self.file = file
        self.is_async = is_async
        self.text_starts_json = text_starts_json

    @property
    def is_dedup_reply(self) -> bool:
        return self.text == DEDUP_REPLY


class AssistantText(Event):
    """Non-blank text the model wrote in the parent session."""

    __slots__ = ("text",)
    kind = "assistant_text"

    def __init__(
        self, order: int, record: int, message_id: str | None, timestamp: str, text: str | None
    ) -> None:
        super().__init__(order, record, message_id, timestamp)
        self.text = text


class EndTurn(Event):
    """The model ended its turn (``stop_reason: end_turn``)."""

    __slots__ = ()
    kind = "end_turn"


class HumanTurn(Event):
    """A prompt a person typed or a slash command they ran that Claude Code sent the model.
    A command Claude Code runs itself (``/compact``, ``/clear``, ``/model``, a ``!`` shell
    command) and its output are not one (:func:`plangate.journal.building.local_command`).

    ``command`` is the slash command's name (``autoplan``) and ``arguments`` its arguments
    when the prompt is a slash-command expansion; ``source`` is Claude Code's
    ``promptSource`` (``typed``, ``sdk``, …) and ``entrypoint`` its ``entrypoint`` (``cli``,
    ``sdk-cli``, …), each None on versions that do not write it: who answers the session.
    """

    __slots__ = ("text", "command", "arguments", "source", "prompt_id", "entrypoint")
    kind = "human_turn"

    def __init__(
        self,
        order: int,
        record: int,
        message_id: str | None,
        timestamp: str,
        text: str | None,
        command: str | None,
        arguments: str | None,
        source: str | None,
        prompt_id: str | None,
        entrypoint: str | None = None,
    ) -> None:
        super().__init__(order, record, message_id, timestamp)
        self.text = text
        self.command = command
        self.arguments = arguments
        self.source = source
        self.prompt_id = prompt_id
        self.entrypoint = entrypoint


class QueuedPrompt(Event):
    """A prompt a person typed while the model was working, which Claude Code gave the model
    within its turn (2.1.3xx: a ``queued_command`` attachment of ``origin.kind`` human): the
    person's own words, but no new turn, so no :class:`HumanTurn`."""

    __slots__ = ("text",)
    kind = "queued_prompt"

    def __init__(
        self, order: int, record: int, message_id: str | None, timestamp: str, text: str | None
    ) -> None:
        super().__init__(order, record, message_id, timestamp)
        self.text = text


class TaskNotification(Event):
    """A background agent reported back (a ``<task-notification>`` user record)."""

    __slots__ = ("tool_use_id", "status")
    kind = "task_notification"

    def __init__(
        self,
        order: int,
        record: int,
        message_id: str | None,
        timestamp: str,
        tool_use_id: str,
        status: str | None,
    ) -> None:
        super().__init__(order, record, message_id, timestamp)
        self.tool_use_id = tool_use_id
        self.status = status


def strip_cwd_reset(text: str) -> str:
    """Remove the ``Shell cwd was reset to <dir>`` line Claude Code appends to a Bash result."""
    cut = text.rfind("\n")
    last = text[cut + 1 :]
    if last.startswith(CWD_RESET_PREFIX) and "\n" not in last:
        return text[:cut] if cut >= 0 else ""
    return text
