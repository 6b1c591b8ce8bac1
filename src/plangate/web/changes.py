"""The run's code changes, read from its git repository without writing to it.

A run commits each step on its branch (``plangate/run-<id>``) from its base commit, so its
change is ``git diff <base> <branch>`` and a step's own change is ``git show <commit>``.
``--no-optional-locks`` keeps git from refreshing the index, so the viewer never writes.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from plangate.processes import run_bounded

OUTPUT_LIMIT = 1_000_000  # characters of diff drawn; the rest is cut with a note
TIMEOUT_SECONDS = 20
_SHA = re.compile(r"^[0-9a-f]{7,64}$")


class ChangesError(Exception):
    """git could not read the run's change; the message says why, in one line."""


@dataclass(frozen=True, slots=True)
class Commit:
    sha: str
    subject: str


@dataclass(frozen=True, slots=True)
class Change:
    """A diff's text (cut at :data:`OUTPUT_LIMIT`) and the run's commits since its base."""

    text: str
    truncated: bool
    commits: tuple[Commit, ...] = field(default=())


def is_sha(value: str) -> bool:
    return bool(_SHA.match(value))


def _git(repo: str, *args: str) -> str:
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("GIT_") or name == "GIT_EXEC_PATH"
    }
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["LC_ALL"] = "C"
    try:
        done = run_bounded(
            ["git", "--no-optional-locks", "-C", repo, *args], env=env, timeout=TIMEOUT_SECONDS
        )
    except OSError:
        raise ChangesError("git is not installed") from None
    if done.timed_out:
        raise ChangesError(f"git {args[0]} took longer than {TIMEOUT_SECONDS}s")
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        raise ChangesError(
            f"git {args[0]} failed in {repo}: {lines[-1] if lines else done.returncode}"
        )
    return done.stdout


def _branch_exists(repo: str, branch: str) -> bool:
    try:
        _git(repo, "rev-parse", "--verify", "-q", f"refs/heads/{branch}")
    except ChangesError:
        return False
    return True


def commits(repo: str, base: str, branch: str) -> tuple[Commit, ...]:
    """The run's commits since ``base``, oldest first (none before its first step)."""
    if not _branch_exists(repo, branch):
        return ()
    out = _git(repo, "log", "--reverse", "--format=%H%x00%s", f"{base}..refs/heads/{branch}")
    found = []
    for line in out.splitlines():
        sha, _, subject = line.partition("\0")
        if sha:
            found.append(Commit(sha, subject))
    return tuple(found)


def _cut(text: str) -> tuple[str, bool]:
    if len(text) <= OUTPUT_LIMIT:
        return text, False
    end = text.rfind("\n", 0, OUTPUT_LIMIT)
    return text[: end + 1 if end > 0 else OUTPUT_LIMIT], True


def run_change(repo: str, base: str, branch: str, commit: str | None = None) -> Change:
    """The whole change (``commit`` is ``None``) or one of the run's commits."""
    if not Path(repo).is_dir():
        raise ChangesError(f"the run's repository {repo} is not there any more")
    listed = commits(repo, base, branch)
    if commit is None:
        if not listed:
            return Change("", False, listed)
        text = _git(
            repo,
            "diff",
            "--no-color",
            "--no-renames",
            "--no-ext-diff",
            base,
            f"refs/heads/{branch}",
        )
    else:
        match = [c.sha for c in listed if c.sha.startswith(commit)]
        if len(match) != 1:
            raise LookupError(commit)
        text = _git(
            repo, "show", "--no-color", "--no-renames", "--no-ext-diff", "--format=", match[0]
        )
    cut, truncated = _cut(text)
    return Change(cut, truncated, listed)
