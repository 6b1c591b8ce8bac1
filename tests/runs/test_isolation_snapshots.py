"""The snapshots around a session (:mod:`plangate.runs.snapshots`) on real git repositories,
and the refusal and step failure they lead to."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plangate.agents.base import PlanOutcome
from plangate.errors import AgentError
from plangate.plan.model import Check, Criterion, Plan, Step
from plangate.plan.render import render_plan
from plangate.runs import planner, sandbox, snapshots
from plangate.runs.isolation import refuse_review_changes, wrote_outside
from testkit.git import git

from .conftest import make_repo


def _bench(tmp_path: Path) -> tuple[Path, Path, Path, dict[str, str]]:
    repo = make_repo(tmp_path / "repo", {"app.py": "VALUE = 1\n", ".gitignore": "build/\n"})
    state = tmp_path / "state"
    worktree = state / "runs" / "r1" / "worktree"
    git(repo, "worktree", "add", "-q", "-b", "plangate/run-r1", str(worktree))
    (state / "config.json").write_text("{}\n")
    (state / "runs.db").write_text("database\n")
    home = tmp_path / "home"
    (home / ".claude" / "projects").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text("{}\n")
    environ = {"HOME": str(home)}
    return repo, state, worktree, environ


def _take(
    repo: Path, state: Path, environ: dict[str, str], own: str | None = "refs/heads/plangate/run-r1"
) -> snapshots.Surroundings:
    return snapshots.take(
        repo,
        own_branch=own,
        state_root=str(state),
        environ=environ,
        run_folder=state / "runs" / "r1",
    )


def test_nothing_changed_is_no_change(tmp_path: Path) -> None:
    repo, state, _worktree, environ = _bench(tmp_path)
    (repo / "draft.txt").write_text("the person's own untracked file\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.o").write_text("ignored\n")
    before = _take(repo, state, environ)
    assert snapshots.compare(before, _take(repo, state, environ)) == []
    # the person's untracked file is watched by its content; ignored files are not watched
    assert "draft.txt" in dict(before.repo_files)
    assert "build/out.o" not in dict(before.repo_files)


def test_every_kind_of_change_is_named(tmp_path: Path) -> None:
    repo, state, _worktree, environ = _bench(tmp_path)
    home = Path(environ["HOME"])
    before = _take(repo, state, environ)
    main = git(repo, "rev-parse", "main").strip()
    (repo / "app.py").write_text("VALUE = 666\n")  # a tracked file of the main repository
    (repo / "stray.txt").write_text("x\n")  # a new file there
    (repo / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\n")  # a git hook
    git(repo, "branch", "evil")  # a new branch
    git(repo, "commit", "-q", "--allow-empty", "-m", "moved")  # main moves
    (state / "config.json").write_text('{"changed": true}\n')  # the state root
    (state / "runs" / "r1" / "note.txt").write_text("n\n")  # the run's folder
    (home / ".claude" / "settings.json").write_text('{"hooks": 1}\n')  # the config folder
    (home / "pwned").write_text("x\n")  # a file in HOME
    (state / "runs.db").write_text("rewritten\n")  # the database: not watched
    (home / ".claude" / "projects" / "s.jsonl").write_text("{}\n")  # journals: not watched
    changes = snapshots.compare(before, _take(repo, state, environ))
    described = [snapshots.describe(change) for change in changes]
    moved = git(repo, "rev-parse", "main").strip()
    assert described == [
        "repository file `.git/hooks/pre-commit` created (left in place)",
        "repository file `app.py` changed (left in place)",
        "repository file `stray.txt` created (left in place)",
        f"branch `refs/heads/evil` created at {main[:10]}",
        f"branch `refs/heads/main` moved from {main[:10]} to {moved[:10]}",
        f"`{home}/.claude/settings.json` changed (left in place)",
        f"`{home}/pwned` created (left in place)",
        f"`{state}/config.json` changed (left in place)",
        f"`{state}/runs/r1/note.txt` created (left in place)",
    ]


def test_refs_are_put_back_and_new_ones_deleted(tmp_path: Path) -> None:
    repo, state, worktree, environ = _bench(tmp_path)
    main = git(repo, "rev-parse", "main").strip()
    git(repo, "branch", "gone")
    before = _take(repo, state, environ)
    git(repo, "branch", "evil")
    git(repo, "tag", "v666")
    git(repo, "commit", "-q", "--allow-empty", "-m", "moved")
    git(repo, "branch", "-D", "gone")
    git(worktree, "commit", "-q", "--allow-empty", "-m", "the planner committed")
    git(repo, "branch", "plangate/run-other")  # another run's branch: not this session's
    other = git(repo, "rev-parse", "plangate/run-other").strip()
    changes = snapshots.compare(before, _take(repo, state, environ))
    undone = snapshots.undo_refs(repo, changes)
    assert len(undone) == 5
    assert [snapshots.describe(c, True) for c in undone if c.what == "created"] == [
        f"branch `refs/heads/evil` created at {main[:10]} (deleted again)",
        f"ref `refs/tags/v666` created at {main[:10]} (deleted again)",
    ]
    refs = git(repo, "for-each-ref", "--format=%(refname) %(objectname)").splitlines()
    assert f"refs/heads/main {main}" in refs and f"refs/heads/gone {main}" in refs
    assert f"refs/heads/plangate/run-r1 {main}" in refs
    assert not any(r.startswith(("refs/heads/evil", "refs/tags/v666")) for r in refs)
    assert f"refs/heads/plangate/run-other {other}" in refs and other != main  # left alone
    assert snapshots.compare(before, _take(repo, state, environ)) == []


def test_a_step_does_not_answer_for_its_own_branch_nor_the_config_folder(tmp_path: Path) -> None:
    repo, state, worktree, environ = _bench(tmp_path)
    home = Path(environ["HOME"])
    before = snapshots.take(
        repo, own_branch=None, state_root=str(state), environ=environ, claude_config=False
    )
    git(worktree, "commit", "-q", "--allow-empty", "-m", "the step's commit")
    (home / ".claude" / "settings.json").write_text('{"migrated": true}\n')
    after = snapshots.take(
        repo, own_branch=None, state_root=str(state), environ=environ, claude_config=False
    )
    assert snapshots.compare(before, after) == []


def test_watched_folders_from_the_environment(tmp_path: Path) -> None:
    repo, state, _worktree, environ = _bench(tmp_path)
    marker = tmp_path / "markers"
    marker.mkdir()
    environ = {**environ, snapshots.WATCH_ENV: f"{marker}{os.pathsep}relative/ignored"}
    before = _take(repo, state, environ)
    (marker / "deep").mkdir()
    (marker / "deep" / "hook-was-here").write_text("x\n")
    described = [
        snapshots.describe(c) for c in snapshots.compare(before, _take(repo, state, environ))
    ]
    assert described == [
        f"`{marker}/deep` created (left in place)",
        f"`{marker}/deep/hook-was-here` created (left in place)",
    ]


def test_the_worktree_snapshot_hashes_content(tmp_path: Path) -> None:
    _repo, _state, worktree, _environ = _bench(tmp_path)
    (worktree / "scratch.txt").write_text("one\n")
    before = sandbox.snapshot(worktree)
    stat = (worktree / "scratch.txt").stat()
    (worktree / "scratch.txt").write_text("two\n")  # same size
    os.utime(worktree / "scratch.txt", ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same time
    assert sandbox.changes_between(before, sandbox.snapshot(worktree)) == ["scratch.txt"]


PREVIOUS = Plan(
    "P",
    "G",
    (Step(1, "A", ("a.py",), ("AC1",), "x"),),
    (Check("true"),),
    (Criterion("AC1", "a"),),
)


def test_the_refusal_names_what_changed_inside_and_outside() -> None:
    good = PlanOutcome(render_plan(PREVIOUS), None, "")
    inside = planner.judge(good, PREVIOUS, [1], [], ["a.py"])
    assert inside.detail == (
        "new version refused: the planner changed the sandbox (`a.py`); planning is read-only"
    )
    outside = ["branch `refs/heads/evil` created at 1234567890 (deleted again)"]
    both = planner.judge(good, PREVIOUS, [1], [], ["a.py"], outside)
    assert both.kind == "refused" and both.refusal is not None
    assert both.refusal.code == "changed_sandbox"
    assert both.detail == (
        "new version refused: the planner changed the sandbox (`a.py`) and outside it "
        "(branch `refs/heads/evil` created at 1234567890 (deleted again)); planning is read-only"
    )
    only = planner.judge(good, PREVIOUS, [1], [], [], [f"`/x/{n}` created" for n in range(7)])
    assert only.detail.startswith("new version refused: the planner changed things outside ")
    assert "`/x/4` created and 2 more); planning is read-only" in only.detail


def test_the_step_failure_and_the_review_refusal(tmp_path: Path) -> None:
    text = wrote_outside("step 1", ["repository file `stray.txt` created (left in place)"])
    assert text.startswith("step 1 changed things outside its worktree (repository file ")
    _repo, _state, worktree, _environ = _bench(tmp_path)
    before = sandbox.snapshot(worktree)
    refuse_review_changes(worktree, before, [])  # nothing changed: nothing raised
    (worktree / "app.py").write_text("reviewed\n")
    with pytest.raises(AgentError, match=r"the review changed `app.py`; reviewing is read-only"):
        refuse_review_changes(worktree, before, [])
    assert (worktree / "app.py").read_text() == "VALUE = 1\n"
