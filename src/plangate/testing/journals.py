"""Synthetic Claude Code session journals for tests.

:class:`Journal` writes records with the field layout Claude Code 2.1.332 uses (checked
against journals that CLI wrote): conversation records carry ``parentUuid``, ``isSidechain``,
``type``, ``uuid``, ``timestamp``, ``cwd``, ``sessionId`` and ``version``; the metadata lines
between them (``queue-operation``, ``atis-latch``, ``api-request-blob`` with its ``message``,
``last-prompt``, ``cost-state`` …) carry no ``uuid``. Every conversation record hangs from the
current leaf unless a test says otherwise, so a few calls give a realistic session::

    journal = Journal(cwd="/home/me/project")
    journal.prompt("Read notes.txt")
    use = journal.tool_use("Read", {"file_path": "/home/me/project/notes.txt"})
    journal.read_result(use_id(use), "/home/me/project/notes.txt", ["hello"])
    journal.text("Done.")
    path = journal.write(tmp_path / f"{journal.session_id}.jsonl")

Ids are deterministic (a seed and a counter), timestamps advance one millisecond per record.
Nothing here reads real journals; the records are written from scratch.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid as uuid_module
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final, Literal

VERSION: Final = "2.1.332"
"""The Claude Code version whose journal layout the builder copies."""

CWD_RESET_PREFIX: Final = "Shell cwd was reset to "
DEDUP_REPLY: Final = (
    "Wasted call \u2014 file unchanged since your last Read. "
    "Refer to that earlier tool_result instead."
)

Record = dict[str, Any]


class _Leaf:
    """Marker: hang the record from the journal's current leaf."""

    def __repr__(self) -> str:
        return "LEAF"


LEAF: Final = _Leaf()
Parent = str | None | _Leaf

SlashStyle = Literal["2.1.332", "legacy"]


def dumps(record: Mapping[str, Any]) -> bytes:
    """One journal line (without its newline), compact UTF-8 JSON as Claude Code writes it."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def use_id(record: Mapping[str, Any]) -> str:
    """The ``tool_use`` id of an assistant record written by :meth:`Journal.tool_use`."""
    for block in record["message"]["content"]:
        if block.get("type") == "tool_use":
            return str(block["id"])
    raise ValueError("the record holds no tool_use block")


def project_slug(directory: str) -> str:
    """Claude Code's folder name for a project: every character outside [A-Za-z0-9] is ``-``."""
    return re.sub(r"[^A-Za-z0-9]", "-", directory)


def journal_path(config_dir: str | os.PathLike[str], project_dir: str, session_id: str) -> Path:
    """``<config>/projects/<slug>/<session>.jsonl``, with its folders created."""
    folder = Path(config_dir) / "projects" / project_slug(project_dir)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{session_id}.jsonl"


def write_lines(
    path: str | os.PathLike[str],
    lines: Iterable[bytes | str | Mapping[str, Any]],
    *,
    trailing: bytes = b"",
    mode: str = "wb",
) -> Path:
    """Write raw lines (bytes, text or records), each followed by a newline, then ``trailing``."""
    target = Path(path)
    with open(target, mode) as handle:
        for line in lines:
            if isinstance(line, bytes):
                data = line
            elif isinstance(line, str):
                data = line.encode("utf-8")
            else:
                data = dumps(line)
            handle.write(data + b"\n")
        handle.write(trailing)
    return target


class Journal:
    """Builds one session's journal, record by record, in the 2.1.332 layout."""

    def __init__(
        self,
        *,
        session_id: str | None = None,
        cwd: str = "/home/user/project",
        version: str = VERSION,
        seed: int = 1,
        start: datetime | None = None,
        git_branch: str = "main",
    ) -> None:
        self.seed = seed
        self._counter = 0
        self.session_id = session_id if session_id is not None else self.new_uuid()
        self.cwd = cwd
        self.version = version
        self.git_branch = git_branch
        self._clock = start if start is not None else datetime(2026, 11, 29, 19, 37, 45, tzinfo=UTC)
        self.records: list[Record] = []
        self.leaf: str | None = None
        self.prompt_id: str | None = None

    # ids and clock

    def _next(self) -> int:
        self._counter += 1
        return self._counter

    def _digest(self) -> bytes:
        return hashlib.sha256(f"{self.seed}:{self._next()}".encode()).digest()

    def new_uuid(self) -> str:
        return str(uuid_module.UUID(bytes=self._digest()[:16], version=4))

    def new_tool_use_id(self) -> str:
        return "toolu_01" + self._digest().hex()[:24]

    def new_message_id(self) -> str:
        return "msg_01" + self._digest().hex()[:24]

    def timestamp(self) -> str:
        self._clock += timedelta(milliseconds=1)
        return (
            self._clock.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self._clock.microsecond // 1000:03d}Z"
        )

    # generic records

    def add(self, record: Record) -> Record:
        """Append any record as it is; a record with a uuid becomes the leaf."""
        self.records.append(record)
        if isinstance(record.get("uuid"), str):
            self.leaf = record["uuid"]
        return record

    def node(
        self,
        record_type: str,
        body: Mapping[str, Any],
        *,
        parent: Parent = LEAF,
        uuid: str | None = None,
        prompt_id: str | None = None,
        timestamp: str | None = None,
        cwd: str | None = None,
        session_id: str | None = None,
        is_sidechain: bool = False,
        agent_id: str | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> Record:
        """A conversation record: the envelope fields in Claude Code's order around ``body``."""
        record: Record = {
            "parentUuid": self.leaf if isinstance(parent, _Leaf) else parent,
            "isSidechain": is_sidechain,
        }
        if prompt_id is not None:
            record["promptId"] = prompt_id
        if agent_id is not None:
            record["agentId"] = agent_id
        record["type"] = record_type
        record.update(body)
        record["uuid"] = uuid if uuid is not None else self.new_uuid()
        record["timestamp"] = timestamp if timestamp is not None else self.timestamp()
        if extra:
            record.update(extra)
        record["userType"] = "external"
        record["entrypoint"] = "sdk-cli"
        record["cwd"] = cwd if cwd is not None else self.cwd
        record["sessionId"] = session_id if session_id is not None else self.session_id
        record["version"] = self.version
        record["gitBranch"] = self.git_branch
        return self.add(record)

    def metadata(self, kind: str, **fields: Any) -> Record:
        """A line without uuid (session metadata): never part of the conversation."""
        record: Record = {"type": kind, **fields, "sessionId": self.session_id}
        self.records.append(record)
        return record

    # metadata lines 2.1.332 writes between conversation records

    def queue_operation(self, operation: str = "enqueue", content: str | None = None) -> Record:
        fields: dict[str, Any] = {"operation": operation, "timestamp": self.timestamp()}
        if content is not None:
            fields["content"] = content
        return self.metadata("queue-operation", **fields)

    def api_request_blob(self, role: str = "user", content: Any = "…") -> Record:
        """2.1.332's copy of an API request message: carries ``message`` but no uuid."""
        return self.metadata(
            "api-request-blob",
            hash=self._digest().hex(),
            message={"role": role, "content": content},
        )

    def request_metadata(self) -> None:
        """The lines 2.1.332 writes before each model request."""
        self.metadata("atis-latch", atis="")
        self.metadata(
            "api-request-shape", shapeHash=self._digest().hex(), timestamp=self.timestamp()
        )
        self.api_request_blob(
            "user", [{"type": "text", "text": "<system-reminder>\n…\n</system-reminder>\n"}]
        )
        self.api_request_blob("system", [{"type": "text", "text": "# Environment\n…"}])
        self.metadata(
            "api-request", id=self.new_uuid(), timestamp=self.timestamp(), version=self.version
        )
        self.metadata("tools-used", tools=["Read", "Bash"])

    def after_turn_metadata(self) -> None:
        self.metadata("last-prompt", lastPrompt="…", leafUuid=self.leaf)
        self.metadata("cost-state", totalCostUSD=0.01, totalDuration=1000)

    # user records

    def prompt(
        self,
        text: str,
        *,
        source: str = "sdk",
        origin: Mapping[str, Any] | None = None,
        parent: Parent = LEAF,
        prompt_id: str | None = None,
        **kwargs: Any,
    ) -> Record:
        """A prompt. ``source="sdk"`` is what ``claude -p`` writes; ``"typed"`` the keyboard's."""
        self.prompt_id = prompt_id if prompt_id is not None else self.new_uuid()
        extra: dict[str, Any] = {"permissionMode": "default", "promptSource": source}
        if origin is not None:
            extra["origin"] = dict(origin)
        return self.node(
            "user",
            {"message": {"role": "user", "content": text}},
            parent=parent,
            prompt_id=self.prompt_id,
            extra=extra,
            **kwargs,
        )

    def typed_prompt(self, text: str, **kwargs: Any) -> Record:
        return self.prompt(text, source="typed", origin={"kind": "human"}, **kwargs)

    def slash_command(
        self, name: str, args: str | None = "", *, style: SlashStyle = "2.1.332", **kwargs: Any
    ) -> Record:
        """A slash command expansion: 2.1.332 writes the name first and indents the rest."""
        if style == "2.1.332":
            lines = [
                f"<command-name>/{name}</command-name>",
                f"<command-message>{name}</command-message>",
            ]
            if args is not None:
                lines.append(f"<command-args>{args}</command-args>")
            text = "\n            ".join(lines)
        else:
            lines = [
                f"<command-message>{name}</command-message>",
                f"<command-name>/{name}</command-name>",
            ]
            if args is not None:
                lines.append(f"<command-args>{args}</command-args>")
            text = "\n".join(lines)
        return self.prompt(text, **kwargs)

    def user_text(self, content: Any, *, parent: Parent = LEAF, **extra: Any) -> Record:
        """A user record with any content and extra fields (``isMeta``, ``isCompactSummary`` …)."""
        body: dict[str, Any] = {"message": {"role": "user", "content": content}}
        return self.node("user", body, parent=parent, prompt_id=self.prompt_id, extra=extra)

    def meta(self, text: str, **kwargs: Any) -> Record:
        return self.user_text(text, isMeta=True, **kwargs)

    def local_command_stdout(self, text: str, **kwargs: Any) -> Record:
        return self.user_text(f"<local-command-stdout>{text}</local-command-stdout>", **kwargs)

    def compact_summary(
        self, text: str = "This session is being continued…", **kwargs: Any
    ) -> Record:
        return self.user_text(text, isCompactSummary=True, isVisibleInTranscriptOnly=True, **kwargs)

    def task_notification(
        self,
        tool_use_id: str,
        *,
        task_id: str = "aeecdb914dc762a76",
        status: str = "completed",
        result: str = "Done.",
        parent: Parent = LEAF,
    ) -> Record:
        """A background agent's completion notice as 2.1.332 writes it (task-id first)."""
        text = (
            "<task-notification>\n"
            f"<task-id>{task_id}</task-id>\n"
            f"<tool-use-id>{tool_use_id}</tool-use-id>\n"
            f"<output-file>/tmp/claude-0/tasks/{task_id}.output</output-file>\n"
            f"<status>{status}</status>\n"
            f'<summary>Agent "check" finished</summary>\n'
            f"<result>{result}</result>\n"
            "</task-notification>"
        )
        self.prompt_id = self.new_uuid()
        return self.node(
            "user",
            {"message": {"role": "user", "content": text}},
            parent=parent,
            prompt_id=self.prompt_id,
            extra={
                "origin": {"kind": "task-notification", "producer": "session-task"},
                "promptSource": "system",
            },
        )

    def tool_result(
        self,
        tool_use_id: str,
        content: Any,
        *,
        is_error: bool | None = False,
        tool_use_result: Any = None,
        parent: Parent = LEAF,
        **kwargs: Any,
    ) -> Record:
        block: dict[str, Any] = {
            "tool_use_id": tool_use_id,
            "type": "tool_result",
            "content": content,
        }
        if is_error is not None:
            block["is_error"] = is_error
        extra: dict[str, Any] = {}
        if tool_use_result is not None:
            extra["toolUseResult"] = tool_use_result
        source = self.leaf if isinstance(parent, _Leaf) else parent
        extra["sourceToolAssistantUUID"] = source
        return self.node(
            "user",
            {"message": {"role": "user", "content": [block]}},
            parent=parent,
            prompt_id=self.prompt_id,
            extra=extra,
            **kwargs,
        )

    def read_result(
        self,
        tool_use_id: str,
        file_path: str,
        lines: Sequence[str],
        *,
        start_line: int = 1,
        total_lines: int | None = None,
        **kwargs: Any,
    ) -> Record:
        text = "".join(f"{start_line + n}\t{line}\n" for n, line in enumerate(lines))
        file_info = {
            "filePath": file_path,
            "content": "".join(f"{line}\n" for line in lines),
            "numLines": len(lines),
            "startLine": start_line,
            "totalLines": total_lines if total_lines is not None else start_line - 1 + len(lines),
        }
        return self.tool_result(
            tool_use_id,
            text,
            is_error=None,
            tool_use_result={"type": "text", "file": file_info},
            **kwargs,
        )

    def dedup_read_result(self, tool_use_id: str, file_path: str, **kwargs: Any) -> Record:
        """Claude Code's "file unchanged" reply: the side-car names the file and nothing else."""
        return self.tool_result(
            tool_use_id, DEDUP_REPLY, tool_use_result={"file": {"filePath": file_path}}, **kwargs
        )

    def bash_result(
        self,
        tool_use_id: str,
        stdout: str,
        *,
        stderr: str = "",
        cwd_reset: str | None = None,
        is_error: bool = False,
        **kwargs: Any,
    ) -> Record:
        """A Bash result; ``cwd_reset`` adds the ``Shell cwd was reset to <dir>`` last line."""
        text = stdout
        if cwd_reset is not None:
            text += f"\n{CWD_RESET_PREFIX}{cwd_reset}"
            stderr += f"\n{CWD_RESET_PREFIX}{cwd_reset}"
        side_car = {
            "stdout": stdout,
            "stderr": stderr,
            "interrupted": False,
            "isImage": False,
            "noOutputExpected": False,
        }
        return self.tool_result(
            tool_use_id, text, is_error=is_error, tool_use_result=side_car, **kwargs
        )

    def async_launch_result(
        self, tool_use_id: str, agent_id: str = "aeecdb914dc762a76", **kwargs: Any
    ) -> Record:
        """A background Agent's launch receipt (not its review)."""
        content = [
            {"type": "text", "text": f"Async agent launched successfully.\nagentId: {agent_id}"}
        ]
        side_car = {
            "isAsync": True,
            "status": "async_launched",
            "agentId": agent_id,
            "description": "Slow check",
        }
        return self.tool_result(
            tool_use_id, content, is_error=None, tool_use_result=side_car, **kwargs
        )

    # assistant records

    def assistant(
        self,
        blocks: Sequence[Mapping[str, Any]],
        *,
        message_id: str | None = None,
        stop_reason: str | None = "end_turn",
        parent: Parent = LEAF,
        **kwargs: Any,
    ) -> Record:
        message = {
            "id": message_id if message_id is not None else self.new_message_id(),
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-5-5",
            "content": [dict(block) for block in blocks],
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
        extra = {"apiBlockIndex": 0, "requestId": "req_standin"}
        return self.node("assistant", {"message": message}, parent=parent, extra=extra, **kwargs)

    def text(self, text: str, *, stop_reason: str | None = "end_turn", **kwargs: Any) -> Record:
        return self.assistant([{"type": "text", "text": text}], stop_reason=stop_reason, **kwargs)

    def tool_use(
        self,
        name: str,
        tool_input: Mapping[str, Any],
        *,
        tool_use_id: str | None = None,
        stop_reason: str | None = "tool_use",
        **kwargs: Any,
    ) -> Record:
        block = {
            "type": "tool_use",
            "id": tool_use_id if tool_use_id is not None else self.new_tool_use_id(),
            "name": name,
            "input": dict(tool_input),
        }
        return self.assistant([block], stop_reason=stop_reason, **kwargs)

    def parallel_tool_uses(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> list[Record]:
        """Several tool calls of one API message: one record each, chained, one message id."""
        message_id = self.new_message_id()
        return [
            self.tool_use(name, tool_input, message_id=message_id) for name, tool_input in calls
        ]

    # attachments and system records

    def attachment(
        self,
        kind: str,
        *,
        parent: Parent = LEAF,
        uuid: str | None = None,
        timestamp: str | None = None,
        cwd: str | None = None,
        is_sidechain: bool = False,
        agent_id: str | None = None,
        **fields: Any,
    ) -> Record:
        """An attachment record (no ``message``); ``fields`` go into ``attachment``."""
        return self.node(
            "attachment",
            {"attachment": {"type": kind, **fields}},
            parent=parent,
            uuid=uuid,
            timestamp=timestamp,
            cwd=cwd,
            is_sidechain=is_sidechain,
            agent_id=agent_id,
        )

    def turn_attachments(self) -> Record:
        """The attachments 2.1.332 hangs after a prompt, interleaved with metadata lines."""
        self.attachment("environment", snapshot={"workingDirectory": self.cwd, "platform": "linux"})
        self.attachment("model", text="You are powered by a model.")
        self.attachment("deferred_tools_delta", addedNames=["WebFetch"], removedNames=[])
        self.attachment("agent_listing_delta", addedTypes=["general-purpose"])
        self.attachment("skill_listing", content="- dataviz: …")
        self.metadata("atis-latch", atis="")
        self.attachment("session_context", context={})
        self.attachment("date", date="2026-11-29")
        self.attachment("remote_session_change", url=None)
        return self.attachment("prompt_snapshot", systemPrompt=["…"])

    def session_start_hook(
        self,
        kind: str = "hook_success",
        *,
        parent: Parent = LEAF,
        hook_name: str = "SessionStart:startup",
        **node: Any,
    ) -> Record:
        """A message-less SessionStart hook attachment (the hook preamble of 2.1.2xx-2.1.3xx).

        ``node`` takes :meth:`attachment`'s record options (``uuid``, ``cwd``, ``agent_id`` …).
        """
        fields: dict[str, Any] = {
            "hookName": hook_name,
            "toolUseID": self.new_uuid(),
            "hookEvent": "SessionStart",
        }
        if kind == "hook_additional_context":
            fields["content"] = ["context from a SessionStart hook"]
        else:
            fields.update(
                {"content": "", "stdout": "", "stderr": "", "exitCode": 0, "command": "true"}
            )
        return self.attachment(kind, parent=parent, **node, **fields)

    def session_start_progress(
        self, *, parent: Parent = LEAF, command: str = "true", **node: Any
    ) -> Record:
        """A SessionStart hook as Claude Code 2.1.38-2.1.39 wrote it: a ``progress`` record."""
        tool_use_id = self.new_uuid()
        body = {
            "data": {
                "type": "hook_progress",
                "hookEvent": "SessionStart",
                "hookName": "SessionStart:startup",
                "command": command,
            },
            "parentToolUseID": tool_use_id,
            "toolUseID": tool_use_id,
        }
        return self.node("progress", body, parent=parent, **node)

    def system(self, subtype: str, *, parent: Parent = LEAF, **fields: Any) -> Record:
        return self.node("system", {"subtype": subtype, **fields}, parent=parent)

    def compact_boundary(
        self,
        *,
        logical_parent: Parent = LEAF,
        uuid: str | None = None,
        timestamp: str | None = None,
        cwd: str | None = None,
    ) -> Record:
        """``system/compact_boundary``: null parent, the pre-compaction leaf as logical parent."""
        logical = self.leaf if isinstance(logical_parent, _Leaf) else logical_parent
        record: Record = {
            "parentUuid": None,
            "logicalParentUuid": logical,
            "isSidechain": False,
            "type": "system",
            "subtype": "compact_boundary",
            "content": "Conversation compacted",
            "isMeta": False,
            "timestamp": timestamp if timestamp is not None else self.timestamp(),
            "uuid": uuid if uuid is not None else self.new_uuid(),
            "level": "info",
            "compactMetadata": {"trigger": "manual", "preTokens": 12842},
            "userType": "external",
            "entrypoint": "sdk-cli",
            "cwd": cwd if cwd is not None else self.cwd,
            "sessionId": self.session_id,
            "version": self.version,
            "gitBranch": self.git_branch,
        }
        return self.add(record)

    def compact(self, *, logical_parent: Parent = LEAF, summary: str = "Summary: …") -> Record:
        """``/compact``: the boundary, then the summary hanging from it. Returns the boundary."""
        boundary = self.compact_boundary(logical_parent=logical_parent)
        self.compact_summary(summary)
        return boundary

    def subagent(
        self, content: Any, *, role: str = "user", agent_id: str = "a7f3", **kwargs: Any
    ) -> Record:
        """A subagent record (``isSidechain`` true and an ``agentId``)."""
        return self.node(
            role,
            {"message": {"role": role, "content": content}},
            is_sidechain=True,
            agent_id=agent_id,
            **kwargs,
        )

    # whole turns

    def session(self, prompt: str = "Read notes.txt, then run a command, then answer.") -> Journal:
        """A complete ``claude -p`` turn as 2.1.332 writes it: Read, Bash, then an answer."""
        self.queue_operation("enqueue", prompt)
        self.queue_operation("dequeue")
        self.prompt(prompt)
        self.turn_attachments()
        self.request_metadata()
        notes = f"{self.cwd}/notes.txt"
        read = self.tool_use("Read", {"file_path": notes})
        self.after_turn_metadata()
        self.read_result(use_id(read), notes, ["hello notes", "line two"])
        self.attachment("prompt_snapshot", systemPrompt=["…"])
        self.metadata("api-request", id=self.new_uuid(), timestamp=self.timestamp())
        bash = self.tool_use(
            "Bash", {"command": "echo hi && pwd", "description": "Print a greeting"}
        )
        self.bash_result(use_id(bash), f"hi\n{self.cwd}")
        self.text("The notes say hello.")
        self.system("stop_hook_summary", hookCount=0, hookInfos=[], hookErrors=[])
        self.after_turn_metadata()
        return self

    # output

    def lines(self) -> list[bytes]:
        return [dumps(record) for record in self.records]

    def to_bytes(self) -> bytes:
        return b"".join(line + b"\n" for line in self.lines())

    def write(self, path: str | os.PathLike[str], *, trailing: bytes = b"") -> Path:
        """Write every record (newline-terminated), then ``trailing`` (an unfinished line)."""
        target = Path(path)
        target.write_bytes(self.to_bytes() + trailing)
        return target

    def append_new(self, path: str | os.PathLike[str], since: int) -> int:
        """Append the records from index ``since`` on to ``path``; returns the new count."""
        with open(path, "ab") as handle:
            for record in self.records[since:]:
                handle.write(dumps(record) + b"\n")
        return len(self.records)

    def write_layout(
        self, config_dir: str | os.PathLike[str], *, project_dir: str | None = None
    ) -> Path:
        """Write to ``<config>/projects/<slug>/<session>.jsonl`` (the slug of ``project_dir``)."""
        target = journal_path(config_dir, project_dir or self.cwd, self.session_id)
        return self.write(target)
