"""Finding the sections of a plan: lines, headings and code fences, nothing more.

This is the part of the plan format that works on any Markdown text, valid plan or not: the
phase publication guard and ``plangate autoplan`` use :func:`section_spans` and
:func:`implementation_section` on a plan being edited, so this module imports only
:mod:`plangate.errors` (no ``re``, ``typing`` or ``dataclasses``) and is cheap enough for
the hook path.

The rules, shared with the strict parser:

* A line ends at LF, CR or CRLF.
* A fenced code block opens with a line of three or more backticks or tildes (indented by at
  most three spaces; a backtick fence's info string has no backtick) and closes with a line
  of at least as many of the same character and nothing else but spaces. An unclosed fence
  runs to the end of the text. Lines inside a fence, the fence lines included, are never
  headings.
* A heading is ``#`` to ``######`` (indented by at most three spaces) followed by a space, a
  tab or the end of the line. Closing ``#`` runs are part of the heading's text.
* A section starts at a level-2 heading whose text is one of :data:`SECTION_NAMES` (compared
  ignoring case and runs of white space) and ends where the next such heading starts, or at
  the end of the text. Other level-2 headings do not end a section.
"""

from __future__ import annotations

from plangate.plan.errors import PlanFormatError

GOAL = "Goal"
IMPLEMENTATION = "Implementation plan"
CHECKS = "Checks"
CRITERIA = "Acceptance criteria"
REVIEW = "Review record"
#: The sections of a plan, in the order a plan must have them.
SECTION_NAMES = (GOAL, IMPLEMENTATION, CHECKS, CRITERIA, REVIEW)
_BY_KEY = {name.casefold(): name for name in SECTION_NAMES}
_BOM = "\ufeff"


class Line:
    """One line of a text: where it is, its content, and what Markdown makes of it."""

    __slots__ = ("end", "fenced", "heading", "level", "next", "number", "start", "text")

    def __init__(self, number: int, start: int, end: int, next: int, text: str) -> None:
        self.number = number  # 1-based
        self.start = start  # offset of the first character
        self.end = end  # offset just past the content (before the line ending)
        self.next = next  # offset of the next line (just past the line ending)
        self.text = text  # the content, without the line ending
        self.fenced = False  # inside a fenced code block, or one of its fence lines
        self.level = 0  # heading level 1 to 6, 0 when the line is not a heading
        self.heading = ""  # the heading's text, without the #s and surrounding blanks


class Scan:
    """The lines of a text, and the line of a code fence still open at the end (or 0)."""

    __slots__ = ("fence", "fence_line", "lines")

    def __init__(self, lines: list[Line], fence: str, fence_line: int) -> None:
        self.lines = lines
        self.fence = fence  # the opening run of the fence still open at the end, or ""
        self.fence_line = fence_line


def is_blank(text: str) -> bool:
    return not text.strip()


def split_lines(text: str) -> list[Line]:
    """The lines of ``text``; a line ending at the very end does not start another line."""
    lines: list[Line] = []
    size = len(text)
    pos = 0
    next_lf = text.find("\n")
    next_cr = text.find("\r")
    while pos < size:
        if 0 <= next_lf < pos:
            next_lf = text.find("\n", pos)
        if 0 <= next_cr < pos:
            next_cr = text.find("\r", pos)
        if next_lf < 0 and next_cr < 0:
            end = after = size
        elif next_cr < 0 or 0 <= next_lf < next_cr:
            end, after = next_lf, next_lf + 1
        else:
            end = next_cr
            after = end + 2 if text.startswith("\n", end + 1) else end + 1
        lines.append(Line(len(lines) + 1, pos, end, after, text[pos:end]))
        pos = after
    return lines


def _indent(text: str) -> int:
    """Leading spaces, up to three; 4 means the line is indented code."""
    count = 0
    while count < len(text) and text[count] == " ":
        count += 1
        if count == 4:
            break
    return count


def _run(text: str, start: int, char: str) -> int:
    end = start
    while end < len(text) and text[end] == char:
        end += 1
    return end - start


def fence_opening(text: str) -> str:
    """The backtick or tilde run that opens a fenced code block on this line, or ``""``."""
    start = _indent(text)
    if start > 3 or start >= len(text) or text[start] not in "`~":
        return ""
    run = _run(text, start, text[start])
    if run < 3 or (text[start] == "`" and "`" in text[start + run :]):
        return ""
    return text[start : start + run]


def closes_fence(text: str, fence: str) -> bool:
    start = _indent(text)
    if start > 3:
        return False
    run = _run(text, start, fence[0])
    return run >= len(fence) and not text[start + run :].strip(" \t")


def heading(text: str) -> tuple[int, str]:
    """``(level, text)`` of an ATX heading line, ``(0, "")`` for any other line."""
    start = _indent(text)
    if start > 3:
        return 0, ""
    level = _run(text, start, "#")
    after = start + level
    if not 1 <= level <= 6 or (after < len(text) and text[after] not in " \t"):
        return 0, ""
    return level, text[after:].strip(" \t")


def scan(text: str, *, bom: bool = True) -> Scan:
    """Split ``text`` into lines and mark code fences and headings.

    With ``bom`` (a whole document), a byte order mark opening the first line is ignored.
    """
    lines = split_lines(text)
    if bom and lines and lines[0].text.startswith(_BOM):
        lines[0].text = lines[0].text[1:]
    fence = ""
    fence_line = 0
    for line in lines:
        if fence:
            line.fenced = True
            if closes_fence(line.text, fence):
                fence = ""
            continue
        fence = fence_opening(line.text)
        if fence:
            line.fenced = True
            fence_line = line.number
            continue
        line.level, line.heading = heading(line.text)
    return Scan(lines, fence, fence_line if fence else 0)


def section_name(heading_text: str) -> str | None:
    """The canonical name of a section heading's text, or ``None`` for another heading."""
    return _BY_KEY.get(" ".join(heading_text.split()).casefold())


def duplicate_section(name: str, line: int, first: int, source: str) -> PlanFormatError:
    return PlanFormatError(
        f"a second `## {name}` section (the first is on line {first})",
        "a plan has each section once; merge the two",
        code="duplicate_section",
        line=line,
        source=source,
    )


def section_heads(lines: list[Line], *, source: str = "<plan>") -> list[tuple[str, Line]]:
    """The section headings among ``lines``, in text order; a repeated section is an error."""
    heads: list[tuple[str, Line]] = []
    seen: dict[str, Line] = {}
    for line in lines:
        if line.level != 2:
            continue
        name = section_name(line.heading)
        if name is None:
            continue
        if name in seen:
            raise duplicate_section(name, line.number, seen[name].number, source)
        seen[name] = line
        heads.append((name, line))
    return heads


def section_spans(text: str, *, source: str = "<plan>") -> dict[str, tuple[int, int]]:
    """Where each section of ``text`` is: name → ``(start, end)`` offsets into ``text``.

    A span runs from the first character of the section's heading line to the first character
    of the next section's heading line (or the end of the text), so it includes the heading
    and the blank lines after the section's content. ``text[start:end]`` is the section's
    exact source text: hash its UTF-8 encoding to fingerprint a section. Read files with
    ``newline=""`` (or decode the bytes) so that line endings are kept as they are.

    Works on any text; sections that are missing are simply absent. Raises
    :class:`PlanFormatError` only when a section heading appears twice, because then no
    span is the right one.
    """
    heads = section_heads(scan(text).lines, source=source)
    spans: dict[str, tuple[int, int]] = {}
    for index, (name, line) in enumerate(heads):
        end = heads[index + 1][1].start if index + 1 < len(heads) else len(text)
        spans[name] = (line.start, end)
    return spans


def implementation_section(text: str, *, source: str = "<plan>") -> str | None:
    """The exact text of the ``## Implementation plan`` section, or ``None`` without one."""
    span = section_spans(text, source=source).get(IMPLEMENTATION)
    return None if span is None else text[span[0] : span[1]]
