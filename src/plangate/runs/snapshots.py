"""What a session changed outside its worktree, from snapshots taken before and after it.

The worktree itself is :func:`plangate.runs.sandbox.snapshot`'s. Around every planner, review
and step session the engine also takes a :class:`Surroundings`:

* the **main repository**: its changed and untracked files (not its ignored ones, which
  build tools rewrite all the time) with content hashes, its ``.git/config``, ``.git/hooks``
  and ``.git/info`` with content hashes, its HEAD and every ref (``git for-each-ref``) but
  the branches of other runs (their workers commit at any time);
* **watched folders** (:func:`watched`): plangate's state root but the folders that any
  Claude Code session's hooks and other runs write (``runs``, the database, logs, indexes),
  the person's Claude config folder's settings, ``CLAUDE.md``, skills, commands and agents
  (not its journals, which every session writes), the files directly in HOME (not
  ``.claude.json``, which every session rewrites), and the folders named in
  ``PLANGATE_RUN_WATCH`` (``os.pathsep``-separated).

:func:`compare` names every difference (:class:`Change`); :func:`undo_refs` puts moved refs
back, deletes new ones and brings back removed ones (a moved or new ref's commit is named in
the change, so nothing is lost). Files outside the worktree are not undone: plangate keeps
no copy of them, and a file in the repository may be the person's own edit.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from plangate.runs.sandbox import file_mark, git

__all__ = [
    "WATCH_ENV",
    "Change",
    "Surroundings",
    "compare",
    "describe",
    "take",
    "undo_refs",
    "watched",
]

#: More folders to watch around every session (``os.pathsep``-separated absolute paths).
WATCH_ENV = "PLANGATE_RUN_WATCH"
WATCH_FILE_LIMIT = 20_000  # files looked at in one watched folder
RUN_BRANCH_PREFIX = "refs/heads/plangate/run-"
#: Not watched in the state root: other runs and their worktrees, the database, the records
#: and logs that the hooks of any Claude Code session write.
STATE_ROOT_SKIPPED = frozenset(
    {"runs", "analytics", "skill-gates", "hooks", "journal-index", "logs"}
)
DATABASE_SUFFIXES = (".sqlite", ".sqlite3", ".db", "-wal", "-shm", "-journal")
#: Watched in the Claude config folder: what changes how later sessions behave.
CONFIG_WATCHED = (
    "settings.json",
    "settings.local.json",
    "CLAUDE.md",
    "skills",
    "commands",
    "agents",
)
GIT_WATCHED = ("config", "hooks", "info")

Where = Literal["repository", "ref", "outside"]


@dataclass(frozen=True, slots=True)
class Change:
    """One difference: ``where`` it is, the ``path`` (a ref's name for a ref), ``what``
    happened (``created``, ``changed``, ``removed``), and for a ref its old and new value."""

    where: Where
    path: str
    what: str
    old: str = ""
    new: str = ""


@dataclass(frozen=True, slots=True)
class Surroundings:
    repo_files: tuple[tuple[str, str], ...]
    refs: tuple[tuple[str, str], ...]
    outside: tuple[tuple[str, str], ...]


def _walk(root: Path, skip_top: Iterable[str] = (), limit: int = WATCH_FILE_LIMIT) -> list[str]:
    """Every file and folder below ``root`` (absolute paths), up to ``limit`` entries."""
    skipped = set(skip_top)
    found: list[str] = []
    if not root.is_dir():
        return [str(root)] if root.exists() or root.is_symlink() else []
    for folder, dirs, names in os.walk(root):
        here = Path(folder)
        if here == root:
            dirs[:] = [d for d in dirs if d not in skipped]
            names = [n for n in names if n not in skipped and not n.endswith(DATABASE_SUFFIXES)]
        dirs.sort()
        for name in [*dirs, *sorted(names)]:
            if len(found) >= limit:
                return found
            found.append(str(here / name))
    return found


def watched(
    state_root: str,
    environ: Mapping[str, str],
    run_folder: Path | None = None,
    claude_config: bool = True,
) -> list[str]:
    """The files the snapshots watch outside the repository (absolute paths, in order);
    the Claude config folder's only with ``claude_config`` (a step's CLI uses that folder
    and rewrites its settings itself; a read-only session has a folder of its own)."""
    paths = _walk(Path(state_root), STATE_ROOT_SKIPPED)
    if run_folder is not None and run_folder.is_dir():
        paths += _walk(run_folder, {"worktree"})
    home = environ.get("HOME", "")
    config = environ.get("CLAUDE_CONFIG_DIR", "") or (os.path.join(home, ".claude") if home else "")
    if config and claude_config:
        for name in CONFIG_WATCHED:
            paths += _walk(Path(config) / name)
    if home and os.path.isdir(home):
        with os.scandir(home) as entries:
            paths += sorted(
                entry.path
                for entry in entries
                if not entry.name.startswith(".claude.json") and not entry.is_dir()
            )
    for extra in environ.get(WATCH_ENV, "").split(os.pathsep):
        if extra and os.path.isabs(extra):
            paths += _walk(Path(extra))
    return sorted(set(paths))


def _git_dir(repo: Path) -> Path:
    common = git(repo, "rev-parse", "--path-format=absolute", "--git-common-dir").strip()
    return Path(common)


def _repo_files(repo: Path) -> list[tuple[str, str]]:
    out = git(repo, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
    files = [
        (entry[3:], f"{entry[:2]} {file_mark(repo / entry[3:])}")
        for entry in out.split("\0")
        if len(entry) > 3
    ]
    git_dir = _git_dir(repo)
    for name in GIT_WATCHED:
        for path in _walk(git_dir / name):
            files.append((os.path.relpath(path, repo), f"-- {file_mark(Path(path))}"))
    return sorted(files)


def _refs(repo: Path, skip_runs_but: str | None) -> list[tuple[str, str]]:
    out = git(repo, "for-each-ref", "--format=%(refname) %(objectname)")
    refs = []
    for line in out.splitlines():
        name, _, value = line.partition(" ")
        if name.startswith(RUN_BRANCH_PREFIX) and name != skip_runs_but:
            continue
        refs.append((name, value))
    symbolic = git(repo, "symbolic-ref", "-q", "HEAD", check=False).strip()
    value = git(repo, "rev-parse", "-q", "--verify", "HEAD", check=False).strip()
    refs.append(("HEAD", f"ref: {symbolic}" if symbolic else value))
    return sorted(refs)


def take(
    repo: Path,
    *,
    own_branch: str | None,
    state_root: str,
    environ: Mapping[str, str],
    run_folder: Path | None = None,
    claude_config: bool = True,
) -> Surroundings:
    """The main repository ``repo`` and the watched files now. ``own_branch`` (a full ref
    name, or ``None`` to leave it out) is the one run branch whose moves count."""
    paths = watched(state_root, environ, run_folder, claude_config)
    outside = [(path, file_mark(Path(path))) for path in paths]
    return Surroundings(
        tuple(_repo_files(repo)), tuple(_refs(repo, own_branch)), tuple(sorted(outside))
    )


def _diff(where: Where, old: Mapping[str, str], new: Mapping[str, str]) -> list[Change]:
    changes = []
    for path in sorted(old.keys() | new.keys()):
        before, after = old.get(path), new.get(path)
        if before == after:
            continue
        what = "created" if before is None else ("removed" if after is None else "changed")
        if where == "repository" and (before is None or after is None):
            what = _status_change(before, after)
        changes.append(Change(where, path, what, before or "", after or ""))
    return changes


def _status_change(before: str | None, after: str | None) -> str:
    """What became of a repository file listed on one side only. Its mark starts with git's
    two status letters (``--`` for a file under ``.git``): a file listed only after was
    created (untracked, added, or under ``.git``), removed (deleted) or changed (modified);
    one listed only before is gone (untracked, under ``.git``) or back as committed."""
    if before is None:
        status = (after or "")[:2]
        if status == "--" or "?" in status or "A" in status:
            return "created"
        return "removed" if "D" in status else "changed"
    status = before[:2]
    return "removed" if status == "--" or "?" in status or "A" in status else "changed"


def compare(before: Surroundings, after: Surroundings) -> list[Change]:
    """Every difference between two snapshots: repository files, refs, watched files."""
    return [
        *_diff("repository", dict(before.repo_files), dict(after.repo_files)),
        *_diff("ref", dict(before.refs), dict(after.refs)),
        *_diff("outside", dict(before.outside), dict(after.outside)),
    ]


def undo_refs(repo: Path, changes: Sequence[Change]) -> list[Change]:
    """Put the changed refs back as they were; the changes that were undone."""
    undone = []
    for change in changes:
        if change.where != "ref":
            continue
        if change.path == "HEAD":
            if change.old.startswith("ref: "):
                git(repo, "symbolic-ref", "HEAD", change.old[5:], check=False)
            elif change.old:
                git(repo, "update-ref", "--no-deref", "HEAD", change.old, check=False)
        elif change.what == "created":
            git(repo, "update-ref", "-d", change.path, change.new, check=False)
        else:
            git(repo, "update-ref", change.path, change.old, check=False)
        undone.append(change)
    return undone


def describe(change: Change, undone: bool = False) -> str:
    """One change in words, e.g. ``branch `refs/heads/x` created at 1a2b3c4d5e (deleted
    again)`` or ``repository file `notes.txt` created (left in place)``: a ref is put back when
    ``undone``; a file outside the worktree never is (plangate keeps no copy of it)."""
    if change.where == "ref":
        kind = "branch" if change.path.startswith("refs/heads/") else "ref"
        if change.path == "HEAD":
            text = f"the repository's HEAD moved from {change.old[:40]} to {change.new[:40]}"
        elif change.what == "created":
            text = f"{kind} `{change.path}` created at {change.new[:10]}"
        elif change.what == "removed":
            text = f"{kind} `{change.path}` removed (was {change.old[:10]})"
        else:
            text = f"{kind} `{change.path}` moved from {change.old[:10]} to {change.new[:10]}"
        if undone:
            text += " (deleted again)" if change.what == "created" else " (put back)"
        return text
    if change.where == "repository":
        return f"repository file `{change.path}` {change.what} (left in place)"
    return f"`{change.path}` {change.what} (left in place)"
