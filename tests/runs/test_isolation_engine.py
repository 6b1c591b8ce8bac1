"""Isolation as the engine enforces it, with the scripted agent (whose ``write`` with an
absolute path writes outside the worktree, as an agent that got out would): real git, real
DBOS on SQLite. The real-CLI version is ``tests/e2e/test_run_isolation.py``."""

from __future__ import annotations

from pathlib import Path

from plangate.plan.model import Check
from plangate.runs.attempts import REASON_ERROR, REASON_ESCALATION
from testkit.git import git
from tests.runs.conftest import Harness, plan_text, step

CHECK_HELLO = Check("grep -qx hello hello.txt", name="AC1")
V1 = plan_text([step(1, ["hello.txt"])], [CHECK_HELLO])
V2 = plan_text(
    [step(1, ["hello.txt"]), step(2, ["hello.txt"], title="Fix the greeting")], [CHECK_HELLO]
)


def _next_repo(harness: Harness) -> Path:
    """The repository the harness's next run will have."""
    return harness.root / f"case{harness.count + 1}" / "repo"


def test_a_step_that_writes_into_the_main_repository_fails_naming_it(harness: Harness) -> None:
    repo = _next_repo(harness)
    outcome = harness.run(
        V1,
        {
            "steps": [
                {"step": 1, "write": {"hello.txt": "hello\n", str(repo / "stray.txt"): "x\n"}}
            ],
            "plans": [{"needs_person": "the step wrote outside"}],
        },
    )
    failure = (
        "step 1 changed things outside its worktree (repository file `stray.txt` created (left "
        "in place)); a step's edits must stay in the run's worktree, so its worktree edits and "
        "refs were undone"
    )
    assert outcome.state == "waiting"
    assert outcome.record.waiting.reason == REASON_ESCALATION
    (record,) = harness.engine.store.steps(outcome.run_id)
    assert (record.status, record.escalation, record.commit) == ("escalated", failure, None)
    assert f"The agent escalated at step 1: {failure}." in harness.events(outcome)
    worktree = repo / outcome.record.worktree
    assert not (worktree / "hello.txt").exists()  # the step's own work undone
    assert (repo / "stray.txt").read_text() == "x\n"  # outside: named, not undone


def test_a_planner_that_writes_outside_is_refused_naming_each_change(harness: Harness) -> None:
    repo = _next_repo(harness)
    outcome = harness.run(
        V1,
        {
            "steps": [{"step": 1, "write": {"hello.txt": "helo\n"}}],
            "plans": [
                {
                    "plan_text": V2,
                    "write": {"hello.txt": "hello\n", str(repo / "notes.txt"): "n\n"},
                }
            ],
        },
    )
    assert outcome.state == "waiting"
    assert outcome.record.waiting.detail == (
        "new version refused: the planner changed the sandbox (`hello.txt`) and outside it "
        "(repository file `notes.txt` created (left in place)); planning is read-only"
    )
    worktree = repo / outcome.record.worktree
    assert (worktree / "hello.txt").read_text() == "helo\n"
    assert git(repo, "status", "--porcelain") == "?? notes.txt\n"


def test_a_review_that_changes_the_worktree_is_not_used(harness: Harness) -> None:
    outcome = harness.run(
        V1,
        {
            "steps": [{"step": 1, "write": {"hello.txt": "hello\n"}}],
            "reviews": [{"approved": True, "write": {"hello.txt": "reviewed\n"}}],
        },
        review=True,
    )
    assert outcome.state == "waiting"
    assert outcome.record.waiting.reason == REASON_ERROR
    assert outcome.record.waiting.detail.startswith(
        "the review changed `hello.txt`; reviewing is read-only, so its verdict was not used"
    )
    worktree = outcome.folder / "repo" / outcome.record.worktree
    assert (worktree / "hello.txt").read_text() == "hello\n"
    assert git(worktree, "status", "--porcelain") == ""
