"""Round trips: parse_plan(render_plan(p)) == p, render_plan(parse_plan(t)) == t for canonical t,
and parse_plan never fails with anything but PlanFormatError."""

from __future__ import annotations

from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

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
from plangate.plan.render import representation_problems

FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# -- plans that are meant to be representable ----------------------------------------------

_WORDS = st.sampled_from(
    [
        "alpha", "beta", "x", "`code`", "``two`` ticks", "a,b", "#", "##tag", "#1", "Files",
        "Serves:", "none", "é", "→", "(timeout 5s)", ":", "**bold**", "- item", "1.", "<!-- c -->",
        "AC1", "Step 2:", "~~", "\\", "|", "*",
    ]
)  # fmt: skip
_LINE = st.lists(_WORDS, min_size=1, max_size=3).map(" ".join)
_FENCE = st.tuples(
    st.sampled_from(["```", "~~~", "````py"]),
    st.lists(
        st.sampled_from(["## Goal", "# Plan: no", "### Step 9: no", "```", "", "code"]),
        max_size=3,
    ),
).map(lambda fence: "\n".join([fence[0], *fence[1], fence[0].rstrip("py")]))
_BODY_LINE = st.one_of(
    _LINE,
    _FENCE,
    st.sampled_from(["", "#### Deeper", "    indented ## code", "> quote", "Notes\nFiles: x"]),
)
_GOAL_LINE = st.one_of(_BODY_LINE, st.sampled_from(["### Sub heading", "### Step 1: in goal"]))


def _block(line: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    def trim(lines: list[str]) -> str:
        text = "\n".join(lines).split("\n")
        while text and not text[0].strip():
            text.pop(0)
        while text and not text[-1].strip():
            text.pop()
        return "\n".join(text)

    return st.lists(line, max_size=4).map(trim)


_ID = st.builds(
    str.__add__,
    st.sampled_from("AaCRz"),
    st.text(st.sampled_from("C1_-9n"), max_size=3),
)
_PATH = st.one_of(
    st.sampled_from(["src/app.py", "tests/test_app.py", "a b.txt", "x`y", "`z`", "none", " s "]),
    st.text(st.characters(blacklist_characters="\r\n"), min_size=1, max_size=10),
)
_COMMAND = st.one_of(
    st.sampled_from(["pytest -q", "echo `date`", "ruff check .", " spaced ", "a`b``c"]),
    st.text(st.characters(blacklist_characters="\r\n"), min_size=1, max_size=12).filter(str.strip),
)
_NAME = st.one_of(st.none(), st.sampled_from(["Tests", "Lint (fast)", "é-check"]))


@st.composite
def plans(draw: st.DrawFn) -> Plan:
    steps = tuple(
        Step(
            number=draw(st.integers(0, 30)),
            title=draw(_LINE),
            files=tuple(draw(st.lists(_PATH, max_size=3))),
            serves=tuple(draw(st.lists(_ID, max_size=3))),
            body=draw(_block(_BODY_LINE)),
        )
        for _ in range(draw(st.integers(0, 3)))
    )
    checks = tuple(
        Check(draw(_COMMAND), draw(st.none() | st.integers(0, 10_000)), draw(_NAME))
        for _ in range(draw(st.integers(0, 3)))
    )
    criteria = tuple(
        Criterion(draw(_ID), draw(st.just("") | _LINE)) for _ in range(draw(st.integers(0, 3)))
    )
    return Plan(
        title=draw(_LINE),
        goal=draw(_block(_GOAL_LINE)),
        steps=steps,
        checks=checks,
        criteria=criteria,
        review_record=draw(_block(_GOAL_LINE)),
    )


@FAST
@given(plans())
def test_render_then_parse_gives_the_plan_back(plan: Plan) -> None:
    assume(not representation_problems(plan))
    text = render_plan(plan)
    parsed = parse_plan(text)
    assert parsed == plan
    assert render_plan(parsed) == text
    start, end = parsed.sections["Implementation plan"]
    assert parsed.implementation_text == text[start:end]
    assert section_spans(text) == dict(parsed.sections)


# -- any plan value at all -------------------------------------------------------------------

_ANY_TEXT = st.text(max_size=12)


@st.composite
def any_plans(draw: st.DrawFn) -> Plan:
    return Plan(
        title=draw(_ANY_TEXT),
        goal=draw(_ANY_TEXT),
        steps=tuple(
            draw(
                st.lists(
                    st.builds(
                        Step,
                        st.integers(-1, 5),
                        _ANY_TEXT,
                        st.lists(_ANY_TEXT, max_size=2).map(tuple),
                        st.lists(_ANY_TEXT, max_size=2).map(tuple),
                        _ANY_TEXT,
                    ),
                    max_size=2,
                )
            )
        ),
        checks=tuple(
            draw(
                st.lists(
                    st.builds(
                        Check, _ANY_TEXT, st.none() | st.integers(-1, 5), st.none() | _ANY_TEXT
                    ),
                    max_size=2,
                )
            )
        ),
        criteria=tuple(draw(st.lists(st.builds(Criterion, _ANY_TEXT, _ANY_TEXT), max_size=2))),
        review_record=draw(_ANY_TEXT),
    )


@FAST
@given(any_plans())
def test_render_either_refuses_or_round_trips(plan: Plan) -> None:
    try:
        text = render_plan(plan)
    except PlanFormatError as error:
        assert error.code == "unrepresentable"
        assert representation_problems(plan)
        return
    assert parse_plan(text) == plan


# -- any text at all ---------------------------------------------------------------------------

_PLAN_LINES = st.sampled_from(
    [
        "# Plan: t", "# t", "#", "## Goal", "##  goal ", "## Implementation plan", "## Checks",
        "## Acceptance criteria", "## Review record", "## Other", "### Step 1: a", "### Step 2",
        "### Step x", "### step 3 - b", "#### deep", "Files: `a`, b", "Files: none", "Files:",
        "**Files:** `x`", "Serves: AC1", "Serves: none", "Serves: AC1, x", "- `cmd` (timeout 3s)",
        "- n: `c`", "- `c` (timeout 2m)", "- AC1: text", "- AC2:", "  continued", "```", "~~~",
        "````", "", " ", "text", "<!-- c -->", "\ufeff# Plan: b", "- none: x", "* `` a`b ``",
    ]
)  # fmt: skip
_SKELETON = [
    "# Plan: t", "## Goal", "g", "## Implementation plan", "### Step 1: s", "## Checks",
    "- `c`", "## Acceptance criteria", "- AC1: x", "## Review record",
]  # fmt: skip


@st.composite
def texts(draw: st.DrawFn) -> str:
    skeleton = draw(st.integers(0, 9)) > 0
    lines = list(_SKELETON) if skeleton else []
    for _ in range(draw(st.integers(0, 4 if skeleton else 8))):
        piece = draw(st.one_of(_PLAN_LINES, st.text(max_size=6)))
        lines.insert(draw(st.integers(2 if skeleton else 0, len(lines))), piece)
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    return newline.join(lines) + draw(st.sampled_from(["", newline]))


@settings(max_examples=200, deadline=None)
@given(texts())
def test_parse_fails_only_with_plan_format_errors_and_what_parses_round_trips(text: str) -> None:
    try:
        plan = parse_plan(text)
    except PlanFormatError as error:
        assert error.line is None or error.line >= 1
        assert error.remedy
        event(f"rejected: {error.code}")
        return
    event("parsed")
    assert not representation_problems(plan)
    canonical = render_plan(plan)
    assert parse_plan(canonical) == plan
    assert render_plan(parse_plan(canonical)) == canonical
    assert section_spans(text) == dict(plan.sections)
    start, end = plan.sections["Implementation plan"]
    assert plan.implementation_text == text[start:end]
    assert text[start:end].lstrip(" ").startswith("##")
