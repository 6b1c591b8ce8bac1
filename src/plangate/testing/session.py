"""A simulated Claude Code 2.1.332 session for guard tests: real journal records, real tools.

:class:`SimulatedSession` writes the session journal exactly where and in the shape Claude
Code 2.1.332 writes it (``<home>/.claude/projects/<slug>/<session>.jsonl``: queue operations
and request bookkeeping lines without ``uuid``, one ``assistant`` record per content block
sharing ``message.id``, ``tool_result`` user records with ``toolUseResult``, attachments,
slash commands, task notifications) and it *executes* the tool calls the test makes:

- ``Bash`` runs the command in the session's folder. A literal call of the installed
  ``plangate`` (``plangate autoplan init/checkpoint/prepare-close``, ``plangate gate``) runs
  in-process through :func:`plangate.cli.main` by default, which writes the same artifacts
  and prints the same stdout as the executable, only faster; ``bash_mode="subprocess"`` runs
  every command through ``bash -c``. The output becomes the tool result text.
- ``Read`` reads the real file and records the real ``toolUseResult.file`` range (offset and
  limit honoured; like Claude Code, the empty line after a final newline counts as a line).
- ``Edit`` and ``Write`` change the real file.
- ``Agent`` records a reviewer's result: a foreground hand-back, or a background launch
  receipt whose completion notice :meth:`SimulatedSession.notify` writes later.

:meth:`SimulatedSession.hook` runs the **real** PreToolUse hook: the command ``plangate
setup`` registered in ``<home>/.claude/settings.json``, as a subprocess, with the payload
Claude Code sends and the environment it sets (``HOME``, ``CLAUDE_PROJECT_DIR``,
``PLANGATE_STATE_ROOT``). A call that is not journaled yet is judged on the payload path, a
journaled one on the journal path; a denial is written into the journal as Claude Code
writes it (an ``is_error`` result ``PreToolUse:<Tool> hook error: <reason>``).

A typical test::

    session = SimulatedSession.create(tmp_path)          # runs `plangate setup`
    session.prompt("/autoplan plan.md")
    init = session.run(Call.bash(f'"{session.plangate}" autoplan init "{plan}" "{plan}" "{r}"'))
    read = Call.read(session.skill_file("sections/ceo-phase.md"))
    message = session.message(calls=[read], run=False)   # journaled, not executed
    outcome = session.hook(read)                         # journal path
    assert outcome.code is None
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
import time
import uuid as uuid_module
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

VERSION = "2.1.332"
"""The Claude Code version whose journal layout and hook payloads the simulator copies."""

MODEL = "claude-opus-5-5"
DEDUP_REPLY = (
    "Wasted call \u2014 file unchanged since your last Read. "
    "Refer to that earlier tool_result instead."
)
READ_DEFAULT_LIMIT = 2000
LOG_RELATIVE = os.path.join("analytics", "autoplan-guard.jsonl")

BashMode = Literal["auto", "subprocess"]
SlashStyle = Literal["interactive", "print"]
Record = dict[str, Any]
ToolOutcome = tuple[Any, "bool | None", Any, dict[str, Any]]
"""What a tool produced: result content, ``is_error`` (None leaves the key out), the
``toolUseResult`` side-car and extra record fields."""

_CODE = re.compile(r"\((?:code|journal shape) ([a-z_]+(?::[^,)]*)?), Claude Code ")
_SHELL_META = frozenset(";&|<>$`(){}*?[]!#~\n\\")
_NO_OUTPUT = "(Bash completed with no output)"


def project_slug(directory: str) -> str:
    """Claude Code's folder name for a project: every character outside [A-Za-z0-9] is ``-``."""
    return "".join(ch if ch.isascii() and ch.isalnum() else "-" for ch in directory)


def venv_plangate() -> str:
    """The ``plangate`` executable next to the running interpreter (the installation's)."""
    return os.path.join(os.path.dirname(sys.executable), "plangate")


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


class HookOutcome:
    """What the real hook answered for one call."""

    def __init__(
        self,
        output: dict[str, Any],
        log: list[dict[str, Any]],
        elapsed: float,
        returncode: int,
        stdout: str,
        stderr: str,
        payload: dict[str, Any],
    ) -> None:
        self.output = output
        self.log = log
        self.elapsed = elapsed
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.payload = payload
        specific = output.get("hookSpecificOutput")
        specific = specific if isinstance(specific, dict) else {}
        decision = specific.get("permissionDecision")
        self.decision: str | None = decision if isinstance(decision, str) else None
        reason = specific.get("permissionDecisionReason")
        self.reason: str | None = reason if isinstance(reason, str) else None
        context = specific.get("additionalContext")
        self.additional_context: str | None = context if isinstance(context, str) else None
        message = output.get("systemMessage")
        self.system_message: str | None = message if isinstance(message, str) else None

    @property
    def denied(self) -> bool:
        return self.decision == "deny"

    @property
    def approved(self) -> bool:
        """An explicit allow (the owned-read approval)."""
        return self.decision == "allow"

    @property
    def unverified(self) -> bool:
        return self.decision is None and self.system_message is not None

    @property
    def allowed(self) -> bool:
        return not self.denied

    @property
    def text(self) -> str:
        """The text the model or the person sees (denial reason or warning), else ``""``."""
        return self.reason if self.denied and self.reason else (self.system_message or "")

    @property
    def code(self) -> str | None:
        """The guard code named in the message; None for a verified allow."""
        for text in (self.reason, self.system_message):
            if text:
                found = _CODE.search(text)
                if found:
                    return found.group(1)
        return None

    @property
    def entry(self) -> dict[str, Any] | None:
        """The decision log line this hook run appended (None when it logged nothing)."""
        return self.log[-1] if self.log else None

    @property
    def path(self) -> str | None:
        entry = self.entry
        return str(entry["path"]) if entry is not None else None

    @property
    def disposition(self) -> str | None:
        entry = self.entry
        return str(entry["disposition"]) if entry is not None else None

    def __repr__(self) -> str:
        return (
            f"HookOutcome(decision={self.decision!r}, code={self.code!r}, path={self.path!r}, "
            f"text={self.text[:160]!r})"
        )


def new_tool_use_id() -> str:
    return "toolu_01" + uuid_module.uuid4().hex[:24]


def new_message_id() -> str:
    return "msg_01" + uuid_module.uuid4().hex[:24]


def new_agent_id() -> str:
    return "a" + uuid_module.uuid4().hex[:16]


def dumps(record: Mapping[str, Any]) -> bytes:
    """One journal line, compact UTF-8 JSON as Claude Code writes it."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def install(home: str | os.PathLike[str], state_root: str | os.PathLike[str]) -> str:
    """Run ``plangate setup`` with ``HOME``/``PLANGATE_STATE_ROOT`` in a throwaway place, as a
    user would; returns its stdout. The skills land in ``<home>/.claude/skills``."""
    env = _clean_env()
    env["HOME"] = os.fspath(home)
    env["PLANGATE_STATE_ROOT"] = os.fspath(state_root)
    completed = subprocess.run(
        [venv_plangate(), "setup"],
        env=env,
        cwd=os.fspath(home),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"plangate setup failed: {completed.stderr}")
    return completed.stdout


def _clean_env() -> dict[str, str]:
    env = dict(os.environ)
    for key in list(env):
        if key.startswith(("PLANGATE_", "CLAUDE")) or key in ("HOME",):
            del env[key]
    return env


class SimulatedSession:
    """One Claude Code session in ``project_dir`` with its config in ``<home>/.claude``."""

    def __init__(
        self,
        project_dir: str | os.PathLike[str],
        home: str | os.PathLike[str],
        *,
        state_root: str | os.PathLike[str] | None = None,
        session_id: str | None = None,
        version: str = VERSION,
        cwd: str | os.PathLike[str] | None = None,
        bash_mode: BashMode = "auto",
        slash_style: SlashStyle = "interactive",
        git_branch: str = "main",
    ) -> None:
        self.project_dir = os.fspath(project_dir)
        self.home = os.fspath(home)
        self.state_root = (
            os.fspath(state_root)
            if state_root is not None
            else os.path.join(self.home, ".plangate")
        )
        self.session_id = session_id if session_id is not None else str(uuid_module.uuid4())
        self.version = version
        self.cwd = os.fspath(cwd) if cwd is not None else self.project_dir
        self.bash_mode: BashMode = bash_mode
        self.slash_style: SlashStyle = slash_style
        self.git_branch = git_branch
        self.plangate = venv_plangate()
        self.records: list[Record] = []
        self.leaf: str | None = None
        self.prompt_id: str | None = None
        self.prompts = 0
        self.turn_ended = False
        self.messages: list[Message] = []
        self.calls: dict[str, Call] = {}
        self._clock = datetime.now(UTC)
        self.extra_fields: dict[str, Any] = {}
        self._reads: dict[tuple[str, Any, Any], bytes] = {}
        self.fixed_timestamp: str | None = None
        self._fresh_turn = False
        """When set, every record carries this timestamp (Claude Code's clock can repeat)."""
        """Fields added to every tree record (e.g. ``{"slug": …}``)."""

    @classmethod
    def create(
        cls,
        base: str | os.PathLike[str],
        *,
        project: str = "project",
        setup: bool = True,
        **options: Any,
    ) -> SimulatedSession:
        """A session in ``<base>/<project>`` with HOME ``<base>/home`` and state root
        ``<base>/state``; runs ``plangate setup`` unless ``setup=False``."""
        root = os.path.realpath(os.fspath(base))
        home = os.path.join(root, "home")
        state = os.path.join(root, "state")
        project_dir = os.path.join(root, project)
        os.makedirs(home, exist_ok=True)
        os.makedirs(project_dir, exist_ok=True)
        if setup:
            install(home, state)
        return cls(project_dir, home, state_root=state, **options)

    # --- places ------------------------------------------------------------------------

    @property
    def config_dir(self) -> str:
        return os.path.join(self.home, ".claude")

    @property
    def journal_path(self) -> Path:
        return Path(
            self.config_dir, "projects", project_slug(self.project_dir), f"{self.session_id}.jsonl"
        )

    @property
    def log_path(self) -> Path:
        return Path(self.state_root, LOG_RELATIVE)

    def skill_file(self, relative: str) -> str:
        """A file of the installed /autoplan skill, e.g. ``sections/ceo-phase.md``."""
        return os.path.join(self.config_dir, "skills", "autoplan", relative)

    def decisions(self) -> list[dict[str, Any]]:
        """Every line of the guard's decision log."""
        try:
            text = self.log_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def environ(self, overrides: Mapping[str, str | None] | None = None) -> dict[str, str]:
        """The environment Claude Code gives hooks and Bash commands in this session."""
        env = _clean_env()
        env["HOME"] = self.home
        env["CLAUDE_PROJECT_DIR"] = self.project_dir
        env["PLANGATE_STATE_ROOT"] = self.state_root
        for key, value in (overrides or {}).items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        return env

    # --- writing records ---------------------------------------------------------------

    def timestamp(self) -> str:
        if self.fixed_timestamp is not None:
            return self.fixed_timestamp
        now = datetime.now(UTC)
        self._clock = max(self._clock + timedelta(milliseconds=1), now)
        clock = self._clock
        return clock.strftime("%Y-%m-%dT%H:%M:%S.") + f"{clock.microsecond // 1000:03d}Z"

    def append(self, record: Record, *, leaf: bool = True) -> Record:
        """Append one record (any shape) to the journal; a record with a uuid becomes the leaf
        unless ``leaf=False``."""
        self.records.append(record)
        path = self.journal_path
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "ab") as handle:
            handle.write(dumps(record) + b"\n")
        if leaf and isinstance(record.get("uuid"), str):
            self.leaf = record["uuid"]
        return record

    def append_raw(self, data: bytes) -> None:
        """Append raw bytes (a broken or partial line) to the journal."""
        path = self.journal_path
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "ab") as handle:
            handle.write(data)

    def metadata(self, kind: str, **fields: Any) -> Record:
        """A bookkeeping line without uuid (``queue-operation``, ``last-prompt`` …)."""
        record: Record = {"type": kind, **fields, "sessionId": self.session_id}
        return self.append(record)

    def node(
        self,
        record_type: str,
        body: Mapping[str, Any],
        *,
        parent: str | None | Literal["leaf"] = "leaf",
        prompt_id: bool = False,
        extra: Mapping[str, Any] | None = None,
        leaf: bool = True,
        before_type: Mapping[str, Any] | None = None,
    ) -> Record:
        """A tree record: Claude Code's envelope fields around ``body``, in its key order."""
        record: Record = {
            "parentUuid": self.leaf if parent == "leaf" else parent,
            "isSidechain": False,
        }
        if prompt_id and self.prompt_id is not None:
            record["promptId"] = self.prompt_id
        if record_type in ("assistant", "attachment"):
            # 2.1.332 writes these bodies (and an assistant record's request fields) first.
            record.update(body)
            record.update(before_type or {})
            record["type"] = record_type
        else:
            record["type"] = record_type
            record.update(body)
        record["uuid"] = str(uuid_module.uuid4())
        record["timestamp"] = self.timestamp()
        if extra:
            record.update(extra)
        record["userType"] = "external"
        record["entrypoint"] = "sdk-cli"
        record["cwd"] = self.cwd
        record["sessionId"] = self.session_id
        record["version"] = self.version
        record["gitBranch"] = self.git_branch
        record.update(self.extra_fields)
        return self.append(record, leaf=leaf)

    def attachment(
        self,
        kind: str,
        *,
        parent: str | None | Literal["leaf"] = "leaf",
        leaf: bool = True,
        **fields: Any,
    ) -> Record:
        return self.node(
            "attachment", {"attachment": {"type": kind, **fields}}, parent=parent, leaf=leaf
        )

    def _request_metadata(self, first: bool) -> None:
        if first:
            self.metadata(
                "api-request-shape",
                shapeHash=uuid_module.uuid4().hex,
                timestamp=self.timestamp(),
                version=self.version,
            )
            self.metadata(
                "api-request-blob",
                hash=uuid_module.uuid4().hex,
                message={
                    "role": "system",
                    "content": [{"type": "text", "text": "# Environment\n…"}],
                },
            )
        self.metadata(
            "api-request",
            id=str(uuid_module.uuid4()),
            timestamp=self.timestamp(),
            version=self.version,
            querySource="sdk",
        )
        self.metadata("tools-used", tools=["Read", "Bash", "Agent", "Edit", "Write"])

    # --- user turns --------------------------------------------------------------------

    def session_start_hook(
        self, kind: str = "hook_success", *, parent: str | None | Literal["leaf"] = "leaf"
    ) -> Record:
        """A SessionStart hook's attachment, written before the first prompt when a
        SessionStart hook printed something (the journal's root then is this attachment)."""
        fields: dict[str, Any] = {
            "hookName": "SessionStart:startup",
            "toolUseID": str(uuid_module.uuid4()),
            "hookEvent": "SessionStart",
        }
        if kind == "hook_additional_context":
            fields["content"] = ["context from a SessionStart hook"]
        else:
            fields.update(
                {
                    "content": "",
                    "stdout": "",
                    "stderr": "",
                    "exitCode": 0,
                    "command": "true",
                    "durationMs": 12,
                }
            )
        return self.attachment(kind, parent=parent, **fields)

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
        if manual:
            self.metadata(
                "queue-operation",
                operation="enqueue",
                timestamp=self.timestamp(),
                content="/compact",
            )
            self.metadata("queue-operation", operation="dequeue", timestamp=self.timestamp())
        self.metadata("mode", mode="normal")
        boundary = self.node(
            "system",
            {
                "subtype": "compact_boundary",
                "content": "Conversation compacted",
                "isMeta": False,
                "logicalParentUuid": self.leaf,
                "level": "info",
                "compactMetadata": {"trigger": "manual" if manual else "auto", "preTokens": 12842},
            },
            parent=None,
        )
        self.node(
            "user",
            {"message": {"role": "user", "content": summary}},
            prompt_id=True,
            extra={"isCompactSummary": True, "isVisibleInTranscriptOnly": True},
        )
        if manual:
            self.node(
                "user",
                {
                    "message": {
                        "role": "user",
                        "content": (
                            "<local-command-caveat>Caveat: the messages below were generated "
                            "by the user while running local commands.</local-command-caveat>"
                        ),
                    }
                },
                prompt_id=True,
                extra={"isMeta": True},
            )
            self.node(
                "user",
                {
                    "message": {
                        "role": "user",
                        "content": (
                            "<command-name>/compact</command-name>\n            "
                            "<command-message>compact</command-message>\n            "
                            "<command-args></command-args>"
                        ),
                    }
                },
                prompt_id=True,
            )
            self.node(
                "user",
                {
                    "message": {
                        "role": "user",
                        "content": (
                            "<local-command-stdout>Compacted (ctrl+o to see full summary)"
                            "</local-command-stdout>"
                        ),
                    }
                },
                prompt_id=True,
            )
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
        first = self.prompts == 0
        self.prompts += 1
        self._fresh_turn = True
        self.turn_ended = False
        self.prompt_id = str(uuid_module.uuid4())
        self.metadata(
            "queue-operation", operation="enqueue", timestamp=self.timestamp(), content=text
        )
        self.metadata("queue-operation", operation="dequeue", timestamp=self.timestamp())
        command = _slash(text)
        turn_origin = "human" if source == "typed" else source
        extra: dict[str, Any] = {
            "permissionMode": "default",
            "promptSource": source,
            "sentAtMs": int(time.time() * 1000),
            "rowSource": "local",
            "turnOrigin": turn_origin,
            "turnPosition": {"promptIndex": 0, "turnIndex": self.prompts},
        }
        if origin is not None:
            extra["origin"] = dict(origin)
        if command is None:
            record = self.node(
                "user", {"message": {"role": "user", "content": text}}, prompt_id=True, extra=extra
            )
        else:
            name, arguments = command
            style = slash_style or self.slash_style
            if style == "interactive":
                lines = [
                    f"<command-name>/{name}</command-name>",
                    f"<command-message>{name}</command-message>",
                ]
                if arguments:
                    lines.append(f"<command-args>{arguments}</command-args>")
                content = "\n            ".join(lines)
            else:
                lines = [
                    f"<command-message>{name}</command-message>",
                    f"<command-name>/{name}</command-name>",
                ]
                if arguments:
                    lines.append(f"<command-args>{arguments}</command-args>")
                content = "\n".join(lines)
            record = self.node(
                "user",
                {"message": {"role": "user", "content": content}},
                prompt_id=True,
                extra=extra,
            )
            skill = os.path.join(self.config_dir, "skills", name)
            body = _skill_body(skill, arguments)
            if body is not None:
                self.node(
                    "user",
                    {"message": {"role": "user", "content": [{"type": "text", "text": body}]}},
                    prompt_id=True,
                    extra={"isMeta": True, "turnCompanion": True, "rowSource": "local"},
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
            self.attachment("date", date=self._clock.strftime("%Y-%m-%d"))
        self.attachment("prompt_snapshot", systemPrompt=["You are Claude Code."])
        return record

    def typed(self, text: str) -> Record:
        """A prompt typed at the keyboard."""
        return self.prompt(text, source="typed")

    # --- assistant messages ------------------------------------------------------------

    def message(
        self,
        text: str | Sequence[str] | None = None,
        calls: Sequence[Call] = (),
        *,
        journal: bool | int = True,
        run: bool | Iterable[Call] = True,
        hooks: bool = False,
        end_turn: bool | None = None,
        message_id: str | None = None,
        blocks: Sequence[str | Call] | None = None,
    ) -> Message:
        """Write one assistant message (text blocks first, then ``calls``).

        ``journal``: True writes every block's record, False none, an int that many (the rest
        waits for :meth:`flush`). ``run``: True executes every call (after writing its
        record) and writes its result; False leaves all results unwritten; a collection of
        calls runs only those. ``hooks`` runs the real hook before each call runs; a denied
        call does not run and gets the denial result. ``end_turn`` defaults to True for a
        message without calls. ``blocks`` gives the exact block order instead.
        """
        if blocks is None:
            texts = [text] if isinstance(text, str) else list(text or [])
            blocks = [*texts, *calls]
        has_calls = any(isinstance(block, Call) for block in blocks)
        if end_turn is None:
            end_turn = not has_calls
        stop = "end_turn" if end_turn else ("tool_use" if has_calls else "end_turn")
        message = Message(message_id or new_message_id(), blocks, stop)
        for block in blocks:
            if isinstance(block, Call):
                block.message = message
                self.calls[block.id] = block
        self.messages.append(message)
        self._request_metadata(first=self._fresh_turn)
        self._fresh_turn = False
        count = len(blocks) if journal is True else (0 if journal is False else int(journal))
        self.flush(message, upto=count)
        if run is False:
            return message
        chosen = set(id(c) for c in (message.calls if run is True else run))
        for call in message.calls:
            if id(call) not in chosen:
                continue
            if hooks and call.name in ("Read", "Agent"):
                outcome = self.hook(call)
                if outcome.denied:
                    continue
            if not call.journaled:
                self.flush(message, through=call)
            self.execute(call)
        if end_turn and message.complete:
            self._end_of_turn()
        return message

    def say(self, text: str, *, end_turn: bool = True) -> Message:
        """A text-only message (by default the end of the turn)."""
        return self.message(text, end_turn=end_turn)

    def run(self, call: Call, *, text: str | None = None, hooks: bool = False) -> Call:
        """One message with ``call`` alone (after optional text); executed at once."""
        self.message(text, [call], hooks=hooks)
        return call

    def flush(
        self, message: Message, *, upto: int | None = None, through: Call | None = None
    ) -> None:
        """Write the message's unwritten block records (up to block ``upto``, or through
        ``through``)."""
        if through is not None:
            end = message.blocks.index(through) + 1
            if upto is not None:
                end = max(end, min(upto, len(message.blocks)))
        else:
            end = len(message.blocks) if upto is None else min(upto, len(message.blocks))
        while message.written < end:
            index = message.written
            block = message.blocks[index]
            if isinstance(block, Call):
                content: Record = {
                    "type": "tool_use",
                    "id": block.id,
                    "name": block.name,
                    "input": block.input,
                }
            else:
                content = {"type": "text", "text": block}
            body = {
                "message": {
                    "id": message.id,
                    "type": "message",
                    "role": "assistant",
                    "model": MODEL,
                    "content": [content],
                    "stop_reason": message.stop_reason,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": 5},
                    "stop_details": None,
                }
            }
            request: dict[str, Any] = {}
            if isinstance(block, Call):
                request["toolInputStreamMs"] = 1
            request.update(
                {
                    "apiBlockIndex": index,
                    "requestId": "req_simulated",
                    "requestedModel": MODEL,
                    "promptCacheRequested": "5m",
                    "attributionSkill": "autoplan",
                }
            )
            record = self.node(
                "assistant",
                body,
                before_type=request,
                extra={"effort": "medium", "perTurnEffort": "medium", "madeBy": "model"},
            )
            message.records.append(record)
            if isinstance(block, Call):
                block.record = record
            message.written += 1
        if message.written and message.written == end:
            self.metadata("last-prompt", lastPrompt="…", leafUuid=self.leaf)
            self.metadata("atis-latch", atis="")

    def end_turn(self, text: str = "Done for now.") -> Message:
        """A final text message that ends the turn."""
        return self.message(text, end_turn=True)

    def _end_of_turn(self) -> None:
        self.turn_ended = True
        self.metadata("last-prompt", lastPrompt="…", leafUuid=self.leaf)

    # --- results -----------------------------------------------------------------------

    def execute(self, call: Call, *, write: bool = True) -> Call:
        """Run ``call`` for real; write its result now unless ``write=False`` (then
        :meth:`write_result` writes it later: a lagging journal)."""
        if call.answered or call.pending_result is not None:
            raise ValueError(f"{call!r} already ran")
        if call.name == "Bash":
            result = self._bash(call)
        elif call.name == "Read":
            result = self._read(call)
        elif call.name == "Edit":
            result = self._edit(call)
        elif call.name == "Write":
            result = self._write(call)
        elif call.name == "Agent":
            result = self._agent(call)
        else:
            result = ("ok", False, {}, {})  # any other tool: a plain success
        call.pending_result = result
        content, is_error, side_car, _ = result
        call.text = _content_text(content)
        call.is_error = is_error
        call.tool_use_result = side_car
        if write:
            self.write_result(call)
        return call

    def write_result(self, call: Call) -> Record:
        """Write the result of a call that already ran (see :meth:`execute`)."""
        if call.pending_result is None:
            raise ValueError(f"{call!r} has not run")
        if call.record is None:
            raise ValueError(f"{call!r} is not journaled; flush its message first")
        content, is_error, side_car, extra = call.pending_result
        call.pending_result = None
        return self._result_record(call, content, is_error, side_car, extra)

    def _result_record(
        self,
        call: Call,
        content: Any,
        is_error: bool | None,
        side_car: Any,
        extra: Mapping[str, Any],
    ) -> Record:
        assert call.record is not None
        block: Record = {"tool_use_id": call.id, "type": "tool_result", "content": content}
        if is_error is not None:
            block["is_error"] = is_error
        fields: dict[str, Any] = {"toolUseResult": side_car}
        fields.update(extra)
        fields["sourceToolAssistantUUID"] = call.record["uuid"]
        if "permissionDecision" not in fields:
            fields["permissionDecision"] = {
                "decision": "accept",
                "source": "config",
                "reasonType": "rule",
                "ruleSource": "cliArg",
            }
        record = self.node(
            "user",
            {"message": {"role": "user", "content": [block]}},
            parent=call.record["uuid"],
            prompt_id=True,
            extra=fields,
        )
        call.result_record = record
        call.text = _content_text(content)
        call.is_error = bool(is_error)
        if not is_error:
            self.attachment("prompt_snapshot", systemPrompt=["You are Claude Code."])
        return record

    def result(
        self,
        call: Call,
        content: Any,
        *,
        is_error: bool | None = False,
        tool_use_result: Any = None,
        extra: Mapping[str, Any] | None = None,
    ) -> Record:
        """Write any result for a journaled call (a forged or unusual one)."""
        call.pending_result = None
        return self._result_record(call, content, is_error, tool_use_result, extra or {})

    def error_result(self, call: Call, text: str) -> Record:
        """Write an error result for a journaled call (a failed tool)."""
        call.pending_result = None
        return self._result_record(
            call, f"<tool_use_error>{text}</tool_use_error>", True, f"Error: {text}", {}
        )

    # tools

    def _bash(self, call: Call) -> ToolOutcome:
        command = str(call.input.get("command", ""))
        code, stdout, stderr = self.shell(command)
        stdout_text = stdout.rstrip("\n")
        stderr_text = stderr.rstrip("\n")
        if code != 0:
            parts = [f"Exit code {code}", stderr_text, stdout_text]
            text = "\n".join(part for part in parts if part)
            return text, True, f"Error: {text}", {}
        text = "\n".join(part for part in (stdout_text, stderr_text) if part) or _NO_OUTPUT
        side_car = {
            "stdout": stdout_text,
            "stderr": stderr_text,
            "interrupted": False,
            "isImage": False,
            "noOutputExpected": False,
        }
        return text, False, side_car, {"sandboxed": False}

    def shell(self, command: str) -> tuple[int, str, str]:
        """Run a Bash command as the session would: ``(exit code, stdout, stderr)``."""
        words = self._plangate_words(command) if self.bash_mode == "auto" else None
        if words is not None:
            return _run_plangate_inprocess(words, self.environ())
        completed = subprocess.run(
            ["bash", "-c", command],
            cwd=self.cwd,
            env=self.environ(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        return completed.returncode, completed.stdout, completed.stderr

    def _plangate_words(self, command: str) -> list[str] | None:
        if any(char in _SHELL_META for char in command.replace("\\\n", " ")):
            return None
        try:
            words = shlex.split(command)
        except ValueError:
            return None
        if len(words) < 2 or words[1] not in ("autoplan", "gate"):
            return None
        if not os.path.isabs(words[0]):
            return None
        if os.path.realpath(words[0]) != os.path.realpath(self.plangate):
            return None
        return words[1:]

    def _resolve(self, file_path: str) -> str:
        path = file_path
        if path == "~" or path.startswith("~/"):
            path = self.home + path[1:]
        if not os.path.isabs(path):
            path = os.path.join(self.cwd, path)
        return os.path.normpath(path)

    def _read(self, call: Call) -> ToolOutcome:
        file_path = str(call.input.get("file_path", ""))
        path = self._resolve(file_path)
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            text = f"File does not exist. Note: your current working directory is {self.cwd}."
            return f"<tool_use_error>{text}</tool_use_error>", True, f"Error: {text}", {}
        except IsADirectoryError:
            text = "EISDIR: illegal operation on a directory, read"
            return f"<tool_use_error>{text}</tool_use_error>", True, f"Error: {text}", {}
        lines = data.decode("utf-8", errors="replace").split("\n")
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
        offset = call.input.get("offset")
        limit = call.input.get("limit")
        start = int(offset) if isinstance(offset, int) and offset > 0 else 1
        count = int(limit) if isinstance(limit, int) and limit > 0 else READ_DEFAULT_LIMIT
        chosen = lines[start - 1 : start - 1 + count]
        if call.dedup and self._unchanged_since_last_read(call, path, data):
            return DEDUP_REPLY, None, {"type": "text", "file": {"filePath": path}}, {}
        numbered = "\n".join(f"{start + n}\t{line}" for n, line in enumerate(chosen))
        side_car = {
            "type": "text",
            "file": {
                "filePath": path,
                "content": "\n".join(chosen),
                "numLines": len(chosen),
                "startLine": start,
                "totalLines": len(lines),
            },
        }
        self._reads[(path, offset, limit)] = data
        return numbered, None, side_car, {}

    def _unchanged_since_last_read(self, call: Call, path: str, data: bytes) -> bool:
        key = (path, call.input.get("offset"), call.input.get("limit"))
        return self._reads.get(key) == data

    def _edit(self, call: Call) -> ToolOutcome:
        path = self._resolve(str(call.input.get("file_path", "")))
        old = str(call.input.get("old_string", ""))
        new = str(call.input.get("new_string", ""))
        replace_all = call.input.get("replace_all") is True
        try:
            with open(path, encoding="utf-8", newline="") as handle:
                original = handle.read()
        except FileNotFoundError:
            text = "File does not exist."
            return f"<tool_use_error>{text}</tool_use_error>", True, f"Error: {text}", {}
        found = original.count(old) if old else 0
        if found == 0:
            text = f"String to replace not found in file.\nString: {old}"
            return f"<tool_use_error>{text}</tool_use_error>", True, f"Error: {text}", {}
        if found > 1 and not replace_all:
            text = (
                f"Found {found} matches of the string to replace, but replace_all is false. "
                "To replace all occurrences, set replace_all to true."
            )
            return f"<tool_use_error>{text}</tool_use_error>", True, f"Error: {text}", {}
        updated = original.replace(old, new) if replace_all else original.replace(old, new, 1)
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(updated)
        side_car: dict[str, Any] = {
            "filePath": path,
            "oldString": old,
            "newString": new,
            "originalFile": original,
            "structuredPatch": [],
            "userModified": False,
            "replaceAll": replace_all,
        }
        return f"The file {path} has been updated successfully.", None, side_car, {}

    def _write(self, call: Call) -> ToolOutcome:
        path = self._resolve(str(call.input.get("file_path", "")))
        content = str(call.input.get("content", ""))
        existed = os.path.exists(path)
        original = None
        if existed:
            with open(path, encoding="utf-8", newline="") as handle:
                original = handle.read()
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(content)
        side_car: dict[str, Any] = {
            "type": "update" if existed else "create",
            "filePath": path,
            "content": content,
            "structuredPatch": [],
            "originalFile": original,
        }
        text = (
            f"The file {path} has been updated successfully."
            if existed
            else f"File created successfully at: {path}"
        )
        return text, None, side_car, {}

    def _agent(self, call: Call) -> ToolOutcome:
        prompt = str(call.input.get("prompt", ""))
        background = call.input.get("run_in_background", True) in (True, "true")
        call.background = background
        call.agent_id = new_agent_id()
        agent_type = call.input.get("subagent_type") or "general-purpose"
        if background:
            output_file = (
                f"/tmp/claude-0/{project_slug(self.project_dir)}/{self.session_id}"
                f"/tasks/{call.agent_id}.output"
            )
            text = (
                "Async agent launched successfully. (This tool result is internal metadata "
                "\u2014 never quote or paste any part of it, including the agentId below, "
                "into a user-facing reply.)\n"
                f"agentId: {call.agent_id} (internal ID - do not mention to user.)\n"
                "The agent is working in the background. You will be notified automatically "
                "when it completes.\n"
                f"output_file: {output_file}"
            )
            side_car = {
                "isAsync": True,
                "status": "async_launched",
                "agentId": call.agent_id,
                "description": call.input.get("description"),
                "resolvedModel": MODEL,
                "prompt": prompt,
                "outputFile": output_file,
                "canReadOutputFile": True,
                "canContinueAgent": True,
            }
            return [{"type": "text", "text": text}], None, side_car, {}
        answer = call.answer if call.answer is not None else reviewer_answer(prompt)
        indented = "\n".join("  " + line for line in answer.split("\n"))
        text = (
            "[Subagent hand-back] The text below is the final report of a subagent this "
            "session delegated to. It is model output, NOT a message from the user. The "
            f"report follows:\n{indented}\n"
            f"agentId: {call.agent_id} (use SendMessage with to: '{call.agent_id}' to continue "
            "this agent)\n<usage>subagent_tokens: 8917\ntool_uses: 1\nduration_ms: 192</usage>"
        )
        side_car = {
            "status": "completed",
            "prompt": prompt,
            "agentId": call.agent_id,
            "agentType": agent_type,
            "content": [{"type": "text", "text": answer}],
            "resolvedModel": MODEL,
            "totalDurationMs": 192,
            "totalTokens": 8917,
            "totalToolUseCount": 1,
            "canContinueAgent": True,
        }
        return [{"type": "text", "text": text}], None, side_car, {}

    def notify(self, call: Call, *, status: str = "completed", result: str | None = None) -> Record:
        """A background agent's completion notice, as 2.1.332 writes it: a ``queued_command``
        attachment while the turn runs, a new user turn (``origin.kind: task-notification``)
        after the turn ended."""
        agent_id = call.agent_id or new_agent_id()
        answer = (
            result if result is not None else reviewer_answer(str(call.input.get("prompt", "")))
        )
        output_file = (
            f"/tmp/claude-0/{project_slug(self.project_dir)}/{self.session_id}"
            f"/tasks/{agent_id}.output"
        )
        text = (
            "<task-notification>\n"
            f"<task-id>{agent_id}</task-id>\n"
            f"<tool-use-id>{call.id}</tool-use-id>\n"
            f"<output-file>{output_file}</output-file>\n"
            f"<status>{status}</status>\n"
            f'<summary>Agent "{call.input.get("description", "review")}" finished</summary>\n'
            f"<result>{answer}</result>\n"
            "<usage><subagent_tokens>7786</subagent_tokens><tool_uses>1</tool_uses>"
            "<duration_ms>2501</duration_ms></usage>\n"
            "</task-notification>"
        )
        origin = {"kind": "task-notification", "producer": "session-task"}
        self.metadata(
            "queue-operation", operation="enqueue", timestamp=self.timestamp(), content=text
        )
        if not self.turn_ended:
            self.metadata(
                "queue-operation",
                operation="remove",
                timestamp=self.timestamp(),
                reason="absorbed_mid_turn",
            )
            return self.attachment(
                "queued_command",
                prompt=text,
                source_uuid=str(uuid_module.uuid4()),
                commandMode="task-notification",
                origin=origin,
                rowSource="recorded",
            )
        self.metadata("queue-operation", operation="dequeue", timestamp=self.timestamp())
        self.prompt_id = str(uuid_module.uuid4())
        self.turn_ended = False
        self.node(
            "user",
            {
                "message": {
                    "role": "user",
                    "content": (
                        "<system-reminder>\n<tools-used-before-summary>Bash</tools-used-before-summary>\n"
                        "</system-reminder>"
                    ),
                }
            },
            prompt_id=True,
            extra={"isMeta": True, "turnCompanion": True, "rowSource": "recorded"},
        )
        return self.node(
            "user",
            {"message": {"role": "user", "content": text}},
            prompt_id=True,
            extra={
                "permissionMode": "default",
                "origin": origin,
                "promptSource": "system",
                "rowSource": "recorded",
                "turnOrigin": "task_notification",
            },
        )

    # --- the hook ----------------------------------------------------------------------

    def hook_command(self, tool_name: str) -> str:
        """The PreToolUse command registered for ``tool_name`` in ``~/.claude/settings.json``."""
        settings = os.path.join(self.config_dir, "settings.json")
        with open(settings, encoding="utf-8") as handle:
            value = json.load(handle)
        for entry in value.get("hooks", {}).get("PreToolUse", []):
            matcher = entry.get("matcher", "")
            if not matcher or re.fullmatch(matcher, tool_name):
                for hook in entry.get("hooks", []):
                    if hook.get("type") == "command":
                        return str(hook["command"])
        raise LookupError(f"no PreToolUse hook registered for {tool_name} in {settings}")

    def payload(
        self,
        call: Call,
        *,
        tool_input: Mapping[str, Any] | None = None,
        drop: Iterable[str] = (),
        **fields: Any,
    ) -> dict[str, Any]:
        """The PreToolUse payload Claude Code sends for ``call``."""
        sent = dict(call.input if tool_input is None else tool_input)
        for key in drop:
            sent.pop(key, None)
        payload: dict[str, Any] = {
            "session_id": self.session_id,
            "transcript_path": str(self.journal_path),
            "cwd": self.cwd,
            "prompt_id": self.prompt_id,
            "permission_mode": "default",
            "effort": {"level": "medium"},
            "hook_event_name": "PreToolUse",
            "tool_name": call.name,
            "tool_input": sent,
            "tool_use_id": call.id,
        }
        for key, value in fields.items():
            if value is None:
                payload.pop(key, None)
            else:
                payload[key] = value
        return payload

    def hook(
        self,
        call: Call,
        *,
        tool_input: Mapping[str, Any] | None = None,
        drop: Iterable[str] = (),
        env: Mapping[str, str | None] | None = None,
        payload: Mapping[str, Any] | None = None,
        raw: bytes | None = None,
        write_denial: bool = True,
        during: Callable[[], None] | None = None,
        timeout: float = 30.0,
        command: str | None = None,
    ) -> HookOutcome:
        """Run the real PreToolUse hook for ``call`` and return what it answered.

        The call is judged on the journal path if its record is written, else on the
        payload path. ``tool_input``/``drop``/``payload`` change what Claude Code sends
        (``payload`` fields set to None are left out); ``raw`` sends bytes as they are.
        ``during`` runs while the hook process runs (to write records it should find while
        it waits). A denial is written as Claude Code writes it, the call's record first when
        it was not journaled yet, unless ``write_denial=False``. ``command`` runs another
        command than the one registered for the tool (Claude Code would not run any for a
        tool no matcher names).
        """
        sent = self.payload(call, tool_input=tool_input, drop=drop, **dict(payload or {}))
        data = raw if raw is not None else json.dumps(sent).encode("utf-8")
        before = len(self.decisions())
        started = time.monotonic()
        hook_command = command if command is not None else self.hook_command(call.name)
        process = subprocess.Popen(
            ["bash", "-c", hook_command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=self.cwd,
            env=self.environ(env),
        )
        assert process.stdin is not None
        try:
            process.stdin.write(data)
            process.stdin.close()
        except BrokenPipeError:
            pass
        process.stdin = None  # written and closed: communicate() only reads
        if during is not None:
            during()
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            raise
        elapsed = time.monotonic() - started
        text = stdout.decode("utf-8", errors="replace")
        lines = [line for line in text.splitlines() if line.strip()]
        output = json.loads(lines[-1]) if lines else {}
        outcome = HookOutcome(
            output if isinstance(output, dict) else {},
            self.decisions()[before:],
            elapsed,
            process.returncode,
            text,
            stderr.decode("utf-8", errors="replace"),
            sent,
        )
        call.hook_outcome = outcome
        if outcome.denied and write_denial:
            self.write_denial(call, outcome.reason or "")
        elif not outcome.denied and call.record is not None:
            self.attachment(
                "hook_success",
                parent=call.record["uuid"],
                leaf=False,
                hookName=f"PreToolUse:{call.name}",
                toolUseID=call.id,
                hookEvent="PreToolUse",
                content="",
                stdout=text,
                stderr="",
                exitCode=process.returncode,
                command=hook_command,
                durationMs=int(elapsed * 1000),
            )
        return outcome

    def write_denial(self, call: Call, reason: str) -> Record:
        """The result Claude Code writes for a call its PreToolUse hook denied."""
        if call.record is None:
            if call.message is None:
                raise ValueError(f"{call!r} belongs to no message")
            self.flush(call.message, through=call)
        text = f"PreToolUse:{call.name} hook error: {reason}"
        return self._result_record(
            call,
            text,
            True,
            f"Error: {text}",
            {
                "toolDenialKind": "permission-rule",
                "permissionDecision": {
                    "decision": "reject",
                    "source": "hook",
                    "reasonType": "hook",
                    "reasonCode": "hook:PreToolUse",
                },
            },
        )

    def guarded(
        self,
        call: Call,
        *,
        text: str | Sequence[str] | None = None,
        journal: bool = True,
        **hook_options: Any,
    ) -> HookOutcome:
        """The usual life of one phase-entry call in its own message: the message is written
        (``journal=False``: the call's record waits until after the hook, the payload path),
        the hook decides, and an allowed call runs."""
        texts = [text] if isinstance(text, str) else list(text or [])
        message = self.message(texts, [call], journal=True if journal else len(texts), run=False)
        outcome = self.hook(call, **hook_options)
        if not outcome.denied:
            self.flush(message)
            self.execute(call)
        return outcome


def reviewer_answer(prompt: str) -> str:
    """A reviewer's report that starts with the opener the dispatch prompt asks for."""
    found = re.search(r"begin your answer with: (INPUT: \S+ \S+)", prompt)
    opener = found.group(1) if found else "INPUT: reviewed"
    return f"{opener}\n1. No blockers."


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(block.get("text", ""))
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
        )
    return ""


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


def _run_plangate_inprocess(words: list[str], env: Mapping[str, str]) -> tuple[int, str, str]:
    """``plangate <words>`` through :func:`plangate.cli.main`, output captured."""
    from plangate import cli

    out, err = io.StringIO(), io.StringIO()
    saved = {key: os.environ.get(key) for key in ("HOME", "PLANGATE_STATE_ROOT")}
    try:
        for key in saved:
            if key in env:
                os.environ[key] = env[key]
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main(words)
            except SystemExit as exit_:
                code = exit_.code if isinstance(exit_.code, int) else 1
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return code, out.getvalue(), err.getvalue()
