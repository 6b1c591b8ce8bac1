"""Journal writing for the simulated session, on top of :class:`testkit.journals.Journal`.

:class:`LiveJournal` is the session's journal: each record is appended to
``<home>/.claude/projects/<slug>/<session>.jsonl`` as it is written (a hook reads the file
between two records), with real ids and the wall clock. :class:`JournalWriting` writes the
user's side as Claude Code 2.1.332 writes it: queue operations, human turns and slash commands
with the skill's text, the turn's attachments, compactions and task notifications, and records
of any shape a test needs; :mod:`~testkit.session.messages` writes the model's side.
"""

from __future__ import annotations

import os
import time
import uuid as uuid_module
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from testkit.envelope import LEAF, MODEL, format_time
from testkit.envelope import Parent as JournalParent
from testkit.journals import Journal, Record, slash_text, task_notification_text
from testkit.session.base import SessionParts, SlashStyle
from testkit.session.calls import (
    Call,
    new_agent_id,
    reviewer_answer,
    task_output_file,
)
from testkit.session.messages import SYSTEM_PROMPT

Parent = str | None | Literal["leaf"]


class LiveJournal(Journal):
    """A journal written to its file record by record, with random ids and the wall clock."""

    def __init__(self, path: Callable[[], Path], **options: Any) -> None:
        self._path = path
        self._wall = datetime.now(UTC)
        self.fixed_timestamp: str | None = None
        """When set, every record carries this timestamp (Claude Code's clock can repeat)."""
        super().__init__(out=self.append_bytes, **options)

    def append_bytes(self, data: bytes) -> None:
        path = self._path()
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "ab") as handle:
            handle.write(data)

    def new_uuid(self) -> str:
        return str(uuid_module.uuid4())

    def new_hash(self) -> str:
        return uuid_module.uuid4().hex

    def timestamp(self) -> str:
        if self.fixed_timestamp is not None:
            return self.fixed_timestamp
        self._wall = max(self._wall + timedelta(milliseconds=1), datetime.now(UTC))
        return format_time(self._wall)

    @property
    def today(self) -> str:
        return self._wall.strftime("%Y-%m-%d")


def _parent(parent: Parent) -> JournalParent:
    return LEAF if parent == "leaf" else parent


def _slash(text: str) -> tuple[str, str] | None:
    if not text.startswith("/") or text.startswith("//"):
        return None
    head, _, rest = text[1:].partition(" ")
    if not head or not all(ch.isalnum() or ch in "-_:" for ch in head):
        return None
    return head, rest.strip()


def _skill_body(skill_dir: str, arguments: str) -> str | None:
    try:
        with open(os.path.join(skill_dir, "SKILL.md"), encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        return None
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end >= 0:
            text = text[end + 5 :]
    return f"Base directory for this skill: {skill_dir}\n\n{text.replace('$ARGUMENTS', arguments)}"


class JournalWriting(SessionParts):
    """Writes the session's journal: its state, records of any shape, the user's turns."""

    journal: LiveJournal
    _fresh_turn: bool

    # --- the journal's state ---------------------------------------------------------------

    @property
    def records(self) -> list[Record]:
        return self.journal.records

    @property
    def leaf(self) -> str | None:
        return self.journal.leaf

    @property
    def prompt_id(self) -> str | None:
        return self.journal.prompt_id

    @property
    def cwd(self) -> str:
        """The session's working folder (records' ``cwd``, the hook's and the tools' folder)."""
        return self.journal.cwd

    @cwd.setter
    def cwd(self, value: str) -> None:
        self.journal.cwd = value

    @property
    def fixed_timestamp(self) -> str | None:
        """When set, every record carries this timestamp (Claude Code's clock can repeat)."""
        return self.journal.fixed_timestamp

    @fixed_timestamp.setter
    def fixed_timestamp(self, value: str | None) -> None:
        self.journal.fixed_timestamp = value

    @property
    def extra_fields(self) -> dict[str, Any]:
        """Fields added to every tree record (e.g. ``{"slug": …}``)."""
        return self.journal.extra_fields

    def timestamp(self) -> str:
        return self.journal.timestamp()

    # --- records of any shape ----------------------------------------------------------------

    def append(self, record: Record, *, leaf: bool = True) -> Record:
        """Append one record (any shape) to the journal; a record with a uuid becomes the leaf
        unless ``leaf=False``."""
        return self.journal.add(record, leaf=leaf)

    def append_raw(self, data: bytes) -> None:
        """Append raw bytes (a broken or partial line) to the journal."""
        self.journal.append_bytes(data)

    def metadata(self, kind: str, **fields: Any) -> Record:
        """A bookkeeping line without uuid (``queue-operation``, ``last-prompt`` …)."""
        return self.journal.metadata(kind, **fields)

    def node(
        self,
        record_type: str,
        body: Mapping[str, Any],
        *,
        parent: Parent = "leaf",
        prompt_id: bool = False,
        extra: Mapping[str, Any] | None = None,
        leaf: bool = True,
        before_type: Mapping[str, Any] | None = None,
    ) -> Record:
        """A tree record: Claude Code's envelope fields around ``body``, in its key order;
        ``prompt_id`` adds the turn's ``promptId``."""
        return self.journal.node(
            record_type,
            body,
            parent=_parent(parent),
            prompt_id=self.journal.prompt_id if prompt_id else None,
            head=before_type,
            extra=extra,
            leaf=leaf,
        )

    def attachment(
        self, kind: str, *, parent: Parent = "leaf", leaf: bool = True, **fields: Any
    ) -> Record:
        return self.journal.attachment(kind, parent=_parent(parent), leaf=leaf, **fields)

    # --- user turns --------------------------------------------------------------------------

    def session_start_hook(self, kind: str = "hook_success", *, parent: Parent = "leaf") -> Record:
        """A SessionStart hook's attachment, written before the first prompt when a
        SessionStart hook printed something (the journal's root then is this attachment)."""
        return self.journal.session_start_hook(kind, parent=_parent(parent), duration_ms=12)

    def compact(
        self,
        summary: str = "This session is being continued from a previous "
        "conversation that ran out of context.",
        *,
        manual: bool = False,
    ) -> Record:
        """A compaction as 2.1.332 writes it: a compact boundary (null parent, the old leaf as
        logical parent) and the summary; ``manual`` adds the ``/compact`` command's records
        (automatic compaction happens mid-turn and writes none). Returns the boundary."""
        journal = self.journal
        if manual:
            journal.queue_operation("enqueue", "/compact")
            journal.queue_operation("dequeue")
        self.metadata("mode", mode="normal")
        boundary = journal.compact_boundary(trigger="manual" if manual else "auto")
        journal.compact_summary(summary)
        if manual:
            journal.meta(
                "<local-command-caveat>Caveat: the messages below were generated by the user "
                "while running local commands.</local-command-caveat>"
            )
            journal.user_text(slash_text("compact", ""))
            journal.local_command_stdout("Compacted (ctrl+o to see full summary)")
        return boundary

    def prompt(
        self,
        text: str,
        *,
        source: str = "typed",
        origin: Mapping[str, Any] | None = None,
        slash_style: SlashStyle | None = None,
    ) -> Record:
        """A human turn: a typed prompt, or a slash command (``/autoplan plan.md``) as Claude
        Code expands it, followed by the skill's text for a skill command.

        ``source`` is ``promptSource`` (``typed`` at the keyboard, ``sdk`` for ``claude -p``).
        """
        journal = self.journal
        first = self.prompts == 0
        self.prompts += 1
        self._fresh_turn = True
        self.turn_ended = False
        journal.queue_operation("enqueue", text)
        journal.queue_operation("dequeue")
        command = _slash(text)
        fields: dict[str, Any] = {
            "sentAtMs": int(time.time() * 1000),
            "rowSource": "local",
            "turnOrigin": "human" if source == "typed" else source,
            "turnPosition": {"promptIndex": 0, "turnIndex": self.prompts},
        }
        content = text
        if command is not None:
            style = slash_style or self.slash_style
            content = slash_text(
                command[0], command[1] or None, "2.1.332" if style == "interactive" else "legacy"
            )
        record = journal.prompt(content, source=source, origin=origin, fields=fields)
        if command is not None:
            body = _skill_body(os.path.join(self.config_dir, "skills", command[0]), command[1])
            if body is not None:
                journal.meta(
                    [{"type": "text", "text": body}], turnCompanion=True, rowSource="local"
                )
        if first:
            self.attachment(
                "environment",
                snapshot={
                    "workingDirectory": self.cwd,
                    "isWorktree": False,
                    "isGitRepo": os.path.isdir(os.path.join(self.project_dir, ".git")),
                    "additionalWorkingDirectories": [],
                    "platform": "linux",
                    "shell": "bash",
                },
            )
            self.attachment("model", identity={"modelId": MODEL}, text="You are a model.")
            self.attachment("deferred_tools_delta", addedNames=["WebFetch"], removedNames=[])
            self.attachment("agent_listing_delta", addedTypes=["general-purpose", "Explore"])
            self.attachment("skill_listing", content="- autoplan: review a plan in phases")
        if command is not None:
            self.attachment(
                "command_permissions", allowedTools=["Read", "Edit", "Write", "Bash", "Agent"]
            )
        self.metadata("atis-latch", atis="")
        if first:
            self.attachment("session_context", context={})
            self.attachment("date", date=journal.today)
        self.attachment("prompt_snapshot", systemPrompt=SYSTEM_PROMPT)
        return record

    def typed(self, text: str) -> Record:
        """A prompt typed at the keyboard."""
        return self.prompt(text, source="typed")

    def notify(self, call: Call, *, status: str = "completed", result: str | None = None) -> Record:
        """A background agent's completion notice, as 2.1.332 writes it: a ``queued_command``
        attachment while the turn runs, a new user turn (``origin.kind: task-notification``)
        after the turn ended."""
        journal = self.journal
        agent_id = call.agent_id or new_agent_id()
        answer = (
            result if result is not None else reviewer_answer(str(call.input.get("prompt", "")))
        )
        text = task_notification_text(
            agent_id,
            call.id,
            output_file=task_output_file(self.project_dir, self.session_id, agent_id),
            status=status,
            description=str(call.input.get("description", "review")),
            result=answer,
            usage="<usage><subagent_tokens>7786</subagent_tokens><tool_uses>1</tool_uses>"
            "<duration_ms>2501</duration_ms></usage>",
        )
        origin = {"kind": "task-notification", "producer": "session-task"}
        journal.queue_operation("enqueue", text)
        if not self.turn_ended:
            journal.queue_operation("remove", reason="absorbed_mid_turn")
            return self.attachment(
                "queued_command",
                prompt=text,
                source_uuid=journal.new_uuid(),
                commandMode="task-notification",
                origin=origin,
                rowSource="recorded",
            )
        journal.queue_operation("dequeue")
        journal.prompt_id = journal.new_uuid()
        self.turn_ended = False
        journal.meta(
            "<system-reminder>\n<tools-used-before-summary>Bash</tools-used-before-summary>\n"
            "</system-reminder>",
            turnCompanion=True,
            rowSource="recorded",
        )
        return journal.task_notification(
            call.id,
            text=text,
            prompt_id=journal.prompt_id,
            fields={
                "rowSource": "recorded",
                "turnOrigin": "task_notification",
            },
        )
