"""Finding the sections of a plan: lines, headings and code fences, nothing more.

This is the part of the plan format that works on any Markdown text, valid plan or not: the
phase publication guard and ``plangate autoplan`` use :func:`section_spans` and
:func:`implementation_section` on a plan being edited, so this module imports only
:mod:`plangate.markdown` and :mod:`plangate.plan.errors` (no ``re``, ``typing`` or
``dataclasses``) and is cheap enough for the hook path.

The rules, shared with the strict parser:

* Lines, code fences and headings are :mod:`plangate.markdown`'s (CommonMark's): a line ends
  at LF, CR or CRLF; a fence of three or more backticks or tildes runs to a closing line of at
  least as many of the same character, or to the end of the text; lines in a fence, the
  fence lines included, are never headings; a heading is ``#`` to ``######`` (indented by at
  most three spaces) followed by a space, a tab or the end of the line.
* Unlike CommonMark, a closing ``#`` run is part of the heading's text (``## Goal ##`` is not
  the goal section), so that every heading text survives a round trip.
* A section starts at a level-2 heading whose text is one of :data:`SECTION_NAMES` (compared
  ignoring case and runs of white space) and ends where the next such heading starts, or at
  the end of the text. Other level-2 headings do not end a section.
"""

from __future__ import annotations

from plangate import markdown
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
    return [
        Line(number, start, end, after, text[start:end])
        for number, (start, end, after) in enumerate(markdown.line_bounds(text), 1)
    ]


def heading(text: str) -> tuple[int, str]:
    """``(level, text)`` of an ATX heading line, ``(0, "")`` for any other line; a closing
    ``#`` run is kept, as the plan format wants."""
    return markdown.atx_heading(text, keep_closing=True)


def scan(text: str, *, bom: bool = True) -> Scan:
    """Split ``text`` into lines and mark code fences and headings.

    With ``bom`` (a whole document), a byte order mark opening the first line is ignored.
    """
    lines = split_lines(text)
    if bom and lines and lines[0].text.startswith(_BOM):
        lines[0].text = lines[0].text[1:]
    fences = markdown.Fences()
    for line in lines:
        if fences.code(line.text, line.number):
            line.fenced = True
            continue
        line.level, line.heading = heading(line.text)
    return Scan(lines, fences.fence, fences.opened if fences.fence else 0)


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
