"""Fixtures shared by the journal reader tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from plangate.journal import reader as reader_module
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


@pytest.fixture
def started_scans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Where each pass one of the reader started: 0 for a full read."""
    starts: list[int] = []
    real_scan = reader_module.scan  # type: ignore[attr-defined]

    def spy(*args: Any, **kwargs: Any) -> Any:
        starts.append(kwargs.get("start", 0))
        return real_scan(*args, **kwargs)

    monkeypatch.setattr(reader_module, "scan", spy)
    return starts
