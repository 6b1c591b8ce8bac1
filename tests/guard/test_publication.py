"""Recognising a published phase report in assistant text."""

from __future__ import annotations

import pytest

from plangate.guard.publication import declared_numbers, declares


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
