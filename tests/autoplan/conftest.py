"""Shared fixtures: a real git repository in tmp_path, plans, reviewer instructions."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from plangate.autoplan import layout

REVIEWER_TEXT = "# Placeholder {phase} reviewer\n\nReview the plan below for {phase} risks.\n"

PLAN = """\
# Plan: Import contacts

## Goal

Let people import their contacts from a CSV file.

## Implementation plan

### Step 1: Parse the CSV file
Files: `src/importer.py`, `tests/test_importer.py`
Serves: AC1

Read the file row by row and report the first bad row by number.

### Step 2: Store the contacts
Files: `src/store.py`
Serves: AC1

Write the parsed rows in one transaction.

## Checks

- `pytest -q`

## Acceptance criteria

- AC1: A 1,000-row CSV file imports in under 5 seconds.

## Review record
"""


def long_plan(steps: int = 120) -> str:
    """A valid plan whose implementation section runs to well over a thousand lines."""
    parts = [
        "# Plan: A long plan\n\n## Goal\n\nShip a large batch of small changes.\n\n"
        "## Implementation plan\n\n"
    ]
    for number in range(1, steps + 1):
        parts.append(
            f"### Step {number}: Change part {number}\n"
            f"Files: `src/part_{number}.py`\nServes: AC1\n\n"
            + "".join(f"Detail line {line} of step {number}.\n" for line in range(1, 11))
            + "\n"
        )
    parts.append(
        "## Checks\n\n- `pytest -q`\n\n## Acceptance criteria\n\n"
        "- AC1: Every part works.\n\n## Review record\n"
    )
    return "".join(parts)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A fresh git repository (no commits), canonical path."""
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return Path(os.path.realpath(root))


@pytest.fixture
def reviewers(tmp_path: Path) -> str:
    """Placeholder reviewer instructions for every phase."""
    folder = tmp_path / "reviewers"
    folder.mkdir()
    for phase in layout.REVIEW_PHASES:
        (folder / f"{phase}.md").write_text(REVIEWER_TEXT.format(phase=phase), encoding="utf-8")
    return str(folder)


def artifact_dir(repo: Path) -> Path:
    return repo / ".plangate" / "tmp" / "autoplan"


def restore_path(repo: Path, name: str = "plan-restore-20261129-200102.md") -> str:
    return str(artifact_dir(repo) / name)


def write_plan(repo: Path, text: str = PLAN, name: str = "plan.md") -> str:
    path = repo / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def tree(root: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every file and folder under ``root`` with its mode and (for files) bytes."""
    found: dict[str, tuple[int, bytes | None]] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            path = os.path.join(folder, name)
            found[os.path.relpath(path, root)] = (os.lstat(path).st_mode, None)
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as handle:
                found[os.path.relpath(path, root)] = (os.lstat(path).st_mode, handle.read())
    return found
