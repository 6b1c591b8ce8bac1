"""Whether a Markdown text ranks the top risks.

It does when a heading (any level, ATX or setext) whose text contains ``Findings`` or ``Top
risks`` (any case) is followed, inside its section, by a numbered list that starts at 1 and
has at least one item that is not a placeholder. The section ends at the next heading of the
same or a higher level; lines in fenced code blocks are never headings or items (fences and
ATX headings by :mod:`plangate.markdown`).

An item is a placeholder when its first line is empty, only ``TBD``/``TODO``/``...``, holds a
template slot (``[risk]``, ``<The risk, in one sentence.>``; links, autolinks and ``[1]``
are not slots), or the word ``TBD`` or ``TODO``.
"""

from __future__ import annotations

from plangate import markdown

HEADING_WORDS = ("findings", "top risks")
_EMPHASIS = "*_`~"
_EMPTY_WORDS = {"", "tbd", "todo", "tba", "...", "\u2026", "n/a", "na", "none yet", "fixme"}


class Check:
    """The verdict for one text: ``ok`` and, when not, ``why`` in a few words."""

    __slots__ = ("ok", "why", "heading")

    def __init__(self, ok: bool, why: str, heading: str = "") -> None:
        self.ok = ok
        self.why = why
        self.heading = heading

    def __repr__(self) -> str:
        return f"Check(ok={self.ok!r}, why={self.why!r})"


def _atx(line: str) -> tuple[int, str] | None:
    level, text = markdown.atx_heading(line)
    return (level, text) if level else None


def _setext(line: str) -> int | None:
    stripped = line.strip()
    if len(line) - len(line.lstrip(" ")) > 3 or not stripped:
        return None
    if set(stripped) == {"="}:
        return 1
    if set(stripped) == {"-"} and len(stripped) >= 2:
        return 2
    return None


def headings(lines: list[str]) -> list[tuple[int, int, str, int]]:
    """``(line index, level, text, first body line)`` of every heading outside fenced code."""
    found: list[tuple[int, int, str, int]] = []
    fences = markdown.Fences()
    after_code = True  # the first line has no line above it to underline
    for index, line in enumerate(lines):
        if fences.code(line):
            after_code = True
            continue
        underlines_code, after_code = after_code, False
        atx = _atx(line)
        if atx is not None:
            found.append((index, atx[0], atx[1], index + 1))
            continue
        level = _setext(line)
        if level is not None and not underlines_code:
            previous = lines[index - 1]
            if (
                previous.strip()
                and _atx(previous) is None
                and _item(previous) is None
                and not previous.lstrip().startswith(("-", "*", "+", ">"))
                and (not found or found[-1][0] != index - 1)
            ):
                found.append((index - 1, level, previous.strip(), index + 1))
    return found


def _item(line: str) -> tuple[int, str] | None:
    """``(number, text)`` of an ordered list item line (indented at most 3 spaces)."""
    indent = len(line) - len(line.lstrip(" "))
    if indent > 3:
        return None
    stripped = line.strip()
    digits = 0
    while digits < len(stripped) and digits < 9 and stripped[digits].isdigit():
        digits += 1
    if digits == 0 or digits >= len(stripped) or stripped[digits] not in ".)":
        return None
    rest = stripped[digits + 1 :]
    if rest and rest[0] not in " \t":
        return None
    return int(stripped[:digits]), rest.strip()


def _bullet(line: str) -> bool:
    stripped = line.lstrip(" ")
    return len(line) - len(stripped) <= 3 and stripped[:2] in ("- ", "* ", "+ ")


def _has_slot(text: str) -> bool:
    index = 0
    while index < len(text):
        char = text[index]
        if char == "[":
            end = text.find("]", index + 1)
            if end > index:
                inner = text[index + 1 : end]
                following = text[end + 1 : end + 2]
                if following not in ("(", "[", ":") and any(ch.isalpha() for ch in inner):
                    return True
        elif char == "<":
            end = text.find(">", index + 1)
            if end > index:
                inner = text[index + 1 : end]
                url = "://" in inner or "@" in inner or inner.startswith("/")
                if inner[:1].isalpha() and not url:
                    return True
        index += 1
    return False


def is_placeholder(text: str) -> bool:
    """Whether an item's first line is a blank left from a template."""
    plain = "".join(ch for ch in text if ch not in _EMPHASIS).strip()
    if plain.lower().rstrip(".:;,!").strip() in _EMPTY_WORDS or plain.strip(".\u2026 ") == "":
        return True
    if _has_slot(plain):
        return True
    words = plain.replace(",", " ").replace(".", " ").replace(":", " ").split()
    return "TBD" in words or "TODO" in words


def _lists(lines: list[str]) -> list[tuple[int, list[str]]]:
    """Ordered lists in ``lines`` (fenced code skipped): ``(start, item first lines)``."""
    found: list[tuple[int, list[str]]] = []
    current: list[str] | None = None
    fences = markdown.Fences()
    for line in lines:
        stripped = line.strip()
        if fences.code(line):
            current = None
            continue
        item = _item(line)
        if item is not None:
            if current is None:
                current = []
                found.append((item[0], current))
            current.append(item[1])
            continue
        if not stripped or line.startswith(("  ", "\t")):
            continue  # a blank line or an item's continuation keeps the list open
        current = None
    return found


def check_text(text: str) -> Check:
    """Whether ``text`` ranks the top risks; when not, why in a few words."""
    lines = markdown.split_lines(text)
    found = headings(lines)
    matching = [entry for entry in found if any(w in entry[2].lower() for w in HEADING_WORDS)]
    if not matching:
        return Check(False, 'no heading with "Findings" or "Top risks"')
    reasons: list[str] = []
    for position, level, title, body in matching:
        end = next((p for p, lv, _, _ in found if p > position and lv <= level), len(lines))
        section = lines[body:end]
        lists = _lists(section)
        label = f'"{title}"'
        if not lists:
            if any(_bullet(line) for line in section):
                reasons.append(f"{label} has a bullet list, not a numbered list from 1")
            else:
                reasons.append(f"{label} has no numbered list")
            continue
        from_one = [items for start_number, items in lists if start_number == 1]
        if not from_one:
            reasons.append(f"the numbered list under {label} starts at {lists[0][0]}, not 1")
            continue
        if any(not is_placeholder(item) for items in from_one for item in items):
            return Check(True, "", title)
        reasons.append(f"every item under {label} is a placeholder")
    return Check(False, "; ".join(reasons))
