"""What is wrong with a plan that parses: :func:`validate_plan`."""

from __future__ import annotations

from plangate.plan.model import Plan
from plangate.plan.render import representation_problems


def _outside_project(path: str) -> str | None:
    if path.startswith(("/", "\\", "~")) or (len(path) >= 2 and path[1] == ":"):
        return f"an absolute path `{path}`; paths are relative to the project"
    if ".." in path.replace("\\", "/").split("/"):
        return f"`{path}`, which leaves the project"
    return None


def validate_plan(plan: Plan) -> list[str]:
    """Every problem that keeps ``plan`` from being run, in plan order; ``[]`` when none.

    Parsing checks the shape of the text; this checks the content: that there are steps,
    checks and criteria, that numbers and ids are unique, that every criterion a step serves
    exists and every criterion is served, and that every value can be written in the plan
    format (see :func:`~plangate.plan.render.representation_problems`).
    """
    problems = representation_problems(plan)
    criterion_ids = {criterion.id for criterion in plan.criteria}

    if not plan.goal.strip():
        problems.append("the goal is empty")

    if not plan.steps:
        problems.append("the implementation plan has no steps")
    seen_steps: set[int] = set()
    previous: int | None = None
    for step in plan.steps:
        name = f"step {step.number}"
        if step.number in seen_steps:
            problems.append(f"{name} appears more than once")
        elif step.number == 0:
            problems.append("step 0: step numbers start at 1")
        elif previous is not None and step.number < previous:
            problems.append(f"{name} comes after step {previous}; number the steps in order")
        seen_steps.add(step.number)
        previous = step.number if previous is None else max(previous, step.number)
        seen_paths: set[str] = set()
        for path in step.files:
            if not path.strip():
                problems.append(f"{name} names an empty path")
                continue
            if path in seen_paths:
                problems.append(f"{name} names `{path}` twice")
            seen_paths.add(path)
            outside = _outside_project(path)
            if outside:
                problems.append(f"{name} names {outside}")
        seen_ids: set[str] = set()
        for criterion_id in step.serves:
            if criterion_id in seen_ids:
                problems.append(f"{name} serves {criterion_id} twice")
            elif criterion_id not in criterion_ids:
                problems.append(
                    f"{name} serves {criterion_id}, which is not an acceptance criterion"
                )
            seen_ids.add(criterion_id)

    if not plan.checks:
        problems.append("no checks are declared")
    seen_commands: set[str] = set()
    seen_names: set[str] = set()
    for check in plan.checks:
        if not check.command.strip():
            continue  # reported as unrepresentable
        if check.command in seen_commands:
            problems.append(f"the check `{check.command}` is declared twice")
        seen_commands.add(check.command)
        if check.name is not None:
            if check.name in seen_names:
                problems.append(f"two checks are named `{check.name}`")
            seen_names.add(check.name)
        if check.timeout_seconds == 0:
            problems.append(f"the check `{check.command}` has a timeout of 0 seconds")

    if not plan.criteria:
        problems.append("no acceptance criteria are declared")
    served = {criterion_id for step in plan.steps for criterion_id in step.serves}
    seen_criteria: set[str] = set()
    for criterion in plan.criteria:
        if criterion.id in seen_criteria:
            problems.append(f"acceptance criterion {criterion.id} is declared twice")
            continue
        seen_criteria.add(criterion.id)
        if not criterion.text.strip():
            problems.append(f"acceptance criterion {criterion.id} has no text")
        if criterion.id not in served:
            problems.append(f"no step serves acceptance criterion {criterion.id}")
    return problems
