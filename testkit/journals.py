"""Synthetic Claude Code 2.1.332 session journals: the one journal writer of the tests.

:class:`Journal` writes records with the field layout Claude Code 2.1.332 uses (the envelope
and key order are :class:`~testkit.envelope.JournalWriter`'s); the session simulator
(:mod:`testkit.session`) and the benchmarks' generator (:mod:`benchmarks.synthetic`) build on
it. Every conversation record hangs from the current leaf unless a caller says otherwise, so a
few calls give a realistic session::

    journal = Journal(cwd="/home/me/project")
    journal.prompt("Read notes.txt")
    use = journal.tool_use("Read", {"file_path": "/home/me/project/notes.txt"})
    journal.read_result(use_id(use), "/home/me/project/notes.txt", ["hello"])
    journal.text("Done.")
    path = journal.write(tmp_path / f"{journal.session_id}.jsonl")  # written from scratch
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from testkit.contents import (
    ACCEPTED,
    CWD_RESET_PREFIX,
    DEDUP_REPLY,
    SlashStyle,
    bash_side_car,
    read_file_result,
    slash_text,
    task_notification_text,
    use_id,
)
from testkit.envelope import (
    LEAF,
    MODEL,
    VERSION,
    JournalWriter,
    Parent,
    Record,
    dumps,
    journal_path,
    write_lines,
)

__all__ = [
    "ACCEPTED",
    "CWD_RESET_PREFIX",
    "DEDUP_REPLY",
    "LEAF",
    "MODEL",
    "VERSION",
    "Journal",
    "Parent",
    "Record",
    "SlashStyle",
    "bash_side_car",
    "dumps",
    "journal_path",
    "read_file_result",
    "slash_text",
    "task_notification_text",
    "use_id",
    "write_lines",
]


class Journal(JournalWriter):
    """Builds one session's journal, record by record, in the 2.1.332 layout."""

    # user records

    def prompt(
        self,
        text: Any,
        *,
        source: str = "sdk",
        origin: Mapping[str, Any] | None = None,
        parent: Parent = LEAF,
        prompt_id: str | None = None,
        fields: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> Record:
        """A prompt. ``source="sdk"`` is what ``claude -p`` writes; ``"typed"`` the keyboard's.
        ``fields`` follow ``promptSource`` (``sentAtMs``, ``turnOrigin`` …)."""
        self.prompt_id = prompt_id if prompt_id is not None else self.new_uuid()
        extra: dict[str, Any] = {"permissionMode": "default", "promptSource": source}
        extra.update(fields or {})
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

    def queued_prompt(
        self,
        text: str,
        *,
        parent: Parent = LEAF,
        request_between: bool = False,
        between: Callable[[], object] | None = None,
    ) -> Record:
        """A prompt typed while the model works, as 2.1.332 journals it when it gives it to
        the model within the turn: queue operations, then a ``queued_command`` attachment of
        human origin (the system reminder the model is shown for it rendered). With
        ``request_between``, the metadata lines of an API request stand between the remove
        and the attachment, as a real terminal journal has them when the hand-over waits for
        the next request. ``between`` writes what else stands between the two (the call's
        result and a prompt snapshot: the remove may be written before the result)."""
        source = self.new_uuid()
        self.queue_operation("enqueue", text)
        self.queue_operation("remove", text, reason="absorbed_mid_turn", commandUuid=source)
        if request_between:
            self.api_request_blob()
            self.metadata("api-request", hash=self.new_hash())
            self.metadata("tools-used", tools=["Read"])
        if between is not None:
            between()
        return self.attachment(
            "queued_command",
            parent=parent,
            rendered=f"The user sent a new message while you were working:\n{text}",
            prompt=text,
            source_uuid=source,
            commandMode="prompt",
            origin={"kind": "human"},
            humanTurn=True,
        )

    def slash_command(
        self, name: str, args: str | None = "", *, style: SlashStyle = "2.1.332", **kwargs: Any
    ) -> Record:
        """A slash command expansion (:func:`slash_text`)."""
        return self.prompt(slash_text(name, args, style), **kwargs)

    def user_text(self, content: Any, *, parent: Parent = LEAF, **extra: Any) -> Record:
        """A user record with any content and extra fields (``isMeta``, ``isCompactSummary`` …)."""
        body: dict[str, Any] = {"message": {"role": "user", "content": content}}
        return self.node("user", body, parent=parent, prompt_id=self.prompt_id, extra=extra)

    def meta(self, text: Any, **kwargs: Any) -> Record:
        return self.user_text(text, isMeta=True, **kwargs)

    def local_command_stdout(self, text: str, **kwargs: Any) -> Record:
        return self.user_text(f"<local-command-stdout>{text}</local-command-stdout>", **kwargs)

    def local_command(
        self, name: str, args: str = "", output: str = "", *, system_output: bool = False
    ) -> Record:
        """A command Claude Code 2.1.332 runs itself, as the terminal UI and ``claude -p``
        journal it: the caveat (meta), the command's record (name first, the rest indented,
        with neither ``promptSource`` nor ``origin``) and its output, a user record or (with
        ``system_output``, as after ``/clear``) a ``local_command`` system record. Returns
        the command's record."""
        self.meta(
            "<local-command-caveat>The command below was run directly in Claude Code, not "
            "sent to you as a request, and its output goes straight to the user."
            "</local-command-caveat>"
        )
        command = self.user_text(slash_text(name, args))
        stdout = f"<local-command-stdout>{output}</local-command-stdout>"
        if system_output:
            self.system("local_command", content=stdout, level="info", isMeta=False)
        else:
            self.user_text(stdout)
        return command

    def system_local_command(self, name: str, args: str = "", output: str = "") -> Record:
        """``/model``, ``/context`` and the like in 2.1.332: two ``local_command`` system
        records, the command (name first) and its output. Returns the command's."""
        command = self.system(
            "local_command", content=slash_text(name, args), level="info", isMeta=False
        )
        stdout = f"<local-command-stdout>{output}</local-command-stdout>"
        self.system("local_command", content=stdout, level="info", isMeta=False)
        return command

    def manual_compact(self, args: str = "", *, summary: str = "Summary: …") -> Record:
        """``/compact ARGS`` typed (2.1.332): the boundary, the summary, then the command's
        records (:meth:`local_command`). Returns the command's record."""
        self.compact(summary=summary)
        return self.local_command("compact", args, "Compacted (ctrl+o to see full summary)")

    def shell_command(self, command: str, stdout: str, stderr: str = "") -> Record:
        """A ``!`` command the person runs (2.1.332): its input and its output, each a user
        record with neither ``promptSource`` nor ``origin``; the model is then asked to
        answer. Returns the output's record."""
        self.user_text(f"<bash-input>{command}</bash-input>")
        return self.user_text(
            f"<bash-stdout>{stdout}</bash-stdout><bash-stderr>{stderr}</bash-stderr>"
        )

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
        text: str | None = None,
        parent: Parent = LEAF,
        prompt_id: str | None = None,
        fields: Mapping[str, Any] | None = None,
    ) -> Record:
        """A background agent's completion notice as a new user turn (after the turn ended);
        ``text`` replaces :func:`task_notification_text`'s, ``fields`` are added."""
        if text is None:
            text = task_notification_text(task_id, tool_use_id, status=status, result=result)
        return self.prompt(
            text,
            source="system",
            origin={"kind": "task-notification", "producer": "session-task"},
            parent=parent,
            prompt_id=prompt_id,
            fields=fields,
        )

    def tool_result(
        self,
        tool_use_id: str,
        content: Any,
        *,
        is_error: bool | None = False,
        tool_use_result: Any = None,
        fields: Mapping[str, Any] | None = None,
        permission: Mapping[str, Any] | None = None,
        parent: Parent = LEAF,
        **kwargs: Any,
    ) -> Record:
        """A ``tool_result`` user record; ``is_error=None`` leaves the key out, ``fields``
        follow ``toolUseResult`` (``sandboxed`` …), ``permission`` is ``permissionDecision``."""
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
        extra.update(fields or {})
        extra["sourceToolAssistantUUID"] = self.parent_of(parent)
        if permission is not None:
            extra["permissionDecision"] = dict(permission)
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
        """A Read result of ``lines`` (each ends with a newline in the file)."""
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
        return self.tool_result(
            tool_use_id,
            text,
            is_error=is_error,
            tool_use_result=bash_side_car(stdout, stderr),
            **kwargs,
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
        index: int = 0,
        request_id: str = "req_standin",
        request: Mapping[str, Any] | None = None,
        usage: Mapping[str, Any] | None = None,
        stream_ms: int = 1,
        fields: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> Record:
        """One content block's record (2.1.332 writes one per block of a message, all with
        the message's id): the message, then the request fields (``toolInputStreamMs`` for a
        tool call, ``apiBlockIndex`` = ``index``, ``requestId``, ``request``'s, the model),
        before ``type``; the effort fields and ``fields`` after the timestamp."""
        content = [dict(block) for block in blocks]
        message = {
            "id": message_id if message_id is not None else self.new_message_id(),
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": dict(usage) if usage is not None else {"input_tokens": 10, "output_tokens": 5},
            "stop_details": None,
        }
        head: dict[str, Any] = {}
        if any(block.get("type") == "tool_use" for block in content):
            head["toolInputStreamMs"] = stream_ms
        head.update({"apiBlockIndex": index, "requestId": request_id})
        head.update(request or {})
        head.setdefault("requestedModel", MODEL)
        head.setdefault("promptCacheRequested", "5m")
        extra = {"effort": "medium", "perTurnEffort": "medium", "madeBy": "model"}
        extra.update(fields or {})
        return self.node(
            "assistant", {"message": message}, parent=parent, head=head, extra=extra, **kwargs
        )

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
            self.tool_use(name, tool_input, message_id=message_id, index=index)
            for index, (name, tool_input) in enumerate(calls)
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
        rendered: str | None = None,
        leaf: bool = True,
        **fields: Any,
    ) -> Record:
        """An attachment record (no ``message``); ``fields`` go into ``attachment``,
        ``rendered`` is the system reminder the model is shown for it."""
        extra: dict[str, Any] = {}
        if rendered is not None:
            reminder = f"<system-reminder>\n{rendered}\n</system-reminder>"
            extra = {"rendered": [{"content": reminder}], "renderedRole": "system"}
        return self.node(
            "attachment",
            {"attachment": {"type": kind, **fields}},
            parent=parent,
            uuid=uuid,
            timestamp=timestamp,
            cwd=cwd,
            is_sidechain=is_sidechain,
            agent_id=agent_id,
            extra=extra,
            leaf=leaf,
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
        duration_ms: int | None = None,
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
            if duration_ms is not None:
                fields["durationMs"] = duration_ms
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
        trigger: str = "manual",
    ) -> Record:
        """``system/compact_boundary``: null parent, the pre-compaction leaf as logical parent."""
        record: Record = {
            "parentUuid": None,
            "logicalParentUuid": self.parent_of(logical_parent),
            "isSidechain": False,
            "type": "system",
            "subtype": "compact_boundary",
            "content": "Conversation compacted",
            "isMeta": False,
            "timestamp": timestamp if timestamp is not None else self.timestamp(),
            "uuid": uuid if uuid is not None else self.new_uuid(),
            "level": "info",
            "compactMetadata": {"trigger": trigger, "preTokens": 12842},
        }
        return self.add(self.tail(record, cwd=cwd))

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
