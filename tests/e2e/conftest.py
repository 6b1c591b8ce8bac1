"""Fixtures for tests that run the real Claude Code CLI against the stand-in model.

The CLI must be installed (`make setup`); set PLANGATE_SKIP_E2E=1 to skip these tests instead
of failing them on a machine without it. The Codex CLI (``codex_bin``, also from `make
setup`) skips its tests when it is missing, with one reason; CI (PLANGATE_REQUIRE_ALL=1)
fails them instead.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from plangate.claude_cli import ClaudeNotFoundError, find_claude
from plangate.harness.claude import ClaudeEnv
from plangate.harness.codex import CodexNotFoundError, find_codex
from plangate.harness.standin import Script, StandIn, tool_use


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    """The Claude Code CLI; a missing one fails (or skips, with PLANGATE_SKIP_E2E=1)."""
    try:
        return find_claude()
    except ClaudeNotFoundError as error:
        if os.environ.get("PLANGATE_SKIP_E2E"):
            pytest.skip(str(error))
        pytest.fail(str(error), pytrace=False)


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    """The Codex CLI; a missing one skips the test (CI, PLANGATE_REQUIRE_ALL=1, fails it)."""
    try:
        return find_codex()
    except CodexNotFoundError as error:
        pytest.skip(f"the Codex CLI is missing: {error}")


MakeEnv = Callable[[StandIn], ClaudeEnv]


@pytest.fixture
def make_env(tmp_path: Path, claude_bin: Path) -> MakeEnv:
    """Makes a ClaudeEnv (fresh HOME, project folder with notes.txt) for a running stand-in."""

    def make(model: StandIn) -> ClaudeEnv:
        env = ClaudeEnv.create(tmp_path / "cc", model, binary=claude_bin)
        (env.project_dir / "notes.txt").write_text("hello notes\nline two\n", encoding="utf-8")
        return env

    return make


@pytest.fixture
def hook_script(tmp_path: Path) -> Callable[[str], str]:
    """Writes a Python hook script from its body and returns the command that runs it.

    The body sees ``payload`` (the parsed stdin), ``out`` (a folder for files) and ``json``.
    Every payload is also saved as ``out/NN-<event>.json``.
    """
    out = tmp_path / "hook-out"
    out.mkdir(exist_ok=True)
    counter = iter(range(1, 1000))

    def write(body: str) -> str:
        path = tmp_path / f"hook_{next(counter)}.py"
        path.write_text(
            "import json, os, sys\n"
            f"out = {str(out)!r}\n"
            "payload = json.load(sys.stdin)\n"
            "n = len([f for f in os.listdir(out) if f.endswith('.json')]) + 1\n"
            "name = f\"{n:02d}-{payload.get('hook_event_name')}.json\"\n"
            "with open(os.path.join(out, name), 'w') as fh:\n"
            "    json.dump(payload, fh)\n" + body + "\n",
            encoding="utf-8",
        )
        return f"{sys.executable} {path}"

    return write


@pytest.fixture
def hook_out(tmp_path: Path) -> Iterator[Path]:
    """The folder the hook scripts of :func:`hook_script` save payloads in."""
    out = tmp_path / "hook-out"
    out.mkdir(exist_ok=True)
    yield out


def subagents_script() -> Script:
    """The model of a session with a foreground subagent (FG-TASK) and a background one
    (BG-TASK) whose report arrives after the main turn started its last message."""
    return Script(
        main=[
            [
                tool_use(
                    "Agent",
                    description="Count",
                    prompt="FG-TASK: count files",
                    subagent_type="general-purpose",
                    run_in_background=False,
                )
            ],
            [
                tool_use(
                    "Agent",
                    description="Slow",
                    prompt="BG-TASK: slow check",
                    subagent_type="general-purpose",
                    run_in_background=True,
                )
            ],
            "Started the background check.",
            "Background check reported.",
        ],
        subagents={
            "FG-TASK": [[tool_use("Bash", command="ls", description="List")], "one file"],
            "BG-TASK": [[tool_use("Bash", command="sleep 2", description="Wait")], "slow ok"],
        },
    )
