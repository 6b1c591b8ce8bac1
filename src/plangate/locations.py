"""Where plangate and Claude Code keep their files. Standard library only (hook path)."""

from __future__ import annotations

import os

STATE_ROOT_ENV = "PLANGATE_STATE_ROOT"
CLAUDE_CONFIG_ENV = "CLAUDE_CONFIG_DIR"


def _home() -> str:
    return os.path.expanduser("~")


def state_root() -> str:
    """plangate's state root: ``$PLANGATE_STATE_ROOT``, default ``~/.plangate``."""
    configured = os.environ.get(STATE_ROOT_ENV, "")
    if configured:
        return os.path.abspath(configured)
    return os.path.join(_home(), ".plangate")


def journal_index_dir() -> str:
    """Where hook reads keep their journal indexes (:mod:`plangate.journal.index`)."""
    return os.path.join(state_root(), "journal-index")


def claude_config_dir() -> str:
    """Claude Code's configuration folder: ``$CLAUDE_CONFIG_DIR``, default ``~/.claude``."""
    configured = os.environ.get(CLAUDE_CONFIG_ENV, "")
    if configured:
        return os.path.abspath(configured)
    return os.path.join(_home(), ".claude")


def claude_projects_dir() -> str:
    return os.path.join(claude_config_dir(), "projects")


def project_slug(directory: str) -> str:
    """The folder name Claude Code derives from a project directory.

    Every character outside ``[A-Za-z0-9]`` becomes ``-``. Claude Code shortens very long
    names with a hash of its own runtime, so long slugs are compared by prefix only.
    """
    return "".join(ch if ch.isascii() and ch.isalnum() else "-" for ch in directory)
