"""parse_plan: a full example, the values it reads, the forms it accepts."""

from __future__ import annotations

import pytest

from plangate.errors import PlangateError
from plangate.plan import (
    Check,
    Criterion,
    Plan,
    PlanFormatError,
    Step,
    parse_plan,
    render_plan,
    section_spans,
)
from tests.plan.conftest import EXAMPLE


def test_parses_the_full_example() -> None:
    plan = parse_plan(EXAMPLE)
    assert plan == Plan(
        title="Rate-limit the login endpoint",
        goal=(
            "Stop password guessing: at most five failed logins per account per minute.\n"
            "Scope: none"
        ),
        steps=(
            Step(
                number=1,
                title="Count failed logins",
                files=("src/app/limits.py", "tests/test_limits.py"),
                serves=("AC1",),
                body=(
                    "Add a sliding-window counter keyed by account.\n\n#### Notes\n\n"
                    "```python\n## inside a fence this is not a section\n```"
                ),
            ),
            Step(
                number=2,
                title="Refuse the sixth attempt",
                files=("src/app/login.py",),
                serves=("AC1", "AC2"),
                body="Return 429 with a `Retry-After` header.",
            ),
            Step(number=3, title="Document the limit"),
        ),
        checks=(Check("pytest -q", timeout_seconds=300), Check("ruff check .", name="Lint")),
        criteria=(
            Criterion("AC1", "The sixth failed login within a minute is refused."),
            Criterion("AC2", "A refused login says when to try again."),
        ),
        review_record=(
            "### Phase 1 (CEO)\nDecision: keep the scope to the login endpoint.\n"
            "Reason: API keys have their own limits."
        ),
    )
    assert render_plan(plan) == EXAMPLE


def test_section_spans_point_at_the_sections() -> None:
    plan = parse_plan(EXAMPLE)
    assert list(plan.sections) == [
        "Goal",
        "Implementation plan",
        "Checks",
        "Acceptance criteria",
        "Review record",
    ]
    texts = {name: EXAMPLE[start:end] for name, (start, end) in plan.sections.items()}
    assert texts["Goal"].startswith("## Goal\n\nStop password")
    assert texts["Goal"].endswith("Scope: none\n\n")
    assert texts["Implementation plan"].startswith("## Implementation plan\n\n### Step 1:")
    assert texts["Implementation plan"].endswith("Serves: none\n\n")
    assert (
        texts["Checks"] == "## Checks\n\n- `pytest -q` (timeout 300s)\n- Lint: `ruff check .`\n\n"
    )
    assert texts["Review record"].endswith("own limits.\n")
    assert plan.implementation_text == texts["Implementation plan"]
    # The spans tile the text after the title.
    starts = sorted(plan.sections.values())
    assert all(a[1] == b[0] for a, b in zip(starts, starts[1:], strict=False))
    assert starts[-1][1] == len(EXAMPLE)
    assert section_spans(EXAMPLE) == dict(plan.sections)


def test_spans_are_offsets_into_the_original_text_with_crlf_and_bom() -> None:
    text = "\ufeff" + EXAMPLE.replace("\n", "\r\n")
    plan = parse_plan(text)
    assert plan == parse_plan(EXAMPLE)
    start, end = plan.sections["Implementation plan"]
    assert text[start:end] == plan.implementation_text
    assert plan.implementation_text == parse_plan(EXAMPLE).implementation_text.replace("\n", "\r\n")


def test_location_is_not_part_of_equality() -> None:
    shifted = "<!-- header -->\n\n" + EXAMPLE
    assert parse_plan(shifted) == parse_plan(EXAMPLE)
    assert parse_plan(shifted).sections != parse_plan(EXAMPLE).sections
    assert hash(parse_plan(shifted)) == hash(parse_plan(EXAMPLE))


def test_a_restore_point_comment_before_the_title_is_allowed() -> None:
    text = '<!-- plangate autoplan restore point: "/r/plan-restore.md" -->\n' + EXAMPLE
    assert parse_plan(text).title == "Rate-limit the login endpoint"


def test_the_plan_format_error_is_a_plangate_error() -> None:
    with pytest.raises(PlangateError) as caught:
        parse_plan("no plan here\n", source="plan.md")
    error = caught.value
    assert isinstance(error, PlanFormatError)
    assert (error.code, error.line, error.source) == ("no_title", 1, "plan.md")
    assert error.problem == "the plan does not start with its title"
    assert error.remedy == "begin the plan with a line `# Plan: <title>`"
    assert str(error) == (
        "plan.md:1: the plan does not start with its title "
        "(begin the plan with a line `# Plan: <title>`)"
    )


LENIENT = """\
# Add rate limits

## goal
Stop guessing.

##   Implementation   Plan
### step 1 - Count
**Files:** src/limits.py, `tests/test limits.py`
**Serves**: AC1

Body.
### Step 02. Refuse
Body two.
Files: described above

## Checks
* Tests: `pytest -q` (timeout: 5m)
+ `` echo `date` `` (timeout 10)

## Acceptance criteria
- **AC1**: The sixth login
  is refused.
- AC2:

## Review record
"""


def test_accepts_lenient_spellings_and_reads_them_canonically() -> None:
    plan = parse_plan(LENIENT)
    assert plan.title == "Add rate limits"
    assert plan.goal == "Stop guessing."
    assert plan.steps == (
        Step(1, "Count", ("src/limits.py", "tests/test limits.py"), ("AC1",), "Body."),
        Step(2, "Refuse", body="Body two.\nFiles: described above"),
    )
    assert plan.checks == (
        Check("pytest -q", timeout_seconds=300, name="Tests"),
        Check("echo `date`", timeout_seconds=10),
    )
    assert plan.criteria == (Criterion("AC1", "The sixth login is refused."), Criterion("AC2", ""))
    assert plan.review_record == ""
    canonical = render_plan(plan)
    assert canonical != LENIENT
    assert parse_plan(canonical) == plan
    assert "### Step 2: Refuse\nFiles: none\nServes: none\n\nBody two." in canonical
    assert "- `` echo `date` `` (timeout 10s)" in canonical
    assert "- AC2:\n" in canonical


def test_review_record_is_optional_and_rendered_empty() -> None:
    text = EXAMPLE[: EXAMPLE.index("## Review record")]
    plan = parse_plan(text)
    assert plan.review_record == ""
    assert "Review record" not in plan.sections
    assert render_plan(plan).endswith("## Review record\n")


def test_empty_sections_parse_to_empty_values() -> None:
    text = (
        "# Plan: Draft\n\n## Goal\n\n## Implementation plan\n\n## Checks\n\n"
        "## Acceptance criteria\n\n## Review record\n"
    )
    plan = parse_plan(text)
    assert plan == Plan(title="Draft")
    assert render_plan(plan) == text
    assert plan.implementation_text == "## Implementation plan\n\n"


def test_headings_inside_fences_and_deeper_headings_are_text() -> None:
    text = EXAMPLE.replace(
        "Scope: none",
        "Scope: none\n\n~~~\n# Plan: not a title\n## Checks\n~~~\n\n### Background\n##no-space",
    )
    plan = parse_plan(text)
    assert plan.goal.endswith("~~~\n\n### Background\n##no-space")
    assert render_plan(plan) == text
