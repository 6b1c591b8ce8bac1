"""The engine's side of isolation: snapshots around a session of one run, and what changed.

::

    watch = isolation.Watch.start(run, session="planner")
    outcome = agent.plan(request)
    outside = watch.finish()   # descriptions of what changed outside the worktree

:meth:`Watch.start` snapshots the run's main repository and the watched files
(:mod:`plangate.runs.snapshots`); :meth:`Watch.finish` snapshots them again, puts changed
refs back, and says what changed, each change in words naming its path. The worktree has its
own snapshot (:func:`plangate.runs.sandbox.snapshot`), taken by the planner's stage.

For the planner and the review (read-only) the run's own branch counts as a ref like any
other; for a step it does not (the step's commit moves it, after the step).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from plangate.errors import AgentError, GitError
from plangate.locations import state_root
from plangate.runs import sandbox, snapshots
from plangate.runs.context import event
from plangate.runs.model import RunRecord

logger = logging.getLogger("plangate.runs")

Session = Literal["planner", "review", "step"]


@dataclass(frozen=True, slots=True)
class Watch:
    """The snapshots of one session of run ``run`` (see the module's docstring)."""

    repo: Path
    own_branch: str | None
    run_folder: Path
    read_only: bool  # the planner or the review: the Claude config folder is watched too
    before: snapshots.Surroundings | None

    @classmethod
    def start(cls, run: RunRecord, session: Session) -> Watch:
        repo = Path(run.repo)
        read_only = session != "step"
        own = f"refs/heads/{run.branch}" if read_only else None
        folder = Path(state_root()) / "runs" / run.id
        watch = cls(repo, own, folder, read_only, None)
        return cls(repo, own, folder, read_only, watch._take())

    def _take(self) -> snapshots.Surroundings | None:
        try:
            return snapshots.take(
                self.repo,
                own_branch=self.own_branch,
                state_root=state_root(),
                environ=os.environ,
                run_folder=self.run_folder,
                claude_config=self.read_only,
            )
        except (GitError, OSError) as error:  # a repository gone is not the session's doing
            logger.warning("cannot snapshot around the session (%s): %s", self.repo, error)
            return None

    def finish(self) -> list[str]:
        """What changed since :meth:`start`, refs put back, each change in words."""
        if self.before is None:
            return []
        after = self._take()
        if after is None:
            return []
        changes = snapshots.compare(self.before, after)
        undone = set(snapshots.undo_refs(self.repo, changes))
        return [snapshots.describe(change, change in undone) for change in changes]


def record_note(run_id: str, key: str, turn: int, session: Session, agent: object) -> None:
    """Say in the run's conversation (and log) when a read-only session of ``agent`` ran
    without the operating-system sandbox (the agent's ``last_isolation`` says how it ran)."""
    note = getattr(agent, "last_isolation", None)
    if not isinstance(note, str) or not note.startswith("no operating-system sandbox"):
        return
    logger.warning("run %s: the %s ran with %s", run_id, session, note)
    event(run_id, key, turn, "isolation", f"The {session} ran with {note}.")


def wrote_outside(label: str, outside: Sequence[str]) -> str:
    """The failure of a step that changed something outside its worktree."""
    shown = "; ".join(outside[:5]) + (f"; and {len(outside) - 5} more" if len(outside) > 5 else "")
    return (
        f"{label} changed things outside its worktree ({shown}); a step's edits must stay in "
        "the run's worktree, so its worktree edits and refs were undone"
    )


def refuse_review_changes(worktree: Path, before: sandbox.Snapshot, outside: Sequence[str]) -> None:
    """Raise :class:`~plangate.errors.AgentError` (the run waits on a person) when the review
    changed the worktree (undone here) or anything outside it (``outside``)."""
    inside = sandbox.changes_between(before, sandbox.snapshot(worktree))
    if inside:
        sandbox.restore(worktree, before)
    changed = [f"`{path}`" for path in inside[:5]] + list(outside[:5])
    if changed:
        raise AgentError(
            f"the review changed {', '.join(changed)}; reviewing is read-only, so its verdict "
            "was not used (the worktree and refs were put back)",
            "look at what changed, then reply to run the review again",
        )
