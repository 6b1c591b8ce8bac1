"""Fixtures for the agent tests: the real Claude Code CLI and a small git repository.

The CLI must be installed (`make setup`); set PLANGATE_SKIP_E2E=1 to skip the tests that run
it instead of failing them on a machine without it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plangate.claude_cli import ClaudeNotFoundError, find_claude
from testkit.git import git

PLAN = """\
# Plan: Bump the answer

## Goal

Make `X` in `src/app.py` equal 2.

## Implementation plan

### Step 1: Change X
Files: `src/app.py`
Serves: AC1

Set `X = 2` in `src/app.py`.

## Checks

- Tests: `python -c "import sys; sys.path.insert(0, 'src'); import app; assert app.X == 2"`

## Acceptance criteria

- AC1: `X` equals 2.

## Review record
"""


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    """The Claude Code CLI; a missing one fails (or skips, with PLANGATE_SKIP_E2E=1)."""
    try:
        return find_claude()
    except ClaudeNotFoundError as error:
        if os.environ.get("PLANGATE_SKIP_E2E"):
            pytest.skip(str(error))
        pytest.fail(str(error), pytrace=False)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with one commit: ``src/app.py`` (``X = 1``) and ``PLAN.md``."""
    root = (tmp_path / "repo").resolve()
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("X = 1\n", encoding="utf-8")
    (root / "PLAN.md").write_text(PLAN, encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "test@example.com")
    git(root, "config", "user.name", "Test")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root
