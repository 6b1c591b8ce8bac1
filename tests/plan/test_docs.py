"""docs/plan-format.md agrees with the code."""

from __future__ import annotations

from pathlib import Path

from plangate.plan import parse_plan, render_plan, validate_plan
from tests.plan.test_errors import CASES

DOCS = (Path(__file__).parents[2] / "docs" / "plan-format.md").read_text(encoding="utf-8")


def test_the_complete_plan_in_the_docs_is_canonical_and_valid() -> None:
    start = DOCS.index("````markdown\n") + len("````markdown\n")
    example = DOCS[start : DOCS.index("````\n", start)]
    plan = parse_plan(example)
    assert render_plan(plan) == example
    assert validate_plan(plan) == []


def test_every_error_code_is_documented() -> None:
    for code in {code for code, _, _ in CASES} | {"cannot_wrap", "unrepresentable"}:
        assert f"| `{code}` |" in DOCS or f"(`{code}`)" in DOCS or f"code `{code}`" in DOCS, code


def test_every_problem_of_a_rejection_is_documented() -> None:
    for _, _, message in CASES:
        problem = message.split(": ", 1)[1].split(" (")[0]
        words = [word for word in problem.split() if word.isalpha() and len(word) > 3]
        assert all(word in DOCS for word in words), problem
