"""Every test runs against state of its own: never the real ``~/.plangate`` or ``~/.claude``.

Tests that need another state root or config folder set their own; those that test the
defaults remove these variables themselves. Git commits made by tests get an identity even on
a machine without a global git configuration. The suite's journals are small, below the size
from which hook reads keep a journal index; the threshold is set to 0 so that every hook read
in the suite, the real Claude Code sessions included, goes on from the index an earlier read
saved, and the suite proves that path gives the same decisions.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "plangate tests",
    "GIT_AUTHOR_EMAIL": "tests@plangate.invalid",
    "GIT_COMMITTER_NAME": "plangate tests",
    "GIT_COMMITTER_EMAIL": "tests@plangate.invalid",
}


@pytest.fixture(autouse=True)
def _isolated_state(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    base: Path = tmp_path_factory.mktemp("isolated")
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(base / "plangate-state"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(base / "claude-config"))
    monkeypatch.setenv("PLANGATE_JOURNAL_INDEX_MIN_BYTES", "0")
    for name, value in GIT_IDENTITY.items():
        if name not in os.environ:
            monkeypatch.setenv(name, value)
