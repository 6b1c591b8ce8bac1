"""Inline pieces shared by the parser and the renderer: code spans, ids, labelled lines."""

from __future__ import annotations

import re

#: A criterion id: a letter, then letters, digits, ``-`` or ``_``. ``none`` is reserved.
CRITERION_ID = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
NONE = "none"

# `Files:` / `Serves:` under a step heading; `**Files:**` and `**Files**:` are accepted too.
FIELD = re.compile(
    r"(?P<em>\*\*|__)?(?P<key>files|serves)(?:(?P=em)[ \t]*:|[ \t]*:(?P=em)?)[ \t]*(?P<value>.*)",
    re.IGNORECASE,
)
LIST_ITEM = re.compile(r"[-*+][ \t]+")
CRITERION_ITEM = re.compile(
    r"[-*+][ \t]+(?P<em>\*\*|__)?(?P<id>[A-Za-z][A-Za-z0-9_-]*)"
    r"(?:(?P=em)[ \t]*:|[ \t]*:(?P=em)?)[ \t]*(?P<text>.*)"
)
TIMEOUT = re.compile(
    r"[ \t]*(?:\([ \t]*timeout(?:[ \t]*:)?[ \t]*(?P<n>[0-9]+)[ \t]*"
    r"(?:(?P<unit>s|m)[ \t]*)?\)[ \t]*)?",
    re.IGNORECASE,
)
STEP_HEADING = re.compile(
    r"step[ \t]+(?P<n>[0-9]+)(?:[ \t]*[:.\u2013\u2014-][ \t]*|[ \t]+|$)(?P<title>.*)",
    re.IGNORECASE,
)
TITLE_PREFIX = re.compile(r"plan[ \t]*:", re.IGNORECASE)
_BACKTICKS = re.compile(r"`+")


def shorten(text: str, width: int = 40) -> str:
    """``text`` cut to ``width`` characters, for quoting in a message."""
    return text if len(text) <= width else text[: width - 1] + "…"


def is_criterion_id(text: str) -> bool:
    return CRITERION_ID.fullmatch(text) is not None and text.casefold() != NONE


def read_code_span(text: str, start: int) -> tuple[str, int] | None:
    """The code span opening at ``text[start]`` (a backtick): ``(content, end)`` or ``None``.

    As in CommonMark: the span closes at the next backtick run of the same length, and one
    space is removed from each end when the content both begins and ends with a space and is
    not all spaces.
    """
    opening = _BACKTICKS.match(text, start)
    if opening is None:
        return None
    width = len(opening.group())
    for closing in _BACKTICKS.finditer(text, opening.end()):
        if len(closing.group()) == width:
            content = text[opening.end() : closing.start()]
            if len(content) >= 2 and content[0] == content[-1] == " " and content.strip(" "):
                content = content[1:-1]
            return content, closing.end()
    return None


def code_span(content: str) -> str:
    """``content`` as a code span that :func:`read_code_span` reads back exactly.

    ``content`` must be non-empty and hold no line break.
    """
    longest = max((len(run) for run in _BACKTICKS.findall(content)), default=0)
    fence = "`" * (longest + 1)
    if (
        content[0] == "`"
        or content[-1] == "`"
        or (content[0] == content[-1] == " " and content.strip(" "))
    ):
        content = f" {content} "
    return f"{fence}{content}{fence}"
