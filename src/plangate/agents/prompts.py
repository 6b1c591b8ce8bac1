"""The prompts of a run's coding agent: a step's, the fresh planner's, the review's.

Each is built from its typed request only (:mod:`plangate.agents.base`), never from a
conversation, and tells the agent how to answer (:mod:`plangate.agents.answers` reads it)::

    prompt = step_prompt(StepRequest(run_id="r1", workdir=tree, step=step, plan_text=text))

Text the prompt quotes (a plan, a task, a check's output, a diff) goes in a fenced block
longer than any run of backticks inside it, so it cannot close its own block.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from plangate.agents.base import Failure, PlanRequest, ReviewRequest, StepRequest
from plangate.plan.errors import PlanFormatError
from plangate.plan.model import Plan, Step
from plangate.plan.parse import parse_plan

__all__ = ["plan_prompt", "review_prompt", "step_prompt"]

_PLAN_FORMAT = """\
The plan format (Markdown; sections exactly these, in this order, each once):

````markdown
# Plan: <title>

## Goal

<a few sentences: what the plan achieves and why>

## Implementation plan

### Step 1: <title>
Files: `path/one.py`, `tests/test_one.py`
Serves: AC1

<what to do in this step>

### Step 2: <title>
Files: `path/two.py`
Serves: AC1, AC2

<what to do>

## Checks

- Tests: `pytest -q` (timeout 300s)

## Acceptance criteria

- AC1: <a criterion that can be verified>
- AC2: <another>

## Review record
````

Rules: `## Implementation plan` holds only steps (`### Step <n>: <title>`, numbered in
order from 1), each with its `Files:` line (paths relative to the project, in backticks, or
`none`) and `Serves:` line (criterion ids, or `none`) right under the heading, then its
text; use `####` for headings inside a step. Each check is a list item with its command in
backticks. Every acceptance criterion is served by at least one step."""


def _fence(text: str) -> str:
    """A backtick fence longer than any run of backticks in ``text``."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _block(text: str, info: str = "") -> str:
    fence = _fence(text)
    return f"{fence}{info}\n{text.rstrip()}\n{fence}"


def _criteria_lines(plan_text: str | None, step: Step) -> list[str]:
    plan: Plan | None = None
    if plan_text:
        try:
            plan = parse_plan(plan_text)
        except PlanFormatError:
            plan = None
    lines: list[str] = []
    for criterion_id in step.serves:
        criterion = plan.criterion(criterion_id) if plan is not None else None
        lines.append(f"- {criterion_id}: {criterion.text}" if criterion else f"- {criterion_id}")
    return lines


def _failure_lines(failures: Iterable[Failure]) -> list[str]:
    lines: list[str] = []
    for number, failure in enumerate(failures, 1):
        lines.append(f"{number}. ({failure.kind}) {failure.summary}")
        if failure.output_tail.strip():
            lines.append("   The end of its output:")
            lines.append(_block(failure.output_tail, "text"))
    return lines


def step_prompt(request: StepRequest) -> str:
    """The prompt of one step (or, with no step, of the bare task)."""
    parts: list[str] = []
    step = request.step
    if step is not None:
        parts.append(
            f"You are carrying out one step of an approved plan (plan version {request.version}),"
            " in this git worktree. Carry out this step and nothing else; later steps come later."
        )
        if request.plan_text:
            parts.append("The whole plan:\n\n" + _block(request.plan_text, "markdown"))
        files = ", ".join(f"`{f}`" for f in step.files) or "none"
        step_lines = [
            f"The step to carry out now: Step {step.number}: {step.title}",
            f"Files: {files}",
        ]
        criteria = _criteria_lines(request.plan_text, step)
        if criteria:
            step_lines.append("Acceptance criteria it serves:")
            step_lines.extend(criteria)
        else:
            step_lines.append("Acceptance criteria it serves: none")
        if step.body.strip():
            step_lines.append("What to do:\n\n" + step.body.strip())
        parts.append("\n".join(step_lines))
    elif request.plan_text:
        parts.append(
            f"You are finishing the change for an approved plan (plan version {request.version})"
            " in this git worktree: its steps are carried out, and what failed is below."
        )
        parts.append("The plan:\n\n" + _block(request.plan_text, "markdown"))
    else:
        parts.append("You are carrying out this task in this git worktree:")
        parts.append(_block(request.task or "(no task was given)", "text"))
    if request.feedback:
        parts.append(
            "What failed last time, to fix now:\n\n" + "\n".join(_failure_lines(request.feedback))
        )
    if request.reply:
        parts.append("The person's reply, which starts this turn:\n\n" + _block(request.reply))
    rules = [
        "Rules:",
        "- Do not commit, branch or push: the run commits each step itself.",
        "- Run the project's tests or checks if that helps you verify your work.",
        "- Change nothing outside this worktree (the main repository, its branches, your "
        "home): the run checks, and a change outside fails the step.",
    ]
    if step is not None or request.plan_text:
        rules.insert(
            1,
            "- Only touch the files this step names. Reading other files is fine; changing "
            "them is not."
            if step is not None
            else "- Only touch files the plan names. Reading other files is fine; changing "
            "them is not.",
        )
        rules.append(
            "- If the step cannot be done as written, needs a file the plan does not name, or "
            "is too large for one context, stop and end your answer with one line "
            "`ESCALATE: <why>`, naming the file or the problem."
        )
    else:
        rules.append(
            "- If the task cannot be done, stop and end your answer with one line "
            "`ESCALATE: <why>`."
        )
    rules.append(
        "- If you created a file that is evidence for an acceptance criterion (a report, "
        "an output), cite it on a line `EVIDENCE <criterion id>: <path>` (paths relative to "
        "the worktree, separated by commas)."
    )
    rules.append("- Finish with a short summary of what you changed.")
    parts.append("\n".join(rules))
    return "\n\n".join(parts) + "\n"


def plan_prompt(request: PlanRequest) -> str:
    """The fresh planner's whole prompt: built from the typed request only."""
    parts: list[str] = []
    if request.previous_plan is not None:
        parts.append(
            f"You are the planner of a coding run. The plan below did not hold. Write version "
            f"{request.version} of it: a whole new plan. You may read the project's files "
            "(Read, Grep, Glob) inside this worktree; you cannot change any, and nothing "
            "outside it can be read."
        )
        parts.append("The version that did not hold:\n\n" + _block(request.previous_plan, "plan"))
    else:
        parts.append(
            "You are the planner of a coding run. Write a plan for the task below. You may "
            "read the project's files (Read, Grep, Glob) inside this worktree; you cannot "
            "change any, and nothing outside it can be read."
        )
    if request.task:
        parts.append("The task:\n\n" + _block(request.task, "text"))
    if request.failures:
        parts.append("What failed:\n\n" + "\n".join(_failure_lines(request.failures)))
    else:
        parts.append("What failed: nothing was reported.")
    if request.changed_files:
        parts.append(
            "Files changed so far (since the run began):\n"
            + "\n".join(f"- `{name}`" for name in request.changed_files)
        )
    else:
        parts.append("Files changed so far: none.")
    if request.diff.strip():
        parts.append("The change so far:\n\n" + _block(request.diff, "diff"))
    else:
        parts.append("The change so far: empty.")
    rules = ["Rules:"]
    if request.previous_plan is not None:
        rules += [
            "- Every step that was already carried out (its work is in the change above) "
            "must stay exactly as it is: the same number, title, `Files:`, `Serves:` and "
            "text. A version that rewrites such a step, or drops a file such a step changed, "
            "is refused.",
            "- Add at least one new step after them, numbered on; the run carries on from the "
            "first step you add. Fix what failed in the new steps.",
        ]
    rules += [
        "- Answer with the whole plan in one fenced block whose info string is `plan`. If the "
        "plan itself contains ``` code blocks, open and close the block with four backticks "
        "(````plan).",
        "- If the plan cannot be fixed without a person's decision, answer instead with one "
        "line `NEEDS PERSON: <why>` and no plan.",
    ]
    parts.append("\n".join(rules))
    parts.append(_PLAN_FORMAT)
    return "\n\n".join(parts) + "\n"


def review_prompt(request: ReviewRequest) -> str:
    """The review's prompt: the plan or task, the changed files and the diff."""
    parts = [
        "You are reviewing a change a coding agent made in this git worktree. You may read "
        "the project's files (Read, Grep, Glob) inside this worktree; you cannot change any, "
        "and nothing outside it can be read."
    ]
    if request.plan_text:
        parts.append("The plan it carried out:\n\n" + _block(request.plan_text, "markdown"))
    if request.task:
        parts.append("The task:\n\n" + _block(request.task, "text"))
    parts.append(
        "Files changed:\n" + "\n".join(f"- `{name}`" for name in request.changed_files)
        if request.changed_files
        else "Files changed: none."
    )
    parts.append(
        "The change:\n\n" + _block(request.diff, "diff")
        if request.diff.strip()
        else "The change: empty."
    )
    parts.append(
        "Check that the change does what the plan or task asks, and nothing it should not. "
        "End your answer with one line: `APPROVED`, or `SEND BACK: <one-line reason>`."
    )
    return "\n\n".join(parts) + "\n"
