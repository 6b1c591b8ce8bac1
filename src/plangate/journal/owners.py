"""The folders that own a session: the project directory and its linked git worktrees.

A worktree counts only with git's two-way link: ``<project>/.git/worktrees/<name>/gitdir``
names ``<worktree>/.git`` (a file), and that file's ``gitdir:`` line names the same admin
folder back. Standard library only (hook path).
"""

from __future__ import annotations

import os

WORKTREE_MAX = 256


def project_owners(project_dir: str) -> list[str]:
    """``[project_dir, *linked worktrees]``."""
    owners = [project_dir]
    git_dir = os.path.join(project_dir, ".git")
    if not os.path.isdir(git_dir) or os.path.islink(git_dir):
        return owners
    admin_root = os.path.join(git_dir, "worktrees")
    try:
        names = sorted(os.listdir(admin_root))[:WORKTREE_MAX]
    except OSError:
        return owners
    for name in names:
        worktree = _linked_worktree(os.path.join(admin_root, name))
        if worktree is not None and worktree not in owners:
            owners.append(worktree)
    return owners


def _read_line(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.readline(4096).strip()
    except (OSError, UnicodeDecodeError):
        return None


def _linked_worktree(admin: str) -> str | None:
    pointer = _read_line(os.path.join(admin, "gitdir"))
    if not pointer:
        return None
    dot_git = os.path.normpath(os.path.join(admin, pointer))
    if os.path.islink(dot_git) or not os.path.isfile(dot_git):
        return None
    back = _read_line(dot_git)
    if back is None or not back.startswith("gitdir:"):
        return None
    target = back[len("gitdir:") :].strip()
    target = os.path.normpath(os.path.join(os.path.dirname(dot_git), target))
    if os.path.realpath(target) != os.path.realpath(admin):
        return None
    return os.path.dirname(dot_git)
