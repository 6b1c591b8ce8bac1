"""Markdown's code fences and ATX headings, by CommonMark's rules: the one detector.

The plan format, the CEO-review gate's findings check, the phase publication guard,
``plangate explain``, autoplan's scope detection and the agent answer parser all ask the
same two questions of a text: which lines are code, and which are headings. They ask them
here, so they never disagree on the same text. The rules (CommonMark 0.31, sections 4.2 and
4.5, for lines outside block quotes and list items):

* A line ends at LF, CR or CRLF.
* A **fence** opens on a line of three or more backticks or three or more tildes, indented by
  at most three spaces (a tab is four columns, so a tab before it makes indented code). The
  rest of the line is the info string; a backtick fence's info string may not hold a
  backtick (that line is inline code, not a fence), a tilde fence's may hold anything.
* It closes on a line of the same character, at least as many as opened it, indented by at
  most three spaces and followed by nothing but spaces and tabs (no info string). A fence
  never closed runs to the end of the text. The fence lines and every line between them are
  code.
* An **ATX heading** is a line outside a fence: at most three spaces, one to six ``#``, then
  a space, a tab or the end of the line. Its text is the rest, without surrounding spaces and
  tabs and without a closing run of ``#`` that follows a space or a tab (``# C#`` is "C#",
  ``## Goal ##`` is "Goal"). ``keep_closing=True`` keeps that run: the plan format does, so
  that a title ending in `` #`` survives a round trip.

* A **code span** (section 6.1) opens on a run of backticks and closes on the next run of
  exactly as many; shorter or longer runs between are content (``` ``a`b`` ``` is the code
  ``a`b``). Its line endings become spaces, and one space is stripped from each end when
  both ends have one and it is not all spaces. A run that finds no closing run is literal
  text, so an unclosed backtick never pairs with one further on. :func:`code_spans` splits a
  text into prose and code; :func:`code_span` writes one (fenced by a run longer than any
  inside it).

Not handled: block quotes and list items as containers of fences (``> ```` `` is not a
fence here), HTML blocks, setext headings (:mod:`plangate.gates.findings` reads those
itself), indented code as such (its lines are simply not fences or headings when indented
by four or more).

Hook path: standard library only, and nothing beyond builtins (no ``re``).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable


def line_bounds(text: str) -> list[tuple[int, int, int]]:
    """``(start, end, next)`` offsets of each line of ``text``: its first character, just past
    its content, and just past its line ending. A line ending at the very end of the text
    does not start another line."""
    bounds: list[tuple[int, int, int]] = []
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
        bounds.append((pos, end, after))
        pos = after
    return bounds


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` without their line endings (LF, CR or CRLF)."""
    return [text[start:end] for start, end, _ in line_bounds(text)]


def _indent(line: str) -> int:
    """Leading spaces, counted up to four (four or more: indented code, or a tab first)."""
    count = 0
    while count < 4 and count < len(line) and line[count] == " ":
        count += 1
    return count


def _run(line: str, start: int, char: str) -> int:
    end = start
    while end < len(line) and line[end] == char:
        end += 1
    return end - start


def fence_opening(line: str) -> tuple[str, str] | None:
    """``(fence, info)`` when ``line`` opens a fenced code block, else ``None``.

    ``fence`` is the run of backticks or tildes (its length is what a closing line must
    reach), ``info`` the info string without surrounding spaces and tabs.
    """
    start = _indent(line)
    if start > 3 or start >= len(line) or line[start] not in "`~":
        return None
    char = line[start]
    run = _run(line, start, char)
    if run < 3:
        return None
    rest = line[start + run :]
    if char == "`" and "`" in rest:
        return None
    return line[start : start + run], rest.strip(" \t")


def closes_fence(line: str, fence: str) -> bool:
    """Whether ``line`` closes the block that ``fence`` (an opening run) opened."""
    start = _indent(line)
    if start > 3:
        return False
    run = _run(line, start, fence[0])
    return run >= len(fence) and not line[start + run :].strip(" \t")


def atx_heading(line: str, *, keep_closing: bool = False) -> tuple[int, str]:
    """``(level, text)`` of an ATX heading line, ``(0, "")`` for any other line.

    Says nothing about fences: ask only of lines that are not code (:class:`Fences`).
    """
    start = _indent(line)
    if start > 3:
        return 0, ""
    level = _run(line, start, "#")
    after = start + level
    if not 1 <= level <= 6 or (after < len(line) and line[after] not in " \t"):
        return 0, ""
    text = line[after:].strip(" \t")
    if keep_closing:
        return level, text
    cut = len(text)
    while cut and text[cut - 1] == "#":
        cut -= 1
    if cut == 0:
        return level, ""
    if cut < len(text) and text[cut - 1] in " \t":
        return level, text[:cut].rstrip(" \t")
    return level, text


class Fences:
    """Reads lines in order and says which are code; a fence still open is in ``fence``.

    ``fence`` is the opening run of the block open now (``""`` outside one), ``info`` its
    info string and ``opened`` the number the caller gave its opening line (or -1).
    """

    __slots__ = ("fence", "info", "opened")

    def __init__(self) -> None:
        self.fence = ""
        self.info = ""
        self.opened = -1

    def code(self, line: str, number: int = -1) -> bool:
        """Whether ``line`` (the next line of the text) is code: a fence line or inside one."""
        if self.fence:
            if closes_fence(line, self.fence):
                self.fence = ""
            return True
        opening = fence_opening(line)
        if opening is None:
            return False
        self.fence, self.info = opening
        self.opened = number
        return True


def code_lines(lines: Iterable[str]) -> list[bool]:
    """For each line, whether it is code (a fence line or inside a fenced block)."""
    fences = Fences()
    return [fences.code(line) for line in lines]


def prose_lines(text: str) -> list[str]:
    """The lines of ``text`` that are not code, in order."""
    fences = Fences()
    return [line for line in split_lines(text) if not fences.code(line)]


def headings(lines: Iterable[str], *, keep_closing: bool = False) -> list[tuple[int, int, str]]:
    """``(line index, level, text)`` of every ATX heading outside fenced code."""
    found: list[tuple[int, int, str]] = []
    fences = Fences()
    for index, line in enumerate(lines):
        if fences.code(line):
            continue
        level, text = atx_heading(line, keep_closing=keep_closing)
        if level:
            found.append((index, level, text))
    return found


def _backtick_runs(text: str) -> list[tuple[int, int]]:
    """``(start, length)`` of every run of backticks in ``text``."""
    runs: list[tuple[int, int]] = []
    pos = text.find("`")
    while pos >= 0:
        length = _run(text, pos, "`")
        runs.append((pos, length))
        pos = text.find("`", pos + length)
    return runs


def _span_content(raw: str) -> str:
    content = raw.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")
    if len(content) >= 2 and content[0] == " " and content[-1] == " " and content.strip(" "):
        return content[1:-1]
    return content


def code_spans(text: str) -> list[tuple[str, bool]]:
    """``text`` as ``(piece, is_code)`` in order: prose as written, code spans' content (a
    backslash escapes nothing inside or next to one, as CommonMark says of backticks)."""
    pieces: list[tuple[str, bool]] = []
    runs = _backtick_runs(text)
    last = 0
    index = 0
    while index < len(runs):
        start, length = runs[index]
        closing = next((j for j in range(index + 1, len(runs)) if runs[j][1] == length), None)
        if closing is None:
            index += 1
            continue
        if start > last:
            pieces.append((text[last:start], False))
        end = runs[closing][0]
        pieces.append((_span_content(text[start + length : end]), True))
        last = end + length
        index = closing + 1
    if last < len(text):
        pieces.append((text[last:], False))
    merged: list[tuple[str, bool]] = []
    for piece, is_code in pieces:
        if merged and not is_code and not merged[-1][1]:
            merged[-1] = (merged[-1][0] + piece, False)
        else:
            merged.append((piece, is_code))
    return merged


def code_span(content: str) -> str:
    """``content`` as one code span: fenced by one backtick more than its longest run, with
    a space inside each end when it starts or ends with a backtick (or a space)."""
    longest = max((length for _, length in _backtick_runs(content)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if content[:1] in ("`", " ") or content[-1:] in ("`", " ") else ""
    return f"{fence}{pad}{content}{pad}{fence}"
