"""A throwaway HOME with Claude Code's and plangate's folders, and a project in it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass
class World:
    home: Path
    claude: Path
    state: Path
    project: Path

    def payload(self, tool: str, **tool_input: object) -> dict[str, object]:
        return {
            "hook_event_name": "PreToolUse",
            "session_id": "s-1",
            "transcript_path": str(self.claude / "projects" / "p" / "s-1.jsonl"),
            "cwd": str(self.project),
            "tool_name": tool,
            "tool_input": dict(tool_input),
        }

    def env(self) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "CLAUDE_CONFIG_DIR": str(self.claude),
            "PLANGATE_STATE_ROOT": str(self.state),
        }


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    home = tmp_path / "home"
    made = World(home, home / ".claude", home / "plangate-state", home / "work" / "project")
    for folder in (made.claude, made.state, made.project / "src"):
        folder.mkdir(parents=True)
    (made.claude / "settings.json").write_text("{}\n")
    (made.project / "src" / "app.py").write_text("print('hi')\n")
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    for key, value in made.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(made.project)
    return made
