"""Marker lines: ``PLANGATE_GATE <hook> <event> session=<id> [key=value …]``.

A value that is empty or holds a space, a quote, ``=`` or a control character is written as
a JSON string, so every marker splits back into its fields (:func:`parse`). The trace log
line carries the same fields in the contract hook's shape:
``<time> session=<id> event=<event> key=value …``.
"""

from __future__ import annotations

from plangate import jsonio

PREFIX = "PLANGATE_GATE"

FIRED = "fired"
BLOCKED = "blocked"
RELEASED = "released"
EXHAUSTED = "exhausted"
SKIPPED = "skipped"
ERROR = "error"
EVENTS = (FIRED, BLOCKED, RELEASED, EXHAUSTED, SKIPPED, ERROR)

VALUE_MAX = 300


def _value(value: object) -> str:
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, (list, tuple)):
        text = ",".join(str(item) for item in value) or "none"
    else:
        text = str(value)
    if len(text) > VALUE_MAX:
        text = text[: VALUE_MAX - 1] + "\u2026"
    if not text or any(ch in text for ch in ' "=\\') or not text.isprintable():
        return jsonio.dumps(text)
    return text


def fields_text(fields: list[tuple[str, object]]) -> str:
    return " ".join(f"{key}={_value(value)}" for key, value in fields)


class Marker:
    """One decision of one gate in one session."""

    __slots__ = ("hook", "event", "session", "fields")

    def __init__(
        self, hook: str, event: str, session: str, fields: list[tuple[str, object]]
    ) -> None:
        self.hook = hook
        self.event = event
        self.session = session
        self.fields = fields

    def __repr__(self) -> str:
        return f"Marker({self.line()!r})"

    def line(self) -> str:
        head = f"{PREFIX} {self.hook} {self.event} session={_value(self.session)}"
        rest = fields_text(self.fields)
        return f"{head} {rest}" if rest else head

    def trace_line(self, timestamp: str) -> str:
        head = f"{timestamp} session={_value(self.session)} event={self.event}"
        rest = fields_text(self.fields)
        return f"{head} {rest}" if rest else head

    def get(self, key: str) -> object:
        for name, value in self.fields:
            if name == key:
                return value
        return None


def split_fields(text: str) -> list[tuple[str, str]] | None:
    """``key=value`` pairs of a marker's tail (JSON-quoted values decoded); None if malformed."""
    pairs: list[tuple[str, str]] = []
    index = 0
    length = len(text)
    while index < length:
        if text[index] == " ":
            index += 1
            continue
        equals = text.find("=", index)
        if equals < 0:
            return None
        key = text[index:equals]
        if not key or " " in key:
            return None
        index = equals + 1
        if index < length and text[index] == '"':
            end = index + 1
            while end < length:
                if text[end] == "\\":
                    end += 2
                    continue
                if text[end] == '"':
                    break
                end += 1
            if end >= length:
                return None
            try:
                value = jsonio.loads(text[index : end + 1])
            except jsonio.JSONError:
                return None
            if not isinstance(value, str):
                return None
            pairs.append((key, value))
            index = end + 1
        else:
            end = text.find(" ", index)
            end = length if end < 0 else end
            pairs.append((key, text[index:end]))
            index = end
    return pairs


def parse(line: str) -> tuple[str, str, dict[str, str]] | None:
    """``(hook, event, fields)`` of a marker line (``session`` among the fields), else None."""
    parts = line.strip().split(" ", 3)
    if len(parts) < 4 or parts[0] != PREFIX or parts[2] not in EVENTS:
        return None
    pairs = split_fields(parts[3])
    if pairs is None or not pairs or pairs[0][0] != "session":
        return None
    return parts[1], parts[2], dict(pairs)


def find_all(text: str) -> list[str]:
    """Every marker line in ``text`` (a transcript, a log)."""
    found = []
    for line in text.splitlines():
        start = line.find(PREFIX + " ")
        if start >= 0 and parse(line[start:]) is not None:
            found.append(line[start:])
    return found
