"""section_spans and implementation_section work on any text, and import almost nothing."""

from __future__ import annotations

import subprocess
import sys

import pytest

from plangate.plan import PlanFormatError, implementation_section, section_spans
from tests.plan.conftest import EXAMPLE

ACTIVE = (
    '<!-- plangate autoplan restore point: "/r/plan.md" -->\n'
    "# Plan: x\n\n## implementation plan\n\nfree text\n## Background\nmore\n\n"
    "```\n## Review record\n```\n## Review record\n\nnotes\n"
)


def test_spans_of_a_draft() -> None:
    spans = section_spans(ACTIVE)
    assert list(spans) == ["Implementation plan", "Review record"]
    assert implementation_section(ACTIVE) == (
        "## implementation plan\n\nfree text\n## Background\nmore\n\n```\n## Review record\n```\n"
    )
    start, end = spans["Review record"]
    assert ACTIVE[start:end] == "## Review record\n\nnotes\n"


def test_no_implementation_section() -> None:
    assert implementation_section("# Plan: x\n\n## Goal\n") is None
    assert section_spans("") == {}


def test_a_repeated_section_has_no_span() -> None:
    with pytest.raises(PlanFormatError) as caught:
        section_spans(EXAMPLE + "## Goal\n", source="active.md")
    assert str(caught.value) == (
        "active.md:47: a second `## Goal` section (the first is on line 3) "
        "(a plan has each section once; merge the two)"
    )


def test_line_endings_are_kept() -> None:
    text = "## Implementation plan\r\rx\r\n## Checks\n"
    assert implementation_section(text) == "## Implementation plan\r\rx\r\n"


def test_headings_need_a_space_and_at_most_three_spaces_of_indent() -> None:
    text = "   ## Goal\n    ## Checks\n##Checks\n## Checks ##\n"
    assert section_spans(text) == {"Goal": (0, len(text))}


HEAVY = {"re", "typing", "dataclasses", "enum", "json", "importlib.metadata"}


@pytest.mark.parametrize("module", ["plangate.plan", "plangate.plan.sections"])
def test_finding_sections_stays_cheap(module: str) -> None:
    script = (
        "import sys\nbefore = set(sys.modules)\n"
        f"import {module}\n"
        "from plangate.plan.sections import section_spans\n"
        "section_spans('## Implementation plan\\n')\n"
        "print(sorted(set(sys.modules) - before))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    loaded = set(eval(result.stdout))  # noqa: S307 - repr of a list of str from our probe
    assert loaded & HEAVY == set()
    assert {name for name in loaded if name.startswith("plangate")} <= {
        "plangate",
        "plangate.errors",
        "plangate.markdown",
        "plangate.plan",
        "plangate.plan.errors",
        "plangate.plan.sections",
    }
