"""wrap_plain_markdown keeps every byte of the original text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plangate.plan import (
    PlanFormatError,
    implementation_section,
    parse_plan,
    section_spans,
    validate_plan,
    wrap_plain_markdown,
)
from tests.plan.conftest import EXAMPLE

PLAIN = """\
# Add rate limiting

We need to stop password guessing.

## Steps

1. Count failed logins in `src/limits.py`.
2. Refuse the sixth.

## Testing

Run `pytest`.
"""


def test_wraps_a_plain_plan_into_a_skeleton() -> None:
    wrapped = wrap_plain_markdown(PLAIN)
    assert wrapped == (
        "# Plan: Add rate limiting\n\n## Goal\n\n## Implementation plan\n\n"
        + PLAIN
        + "\n## Checks\n\n## Acceptance criteria\n\n## Review record\n"
    )
    implementation = implementation_section(wrapped)
    assert implementation == "## Implementation plan\n\n" + PLAIN + "\n"
    start, end = section_spans(wrapped)["Implementation plan"]
    body_start = start + len("## Implementation plan\n\n")
    assert wrapped[body_start : body_start + len(PLAIN)] == PLAIN


def test_the_wrapped_draft_tells_what_to_fill_in() -> None:
    draft = "Just do it.\n"
    wrapped = wrap_plain_markdown(draft, title="Do it")
    with pytest.raises(PlanFormatError) as caught:
        parse_plan(wrapped)
    assert caught.value.code == "text_before_step"
    filled = wrapped.replace("Just do it.\n", "### Step 1: Do it\nServes: AC1\n\nJust do it.\n")
    filled = filled.replace("## Checks\n", "## Checks\n\n- `true`\n")
    filled = filled.replace("## Acceptance criteria\n", "## Acceptance criteria\n\n- AC1: done\n")
    assert validate_plan(parse_plan(filled)) == ["the goal is empty"]


def test_text_already_in_the_format_is_unchanged() -> None:
    assert wrap_plain_markdown(EXAMPLE) == EXAMPLE
    assert wrap_plain_markdown(wrap_plain_markdown(PLAIN)) == wrap_plain_markdown(PLAIN)


def test_a_missing_review_record_is_appended() -> None:
    text = EXAMPLE[: EXAMPLE.index("## Review record")].rstrip("\n")
    assert wrap_plain_markdown(text) == text + "\n\n## Review record\n"


def test_an_unclosed_fence_is_closed_after_the_original() -> None:
    text = "Plan:\n~~~~ text\n## Goal inside the fence\n"
    wrapped = wrap_plain_markdown(text)
    assert "## Implementation plan\n\n" + text + "~~~~\n\n## Checks\n" in wrapped
    assert list(section_spans(wrapped)) == [
        "Goal",
        "Implementation plan",
        "Checks",
        "Acceptance criteria",
        "Review record",
    ]


def test_titles() -> None:
    assert wrap_plain_markdown("").startswith("# Plan: Untitled plan\n")
    assert wrap_plain_markdown("### Small\n# Big\n").startswith("# Plan: Big\n")
    assert wrap_plain_markdown("### Small\n").startswith("# Plan: Small\n")
    assert wrap_plain_markdown("# Plan:  Spaced   out\n").startswith("# Plan: Spaced out\n")
    assert wrap_plain_markdown("x", title="  My\nplan ").startswith("# Plan: My plan\n")
    assert wrap_plain_markdown("", title="") == wrap_plain_markdown("")
    assert wrap_plain_markdown("") == (
        "# Plan: Untitled plan\n\n## Goal\n\n## Implementation plan\n\n## Checks\n\n"
        "## Acceptance criteria\n\n## Review record\n"
    )


def test_text_with_some_sections_but_no_implementation_plan_is_refused() -> None:
    with pytest.raises(PlanFormatError) as caught:
        wrap_plain_markdown("# T\n\n## Goal\n\nx\n\n## Steps\n", source="plan.md")
    assert caught.value.code == "cannot_wrap"
    assert str(caught.value) == (
        "plan.md:3: the text has a `## Goal` section but no `## Implementation plan` section "
        "(rename the section that holds the steps to `## Implementation plan`, or remove the "
        "plan section headings (Goal, Implementation plan, Checks, Acceptance criteria, "
        "Review record) to wrap the whole text)"
    )


_PIECES = st.sampled_from(
    ["# T", "## Steps", "## Goal", "```", "~~~", "text", "", "  indented", "\r", "\ufeff", "é"]
)


@given(
    st.lists(st.one_of(_PIECES, st.text(max_size=8)), max_size=12),
    st.sampled_from(["\n", "\r\n", "\r"]),
)
def test_the_original_text_is_always_kept(pieces: list[str], newline: str) -> None:
    text = newline.join(pieces)
    try:
        wrapped = wrap_plain_markdown(text)
    except PlanFormatError as error:
        assert error.code in {"cannot_wrap", "duplicate_section"}
        return
    implementation = implementation_section(wrapped)
    assert implementation is not None
    assert text in implementation
    assert wrapped.startswith(text) or implementation.startswith(
        "## Implementation plan\n\n" + text
    )
    assert "Review record" in section_spans(wrapped)
    assert wrap_plain_markdown(wrapped) == wrapped
