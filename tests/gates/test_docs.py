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


DEVIATIONS = (Path(__file__).resolve().parents[2] / "docs" / "guard-deviations.md").read_text(
    "utf-8"
)


@pytest.mark.parametrize(
    "deviation",
    [
        "`via=subagent-stop`",  # seed 001 marks every block via=stop
        "`skipped reason=runner`",  # seed 001's unattended-runner skip, with no counterpart
        "`evidence`",  # seed 000's code plangate never raises
        "`promptSource`",  # seed 001's session kind, read from the transcript
    ],
)
def test_every_deviation_from_seeds_000_and_001_is_in_the_one_list(deviation: str) -> None:
    """Issue 37: the deviations live in docs/guard-deviations.md, each with its reason, and
    the table at its top names both seeds."""
    assert deviation in DEVIATIONS
    table = DEVIATIONS.split("\n## 1.", 1)[0]
    assert "| 000 |" in table and "| 001 |" in table
    assert table.count("\n| ") - 1 == DEVIATIONS.count("\n## ")
