"""One journal line: the metadata ownership needs, and the events it holds.

Claude Code's journal format is internal and changes between versions, so every field is
optional and checked for its type; nothing here raises on a strange record. Identifiers are
opaque: any non-empty string without control characters (real files carry UUIDs, fixtures
sometimes hand-made ids). Standard library only (hook path).
"""

from __future__ import annotations

from plangate.journal.events import (
    Event,
)
from plangate.journal.paths import is_absolute

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeGuard

ID_MAX = 200
_SHAPE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def valid_id(value: object) -> TypeGuard[str]:
    return (
        type(value) is str and 0 < len(value) <= ID_MAX and value.isprintable() and " " not in value
    )


_DIGITS = str.maketrans("0123456789", "dddddddddd")
_SHAPE = "dddd-dd-ddTdd:dd:dd"


def valid_timestamp(value: object) -> bool:
    """An ISO 8601 UTC timestamp as Claude Code writes it (``2026-10-02T14:11:33.280Z``)."""
    if not isinstance(value, str) or not 19 <= len(value) <= 40:
        return False
    head = value[:19]
    if head.isascii():  # what Claude Code writes: one translation, twice as fast
        return head.translate(_DIGITS) == _SHAPE
    # Other digits (``str.isdigit`` takes any script's) are judged as they always were.
    date, t, clock = value[:10], value[10], value[11:19]
    return (
        t == "T"
        and date[4] == "-"
        and date[7] == "-"
        and (date[:4] + date[5:7] + date[8:10]).isdigit()
        and clock[2] == ":"
        and clock[5] == ":"
        and (clock[:2] + clock[3:5] + clock[6:8]).isdigit()
    )


def valid_version(value: object) -> bool:
    # Called for every record, and a session has a handful of versions: remembered.
    if type(value) is str:
        known = _VERSIONS.get(value)
        if known is not None:
            return known
    if not isinstance(value, str) or not 5 <= len(value) <= 40:
        return False
    head = value.split(".", 2)
    valid = len(head) == 3 and head[0].isdigit() and head[1].isdigit() and head[2][:1].isdigit()
    if type(value) is str and len(_VERSIONS) < _VERSIONS_MAX:
        _VERSIONS[value] = valid
    return valid


_VERSIONS: dict[str, bool] = {}
_VERSIONS_MAX = 64


def _shape_part(value: object) -> str:
    if not isinstance(value, str) or not value:
        return ""
    kept = "".join(ch for ch in value if ch in _SHAPE_CHARS)
    return kept[:40]


class Record:
    """Index entry of one kept journal line: metadata, position and (light) events."""

    __slots__ = (
        "index",
        "offset",
        "length",
        "session_id",
        "uuid",
        "parent",
        "parent_null",
        "via_logical_parent",
        "node",
        "agent",
        "sidechain",
        "conversation",
        "role",
        "has_message",
        "session_start",
        "cwd",
        "type",
        "subtype",
        "detail",
        "version",
        "array_content",
        "metadata",
        "stamped",
        "events",
        "slots",
        "tail",
        "tail_first",
        "tail_version",
        "hung_from_tail",
    )

    def __init__(self, index: int, offset: int, length: int, raw: dict[str, Any]) -> None:
        # Called once per journal line: kept flat and branch-light on purpose.
        get = raw.get
        self.index = index
        self.offset = offset
        self.length = length
        self.events: tuple[Event, ...] = ()
        self.slots = 0
        # Event-less records that ride on this one (plangate.journal.compact): how many, the
        # line of the first, the last version one of them names; and whether this record's
        # parent was the last of another record's riders (it then names that record).
        self.tail = 0
        self.tail_first = -1
        self.tail_version: str | None = None
        self.hung_from_tail = False
        session_id = get("sessionId")
        self.session_id = session_id if type(session_id) is str else None
        record_type = get("type")
        self.type: str | None = record_type if type(record_type) is str else None
        subtype = get("subtype")
        self.subtype: str | None = subtype if type(subtype) is str else None
        message = get("message")
        has_message = isinstance(message, dict)
        self.has_message = has_message
        role = message.get("role") if isinstance(message, dict) else None
        self.role: str | None = role if type(role) is str else None
        self.array_content = isinstance(message, dict) and type(message.get("content")) is list
        version = get("version")
        self.version: str | None = version if valid_version(version) else None
        attachment = get("attachment")
        detail = None
        if type(attachment) is dict:
            detail = attachment.get("type")
        elif record_type == "progress":
            data = get("data")
            detail = data.get("type") if type(data) is dict else None
        self.detail: str | None = detail if type(detail) is str else None
        agent_id = get("agentId")
        self.agent = agent_id is not None and agent_id != ""
        # Lines with neither id nor parent (queue operations, titles, the api-request blobs of
        # Claude Code 2.1.3xx, which carry a message) are session metadata, never conversation.
        if "uuid" not in raw and "parentUuid" not in raw:
            self.metadata = True
            self.uuid: str | None = None
            self.parent: str | None = None
            self.parent_null = self.via_logical_parent = self.node = False
            self.sidechain = get("isSidechain") is not False
            self.cwd: str | None = None
            self.conversation = self.session_start = self.stamped = False
            return
        self.metadata = False
        uuid = get("uuid")
        self.uuid = uuid if valid_id(uuid) else None
        parent_uuid = get("parentUuid", _MISSING)
        self.parent_null = parent_uuid is None
        self.via_logical_parent = False
        self.parent = parent_uuid if valid_id(parent_uuid) else None
        if parent_uuid is None and subtype == "compact_boundary" and record_type == "system":
            logical = get("logicalParentUuid")
            if not has_message and valid_id(logical):
                self.parent = logical
                self.via_logical_parent = True
        self.sidechain = get("isSidechain") is not False
        cwd = get("cwd")
        self.cwd = cwd if type(cwd) is str and is_absolute(cwd) else None
        # Whether it has a valid timestamp: a node needs one, and so does each of its events.
        self.stamped = stamped = valid_timestamp(get("timestamp"))
        self.node = (
            stamped
            and not self.agent
            and not self.sidechain
            and self.cwd is not None
            and self.uuid is not None
        )
        self.conversation = not self.agent and self.role in ("user", "assistant")
        self.session_start = not has_message and _is_session_start_hook(raw, record_type)

    @classmethod
    def indexed(
        cls,
        index: int,
        offset: int,
        length: int,
        uuid: str | None,
        slots: int,
        events: tuple[Event, ...],
    ) -> Record:
        """An owned record as a saved journal index describes it (:mod:`.index`): its
        position, id, slots and light events, and nothing else, which is all pass two reads."""
        record = cls.__new__(cls)
        record.index = index
        record.offset = offset
        record.length = length
        record.uuid = uuid
        record.slots = slots
        record.events = events
        record.tail = 0
        record.tail_first = -1
        record.tail_version = None
        record.hung_from_tail = False
        return record

    @property
    def shape(self) -> str:
        """``type[:subtype][:attachment type]`` for diagnostics; never content."""
        parts = [_shape_part(self.type) or "untyped"]
        if self.subtype:
            parts.append(_shape_part(self.subtype))
        if self.detail:
            parts.append(_shape_part(self.detail))
        return ":".join(parts)

    def exclusion_reason(self) -> str:
        """Why this record cannot be a node of the parent session."""
        if self.agent:
            return "agent"
        if self.sidechain:
            return "sidechain"
        return "unrecognized_shape:record_metadata"


_MISSING = object()


BLOCKED_EXPANSION = "UserPromptExpansion operation blocked by hook"
"""How Claude Code 2.1.332 starts the informational system record it writes when a hook
blocks a typed slash command (exit 2); before the first turn it is the journal's root."""


def _is_session_start_hook(raw: dict[str, Any], record_type: str | None) -> bool:
    """Whether a record without a message is a SessionStart hook's, or the notice of a typed
    command a UserPromptExpansion hook blocked (both may come before the first turn)."""
    if record_type == "system":
        content = raw.get("content")
        return (
            raw.get("subtype") == "informational"
            and isinstance(content, str)
            and content.startswith(BLOCKED_EXPANSION)
        )
    if record_type == "attachment":
        attachment = raw.get("attachment")
        if not isinstance(attachment, dict) or attachment.get("hookEvent") != "SessionStart":
            return False
        kind = attachment.get("type")
        return isinstance(kind, str) and kind.startswith("hook_") and 5 < len(kind) <= 53
    if record_type == "progress":
        # Claude Code 2.1.3x-2.1.4x wrote SessionStart hooks as progress records.
        data = raw.get("data")
        return (
            isinstance(data, dict)
            and data.get("type") == "hook_progress"
            and data.get("hookEvent") == "SessionStart"
        )
    return False
