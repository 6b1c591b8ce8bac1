"""validate_plan: problems of a plan that parses."""

from __future__ import annotations

from plangate.plan import Check, Criterion, Plan, Step, parse_plan, validate_plan
from tests.plan.conftest import EXAMPLE


def test_the_example_has_no_problems() -> None:
    assert validate_plan(parse_plan(EXAMPLE)) == []


def test_an_empty_plan_lists_what_is_missing() -> None:
    assert validate_plan(Plan("Draft")) == [
        "the goal is empty",
        "the implementation plan has no steps",
        "no checks are declared",
        "no acceptance criteria are declared",
    ]


def test_every_content_problem() -> None:
    plan = Plan(
        title="t",
        goal="g",
        steps=(
            Step(
                2,
                "a",
                files=("src/a.py", "src/a.py", "/etc/passwd", "../up", " "),
                serves=("AC1", "AC1"),
            ),
            Step(2, "b", serves=("AC9",)),
            Step(1, "c"),
            Step(0, "d", files=("C:\\x", "~/x", "a\\..\\b")),
        ),
        checks=(
            Check("pytest", name="tests"),
            Check("pytest", name="tests"),
            Check("slow", timeout_seconds=0),
        ),
        criteria=(Criterion("AC1", "x"), Criterion("AC1", "y"), Criterion("AC2", "")),
    )
    assert validate_plan(plan) == [
        "step 2 names `src/a.py` twice",
        "step 2 names an absolute path `/etc/passwd`; paths are relative to the project",
        "step 2 names `../up`, which leaves the project",
        "step 2 names an empty path",
        "step 2 serves AC1 twice",
        "step 2 appears more than once",
        "step 2 serves AC9, which is not an acceptance criterion",
        "step 1 comes after step 2; number the steps in order",
        "step 0: step numbers start at 1",
        "step 0 names an absolute path `C:\\x`; paths are relative to the project",
        "step 0 names an absolute path `~/x`; paths are relative to the project",
        "step 0 names `a\\..\\b`, which leaves the project",
        "the check `pytest` is declared twice",
        "two checks are named `tests`",
        "the check `slow` has a timeout of 0 seconds",
        "acceptance criterion AC1 is declared twice",
        "acceptance criterion AC2 has no text",
        "no step serves acceptance criterion AC2",
    ]


def test_unrepresentable_values_are_problems_too() -> None:
    plan = parse_plan(EXAMPLE)
    broken = Plan(
        title="two\nlines",
        goal=plan.goal,
        steps=plan.steps,
        checks=plan.checks,
        criteria=plan.criteria,
    )
    assert validate_plan(broken) == ["the title has a line break"]


def test_gaps_in_step_numbers_are_allowed() -> None:
    plan = parse_plan(EXAMPLE.replace("### Step 3:", "### Step 7:"))
    assert validate_plan(plan) == []
