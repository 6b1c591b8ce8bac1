"""Bringing a free-form Markdown plan into the plan format: :func:`wrap_plain_markdown`."""

from __future__ import annotations

from plangate.plan import _inline as inline
from plangate.plan.errors import PlanFormatError
from plangate.plan.sections import (
    IMPLEMENTATION,
    REVIEW,
    SECTION_NAMES,
    is_blank,
    scan,
    section_heads,
)

UNTITLED = "Untitled plan"


def _separator(text: str) -> str:
    """What to append to ``text`` so that a heading can follow it: a line ending, a closing
    code fence if one is open, and a blank line."""
    if not text:
        return ""
    extra = "" if text.endswith(("\n", "\r")) else "\n"
    scanned = scan(text)
    if scanned.fence:
        extra += scanned.fence + "\n"
    lines = scan(text + extra).lines
    if not is_blank(lines[-1].text):
        extra += "\n"
    return extra


def _title(text: str) -> str:
    lines = scan(text).lines
    for wanted in (1, None):
        for line in lines:
            if line.level and (wanted is None or line.level == wanted):
                heading = line.heading
                prefix = inline.TITLE_PREFIX.match(heading)
                title = " ".join((heading[prefix.end() :] if prefix else heading).split())
                if title:
                    return title
    return UNTITLED


def wrap_plain_markdown(text: str, *, title: str | None = None, source: str = "<plan>") -> str:
    """``text`` in the plan format, with every character of ``text`` kept, in place.

    * ``text`` with a ``## Implementation plan`` section is returned as it is, with an empty
      ``## Review record`` section appended when it has none.
    * ``text`` with none of the plan's sections becomes a plan skeleton: the title (``title``,
      else the text's first heading, else ``Untitled plan``), an empty ``## Goal``, then
      ``## Implementation plan`` holding ``text`` unchanged, then empty ``## Checks``,
      ``## Acceptance criteria`` and ``## Review record`` sections.

    Only a line ending, a closing code fence (when ``text`` ends inside one) and a blank line
    are ever added after ``text``. The result is a draft: fill the sections in, then check it
    with :func:`~plangate.plan.parse_plan` and :func:`~plangate.plan.validate_plan`.

    Raises :class:`PlanFormatError` (code ``cannot_wrap``) when ``text`` has some of the
    plan's sections but no ``## Implementation plan``, because wrapping would split it, and
    (``duplicate_section``) when a section heading appears twice.
    """
    heads = section_heads(scan(text).lines, source=source)
    names = {name for name, _ in heads}
    if IMPLEMENTATION in names:
        if REVIEW in names:
            return text
        return f"{text}{_separator(text)}## {REVIEW}\n"
    if heads:
        name, line = heads[0]
        raise PlanFormatError(
            f"the text has a `## {name}` section but no `## {IMPLEMENTATION}` section",
            f"rename the section that holds the steps to `## {IMPLEMENTATION}`, or remove the "
            f"plan section headings ({', '.join(SECTION_NAMES)}) to wrap the whole text",
            code="cannot_wrap",
            line=line.number,
            source=source,
        )
    heading = " ".join(title.split()) if title is not None else _title(text)
    return (
        f"# Plan: {heading or UNTITLED}\n\n## Goal\n\n## {IMPLEMENTATION}\n\n"
        f"{text}{_separator(text)}## Checks\n\n## Acceptance criteria\n\n## {REVIEW}\n"
    )
