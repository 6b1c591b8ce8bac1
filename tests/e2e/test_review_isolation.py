"""Isolation of a run's review, end to end: ``plangate run --review`` as a process, the real
Claude Code CLI as agent and reviewer against the stand-in (:mod:`plangate.harness.run_player`).

While the review's session runs, the stand-in (from the test's process, as in
``test_run_isolation``) edits the worktree, adds a file there, writes a file into the main
repository and creates a branch there. The review approves, but its verdict is not used: the
turn waits on a person, the detail naming each change; the worktree and the branch are put
back, the repository file (of which plangate keeps no copy) is left and named.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_run_sessions import PLAN_V1, Bench, bench_for, conversation, edit

from plangate.commands.run import EXIT_WAITING
from plangate.harness.standin import ModelRequest, text
from plangate.runs.attempts import REASON_ERROR
from plangate.runs.sandbox import changed_files
from testkit.git import git

__all__ = ["bench_for"]  # the fixture, shared with test_run_sessions

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]


def test_a_review_that_changes_things_is_undone_and_waits_on_you(bench_for: Any) -> None:
    planted: dict[str, str] = {}

    def change_while_reviewing(request: ModelRequest) -> Any:
        # What a review that got out would do, done from the test while its session runs.
        (worktree,) = bench.state.glob("runs/*/worktree")
        planted["head"] = git(worktree, "rev-parse", "HEAD").strip()
        (worktree / "app.py").write_text("VALUE = 5\n", encoding="utf-8")
        (worktree / "planted.txt").write_text("x\n", encoding="utf-8")
        (bench.repo / "notes.txt").write_text("review was here\n", encoding="utf-8")
        git(bench.repo, "branch", "reviewed")
        planted["reviewed"] = git(bench.repo, "rev-parse", "reviewed").strip()
        return [text("The change does what the plan asks.\n\nAPPROVED")]

    bench: Bench = bench_for(
        {
            "v1 s1": [[edit("VALUE = 1", "VALUE = 2"), [text("Set VALUE to 2.")]]],
            "other": [[change_while_reviewing]],
        }
    )

    run_id, done = bench.run(PLAN_V1, "--review")

    assert done.code == EXIT_WAITING, done.describe()
    assert bench.player.keys == ["v1 s1", "other"]
    assert bench.player.unexpected == []
    (review,) = bench.player.of("other")
    assert "You are reviewing a change a coding agent made" in review.prompt
    detail = (
        "the review changed `app.py`, `planted.txt`, repository file `notes.txt` created (left "
        "in place), "
        f"branch `refs/heads/reviewed` created at {planted['reviewed'][:10]} (deleted again); "
        "reviewing is read-only, so its verdict was not used (the worktree and refs were put "
        "back) (look at what changed, then reply to run the review again)"
    )
    assert f"Waiting on you: {REASON_ERROR} ({detail})." in done.out
    data = bench.show(run_id)
    assert data["state"] == "waiting", data
    assert data["waiting"]["reason"] == REASON_ERROR
    assert data["waiting"]["detail"] == detail
    assert f"Waiting on you: {REASON_ERROR} ({detail})." in conversation(data)
    assert not any(line.startswith("The review approved") for line in conversation(data))
    # Undone: the worktree as step 1 committed it, the new branch gone.
    worktree = Path(data["worktree"])
    assert git(worktree, "rev-parse", "HEAD").strip() == planted["head"]
    assert (worktree / "app.py").read_text(encoding="utf-8") == "VALUE = 2\n"
    assert not (worktree / "planted.txt").exists()
    assert git(worktree, "status", "--porcelain") == ""
    branches = git(bench.repo, "for-each-ref", "--format=%(refname:short)", "refs/heads")
    assert branches.split() == ["main", f"plangate/run-{run_id}"]
    # Not undone, and named above: the file in the main repository.
    assert (bench.repo / "notes.txt").read_text(encoding="utf-8") == "review was here\n"
    assert changed_files(worktree, git(bench.repo, "rev-parse", "main").strip()) == ["app.py"]
