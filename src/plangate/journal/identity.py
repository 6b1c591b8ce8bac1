"""Identity checks a hook makes before trusting a journal path.

The journal must be ``<config>/projects/<slug>/<session>.jsonl`` exactly: an absolute path
already in normal form, no symlinked file or folder on the way, a regular file, and the same
file (device and inode) before and after the read, never shorter than before.
Standard library only (hook path).
"""

from __future__ import annotations

import os
import stat

from plangate.journal import codes
from plangate.journal.paths import fold, is_owned_path, same_path

SESSION_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


class IdentityError(Exception):
    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.reason = codes.IDENTITY
        self.detail = detail


def valid_session_id(session_id: object) -> bool:
    return (
        isinstance(session_id, str)
        and 0 < len(session_id) <= 160
        and all(ch in SESSION_ID_CHARS for ch in session_id)
    )


def check_layout(path: str, session_id: str, config_dir: str) -> None:
    """Raise :class:`IdentityError` unless ``path`` is this session's journal in ``config_dir``."""
    if not valid_session_id(session_id):
        raise IdentityError("the session id is not a Claude Code session id")
    if not is_owned_path(path):
        raise IdentityError("the journal path is not an absolute path in normal form")
    if not is_owned_path(config_dir):
        raise IdentityError("the Claude Code config folder is not an absolute path in normal form")
    folded = fold(path)
    separator = "\\" if folded[1:2] == ":" else "/"
    parts = folded.rsplit(separator, 3)
    if len(parts) != 4:
        raise IdentityError("the journal is not in <config>/projects/<project>/")
    config, projects, _project, name = parts
    if name != session_id + ".jsonl":
        raise IdentityError("the journal's file name is not <session>.jsonl")
    if projects != "projects" or not same_path(config or separator, config_dir):
        raise IdentityError("the journal is not in <config>/projects/<project>/")
    project_dir = os.path.dirname(path)
    for folder in (project_dir, os.path.dirname(project_dir), config_dir):
        _real_directory(folder)


def check_subagent_layout(
    path: str, session_journal: str, session_id: str, agent: str | None
) -> None:
    """Raise :class:`IdentityError` unless ``path`` is a subagent transcript of this very
    session: ``<folder of session_journal>/<session>/subagents/agent-<agent>.jsonl`` (any
    ``agent-*.jsonl`` when the agent id is unknown), in normal form, with no symlinked file or
    folder on the way."""
    if not valid_session_id(session_id):
        raise IdentityError("the session id is not a Claude Code session id")
    if not is_owned_path(path) or not is_owned_path(session_journal):
        raise IdentityError("the subagent transcript path is not an absolute path in normal form")
    subagents = os.path.join(os.path.dirname(session_journal), session_id, "subagents")
    name = os.path.basename(path)
    if not same_path(os.path.dirname(path), subagents):
        raise IdentityError("the subagent transcript is not in this session's subagents folder")
    wanted = f"agent-{agent}.jsonl" if agent is not None else None
    if not (name.startswith("agent-") and name.endswith(".jsonl")) or (
        wanted is not None and name != wanted
    ):
        raise IdentityError("the subagent transcript is not named agent-<agent id>.jsonl")
    for folder in (subagents, os.path.dirname(subagents)):
        _real_directory(folder)
    if os.path.islink(path):
        raise IdentityError("the subagent transcript is a symlink")


def _real_directory(folder: str) -> None:
    try:
        info = os.lstat(folder)
    except OSError:
        raise IdentityError(f"{folder} is missing") from None
    if not stat.S_ISDIR(info.st_mode):
        raise IdentityError(f"{folder} is a symlink or not a folder")
    if os.path.realpath(folder) != os.path.normpath(folder):
        raise IdentityError(f"{folder} goes through a symlink")


def open_journal(path: str, *, follow_symlinks: bool) -> tuple[int, os.stat_result] | None:
    """Open read-only; None when the file does not exist (yet)."""
    # Non-blocking: a FIFO named like a journal must be refused, not waited on.
    flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise IdentityError(f"the journal cannot be opened ({error.strerror})") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise IdentityError("the journal is not a regular file")
    return fd, info


def check_unchanged(fd: int, path: str, opened: os.stat_result, *, follow_symlinks: bool) -> None:
    """After the read: the same file, never shorter than when it was opened."""
    now = os.fstat(fd)
    try:
        named = os.stat(path) if follow_symlinks else os.lstat(path)
    except OSError:
        raise IdentityError("the journal disappeared while it was read") from None
    for info in (now, named):
        if (info.st_dev, info.st_ino) != (opened.st_dev, opened.st_ino):
            raise IdentityError("the journal was replaced by another file while it was read")
        if info.st_size < opened.st_size:
            raise IdentityError("the journal shrank while it was read")
