"""An artifact's requirements checked against its file. Standard library only (hook path).

Headings are ATX headings (any level, any case) whose text contains the required words; list
items are ``-``, ``*``, ``+`` or ``1.`` items, checkboxes ``- [ ]`` / ``- [x]``; code fences
are skipped for all three and for placeholders. A placeholder made of letters (``TBD``)
counts only as a whole word; ``{{`` counts anywhere.
"""

from __future__ import annotations

from plangate import markdown
from plangate.contracts import model

MAX_BYTES = 4 * 1024 * 1024


class Shortfall:
    """Why one file falls short of its artifact (``why`` is a short phrase)."""

    __slots__ = ("path", "why")

    def __init__(self, path: str, why: str) -> None:
        self.path = path
        self.why = why

    def __repr__(self) -> str:
        return f"Shortfall({self.path!r}, {self.why!r})"

    def text(self) -> str:
        return f"{self.path}: {self.why}"


def read_text(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError:
        return None
    return data[:MAX_BYTES].decode("utf-8", errors="replace")


class Parts:
    """The prose lines of a text and what they hold."""

    __slots__ = ("headings", "items", "checked", "unchecked", "prose")

    def __init__(self, text: str) -> None:
        self.headings: list[str] = []
        self.items = 0
        self.checked = 0
        self.unchecked = 0
        self.prose: list[str] = []
        fences = markdown.Fences()
        for line in markdown.split_lines(text):
            if fences.code(line):
                continue
            self.prose.append(line)
            level, heading = markdown.atx_heading(line)
            if level:
                self.headings.append(heading.lower())
                continue
            item = _item(line)
            if item is None:
                continue
            self.items += 1
            box = item[:3]
            if box in ("[ ]",):
                self.unchecked += 1
            elif box in ("[x]", "[X]"):
                self.checked += 1


def _item(line: str) -> str | None:
    """The text after a list marker, or None when the line is no list item."""
    stripped = line.lstrip(" \t")
    if stripped[:2] in ("- ", "* ", "+ "):
        return stripped[2:].lstrip(" ")
    digits = 0
    while digits < len(stripped) and stripped[digits].isdigit():
        digits += 1
    if 0 < digits <= 9 and stripped[digits : digits + 2] in (". ", ") "):
        return stripped[digits + 2 :].lstrip(" ")
    return None


def placeholder_in(lines: list[str], placeholders: tuple[str, ...]) -> str | None:
    for line in lines:
        for mark in placeholders:
            if _holds(line, mark):
                return mark
    return None


def _holds(line: str, mark: str) -> bool:
    if not mark.isalnum():
        return mark in line
    start = line.find(mark)
    while start >= 0:
        before = line[start - 1] if start > 0 else " "
        end = start + len(mark)
        after = line[end] if end < len(line) else " "
        if not before.isalnum() and not after.isalnum():
            return True
        start = line.find(mark, start + 1)
    return False


def check(artifact: model.Artifact, path: str) -> Shortfall | None:
    """None when the file at ``path`` meets ``artifact``."""
    text = read_text(path)
    if text is None:
        return Shortfall(path, "missing")
    parts = Parts(text)
    for wanted in artifact.headings:
        if not any(wanted.lower() in heading for heading in parts.headings):
            return Shortfall(path, f"no heading containing {wanted!r}")
    if parts.items < artifact.min_items:
        return Shortfall(path, f"{parts.items} list items, at least {artifact.min_items} needed")
    boxes = parts.checked + parts.unchecked
    if boxes < artifact.min_checkboxes:
        return Shortfall(path, f"{boxes} checkboxes, at least {artifact.min_checkboxes} needed")
    mark = placeholder_in(parts.prose, artifact.placeholders)
    if mark is not None:
        return Shortfall(path, f"still holds the placeholder {mark!r}")
    if not text.strip():
        return Shortfall(path, "empty")
    return None


def unticked(path: str) -> Shortfall | None:
    """None when every checkbox of the file is ticked (and it has at least one)."""
    text = read_text(path)
    if text is None:
        return Shortfall(path, "missing")
    parts = Parts(text)
    if parts.unchecked:
        return Shortfall(
            path, f"{parts.unchecked} of {parts.unchecked + parts.checked} checkboxes unticked"
        )
    if not parts.checked:
        return Shortfall(path, "no checkboxes")
    return None
