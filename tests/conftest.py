"""Every test runs against state of its own: never the real ``~/.plangate`` or ``~/.claude``.

Tests that need another state root or config folder set their own; those that test the
defaults remove these variables themselves. Git commits made by tests get an identity even on
a machine without a global git configuration.
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
    for name, value in GIT_IDENTITY.items():
        if name not in os.environ:
            monkeypatch.setenv(name, value)
