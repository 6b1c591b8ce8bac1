"""The done gate: a final stop after /kiro-impl is held until every task is ticked, at
most 3 times, with seed 001's markers, record, trace log and report."""

from __future__ import annotations

import io
import json

from plangate.commands.report import report
from tests.contracts.conftest import TASKS, Project, implementing, stop, through_requirements

TICKED = TASKS.replace("- [ ]", "- [x]")


def test_unticked_tasks_hold_the_stop_then_ticked_ones_release_it(project: Project) -> None:
    implementing(project)
    held = stop(project, "Implemented.")
    assert held.get("decision") == "block"
    reason = str(held["reason"])
    assert reason.startswith("PLANGATE_GATE contract-gate blocked session=")
    assert "2 of 2 checkboxes unticked" in reason
    project.write(project.spec / "tasks.md", TICKED)
    released = stop(project, "All tasks done.")
    assert "decision" not in released
    assert "released" in str(released.get("systemMessage"))
    out = io.StringIO()
    code = report(project.journal.session_id, "armed", True, out, state_root=str(project.state))
    summary = json.loads(out.getvalue())["sessions"][0]
    assert code == 0
    assert summary["gates"]["contract:cc-sdd"]["counts"]["blocked"] == 1
    assert summary["gates"]["contract:cc-sdd"]["counts"]["released"] == 1
    trace = (project.state / "hooks" / "contract-gate.log").read_text()
    assert "event=blocked" in trace and "event=released" in trace


def test_the_cap_lets_the_fourth_stop_through_exhausted(project: Project) -> None:
    implementing(project)
    for n in (1, 2, 3):
        assert stop(project, f"Stop {n}.").get("decision") == "block"
    last = stop(project, "Stop 4.")
    assert "decision" not in last and "exhausted" in str(last.get("systemMessage"))


def test_before_impl_the_stop_is_not_held(project: Project) -> None:
    through_requirements(project)
    assert stop(project, "Requirements written; approve them?") == {}
