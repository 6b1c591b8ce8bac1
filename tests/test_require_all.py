"""With PLANGATE_REQUIRE_ALL=1 (CI), a test skipped for want of what CI has fails instead."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.conftest import REQUIRE_ALL_ENV, ci_need

ROOT = Path(__file__).resolve().parents[1]


class Skip(NamedTuple):
    name: str
    reason: str
    module_level: bool
    required: bool  # the switch is on
    outcome: str  # what pytest reports: "passed", "skipped", "failed" or "error"


SKIPS = [
    Skip(
        "a missing corpus skips a module",
        "the transcript corpus is not here",
        True,
        False,
        "skipped",
    ),
    Skip("... and fails CI", "the transcript corpus is not here", True, True, "error"),
    Skip(
        "PostgreSQL skips a test",
        "PostgreSQL is not installed (no initdb)",
        False,
        False,
        "skipped",
    ),
    Skip("... and fails CI", "PostgreSQL is not installed (no initdb)", False, True, "failed"),
    Skip("Chromium", "/usr/bin/chromium is missing", False, True, "failed"),
    Skip("the Claude Code CLI", "the Claude Code CLI is not installed", False, True, "failed"),
    Skip("the Codex CLI", "the Codex CLI is missing: not installed", False, True, "failed"),
    Skip("tmux", "tmux is not installed", False, True, "failed"),
    Skip("a pinned kit", "cc-sdd 3.0.2 is not installed in node_modules", False, True, "failed"),
    Skip("the test user", "the unprivileged user plangate-test is missing", False, True, "failed"),
    Skip("what CI does not have still skips", "needs a Windows host", False, True, "skipped"),
]

TEST_FILE = """
import pytest

if {module_level!r}:
    pytest.skip({reason!r}, allow_module_level=True)


def test_it():
    pytest.skip({reason!r})


@pytest.mark.xfail(reason="an expected failure is not a skip")
def test_expected_to_fail():
    assert False
"""


@pytest.mark.parametrize("case", SKIPS, ids=[f"{case.name} {case.required}" for case in SKIPS])
def test_a_skip_under_the_switch(case: Skip, tmp_path: Path) -> None:
    test_file = tmp_path / "test_probe.py"
    test_file.write_text(TEST_FILE.format(reason=case.reason, module_level=case.module_level))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop(REQUIRE_ALL_ENV, None)
    if case.required:
        env[REQUIRE_ALL_ENV] = "1"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider"]
        + ["-q", "-rA", "--rootdir", str(tmp_path), str(test_file)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    summary = result.stdout.strip().splitlines()[-1]
    assert f"1 {case.outcome}" in summary, result.stdout
    if case.outcome in ("failed", "error"):
        assert result.returncode != 0
        assert f"{REQUIRE_ALL_ENV}=1 (CI) does not let a test skip for it" in result.stdout
    else:  # 5: a module skipped whole has no test to run
        assert result.returncode in (0, 5), result.stdout
    if not case.module_level:
        assert "1 xfailed" in summary  # an expected failure is left alone


@pytest.mark.parametrize(
    ("reason", "need"),
    [
        ("the public transcript corpus is not checked out at ../shared/corpus", "corpus"),
        ("running as root without runuser: initdb refuses root", "PostgreSQL"),
        ("PLANGATE_CLAUDE_BIN=/x is not an executable file", "Claude Code CLI"),
        ("root writes into read-only folders", None),
    ],
)
def test_the_needs_skip_reasons_name(reason: str, need: str | None) -> None:
    found = ci_need(reason)
    assert (found is None) if need is None else (found is not None and need in found)
