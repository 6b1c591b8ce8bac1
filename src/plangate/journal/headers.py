"""What pass one reads of a journal line, and a compiled decoder that decodes only that.

Most of a long session's bytes are tool output and attachments: a file read is in a record
twice (the tool result and ``toolUseResult``), a diff as lists of lines. Pass one
(:mod:`.scan`, :mod:`.records`, :mod:`.building`, :mod:`.trust`) reads none of it, only ids,
types, roles, tool names, the first text of a result and Claude Code's queue (its lines'
operation, text and command id, a queued prompt's source id). :data:`LINE` names every key it
reads; the
compiled decoder (msgspec, :mod:`.fast`) turns that table into typed structs, so the rest of
a line is checked but never made into Python objects.

A line decoded this way is the dict the standard library would give with every key the table
does not name left out; ``tests/journal/test_headers.py`` proves that on every corpus line,
and that :class:`.records.Record` and :class:`.building.EventBuilder` give the same result
from it as from the whole line. Lines shorter than :data:`PLAIN_MAX_BYTES` are decoded
whole instead, which is quicker for them. Two things the table cannot keep are handled
around it:

- a tool call's ``input`` is only checked to be an object (``{}``): the index keeps the
  inputs of records up to :data:`.building.INPUT_KEEP_BYTES` only, so lines that short are
  decoded with their inputs (:data:`KEPT_LINE`);
- msgspec checks the UTF-8 of the strings it decodes but not of those it skips, so a line
  that is not all ASCII is checked first (:func:`check_utf8`), as the ``malformed`` rule
  requires.

Standard library only until :func:`header_decoder` is given the msgspec module.
"""

from __future__ import annotations

from plangate.journal.building import INPUT_KEEP_BYTES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType
    from typing import Any, TypeAlias

    Spec: TypeAlias = "dict[str, Spec | list[Spec] | None]"

WHOLE = None
"""The key's whole value is read."""
OBJECT_KEYS: Spec = {}
"""Only that the value is an object is read (a tool call's ``input`` in a long record)."""

_BLOCK: Spec = {
    "type": WHOLE,
    "id": WHOLE,
    "name": WHOLE,
    "input": OBJECT_KEYS,
    "text": WHOLE,
    "tool_use_id": WHOLE,
    "is_error": WHOLE,
    "content": [{"type": WHOLE, "text": WHOLE}],
}
_HOOK: Spec = {
    "type": WHOLE,
    "hookEvent": WHOLE,
    "prompt": WHOLE,
    "commandMode": WHOLE,
    "origin": {"kind": WHOLE},
    "source_uuid": WHOLE,
}

LINE: Spec = {
    **dict.fromkeys(
        (
            "type",
            "subtype",
            "sessionId",
            "uuid",
            "parentUuid",
            "logicalParentUuid",
            "isSidechain",
            "cwd",
            "timestamp",
            "version",
            "agentId",
            "origin",
            "promptSource",
            "promptId",
            "entrypoint",
            "isMeta",
            "isCompactSummary",
            "isVisibleInTranscriptOnly",
            "sourceToolUseID",
            "operation",
            "content",
            "commandUuid",
        ),
        WHOLE,
    ),
    "message": {"role": WHOLE, "id": WHOLE, "stop_reason": WHOLE, "content": [_BLOCK]},
    "attachment": _HOOK,
    "data": _HOOK,
    "toolUseResult": {
        "file": {"filePath": WHOLE, "startLine": WHOLE, "numLines": WHOLE, "totalLines": WHOLE},
        "isAsync": WHOLE,
        "status": WHOLE,
    },
}
"""Each key pass one reads: :data:`WHOLE`, an object of which only the keys named are read
(any other value is read whole), or a one-item list: an array whose objects are read so."""


def project(value: object, spec: Spec | list[Spec] | None) -> object:
    """``value`` (as the standard library decodes it) with what ``spec`` does not read left
    out: what the header decoder gives for it. The tests' reference."""
    if spec is None:
        return value
    if isinstance(spec, list):
        if not isinstance(value, list):
            return value
        return [project(item, spec[0]) for item in value]
    if not isinstance(value, dict):
        return value
    return {key: project(item, spec[key]) for key, item in value.items() if key in spec}


KEPT_LINE: Spec = {
    **LINE,
    "message": {
        **LINE["message"],  # type: ignore[dict-item]
        "content": [{**_BLOCK, "input": WHOLE}],
    },
}
""":data:`LINE` with tool inputs read whole: how lines of at most
:data:`.building.INPUT_KEEP_BYTES` are read, whose inputs the index keeps."""


PLAIN_MAX_BYTES = 1024
"""Lines shorter than this are decoded whole, as the standard library decodes them: for
them the structs and their conversion back to dicts cost more than the objects they spare
(a 300-byte progress record: 6 µs through the table, 3 µs whole; measured on the corpus,
the two meet at about 1 KiB)."""


def header_decoder(
    msgspec: ModuleType, keep_max: int = INPUT_KEEP_BYTES, plain_max: int = PLAIN_MAX_BYTES
) -> Callable[[bytes | memoryview, bool], object]:
    """A decoder of journal lines: lines shorter than ``plain_max`` bytes whole, the others
    as :func:`project` would give them, those of at most ``keep_max`` bytes with
    :data:`KEPT_LINE`, longer ones with :data:`LINE`. It raises on whatever it cannot decode
    so (not JSON, not UTF-8, not an object, a number out of its range): the caller then asks
    the standard library."""
    kept = msgspec.json.Decoder(_struct(msgspec, KEPT_LINE, "KeptLine")).decode
    headers = msgspec.json.Decoder(_struct(msgspec, LINE, "Line")).decode
    plain = msgspec.json.Decoder().decode  # checks the UTF-8 of every string it decodes
    builtins = msgspec.to_builtins

    def decode(line: bytes | memoryview, ascii: bool = False) -> object:
        """``ascii``: the line is known to be all ASCII (the read it came from was)."""
        if len(line) < plain_max:
            return plain(line)
        if not ascii:
            data = bytes(line)
            if not data.isascii():
                check_utf8(data)  # the strings msgspec skips are checked here
        return builtins((kept if len(line) <= keep_max else headers)(line))

    return decode


UTF8_PIECE = 16 * 1024


def check_utf8(line: bytes) -> None:
    """Raise UnicodeDecodeError unless ``line`` is UTF-8, decoding only its pieces that are
    not ASCII (a few emoji in megabytes of tool output are common; decoding all of it makes
    a str four times its size).

    Sound: a piece that is not ASCII is extended over the continuation bytes that follow it
    (at most three, the longest a character goes on), so every cut but one inside a
    character falls before a byte that starts a character or is ASCII, and a character split
    anyway leaves a piece that starts with a continuation byte, which fails as the whole line
    does. An ASCII piece ends in an ASCII byte, after which a continuation byte is invalid in
    the whole line too."""
    size = len(line)
    view = memoryview(line)
    position = 0
    while position < size:
        end = position + UTF8_PIECE
        if line[position:end].isascii():
            position = end
            continue
        limit = end + 3
        while end < size and end < limit and 0x80 <= line[end] < 0xC0:
            end += 1
        str(view[position:end], "utf-8")
        position = end


def _struct(msgspec: ModuleType, spec: Spec, name: str) -> Any:
    fields = [
        (key, _typed(msgspec, sub, name + key[:1].upper() + key[1:]), msgspec.UNSET)
        for key, sub in spec.items()
    ]
    return msgspec.defstruct(name, fields)


def _typed(msgspec: ModuleType, spec: Spec | list[Spec] | None, name: str) -> Any:
    from typing import Any

    unset = msgspec.UnsetType
    scalars = str | int | float | bool | None
    if spec is None:
        return Any
    if isinstance(spec, list):
        item = _struct(msgspec, spec[0], name + "Item")
        items = list[item | scalars | list[Any]]  # type: ignore[valid-type]
        return items | scalars | dict[str, Any] | unset
    return _struct(msgspec, spec, name) | scalars | list[Any] | unset
