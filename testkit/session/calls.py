"""What the simulated session's model does: tool calls and assistant messages.

A :class:`Call` is one tool call (its id, tool name and input) and, once the session ran it,
what came of it; a :class:`Message` is one assistant message of text blocks and calls, written
one record per block as Claude Code 2.1.332 writes it.
"""

from __future__ import annotations

import json
import os
import re
import uuid as uuid_module
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from plangate.locations import project_slug

if TYPE_CHECKING:
    from testkit.session.hooks import HookOutcome

Record = dict[str, Any]
ToolOutcome = tuple[Any, "bool | None", Any, dict[str, Any]]
"""What a tool produced: result content, ``is_error`` (None leaves the key out), the
``toolUseResult`` side-car and extra record fields."""


def new_tool_use_id() -> str:
    return "toolu_01" + uuid_module.uuid4().hex[:24]


def new_message_id() -> str:
    return "msg_01" + uuid_module.uuid4().hex[:24]


def new_agent_id() -> str:
    return "a" + uuid_module.uuid4().hex[:16]


def task_output_file(project_dir: str, session_id: str, agent_id: str) -> str:
    """Where Claude Code 2.1.332 keeps a background agent's output."""
    return f"/tmp/claude-0/{project_slug(project_dir)}/{session_id}/tasks/{agent_id}.output"


def reviewer_answer(prompt: str) -> str:
    """A reviewer's report that starts with the opener the dispatch prompt asks for."""
    found = re.search(r"begin your answer with: (INPUT: \S+ \S+)", prompt)
    opener = found.group(1) if found else "INPUT: reviewed"
    return f"{opener}\n1. No blockers."


def content_text(content: Any) -> str:
    """The text of a tool result's content (a string, or its text blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(block.get("text", ""))
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
        )
    return ""


class Call:
    """One tool call: its id, tool name and input, and what happened to it.

    Build with :meth:`read`, :meth:`bash`, :meth:`agent`, :meth:`edit`, :meth:`write` or the
    constructor. After the session ran it, :attr:`text` is the tool result text,
    :attr:`is_error` its error flag and :attr:`hook_outcome` the hook's answer (if a hook ran).
    """

    def __init__(
        self,
        name: str,
        tool_input: Mapping[str, Any],
        *,
        tool_use_id: str | None = None,
        dedup: bool = False,
        answer: str | None = None,
    ) -> None:
        self.name = name
        self.input: dict[str, Any] = dict(tool_input)
        self.id = tool_use_id if tool_use_id is not None else new_tool_use_id()
        self.dedup = dedup
        self.answer = answer
        self.message: Message | None = None
        self.record: Record | None = None
        self.result_record: Record | None = None
        self.pending_result: ToolOutcome | None = None
        self.text: str | None = None
        self.is_error: bool | None = None
        self.tool_use_result: Any = None
        self.hook_outcome: HookOutcome | None = None
        self.background = False
        self.agent_id: str | None = None

    # constructors

    @classmethod
    def read(
        cls,
        file_path: str | os.PathLike[str],
        *,
        offset: int | None = None,
        limit: int | None = None,
        dedup: bool = False,
        **extra: Any,
    ) -> Call:
        """A Read. ``dedup`` answers Claude Code's "file unchanged" reply when an earlier Read
        of the same file with the same offset and limit delivered the same bytes."""
        tool_input: dict[str, Any] = {"file_path": os.fspath(file_path)}
        if offset is not None:
            tool_input["offset"] = offset
        if limit is not None:
            tool_input["limit"] = limit
        tool_input.update(extra)
        return cls("Read", tool_input, dedup=dedup)

    @classmethod
    def bash(cls, command: str, description: str | None = None, **extra: Any) -> Call:
        tool_input: dict[str, Any] = {"command": command}
        tool_input["description"] = description if description is not None else "Run a command"
        tool_input.update(extra)
        return cls("Bash", tool_input)

    @classmethod
    def agent(
        cls,
        prompt: str,
        *,
        description: str = "Independent review",
        subagent_type: str | None = "general-purpose",
        run_in_background: Any = False,
        answer: str | None = None,
        **extra: Any,
    ) -> Call:
        """An Agent call; ``run_in_background=None`` leaves the key out (2.1.332's schema then
        runs it in the background). ``answer`` is the subagent's report."""
        tool_input: dict[str, Any] = {"description": description, "prompt": prompt}
        if subagent_type is not None:
            tool_input["subagent_type"] = subagent_type
        if run_in_background is not None:
            tool_input["run_in_background"] = run_in_background
        tool_input.update(extra)
        return cls("Agent", tool_input, answer=answer)

    @classmethod
    def edit(
        cls,
        file_path: str | os.PathLike[str],
        old_string: str,
        new_string: str,
        *,
        replace_all: bool | None = None,
    ) -> Call:
        tool_input: dict[str, Any] = {
            "file_path": os.fspath(file_path),
            "old_string": old_string,
            "new_string": new_string,
        }
        if replace_all is not None:
            tool_input["replace_all"] = replace_all
        return cls("Edit", tool_input)

    @classmethod
    def write(cls, file_path: str | os.PathLike[str], content: str) -> Call:
        return cls("Write", {"file_path": os.fspath(file_path), "content": content})

    # state

    @property
    def journaled(self) -> bool:
        return self.record is not None

    @property
    def answered(self) -> bool:
        return self.result_record is not None

    def json(self) -> Any:
        """The result text parsed as JSON (a plangate command's output)."""
        if self.text is None:
            raise ValueError(f"{self.name} {self.id} has no result yet")
        return json.loads(self.text)

    def __repr__(self) -> str:
        return f"Call({self.name!r}, {self.input!r}, id={self.id!r})"


class Message:
    """One assistant message: text blocks and tool calls, written one record per block."""

    def __init__(self, message_id: str, blocks: Sequence[str | Call], stop_reason: str) -> None:
        self.id = message_id
        self.blocks = list(blocks)
        self.stop_reason = stop_reason
        self.written = 0
        self.records: list[Record] = []

    @property
    def calls(self) -> list[Call]:
        return [block for block in self.blocks if isinstance(block, Call)]

    @property
    def complete(self) -> bool:
        return self.written == len(self.blocks)

    def __repr__(self) -> str:
        return f"Message({self.id!r}, blocks={len(self.blocks)}, written={self.written})"
