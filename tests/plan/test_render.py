"""render_plan and render_step: the canonical text, and values it refuses to write."""

from __future__ import annotations

import pytest

from plangate.plan import Check, Criterion, Plan, PlanFormatError, Step, parse_plan, render_plan
from plangate.plan.render import render_step
from tests.plan.conftest import EXAMPLE


def test_render_of_a_built_plan() -> None:
    plan = Plan(
        title="Tidy up",
        goal="Less code.",
        steps=(Step(1, "Delete dead code", ("src/old.py",), ("AC1",)),),
        checks=(Check("pytest", timeout_seconds=60, name="Tests"),),
        criteria=(Criterion("AC1", "Nothing imports `old`."),),
    )
    assert render_plan(plan) == (
        "# Plan: Tidy up\n\n## Goal\n\nLess code.\n\n## Implementation plan\n\n"
        "### Step 1: Delete dead code\nFiles: `src/old.py`\nServes: AC1\n\n"
        "## Checks\n\n- Tests: `pytest` (timeout 60s)\n\n"
        "## Acceptance criteria\n\n- AC1: Nothing imports `old`.\n\n## Review record\n"
    )
    assert parse_plan(render_plan(plan)) == plan


def test_render_step_is_the_steps_text_in_the_plan() -> None:
    plan = parse_plan(EXAMPLE)
    for step in plan.steps:
        assert render_step(step) in EXAMPLE
    assert render_step(plan.steps[2]) == (
        "### Step 3: Document the limit\nFiles: none\nServes: none\n"
    )


def test_code_spans_keep_backticks_and_spaces() -> None:
    step = Step(1, "t", files=("a`b", "`x`", " padded ", "none", "a, b"))
    text = render_step(step)
    assert text.splitlines()[1] == "Files: ``a`b``, `` `x` ``, `  padded  `, `none`, `a, b`"
    plan = Plan("p", steps=(step,))
    assert parse_plan(render_plan(plan)) == plan


@pytest.mark.parametrize(
    ("plan", "problem"),
    [
        (Plan(""), "the title is empty"),
        (Plan("a\nb"), "the title has a line break"),
        (Plan(" a"), "the title begins or ends with white space"),
        (Plan("t", goal="## Goal two"), "the goal has a heading `## ` line (its line 1)"),
        (Plan("t", goal="\nx"), "the goal begins or ends with a blank line"),
        (Plan("t", goal="x\n"), "the goal begins or ends with a blank line"),
        (Plan("t", goal="```\nx"), "the goal has a code fence that is never closed (its line 1)"),
        (Plan("t", goal="a\r\nb"), "the goal has a carriage return"),
        (
            Plan("t", steps=(Step(1, "s", body="### Sub"),)),
            "the text of step 1 has a heading `### ` line (its line 1)",
        ),
        (
            Plan("t", steps=(Step(1, "s", body="Files: x"),)),
            "the text of step 1 begins with a `Files:` or `Serves:` line",
        ),
        (Plan("t", steps=(Step(-1, "s"),)), "step -1 has a negative number"),
        (Plan("t", steps=(Step(1, ""),)), "the title of step 1 is empty"),
        (
            Plan("t", steps=(Step(1, "s", files=("",)),)),
            "step 1 names a path '' that is empty or has a line break",
        ),
        (
            Plan("t", steps=(Step(1, "s", serves=("AC 1",)),)),
            "step 1 serves 'AC 1', which is not a valid criterion id",
        ),
        (Plan("t", checks=(Check(" "),)), "the command of check 1 is empty"),
        (Plan("t", checks=(Check("a\nb"),)), "the command of check 1 has a line break"),
        (
            Plan("t", checks=(Check("a", name="x:y"),)),
            "the name of check 1 has a `:` or a backtick",
        ),
        (Plan("t", checks=(Check("a", name=""),)), "the name of check 1 is empty"),
        (Plan("t", checks=(Check("a", -1),)), "check 1 has a negative timeout"),
        (
            Plan("t", criteria=(Criterion("none", "x"),)),
            "'none' is not a valid criterion id (a letter, then letters, digits, `-` or `_`; "
            "not `none`)",
        ),
        (
            Plan("t", criteria=(Criterion("AC1", "x\ny"),)),
            "the text of AC1 has a line break",
        ),
        (
            Plan("t", review_record="# Another title"),
            "the review record has a heading `# ` line (its line 1)",
        ),
    ],
)
def test_render_refuses_what_cannot_be_read_back(plan: Plan, problem: str) -> None:
    with pytest.raises(PlanFormatError) as caught:
        render_plan(plan)
    assert caught.value.code == "unrepresentable"
    assert str(caught.value) == (
        f"cannot write this plan in the plan format: {problem} "
        "(fix the value, see docs/plan-format.md)"
    )


def test_commands_keep_surrounding_spaces() -> None:
    plan = Plan("t", checks=(Check(" make  test"),))
    assert "- ` make  test`" in render_plan(plan)
    assert parse_plan(render_plan(plan)) == plan
