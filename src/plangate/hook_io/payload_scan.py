"""A hook payload too large to load whole, read field by field with bounded memory.

:func:`scan` walks the JSON object from the bytes already read on (then the rest of the
stream, a chunk at a time) and keeps every value, except that a string is cut to
:data:`KEEP_BYTES` of its raw JSON text (its head, or for the keys in ``tails`` its tail) and
values nested deeper than :data:`DEPTH_MAX`, or past :data:`KEPT_MAX` kept bytes in all,
are left out. After each member, and as soon as a string has been cut, it asks ``enough``
whether the fields seen so far settle the answer, and stops reading there if they do: a
call the hook does not decide costs the bytes up to its tool name, or up to the head of its
prompt, not the whole payload.

What it gives, :class:`Scan`: ``fields`` (the top-level object so far), ``cut`` (the key
paths whose strings were cut), ``ended`` (the whole object was read) and ``gave_up`` (more
than ``read_max`` bytes (:data:`READ_MAX_BYTES` by default) or :data:`VALUES_MAX` values
without settling). A payload that
is not a JSON object, or not UTF-8 where it was kept, is :class:`HookInputError`.

Hook path: standard library only (a string is skipped with ``bytes.find``, not ``re``).
"""

from __future__ import annotations

from plangate import jsonio
from plangate.hook_io.runtime import HookInputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Collection
    from typing import Any, BinaryIO

    Path = tuple[str, ...]

CHUNK_BYTES = 1024 * 1024
KEEP_BYTES = 64 * 1024
"""A string longer than this (in raw JSON bytes) keeps this much of its head or tail."""
KEPT_MAX = 4 * 1024 * 1024
DEPTH_MAX = 4
READ_MAX_BYTES = 256 * 1024 * 1024
VALUES_MAX = 100_000
_SPACE = b" \t\r\n"
_END_OF_TOKEN = b" \t\r\n,]}"
_NOT_JSON = "the hook payload is not JSON"


class Scan:
    __slots__ = ("fields", "cut", "ended", "gave_up")

    def __init__(self) -> None:
        self.fields: dict[str, Any] = {}
        self.cut: set[Path] = set()
        self.ended = False
        self.gave_up = False


class _Settled(Exception):
    """``enough`` said yes: stop reading."""


class _GiveUp(Exception):
    """Too much to read without settling."""


def scan(
    head: bytes,
    stream: BinaryIO,
    enough: Callable[[Scan], bool],
    tails: Collection[str] = (),
    read_max: int = READ_MAX_BYTES,
) -> Scan:
    """The fields of the payload whose first bytes are ``head`` (see the module docstring)."""
    return _Parser(head, stream, enough, tails, read_max).run()


def _string_end(buf: bytes, pos: int) -> tuple[int, bool]:
    """Where the string body from ``pos`` ends: (the closing quote's index, True), or (how far
    the body is surely read, False) when ``buf`` ends first. A quote closes the string when
    an even number of backslashes comes before it; a run of backslashes at the end of
    ``buf`` is left for the next read, so no run is ever split."""
    start = pos
    while True:
        quote = buf.find(b'"', pos)
        if quote < 0:
            end = len(buf)
            while end > start and buf[end - 1] == 0x5C:
                end -= 1
            return end, False
        run = quote
        while run > start and buf[run - 1] == 0x5C:
            run -= 1
        if (quote - run) % 2 == 0:
            return quote, True
        pos = quote + 1


class _Parser:
    def __init__(
        self,
        head: bytes,
        stream: BinaryIO,
        enough: Callable[[Scan], bool],
        tails: Collection[str],
        read_max: int,
    ) -> None:
        self.read_max = read_max
        self.buf = head
        self.pos = 0
        self.read = len(head)
        self.stream = stream
        self.eof = False
        self.enough = enough
        self.tails = tails
        self.values = 0
        self.kept = 0
        self.result = Scan()

    def run(self) -> Scan:
        result = self.result
        try:
            if self._peek() != 0x7B:  # {
                raise HookInputError("the hook payload is not a JSON object")
            self._object((), result.fields)
            if self._peek() != -1:
                raise HookInputError(_NOT_JSON)
            result.ended = True
        except _Settled:
            pass
        except _GiveUp:
            result.gave_up = True
        return result

    def _fill(self) -> bool:
        if self.eof:
            return False
        if self.read > self.read_max:
            raise _GiveUp
        data = self.stream.read(CHUNK_BYTES)
        if not data:
            self.eof = True
            return False
        self.buf = self.buf[self.pos :] + data
        self.pos = 0
        self.read += len(data)
        return True

    def _peek(self) -> int:
        """The next byte that is not white space (not consumed), -1 at the end."""
        while True:
            buf, pos = self.buf, self.pos
            while pos < len(buf) and buf[pos] in _SPACE:
                pos += 1
            self.pos = pos
            if pos < len(buf):
                return buf[pos]
            if not self._fill():
                return -1

    def _expect(self, byte: int) -> None:
        if self._peek() != byte:
            raise HookInputError(_NOT_JSON)
        self.pos += 1

    def _settle(self) -> None:
        if self.enough(self.result):
            raise _Settled

    def _keeps(self, path: Path) -> bool:
        return len(path) <= DEPTH_MAX and self.kept < KEPT_MAX

    def _object(self, path: Path, into: dict[str, Any] | None) -> None:
        self._expect(0x7B)
        if self._peek() == 0x7D:
            self.pos += 1
            return
        while True:
            if self._peek() != 0x22:
                raise HookInputError(_NOT_JSON)
            key = self._string(path, None, "", keys=True)
            self._expect(0x3A)
            self._value((*path, key), into, key)
            if len(path) <= 1:
                self._settle()
            following = self._peek()
            self.pos += 1
            if following == 0x7D:
                return
            if following != 0x2C:
                raise HookInputError(_NOT_JSON)

    def _array(self, path: Path, into: list[Any] | None) -> None:
        self._expect(0x5B)
        if self._peek() == 0x5D:
            self.pos += 1
            return
        index = 0
        while True:
            self._value((*path, str(index)), into, None)
            index += 1
            following = self._peek()
            self.pos += 1
            if following == 0x5D:
                return
            if following != 0x2C:
                raise HookInputError(_NOT_JSON)

    def _value(self, path: Path, into: dict[str, Any] | list[Any] | None, key: str | None) -> None:
        self.values += 1
        if self.values > VALUES_MAX:
            raise _GiveUp
        keep = into is not None and self._keeps(path)
        first = self._peek()
        value: Any
        if first == 0x7B:
            value = {} if keep else None
            _put(into, key, value, keep)
            self._object(path, value)
            return
        if first == 0x5B:
            value = [] if keep else None
            _put(into, key, value, keep)
            self._array(path, value)
            return
        if first == 0x22:
            self._string(path, into if keep else None, key, keys=False)
            return
        value = self._token()
        _put(into, key, value, keep)

    def _token(self) -> object:
        buf, start = self.buf, self.pos
        end = start
        while True:
            while end < len(buf) and buf[end] not in _END_OF_TOKEN:
                end += 1
            if end < len(buf) or not self._fill():
                break
            buf, end, start = self.buf, end - start, 0
        self.pos = end
        try:
            return jsonio.loads(self.buf[start:end].decode("ascii"))
        except (UnicodeDecodeError, jsonio.JSONError):
            raise HookInputError(_NOT_JSON) from None

    def _string(
        self, path: Path, into: dict[str, Any] | list[Any] | None, key: str | None, *, keys: bool
    ) -> str:
        """Read a string; keep it in ``into`` (cut, see the module docstring). A key is kept
        whole up to :data:`KEEP_BYTES` and returned."""
        self.pos += 1  # the opening quote
        tail = key in self.tails and len(path) == 1
        pieces: list[bytes] = []
        size = 0
        cut = False
        while True:
            end, closed = _string_end(self.buf, self.pos)
            if into is not None or keys:
                piece = self.buf[self.pos : end]
                if tail:
                    pieces.append(piece)
                    size += len(piece)
                    if size > 2 * KEEP_BYTES:
                        joined = b"".join(pieces)[-KEEP_BYTES:]
                        pieces, size, cut = [joined], len(joined), True
                elif not cut:
                    room = KEEP_BYTES - size
                    pieces.append(piece[:room])
                    size += min(room, len(piece))
                    if len(piece) > room:
                        if keys:
                            raise HookInputError("a hook payload key is over 64 KiB")
                        cut = True
                        assert into is not None
                        self._keep_cut(path, into, key, pieces, tail=False)
            self.pos = end
            if closed:
                self.pos += 1
                break
            if not self._fill():
                raise HookInputError(_NOT_JSON)
        if keys:
            return _decode(b"".join(pieces))
        if into is not None and not (cut and not tail):
            if tail and size > KEEP_BYTES:
                pieces, cut = [b"".join(pieces)[-KEEP_BYTES:]], True
            if cut:
                self._keep_cut(path, into, key, pieces, tail=True)
            else:
                self.kept += size
                _put(into, key, _decode(b"".join(pieces)), True)
        return ""

    def _keep_cut(
        self,
        path: Path,
        into: dict[str, Any] | list[Any],
        key: str | None,
        pieces: list[bytes],
        *,
        tail: bool,
    ) -> None:
        raw = b"".join(pieces)
        self.kept += len(raw)
        self.result.cut.add(path)
        _put(into, key, _decode_cut(raw, tail), True)
        self._settle()


def _put(
    into: dict[str, Any] | list[Any] | None, key: str | None, value: object, keep: bool
) -> None:
    if into is None or not keep:
        return
    if isinstance(into, list):
        into.append(value)
    else:
        assert key is not None
        into[key] = value


def _decode(raw: bytes) -> str:
    try:
        value = jsonio.loads('"' + raw.decode("utf-8") + '"')
    except (UnicodeDecodeError, jsonio.JSONError):
        raise HookInputError("the hook payload is not UTF-8 JSON") from None
    assert isinstance(value, str)
    return value


def _decode_cut(raw: bytes, tail: bool) -> str:
    """A cut string's kept part: an escape or a character split by the cut is dropped (and
    a tail's first word, which may have lost its start)."""
    for trim in range(16):
        part = raw[trim:] if tail else raw[: len(raw) - trim]
        try:
            text = jsonio.loads('"' + part.decode("utf-8") + '"')
        except (UnicodeDecodeError, jsonio.JSONError):
            continue
        assert isinstance(text, str)
        if tail:
            words = text.split(None, 1)
            return words[1] if len(words) == 2 else ""
        if text and "\ud800" <= text[-1] <= "\udbff":
            text = text[:-1]  # half of a surrogate pair the cut split
        return text
    raise HookInputError("the hook payload is not UTF-8 JSON")
