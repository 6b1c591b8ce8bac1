"""Fixtures shared by the journal reader tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from testkit.journals import Journal

REPO_ROOT = Path(__file__).resolve().parents[2]
PROJECT = "/home/user/project"


@pytest.fixture
def journal() -> Journal:
    """An empty 2.1.332-shaped journal for a session started in ``PROJECT``."""
    return Journal(cwd=PROJECT)


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    """A Claude Code config folder (``~/.claude``) in a real, symlink-free temporary folder."""
    folder = Path(str(tmp_path.resolve())) / "claude"
    folder.mkdir()
    return folder
