"""One line per hook call, so that a call no hook decided can be told from one that was.

:func:`plangate.hook_io.runtime.run_process` (the life of every process a registered hook
command starts) keeps what the hook reads from stdin (:class:`Tee`) and the first line it
answers (:class:`Said`), and after the answer appends one content-free line to
``<state root>/analytics/hook-calls.jsonl``:

    {"ts":"2026-12-05T18:01:02.345Z","t0":"2026-12-05T18:01:02.301Z","sid":"<session>",
     "ev":"PreToolUse","tool":"Bash","id":"toolu_…","hook":"contract_pre_tool_use",
     "out":"none"}

``t0`` is when the process began its work, ``ts`` when it answered; ``out`` is ``none`` (an
empty answer), ``allow``, ``deny``, ``ask``, ``block`` (a held stop or a refused
expansion), ``warn``, ``other`` or ``silent`` (nothing written); ``code`` is the refusal's
code where the answer names one. A hook Claude Code switched off (``disableAllHooks``, its
registration removed), killed at its timeout or that died before its entry ran leaves no
line: ``plangate audit`` reports the call as unguarded.

The line is one ``os.write`` on a descriptor opened ``O_APPEND | O_NOFOLLOW`` in a folder
:meth:`plangate.state_root.StateRoot.folder` checked. Past :data:`ROTATE_BYTES` the file is
renamed to :data:`OLD_NAME` (replacing the older one), so two generations are kept and a
rename is the only extra cost. Every failure is swallowed: the trace never changes an
answer. Standard library only (hook path).
"""

from __future__ import annotations

import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO, TextIO

TRACE_DIR = "analytics"
TRACE_NAME = "hook-calls.jsonl"
OLD_NAME = "hook-calls.1.jsonl"
ROTATE_BYTES = 2 * 1024 * 1024
"""Past this size the trace becomes :data:`OLD_NAME` (about 10,000 calls a generation)."""
HEAD_BYTES = 64 * 1024
"""A payload read whole up to this is parsed; a larger one is searched (head and tail)."""
TAIL_BYTES = 4096
FIELD_MAX = 128
ANSWER_MAX = 4096
SCAN_CHUNK = 1 << 20
DRAIN_MAX_BYTES = 16 * 1024 * 1024
"""How far past what the hook read the trace reads on for the call's id."""


class Tee:
    """A binary stdin that keeps the first :data:`HEAD_BYTES` and the last
    :data:`TAIL_BYTES` of what is read through it."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        self.head = b""
        self.tail = b""
        self.size = 0
        self.ended = False

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        self._keep(data, size)
        return data

    def _keep(self, data: bytes, size: int) -> None:
        if len(self.head) < HEAD_BYTES:
            self.head += data[: HEAD_BYTES - len(self.head)]
        self.tail = (self.tail + data[-TAIL_BYTES:])[-TAIL_BYTES:]
        self.size += len(data)
        if size is None or size < 0 or len(data) < size:
            self.ended = True  # a buffered read returns short only at the end

    def drain(self, limit: int = DRAIN_MAX_BYTES) -> None:
        """Read on, at most ``limit`` bytes, what the hook left unread (the payload's tail
        holds the call's id). A payload larger still keeps its id unknown: the trace line
        then stands for its call by tool and time (:mod:`plangate.audit`)."""
        end = self.size + limit
        while not self.ended and self.size < end:
            self._keep(self.raw.read(SCAN_CHUNK), SCAN_CHUNK)

    def __getattr__(self, name: str) -> object:
        return getattr(self.raw, name)


class Stdin:
    """``sys.stdin`` with :class:`Tee` as its ``buffer``."""

    def __init__(self, wrapped: TextIO, tee: Tee) -> None:
        self.wrapped = wrapped
        self.buffer = tee

    def __getattr__(self, name: str) -> object:
        return getattr(self.wrapped, name)


class Said:
    """``sys.stdout`` that keeps the beginning of what the hook wrote."""

    def __init__(self, wrapped: TextIO) -> None:
        self.wrapped = wrapped
        self.text = ""

    def write(self, text: str) -> int:
        if len(self.text) < ANSWER_MAX:
            self.text += text[: ANSWER_MAX - len(self.text)]
        return self.wrapped.write(text)

    def flush(self) -> None:
        self.wrapped.flush()

    def __getattr__(self, name: str) -> object:
        return getattr(self.wrapped, name)


def keep() -> tuple[Tee, Said] | None:
    """Put :class:`Tee` under ``sys.stdin`` and :class:`Said` in place of ``sys.stdout``;
    None (nothing changed) where either stream is missing."""
    import sys

    try:
        stdin, stdout = sys.stdin, sys.stdout
        tee = Tee(stdin.buffer)
        said = Said(stdout)
    except AttributeError:
        return None
    sys.stdin = Stdin(stdin, tee)
    sys.stdout = said
    return tee, said


def utc(seconds: float) -> str:
    """``2026-12-05T18:01:02.345Z``: the journal's own timestamp form."""
    whole = int(seconds)
    millis = int((seconds - whole) * 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{millis:03d}Z"


def fields(tee: Tee) -> dict[str, str]:
    """The call's ``session_id``, ``hook_event_name``, ``tool_name`` and ``tool_use_id``."""
    names = ("session_id", "hook_event_name", "tool_name", "tool_use_id")
    if tee.ended and tee.size <= HEAD_BYTES:
        from plangate import jsonio

        try:
            value = jsonio.loads(tee.head.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            value = None
        if isinstance(value, dict):
            return {k: v[:FIELD_MAX] for k in names if isinstance(v := value.get(k), str)}
    tee.drain()
    found: dict[str, str] = {}
    for name in names[:3]:
        value = _search(tee.head, name, last=False)
        if value is not None:
            found[name] = value
    last = _search(tee.tail, "tool_use_id", last=True) if tee.ended else None
    if last is not None:
        found["tool_use_id"] = last
    return found


def _search(data: bytes, name: str, *, last: bool) -> str | None:
    """A top-level string field found by its key in compact JSON: inside a string every
    quote is escaped, so ``"name":"`` is always a key. The payload's own keys come before
    ``tool_input`` and ``tool_use_id`` after it."""
    key = b'"' + name.encode() + b'":"'
    at = data.rfind(key) if last else data.find(key)
    if at < 0:
        return None
    start = at + len(key)
    end = data.find(b'"', start)
    if end < 0:
        return None
    try:
        return data[start:end].decode("utf-8")[:FIELD_MAX]
    except UnicodeDecodeError:
        return None


def answer(text: str, code: int) -> tuple[str, str | None]:
    """What the hook answered (``out``) and the refusal's code, from its first line."""
    line = text.split("\n", 1)[0].strip()
    refused = None
    marker = "plangate explain "
    at = text.find(marker)
    if at >= 0:
        word = text[at + len(marker) :].lstrip("`")
        end = 0
        while end < len(word) and (word[end].isalnum() or word[end] == "_") and end < 64:
            end += 1
        refused = word[:end] or None
    if code == 2:
        return "block", refused
    if not line:
        return "silent", None
    if line == "{}":
        return "none", None
    for needle, out in (
        ('"permissionDecision":"deny"', "deny"),
        ('"permissionDecision":"ask"', "ask"),
        ('"permissionDecision":"allow"', "allow"),
        ('"decision":"block"', "block"),
        ('"systemMessage"', "warn"),
        ('"additionalContext"', "warn"),
    ):
        if needle in line:
            return out, refused if out in ("deny", "block", "ask") else None
    return "other", None


def line_of(
    tee: Tee, said: Said, code: int, module: str, began: float, now: float | None = None
) -> bytes:
    """The trace line for one call."""
    from plangate import jsonio

    got = fields(tee)
    out, refused = answer(said.text, code)
    entry: dict[str, object] = {
        "ts": utc(time.time() if now is None else now),
        "t0": utc(began),
        "sid": got.get("session_id"),
        "ev": got.get("hook_event_name"),
        "tool": got.get("tool_name"),
        "id": got.get("tool_use_id"),
        "hook": module.rsplit(".", 1)[-1][:FIELD_MAX],
        "out": out,
    }
    if refused:
        entry["code"] = refused
    return (jsonio.dumps({k: v for k, v in entry.items() if v is not None}) + "\n").encode("ascii")


def append(data: bytes, state_root: str | None = None) -> bool:
    """Append one trace line; True when written. Never raises."""
    try:
        from plangate.state_root import StateRoot

        folder = StateRoot(state_root).folder(TRACE_DIR)
        if folder.append(TRACE_NAME, data) > ROTATE_BYTES:
            folder.rename(TRACE_NAME, OLD_NAME)
        return True
    except Exception:  # noqa: BLE001 - the trace must never change an answer
        return False


def record(tee: Tee, said: Said, code: int, module: str, began: float) -> None:
    """Write the trace line for this call. Never raises."""
    try:
        append(line_of(tee, said, code, module, began))
    except Exception:  # noqa: BLE001 - the trace must never change an answer
        return


def trace_paths(state_root: str | None = None) -> list[str]:
    """The trace's files, older generation first."""
    from plangate.state_root import StateRoot

    root = StateRoot(state_root)
    return [root.file(TRACE_DIR, OLD_NAME), root.file(TRACE_DIR, TRACE_NAME)]
