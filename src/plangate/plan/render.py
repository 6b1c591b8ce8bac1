"""Writing a plan: :func:`render_plan`, the one canonical text of a plan.

``parse_plan(render_plan(plan)) == plan`` for every plan ``render_plan`` accepts, and
``render_plan(parse_plan(text)) == text`` when ``text`` is already canonical. The canonical
text uses LF line endings, one blank line between blocks, both `Files:` and `Serves:` lines
under every step (`none` when empty), and always ends with the `## Review record` section.
"""

from __future__ import annotations

from plangate.plan import _inline as inline
from plangate.plan.errors import PlanFormatError
from plangate.plan.model import Check, Criterion, Plan, Step
from plangate.plan.sections import is_blank, scan


def render_plan(plan: Plan) -> str:
    """The canonical Markdown text of ``plan``.

    Raises :class:`PlanFormatError` (code ``unrepresentable``) when a value cannot be written
    so that it reads back the same, for example a title with a line break or a goal with a
    ``## `` heading line; :func:`~plangate.plan.validate_plan` lists every such problem.
    """
    problems = representation_problems(plan)
    if problems:
        raise PlanFormatError(
            f"cannot write this plan in the plan format: {problems[0]}",
            "fix the value, see docs/plan-format.md",
            code="unrepresentable",
            source="",
        )
    blocks = [f"# Plan: {plan.title}", "## Goal"]
    if plan.goal:
        blocks.append(plan.goal)
    blocks.append("## Implementation plan")
    blocks.extend(_step_blocks(step) for step in plan.steps)
    blocks.append("## Checks")
    if plan.checks:
        blocks.append("\n".join(render_check(check) for check in plan.checks))
    blocks.append("## Acceptance criteria")
    if plan.criteria:
        blocks.append("\n".join(render_criterion(c) for c in plan.criteria))
    blocks.append("## Review record")
    if plan.review_record:
        blocks.append(plan.review_record)
    return "\n\n".join(blocks) + "\n"


def render_step(step: Step) -> str:
    """The canonical text of one step, as it appears in the rendered plan (ends with LF).

    Useful as a fingerprint: two steps are equal exactly when their texts are.
    """
    problems = _step_problems(step)
    if problems:
        raise PlanFormatError(
            f"cannot write this step in the plan format: {problems[0]}",
            "fix the value, see docs/plan-format.md",
            code="unrepresentable",
            source="",
        )
    return _step_blocks(step) + "\n"


def render_check(check: Check) -> str:
    name = f"{check.name}: " if check.name is not None else ""
    timeout = f" (timeout {check.timeout_seconds}s)" if check.timeout_seconds is not None else ""
    return f"- {name}{inline.code_span(check.command)}{timeout}"


def render_criterion(criterion: Criterion) -> str:
    return f"- {criterion.id}: {criterion.text}".rstrip(" ")


def _step_blocks(step: Step) -> str:
    files = ", ".join(inline.code_span(path) for path in step.files) or inline.NONE
    serves = ", ".join(step.serves) or inline.NONE
    head = f"### Step {step.number}: {step.title}\nFiles: {files}\nServes: {serves}"
    return f"{head}\n\n{step.body}" if step.body else head


# -- what cannot be written -------------------------------------------------------------------


def _one_line(value: str) -> bool:
    return "\n" not in value and "\r" not in value


def _line_problem(what: str, value: str, *, empty_ok: bool = False) -> str | None:
    if not value.strip() and not empty_ok:
        return f"{what} is empty"
    if not _one_line(value):
        return f"{what} has a line break"
    if value != value.strip():
        return f"{what} begins or ends with white space"
    return None


def _block_problem(what: str, value: str, deepest: int) -> str | None:
    """Why free text cannot be written where headings of level ``deepest`` and up are
    structure, or ``None``."""
    if not value:
        return None
    if "\r" in value:
        return f"{what} has a carriage return"
    scanned = scan(value, bom=False)
    lines = scanned.lines
    if is_blank(lines[0].text) or is_blank(lines[-1].text) or value.endswith("\n"):
        return f"{what} begins or ends with a blank line"
    if scanned.fence_line:
        return f"{what} has a code fence that is never closed (its line {scanned.fence_line})"
    for line in lines:
        if 1 <= line.level <= deepest:
            return f"{what} has a heading `{'#' * line.level} ` line (its line {line.number})"
    return None


def _step_problems(step: Step) -> list[str]:
    what = f"step {step.number}"
    problems = []
    if step.number < 0:
        problems.append(f"{what} has a negative number")
    problem = _line_problem(f"the title of {what}", step.title)
    if problem:
        problems.append(problem)
    for path in step.files:
        if not path or not _one_line(path):
            problems.append(f"{what} names a path {path!r} that is empty or has a line break")
    for criterion_id in step.serves:
        if not inline.is_criterion_id(criterion_id):
            problems.append(f"{what} serves {criterion_id!r}, which is not a valid criterion id")
    problem = _block_problem(f"the text of {what}", step.body, 3)
    if problem:
        problems.append(problem)
    elif step.body and inline.FIELD.fullmatch(step.body.split("\n", 1)[0]):
        problems.append(f"the text of {what} begins with a `Files:` or `Serves:` line")
    return problems


def representation_problems(plan: Plan) -> list[str]:
    """Every reason ``plan`` cannot be written in the plan format so that it reads back equal."""
    problems = []
    problem = _line_problem("the title", plan.title)
    if problem:
        problems.append(problem)
    problem = _block_problem("the goal", plan.goal, 2)
    if problem:
        problems.append(problem)
    for step in plan.steps:
        problems.extend(_step_problems(step))
    for position, check in enumerate(plan.checks, 1):
        problem = _line_problem(f"the command of check {position}", check.command)
        if problem and problem.endswith("white space"):
            problem = None  # a code span keeps surrounding spaces
        if problem:
            problems.append(problem)
        if check.name is not None:
            problem = _line_problem(f"the name of check {position}", check.name)
            if problem is None and (":" in check.name or "`" in check.name):
                problem = f"the name of check {position} has a `:` or a backtick"
            if problem:
                problems.append(problem)
        if check.timeout_seconds is not None and check.timeout_seconds < 0:
            problems.append(f"check {position} has a negative timeout")
    for criterion in plan.criteria:
        if not inline.is_criterion_id(criterion.id):
            problems.append(
                f"{criterion.id!r} is not a valid criterion id (a letter, then letters, "
                "digits, `-` or `_`; not `none`)"
            )
        problem = _line_problem(f"the text of {criterion.id}", criterion.text, empty_ok=True)
        if problem:
            problems.append(problem)
    problem = _block_problem("the review record", plan.review_record, 2)
    if problem:
        problems.append(problem)
    return problems
