"""Reading a coding agent's final answer: a step's, the planner's, the review's.

Each answer is plain text (Markdown) ending in a verdict line; a marker inside a fenced code
block never counts (:mod:`plangate.markdown` finds the fences)::

    parse_step_answer("Done.\nESCALATE: needs `src/other.py`")   # status "escalate"
    parse_plan_answer("```plan\n# Plan: …\n```")                 # plan_text "# Plan: …"
    parse_review_answer("Looks right.\nAPPROVED")                 # approved

* A **step** escalates with a line ``ESCALATE: <why>`` and cites evidence with lines
  ``EVIDENCE AC1: `path```.
* The **planner** answers with the whole plan in a fenced ``plan`` block, or a line
  ``NEEDS PERSON: <why>``.
* The **review** answers with a line ``APPROVED`` or ``SEND BACK: <why>``; an answer with
  neither is sent back (no verdict is no approval).

A marker may carry Markdown decoration (quote, bullet, emphasis, heading, code span).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from plangate import markdown
from plangate.agents.base import PlanOutcome, ReviewOutcome, StepOutcome
from plangate.plan.errors import PlanFormatError
from plangate.plan.parse import parse_plan

__all__ = [
    "extract_plan_block",
    "parse_plan_answer",
    "parse_review_answer",
    "parse_step_answer",
]

#: Markdown decoration a marker line may carry: quote, list bullet, emphasis, heading, code.
_DECOR = r"[>*_`#\-\s]*"


def _marker(keyword: str) -> re.Pattern[str]:
    return re.compile(rf"^{_DECOR}{keyword}{_DECOR}:{_DECOR}(?P<rest>.*?)(?P<tail>[*_`\s]*)$")


def _marker_text(match: re.Match[str]) -> str:
    """The marker's text without trailing decoration, keeping a backtick that closes a code
    span the text opened (``rename `foo` `` keeps its last backtick; a line wrapped in
    backticks as a whole loses the wrapping one)."""
    rest = match.group("rest")
    if rest.count("`") % 2 == 1 and "`" in match.group("tail"):
        rest += "`"
    return rest


_ESCALATE = _marker("ESCALATE")
_NEEDS_PERSON = _marker("NEEDS PERSON")
_SEND_BACK = _marker("SEND BACK")
_APPROVED = re.compile(rf"^{_DECOR}(?:APPROVED?\b|(?i:approved?)[.!]?[*_`\s]*$)")
_EVIDENCE = re.compile(
    rf"^{_DECOR}EVIDENCE[ \t]+(?P<id>[A-Za-z][A-Za-z0-9_-]*){_DECOR}:[ \t]*(?P<paths>.*?)\s*$"
)


def _lines_outside_fences(text: str) -> list[str]:
    """The answer's lines that are not inside a fenced code block (CommonMark's fences)."""
    return markdown.prose_lines(text)


def _last_marker(text: str, pattern: re.Pattern[str]) -> str | None:
    """The text after the last marker line outside code fences (``""`` if it says nothing)."""
    found: str | None = None
    for line in _lines_outside_fences(text):
        match = pattern.match(line)
        if match:
            found = " ".join(_marker_text(match).split())
    return found


def _evidence(text: str) -> Mapping[str, tuple[str, ...]]:
    cited: dict[str, list[str]] = {}
    for line in _lines_outside_fences(text):
        match = _EVIDENCE.match(line)
        if not match:
            continue
        paths = cited.setdefault(match.group("id"), [])
        for part in match.group("paths").split(","):
            path = part.strip().strip("`").strip()
            if path and path not in paths:
                paths.append(path)
    return {k: tuple(v) for k, v in cited.items() if v}


def parse_step_answer(text: str) -> StepOutcome:
    """A step's final answer: ``escalate`` when a line says ``ESCALATE: <why>``, else
    ``done``; ``EVIDENCE <criterion>: <path>, ...`` lines become the cited evidence."""
    reason = _last_marker(text, _ESCALATE)
    evidence = _evidence(text)
    if reason is not None:
        return StepOutcome(
            status="escalate",
            message=text,
            escalation=reason or "the agent escalated without saying why",
            evidence=evidence,
        )
    return StepOutcome(status="done", message=text, escalation=None, evidence=evidence)


def _plan_blocks(lines: Sequence[str]) -> list[tuple[int, list[int]]]:
    """Each fenced block whose info string is ``plan``: (the opening line, the lines that
    could close it, the most likely first)."""
    blocks: list[tuple[int, list[int]]] = []
    index = 0
    while index < len(lines):
        opening = markdown.fence_opening(lines[index])
        info = opening[1].split() if opening else []
        if not opening or not info or info[0].lower() != "plan":
            index += 1
            continue
        fence = opening[0]
        nested = 0
        likely: int | None = None
        bare: list[int] = []
        for j in range(index + 1, len(lines)):
            match = markdown.fence_opening(lines[j])
            if not match or match[0][0] != fence[0]:
                continue
            if match[1]:
                nested += 1  # a closing fence has no info string: this opens a code block
            elif len(match[0]) >= len(fence):
                bare.append(j)
                if nested:
                    nested -= 1
                elif likely is None:
                    likely = j
        closes = ([likely] if likely is not None else []) + [j for j in reversed(bare)]
        blocks.append((index, list(dict.fromkeys(closes))))
        index = (likely if likely is not None else len(lines)) + 1
    return blocks


def _parses(text: str) -> bool:
    try:
        parse_plan(text)
    except PlanFormatError:
        return False
    return True


def extract_plan_block(text: str) -> tuple[str, tuple[int, int]] | None:
    """The plan in the answer's (last) fenced ``plan`` block, and the block's line range.

    A plan's own code blocks may use the same fence as the block around it; of the possible
    ends, the first that gives a plan ``parse_plan`` accepts is taken, else the most likely.
    An answer with no ``plan`` block but a plan from a ``# Plan:`` line on that parses is
    accepted too. ``None`` when there is no plan at all.
    """
    lines = text.splitlines()
    blocks = _plan_blocks(lines)
    if blocks:
        start, closes = blocks[-1]
        if not closes:  # never closed: the rest of the answer
            return _joined(lines[start + 1 :]), (start, len(lines))
        for end in closes:
            body = _joined(lines[start + 1 : end])
            if _parses(body):
                return body, (start, end + 1)
        end = closes[0]
        return _joined(lines[start + 1 : end]), (start, end + 1)
    for index, line in enumerate(lines):
        if re.match(r"^#[ \t]+Plan[ \t]*:", line):
            body = _joined(lines[index:])
            if _parses(body):
                return body, (index, len(lines))
            break
    return None


def _joined(lines: Sequence[str]) -> str:
    return "\n".join(lines).strip("\n") + "\n"


def parse_plan_answer(text: str) -> PlanOutcome:
    """The planner's answer: ``NEEDS PERSON: <why>`` (outside the plan) wins; else the plan
    in its fenced ``plan`` block; else neither (the planner wrote no usable version)."""
    found = extract_plan_block(text)
    outside = text
    if found is not None:
        lines = text.splitlines()
        start, end = found[1]
        outside = "\n".join(lines[:start] + lines[end:])
    needs = _last_marker(outside, _NEEDS_PERSON)
    if needs is not None:
        return PlanOutcome(
            plan_text=None,
            needs_person=needs or "the planner says a person must decide, without saying why",
            message=text,
        )
    return PlanOutcome(plan_text=found[0] if found else None, needs_person=None, message=text)


def parse_review_answer(text: str) -> ReviewOutcome:
    """The review's answer: sent back when a line says ``SEND BACK: <why>``, approved when a
    line says ``APPROVED``; an answer with neither is sent back (no verdict is no approval)."""
    reason = _last_marker(text, _SEND_BACK)
    if reason is not None:
        return ReviewOutcome(
            approved=False,
            reason=reason or "the review sent it back without saying why",
            message=text,
        )
    if any(_APPROVED.match(line) for line in _lines_outside_fences(text)):
        return ReviewOutcome(approved=True, reason="", message=text)
    return ReviewOutcome(
        approved=False,
        reason="the review gave no verdict (no `APPROVED` or `SEND BACK:` line)",
        message=text,
    )
