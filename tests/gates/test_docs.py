"""docs/skill-gates.md documents every code, marker and exit code the gates use."""

from __future__ import annotations

from pathlib import Path

import pytest

from plangate.commands import report
from plangate.gates import errors
from plangate.gates import markers as mk
from plangate.gates.timing import DEADLINE_ENV

DOC = (Path(__file__).resolve().parents[2] / "docs" / "skill-gates.md").read_text("utf-8")


@pytest.mark.parametrize("code", errors.CODES)
def test_every_error_code_has_an_anchor_and_a_remedy(code: str) -> None:
    anchor = code.lower().replace("_", "-")
    assert f'<a id="{anchor}"></a>`{code}`' in DOC
    assert errors.REMEDIES[code]
    assert errors.anchor(code) == f"`plangate explain {code}`"


@pytest.mark.parametrize("event", mk.EVENTS)
def test_every_marker_event_is_in_the_table(event: str) -> None:
    assert f"| `{event}` |" in DOC


@pytest.mark.parametrize(
    "text",
    [
        report.USAGE,
        report.NOT_ARMED,
        report.ERRORED,
        DEADLINE_ENV,
        "PLANGATE_CEO_REVIEW_OUTPUT",
        "PLANGATE_PROJECT_SLUG",
        "plangate settings --ceo-review --autoplan",
        "plangate gates hook-timeout",
        "record.json",
        "hooks/autoplan-gate.log",
    ],
)
def test_names_the_doc_promises(text: str) -> None:
    assert text in DOC
