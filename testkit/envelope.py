"""The envelope of every Claude Code 2.1.332 journal line: ids, clock, key order and output.

:class:`JournalWriter` lays out each record the way that CLI writes it (checked against
journals it wrote): a conversation record is ``parentUuid``, ``isSidechain``, optional
``promptId``/``agentId``, ``type`` and the body (an ``assistant`` or ``attachment`` record
writes its body, and an assistant's request fields, *before* ``type``), ``uuid``,
``timestamp``, the record's own fields, then ``userType``, ``entrypoint``, ``cwd``,
``sessionId``, ``version`` and ``gitBranch``. Metadata lines (``queue-operation``,
``api-request`` …) carry no ``uuid`` and are never part of the conversation.

Ids and timestamps come from :meth:`JournalWriter.new_uuid` and
:meth:`JournalWriter.timestamp`: deterministic by default (a seed and a counter, one
millisecond per record); the session simulator and the benchmarks' generator override them.
Records are kept in :attr:`JournalWriter.records` (``keep``) and, with ``out``, written as
they are added, so a hook can read the file between two records.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid as uuid_module
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

from plangate.locations import project_slug

VERSION: Final = "2.1.332"
"""The Claude Code version whose journal layout the writer copies."""

MODEL: Final = "claude-opus-5-5"
BODY_FIRST: Final = frozenset({"assistant", "attachment"})
"""Record types whose body comes before ``type`` in 2.1.332's key order."""

Record = dict[str, Any]


class _Leaf:
    """Marker: hang the record from the journal's current leaf."""

    def __repr__(self) -> str:
        return "LEAF"


LEAF: Final = _Leaf()
Parent = str | None | _Leaf


def dumps(record: Mapping[str, Any]) -> bytes:
    """One journal line (without its newline), compact UTF-8 JSON as Claude Code writes it."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def format_time(moment: datetime) -> str:
    """``2026-11-29T19:37:45.123Z``: milliseconds, as Claude Code writes timestamps."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


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


class JournalWriter:
    """One session's records in 2.1.332's layout: the envelope, ids, clock and output."""

    def __init__(
        self,
        *,
        session_id: str | None = None,
        cwd: str = "/home/user/project",
        version: str = VERSION,
        seed: int | str = 1,
        start: datetime | None = None,
        git_branch: str = "main",
        out: Callable[[bytes], object] | None = None,
        keep: bool = True,
    ) -> None:
        self.seed = seed
        self._counter = 0
        self.session_id = session_id if session_id is not None else self.new_uuid()
        self.cwd = cwd
        self.version = version
        self.git_branch = git_branch
        self._clock = start if start is not None else datetime(2026, 11, 29, 19, 37, 45, tzinfo=UTC)
        self.out = out
        self.keep = keep
        self.records: list[Record] = []
        self.leaf: str | None = None
        self.prompt_id: str | None = None
        self.extra_fields: dict[str, Any] = {}
        """Fields added to every conversation record (e.g. ``{"slug": …}``)."""

    # ids and clock

    def _next(self) -> int:
        self._counter += 1
        return self._counter

    def _digest(self) -> bytes:
        return hashlib.sha256(f"{self.seed}:{self._next()}".encode()).digest()

    def new_uuid(self) -> str:
        return str(uuid_module.UUID(bytes=self._digest()[:16], version=4))

    def new_hash(self) -> str:
        """A content hash (``api-request-blob``'s ``hash``, ``shapeHash``)."""
        return self._digest().hex()

    def new_tool_use_id(self) -> str:
        return "toolu_01" + self._digest().hex()[:24]

    def new_message_id(self) -> str:
        return "msg_01" + self._digest().hex()[:24]

    def timestamp(self) -> str:
        self._clock += timedelta(milliseconds=1)
        return format_time(self._clock)

    # records

    def add(self, record: Record, *, leaf: bool = True) -> Record:
        """Append any record as it is; a record with a uuid becomes the leaf unless ``leaf``
        is False."""
        if self.keep:
            self.records.append(record)
        if self.out is not None:
            self.out(dumps(record) + b"\n")
        if leaf and isinstance(record.get("uuid"), str):
            self.leaf = record["uuid"]
        return record

    def parent_of(self, parent: Parent) -> str | None:
        return self.leaf if isinstance(parent, _Leaf) else parent

    def tail(
        self, record: Record, *, cwd: str | None = None, session_id: str | None = None
    ) -> Record:
        """The fields that close every conversation record, then :attr:`extra_fields`."""
        record["userType"] = "external"
        record["entrypoint"] = "sdk-cli"
        record["cwd"] = cwd if cwd is not None else self.cwd
        record["sessionId"] = session_id if session_id is not None else self.session_id
        record["version"] = self.version
        record["gitBranch"] = self.git_branch
        record.update(self.extra_fields)
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
        head: Mapping[str, Any] | None = None,
        extra: Mapping[str, Any] | None = None,
        leaf: bool = True,
    ) -> Record:
        """A conversation record: the envelope fields in Claude Code's order around ``body``.

        ``head`` goes right before ``type`` (an assistant record's request fields), ``extra``
        after the timestamp.
        """
        record: Record = {"parentUuid": self.parent_of(parent), "isSidechain": is_sidechain}
        if prompt_id is not None:
            record["promptId"] = prompt_id
        if agent_id is not None:
            record["agentId"] = agent_id
        if record_type in BODY_FIRST:
            record.update(body)
            record.update(head or {})
            record["type"] = record_type
        else:
            record.update(head or {})
            record["type"] = record_type
            record.update(body)
        record["uuid"] = uuid if uuid is not None else self.new_uuid()
        record["timestamp"] = timestamp if timestamp is not None else self.timestamp()
        if extra:
            record.update(extra)
        return self.add(self.tail(record, cwd=cwd, session_id=session_id), leaf=leaf)

    def metadata(self, kind: str, **fields: Any) -> Record:
        """A line without uuid (session metadata): never part of the conversation."""
        record: Record = {"type": kind, **fields}
        record.setdefault("sessionId", self.session_id)
        return self.add(record)

    # metadata lines 2.1.332 writes between conversation records

    def queue_operation(
        self, operation: str = "enqueue", content: str | None = None, **fields: Any
    ) -> Record:
        values: dict[str, Any] = {"operation": operation, "timestamp": self.timestamp()}
        if content is not None:
            values["content"] = content
        values.update(fields)
        return self.metadata("queue-operation", **values)

    def api_request_blob(self, role: str = "user", content: Any = "…") -> Record:
        """2.1.332's copy of an API request message: carries ``message`` but no uuid."""
        return self.metadata(
            "api-request-blob", hash=self.new_hash(), message={"role": role, "content": content}
        )

    def request_metadata(self) -> None:
        """The lines 2.1.332 writes before each model request."""
        self.metadata("atis-latch", atis="")
        self.metadata("api-request-shape", shapeHash=self.new_hash(), timestamp=self.timestamp())
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
