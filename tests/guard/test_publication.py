"""Recognising a published phase report in assistant text."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.guard.publication import declared_numbers, declares, parse_declaration


@pytest.mark.parametrize(
    ("text", "phase"),
    [
        ("Phase 1 complete", "ceo"),
        ("Phase 1 complete.", "ceo"),
        ("**Phase 1 complete**", "ceo"),
        ("**Phase 1 complete.**", "ceo"),
        ("Phase 1 (CEO) is complete.", "ceo"),
        ("## Phase 2.5 DX review complete", "dx"),
        ("Phase 2 (Design) complete", "design"),
        ("Phase 3 done: all findings applied", "eng"),
        ("Phase 3 (engineering) finished.", "eng"),
        ("Phase 1 complete \u2014 findings applied to the plan", "ceo"),
        ("phase 1 COMPLETED", "ceo"),
        ("Findings are in the plan.\n\nPhase 1 complete\n\nNext: Design.", "ceo"),
    ],
)
def test_declarations_that_count(text: str, phase: str) -> None:
    assert declares(text, phase)


@pytest.mark.parametrize(
    "text",
    [
        "Phase 2 complete.",  # another phase
        "Phase 1 will be complete.",
        "Phase 1 complete if the reviewer agrees.",
        "Phase 1 complete once the reviewer reports back.",
        "Phase 1 is not complete.",
        "> Phase 1 complete.",
        "    Phase 1 complete",
        "```\nPhase 1 complete\n```",
        "~~~~\nPhase 1 complete\n~~~~",
        "Example:\nPhase 1 complete",
        "The template says:\nPhase 1 complete",
        "Phase 1 (Design) complete",  # the name disagrees with the number
        "Phase 1 complete? Not yet.",
        "The report will say Phase 1 complete",
        "Phase 1 completeness is at 80%",
        "Phase 1 complete \u2014 pending the reviewer",
    ],
)
def test_copies_and_hedges_do_not_count(text: str) -> None:
    assert not declares(text, "ceo")


def test_numbers_in_order() -> None:
    assert declared_numbers("Phase 1 complete\nthen\nPhase 2 complete.") == ["1", "2"]


def test_fence_must_close_with_same_marker() -> None:
    text = "````\n```\nPhase 1 complete\n````\nPhase 1 complete"
    assert declared_numbers(text) == ["1"]


# The shape the module docstring describes, as the regular expression it was first written
# with: the hand-written matcher must read every line the same way.
REFERENCE = re.compile(
    r"""^(?:\#{1,6}\s+)?
        (?P<wrap>\*\*|__)?
        phase\s+(?P<number>\d+(?:\.\d+)?)
        (?:\s*\((?P<paren>[a-z ]+)\)|\s+(?P<name>[a-z][a-z ]*?))?
        (?:\s+review)?
        (?:\s+is)?
        \s+(?:completed|complete|done|finished)\b
        (?P=wrap)?
        (?P<tail>.*)$""",
    re.IGNORECASE | re.VERBOSE,
)

PIECES = [
    "#",
    "## ",
    "####### ",
    "**",
    "__",
    "Phase",
    "phase",
    "PHASE",
    " ",
    "  ",
    "\t",
    "1",
    "2",
    "2.5",
    "3",
    ".",
    "4",
    "(",
    ")",
    "CEO",
    "ceo",
    "Design",
    "dx",
    "eng",
    "review",
    "is",
    " is",
    "island",
    "complete",
    "completed",
    "completes",
    "done",
    "finished",
    "done_",
    ":",
    "!",
    "\u2014",
    "-",
    "with",
    "not",
    "x",
    "?",
    '"',
    "é",
    "٣",
    "\u00a0",
]


def reference(line: str) -> tuple[str, str, str] | None:
    match = REFERENCE.match(line)
    if match is None:
        return None
    return match["number"], match["paren"] or match["name"] or "", match["tail"]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=14).map("".join))
def test_the_matcher_reads_lines_as_the_reference_expression(line: str) -> None:
    assert parse_declaration(line) == reference(line)


@pytest.mark.parametrize(
    "line",
    [
        "Phase 1 (CEO) review is complete.",
        "Phase 1 ceo review complete",
        "Phase 2.5 developer experience review done: yes",
        "Phase 3 is done",
        "## **Phase 4 tasks complete**",
        "Phase 1 is island complete",
        "Phase 1 completes",
        "Phase 12 complete",
    ],
)
def test_the_matcher_on_hand_picked_lines(line: str) -> None:
    assert parse_declaration(line) == reference(line)
