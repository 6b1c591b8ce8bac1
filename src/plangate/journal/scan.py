"""Pass one: read a journal record by record in bounded memory.

Only the bytes present when the file was opened are read (``[0, size)``), so records appended
while reading never fail the read. The unfinished last line is never parsed. A running digest
of every byte read lets a later read in the same hook run tell whether bytes it already saw
changed (``rewritten``). Nothing here writes to the journal. Standard library only.
"""

from __future__ import annotations

import os
import zlib

from plangate import jsonio
from plangate.journal import codes
from plangate.journal.building import EventBuilder
from plangate.journal.compact import Compactor, Foreign
from plangate.journal.records import Record, valid_version
from plangate.journal.trust import QUEUE_OPERATION, QUEUED_COMMAND, Handover

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Container

    Decoder = Callable[[bytes | memoryview, bool], object]
    """A compiled parser: a line (bytes, or a view of a read) and whether it is known ASCII."""

CHUNK_BYTES = 1024 * 1024
_BLANK = b" \t\r"


class Prefix:
    """The bytes a read covered: their length and digest, given to the next read as ``prior``."""

    __slots__ = ("size", "digest")

    def __init__(self, size: int, digest: str) -> None:
        self.size = size
        self.digest = digest

    def __repr__(self) -> str:
        return f"Prefix(size={self.size}, digest={self.digest[:12]}…)"


class ScanRefusal(Exception):
    """Pass one cannot go on: the reason code and a detail for people."""

    def __init__(self, reason: str, detail: str, record_bytes: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail
        self.record_bytes = record_bytes


class Scan:
    """What pass one found."""

    __slots__ = (
        "records",
        "lines",
        "size",
        "prefix",
        "complete",
        "first_version",
        "first_version_agent",
        "skipped",
        "stray",
        "foreign_uuids",
        "fast",
        "compactor",
        "queue",
    )

    def __init__(self) -> None:
        self.records: list[Record] = []
        self.lines = 0
        self.size = 0
        self.prefix = Prefix(0, "")
        self.complete = True
        self.first_version: str | None = None
        self.first_version_agent = False
        self.skipped = 0
        self.stray: dict[str, str] = {}
        # Other sessions' ids: a set, or hashes when compact (a yes then raises Uncompacted).
        self.foreign_uuids: set[str] | Foreign = set()
        self.fast: Decoder | None = None
        self.compactor: Compactor | None = None
        # Claude Code's queue and the queued prompts it handed over (plangate.journal.trust).
        self.queue = Handover()

    @property
    def counted(self) -> int:
        """Kept records that are not in :attr:`records` (:mod:`.compact`)."""
        return self.compactor.counted if self.compactor is not None else 0


def scan(
    fd: int,
    size: int,
    *,
    session_id: str | None,
    prior: Prefix | None,
    builder: EventBuilder,
    record_max: int = codes.RECORD_MAX_BYTES,
    start: int = 0,
    start_line: int = 0,
    start_digest: int = 0,
    fast: Decoder | None = None,
    compact: bool = False,
    known: Container[str] = (),
    last: str | None = None,
    owner: Record | None = None,
    only_session: str | None = None,
    queue: Handover | None = None,
) -> Scan:
    """Index every record of ``[start, size)`` whose session is ``session_id`` (any when
    None). A scan that goes on from a saved index starts at a line boundary, with the line
    count and the digest of the bytes before it. ``compact`` keeps no object for event-less
    records (:mod:`.compact`; its :class:`~.compact.Uncompacted` means: scan again without);
    ``known`` are the ids of the saved index it goes on from, which no rider may have,
    ``last`` its last record's id and ``owner`` what that record rides on. ``only_session``
    (a read that keeps one session's records afterwards) leaves the others out at once,
    noting only their version, where ``session_id`` would also note them as foreign.
    ``queue`` is the queue's ledger the saved index ends with (:class:`.trust.Handover`): the
    scan judges each queued prompt as it meets it (``Scan.queue.handed``)."""
    result = Scan()
    result.size = size
    result.fast = fast
    if queue is not None:
        result.queue = queue
    compactor = None
    if compact:
        compactor = result.compactor = Compactor(known, last, owner)
        compactor.ahead = size - start
        result.foreign_uuids = Foreign()
    digest = start_digest
    position = start
    carry = b""
    carry_start = 0
    oversized = -1  # length of a line being skipped because it is over record_max
    line_index = start_line
    # One buffer for every read, and lines handed on as views of it: allocating a megabyte
    # per read and copying out each line cost a cold read of 100 MB 10 to 70 ms (interleaved
    # runs on fresh processes). Nothing keeps a view past its line.
    buffer = bytearray(min(CHUNK_BYTES, max(size - position, 0)))
    window = memoryview(buffer)
    while position < size:
        got = _read_into(fd, window[: size - position], position)
        if not got:
            raise ScanRefusal(codes.IDENTITY, "the journal shrank while it was read")
        chunk = window[:got]
        if prior is not None and position < prior.size <= position + got:
            cut = prior.size - position
            digest = zlib.crc32(chunk[:cut], digest)
            if _hex(digest) != prior.digest:
                raise ScanRefusal(codes.REWRITTEN, "bytes read earlier in this hook run changed")
            digest = zlib.crc32(chunk[cut:], digest)
        else:
            digest = zlib.crc32(chunk, digest)
        # Bytes past `got` are an earlier read's: ASCII with them is ASCII without them.
        ascii = buffer.isascii()
        chunk_start = position
        position += got
        start = 0
        if oversized >= 0:
            newline = buffer.find(b"\n", 0, got)
            if newline < 0:
                oversized += got
                continue
            raise ScanRefusal(
                codes.TOO_LARGE,
                "one journal record is over the record limit",
                record_bytes=oversized + newline,
            )
        if carry:
            newline = buffer.find(b"\n", 0, got)
            if newline < 0:
                if len(carry) + got > record_max:
                    oversized = len(carry) + got
                    carry = b""
                else:
                    carry += chunk
                continue
            line = carry + chunk[:newline]
            _line(
                line,
                carry_start,
                line_index,
                result,
                session_id,
                builder,
                record_max,
                False,
                only_session,
            )
            line_index += 1
            carry = b""
            start = newline + 1
        while True:
            if compactor is not None and compactor.streak is not None:
                step = compactor.streak.length + 1
                taken = compactor.ride(buffer, start, got, line_index)
                if taken:  # that many riders read by their bytes (plangate.journal.streaks)
                    line_index += taken
                    start += taken * step
                    continue
            newline = buffer.find(b"\n", start, got)
            if newline < 0:
                break
            if newline > start:
                _line(
                    chunk[start:newline],
                    chunk_start + start,
                    line_index,
                    result,
                    session_id,
                    builder,
                    record_max,
                    ascii,
                    only_session,
                )
            line_index += 1
            start = newline + 1
        if start < got:
            carry = bytes(chunk[start:])
            carry_start = chunk_start + start
            if len(carry) > record_max:
                oversized = len(carry)
                carry = b""
    if prior is not None and prior.size > size:
        raise ScanRefusal(codes.IDENTITY, "the journal is shorter than when this hook run read it")
    if oversized >= 0:
        # An unfinished record already over the limit can never become readable.
        raise ScanRefusal(
            codes.TOO_LARGE, "one journal record is over the record limit", record_bytes=oversized
        )
    if result.compactor is not None:
        result.compactor.check()
    result.complete = not carry
    result.lines = line_index
    result.prefix = Prefix(size, _hex(digest))
    return result


def digest_of(fd: int, size: int) -> str | None:
    """The digest of the file's first ``size`` bytes, as a scan's :class:`Prefix` has it, or
    None when the file is shorter. No line is parsed: about a tenth of a full read."""
    buffer = bytearray(min(CHUNK_BYTES, size))
    window = memoryview(buffer)
    digest = 0
    position = 0
    while position < size:
        got = _read_into(fd, window[: size - position], position)
        if not got:
            return None
        digest = zlib.crc32(window[:got], digest)
        position += got
    return _hex(digest)


def _read_into(fd: int, view: memoryview, position: int) -> int:
    if _PREADV is not None:
        got: int = _PREADV(fd, [view], position)
        return got
    data = os.pread(fd, len(view), position)  # where there is no preadv (older macOS)
    view[: len(data)] = data
    return len(data)


_PREADV = getattr(os, "preadv", None)


def _hex(digest: int) -> str:
    return f"{digest:08x}"


def _line(
    line: bytes | memoryview,
    offset: int,
    index: int,
    result: Scan,
    session_id: str | None,
    builder: EventBuilder,
    record_max: int,
    ascii: bool,
    only_session: str | None = None,
) -> None:
    """One line: ``ascii`` when it is known to be all ASCII (its whole read was)."""
    if len(line) > record_max:
        raise ScanRefusal(
            codes.TOO_LARGE, "one journal record is over the record limit", record_bytes=len(line)
        )
    if line[0] in _BLANK and not bytes(line).strip(_BLANK):
        return
    raw = parse_line(line, index, result.fast, ascii)
    record_session = raw.get("sessionId")
    compactor = result.compactor
    if session_id is not None and record_session != session_id:
        result.skipped += 1
        _note_stray(raw, result, "another session")
        uuid = raw.get("uuid")
        if isinstance(uuid, str):
            result.foreign_uuids.add(uuid)
        if "uuid" in raw or "parentUuid" in raw:
            result.queue.spoke(raw, compactor)  # a conversation line, of another session
        return
    if only_session is not None and record_session != only_session:
        _note_version(raw, result)  # a read that filters afterwards would still see it
        if "uuid" in raw or "parentUuid" in raw:
            result.queue.spoke(raw, compactor)
        return
    if compactor is not None and compactor.take_raw(raw, index, result):
        if compactor.streak is None:  # perhaps the first of a run read by bytes
            fast = result.fast
            compactor.arm(line, raw, index, lambda data: parse_line(data, index, fast))
        return  # an event-less record that rides on the one before: no object
    record = Record(index, offset, len(line), raw)
    if record.agent or (record.sidechain and not record.metadata):
        _note_stray(raw, result, "a subagent record")
    # Prefer the parent session's version; a subagent file only has its own.
    if record.version is not None and (
        result.first_version is None or (result.first_version_agent and not record.agent)
    ):
        result.first_version = record.version
        result.first_version_agent = record.agent
    record.events, record.slots = builder.build(raw, record, 0)
    queue = result.queue
    if record.metadata:  # a queue line: noted before the compactor counts it
        if record.type == QUEUE_OPERATION:
            queue.note(raw)
    else:  # a conversation line: the line before the next (plangate.journal.trust)
        if record.detail == QUEUED_COMMAND:
            queue.judge(raw, index, record.events, compactor)
        queue.said = raw
        queue.said_riders = compactor.riders.count if compactor is not None else 0
    if compactor is not None and compactor.take(record):
        return
    result.records.append(record)


def _note_version(raw: dict[str, object], result: Scan) -> None:
    """The version of a record left out, as :class:`Record` would take it."""
    version = raw.get("version")
    if result.first_version is not None and not result.first_version_agent:
        return
    if version is None or not valid_version(version):
        return
    agent_id = raw.get("agentId")
    agent = agent_id is not None and agent_id != ""
    if result.first_version is None or (result.first_version_agent and not agent):
        result.first_version = version  # type: ignore[assignment]  # valid: a str
        result.first_version_agent = agent


def _note_stray(raw: dict[str, object], result: Scan, where: str) -> None:
    """Remember tool calls written outside this session's conversation: the guard must not
    mistake a call recorded there for one Claude Code has not written yet."""
    message = raw.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            tool_use_id = block.get("id")
            if isinstance(tool_use_id, str):
                result.stray[tool_use_id] = where


def parse_line(
    line: bytes | memoryview,
    index: int,
    fast: Decoder | None = None,
    ascii: bool = False,
) -> dict[str, object]:
    """One complete journal line as a JSON object, or ``malformed``. ``fast`` is a compiled
    parser (:func:`fast_parser`) tried first (told whether the line is known to be ASCII);
    whatever it does not turn into an object the standard library judges, so the verdict is
    the same with it or without it."""
    if fast is not None:
        try:
            value = fast(line, ascii)
        except Exception:  # its own error type: the standard library says what is wrong
            value = None
        if type(value) is dict:
            return value
    try:
        text = bytes(line).decode("utf-8")
    except UnicodeDecodeError:
        raise ScanRefusal(codes.MALFORMED, f"line {index + 1} is not UTF-8") from None
    try:
        value = jsonio.loads(text)
    except jsonio.JSONError:
        raise ScanRefusal(codes.MALFORMED, f"line {index + 1} is not JSON") from None
    if not isinstance(value, dict):
        raise ScanRefusal(codes.MALFORMED, f"line {index + 1} is not a JSON object")
    return value
