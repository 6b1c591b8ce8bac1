"""The few things the autoplan commands need from the plan format (:mod:`plangate.plan`)."""

from __future__ import annotations

from plangate.errors import PlangateError
from plangate.plan import Plan, PlanFormatError, parse_plan, validate_plan, wrap_plain_markdown
from plangate.plan.sections import implementation_section

FORMAT_REMEDY = "fix the plan so it follows docs/plan-format.md"


def decode(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise PlangateError(
            f"the plan {path} is not UTF-8 text (byte {error.start})", "save it as UTF-8"
        ) from None


def to_plan_format(text: str, path: str) -> str:
    """``text`` itself when it is in the plan format, else its plain-Markdown wrapping.

    The wrapping is a draft (its goal, checks and criteria may be empty): the review fills it
    in, and only ``gate render`` requires a complete plan.
    """
    try:
        parse_plan(text, source=path)
        return text
    except PlanFormatError:
        pass
    try:
        return wrap_plain_markdown(text, source=path)
    except PlanFormatError as error:
        raise PlangateError(
            f"the plan cannot be put in the plan format: {_one_line(error)}",
            error.remedy or FORMAT_REMEDY,
        ) from None


def parse(text: str, path: str) -> Plan:
    try:
        return parse_plan(text, source=path)
    except PlanFormatError as error:
        raise PlangateError(
            f"the active plan is not in the plan format: {_one_line(error)}",
            error.remedy or FORMAT_REMEDY,
        ) from None


def implementation_text(text: str, path: str) -> str:
    """The exact source text of the plan's ``## Implementation plan`` section.

    Works on a draft plan too (:func:`plangate.plan.sections.implementation_section`), the
    same way :func:`plangate.autoplan.layout.implementation_sha256` finds it for the guard.
    """
    try:
        implementation = implementation_section(text, source=path)
    except PlanFormatError as error:
        raise PlangateError(
            f"the active plan's sections are ambiguous: {_one_line(error)}",
            error.remedy or FORMAT_REMEDY,
        ) from None
    if implementation is None:
        raise PlangateError(
            f"the active plan {path} has no `## Implementation plan` section",
            "put the plan's steps back under a `## Implementation plan` heading",
        )
    return implementation


def check_ready(plan: Plan, path: str) -> None:
    """Refuse a plan that ``plangate run`` could not take: the first problem, and how many."""
    problems = validate_plan(plan)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise PlangateError(
            f"the active plan {path} is not ready for approval: {_one_line_text(problems[0])}"
            f"{more}",
            "fix the plan as docs/plan-format.md describes, then render the gate again",
        )


def _one_line(error: Exception) -> str:
    message = error.message if isinstance(error, PlangateError) else str(error)
    return _one_line_text(message)


def _one_line_text(text: str) -> str:
    return " ".join(text.split())


def fenced(text: str, info: str = "markdown") -> str:
    """``text`` in a fenced code block whose fence is longer than any backtick run inside."""
    longest = 0
    run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{fence}{info}\n{body}{fence}\n"
