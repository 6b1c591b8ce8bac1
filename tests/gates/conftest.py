"""Fixtures for the skill gate tests: a fresh state root and Claude config, synthetic
session journals in the layout Claude Code 2.1.332 writes, and ways to call the gates."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from plangate.gates import stop_hook
from plangate.journal.world import World
from testkit.clock import FakeClock
from testkit.journals import Journal, use_id

SKILL_TEXT = "---\nname: {name}\ndescription: test skill\n---\n# {name}\n"


class Env:
    """One test's world: a project (a git repository), Claude's config folder, a state root."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.project = root / "project"
        self.project.mkdir()
        self.config = root / "claude"
        self.state = root / "state"
        for skill in ("plan-ceo-review", "autoplan"):
            folder = self.config / "skills" / skill
            folder.mkdir(parents=True)
            (folder / "SKILL.md").write_text(SKILL_TEXT.format(name=skill), encoding="utf-8")
        self.environ: dict[str, str] = {
            "PLANGATE_STATE_ROOT": str(self.state),
            "CLAUDE_CONFIG_DIR": str(self.config),
            "PLANGATE_CEO_REVIEW_GATE": "on",
            "PLANGATE_AUTOPLAN_GATE": "on",
            "CLAUDE_CODE_ENTRYPOINT": "sdk-cli",
        }

    def git_init(self) -> None:
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)

    def skill_file(self, skill: str) -> str:
        return str(self.config / "skills" / skill / "SKILL.md")

    def journal(self, **options: Any) -> Journal:
        """A journal whose clock starts a minute ago (files written now are newer)."""
        options.setdefault("cwd", str(self.project))
        options.setdefault("start", datetime.now(UTC) - timedelta(minutes=1))
        return Journal(**options)

    def write(self, journal: Journal) -> Path:
        return journal.write_layout(self.config)

    def payload(self, journal: Journal, **fields: Any) -> dict[str, Any]:
        path = self.write(journal)
        last = next(
            (
                block["text"]
                for record in reversed(journal.records)
                if record.get("type") == "assistant"
                for block in record["message"]["content"]
                if block.get("type") == "text"
            ),
            "",
        )
        payload: dict[str, Any] = {
            "session_id": journal.session_id,
            "transcript_path": str(path),
            "cwd": str(self.project),
            "hook_event_name": "Stop",
            "stop_hook_active": False,
            "last_assistant_message": last,
            "background_tasks": [],
        }
        payload.update(fields)
        return payload

    def decide(
        self, payload: dict[str, Any], event: str = "Stop", **environ: str
    ) -> dict[str, Any]:
        env = dict(self.environ)
        env.update(environ)
        return stop_hook.decide(payload, event, environ=env, stderr=io.StringIO())

    def decide_on(
        self, clock: FakeClock, payload: dict[str, Any], **environ: str
    ) -> dict[str, Any]:
        """:meth:`decide` (a Stop) with the gate's deadline on an injected clock."""
        return self.decide_in(clock.world(), payload, **environ)

    def decide_in(self, world: World, payload: dict[str, Any], **environ: str) -> dict[str, Any]:
        """:meth:`decide` (a Stop) reading through ``world`` (:mod:`plangate.journal.world`)."""
        env = dict(self.environ)
        env.update(environ)
        return stop_hook.decide(payload, "Stop", environ=env, stderr=io.StringIO(), world=world)

    def record(self, session: str) -> dict[str, Any]:
        path = self.state / "skill-gates" / session / "record.json"
        value = json.loads(path.read_text(encoding="utf-8"))
        assert isinstance(value, dict)
        return value

    def has_record(self, session: str) -> bool:
        return (self.state / "skill-gates" / session / "record.json").exists()

    def log(self, hook: str) -> list[str]:
        path = self.state / "hooks" / f"{hook}.log"
        return path.read_text(encoding="utf-8").splitlines() if path.exists() else []

    def hook(
        self,
        payload: dict[str, Any] | bytes,
        event: str = "Stop",
        timeout: float = 30,
        **environ: str,
    ) -> subprocess.CompletedProcess[bytes]:
        """Run the real hook module in a fresh process."""
        module = "plangate.hooks.stop" if event == "Stop" else "plangate.hooks.subagent_stop"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PLANGATE_", "CLAUDE"))}
        env.update(self.environ)
        env.update(environ)
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        return subprocess.run(
            [
                sys.executable,
                "-c",
                f"from {module} import main; "
                "from plangate.hook_io.runtime import run_process; run_process(main)",
            ],
            input=data,
            capture_output=True,
            env=env,
            cwd=str(self.project),
            timeout=timeout,
        )


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    world = Env(tmp_path)
    for key in list(os.environ):
        if key.startswith("PLANGATE_") or key.startswith("CLAUDE"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(world.state))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(world.config))
    yield world


def ceo_session(env: Env, *, load: str = "command", **journal_options: Any) -> Journal:
    """A headless session that loaded /plan-ceo-review and wrote nothing yet."""
    journal = env.journal(**journal_options)
    if load == "command":
        journal.slash_command("plan-ceo-review", "plan.md")
    elif load == "skill":
        journal.prompt("Review plan.md like a CEO.")
        use = journal.tool_use("Skill", {"skill": "plan-ceo-review", "args": "plan.md"})
        journal.tool_result(use_id(use), "Launching skill: plan-ceo-review")
    elif load == "read":
        journal.prompt("Review plan.md like a CEO.")
        use = journal.tool_use("Read", {"file_path": env.skill_file("plan-ceo-review")})
        journal.read_result(use_id(use), env.skill_file("plan-ceo-review"), ["# review"])
    return journal


def write_file(journal: Journal, path: Path, content: str) -> None:
    """The model writes ``path`` (the file too, as the Write tool would)."""
    use = journal.tool_use("Write", {"file_path": str(path), "content": content})
    path.write_text(content, encoding="utf-8")
    journal.tool_result(use_id(use), f"File created successfully at: {path}")


def bash(journal: Journal, command: str, stdout: str = "", *, is_error: bool = False) -> None:
    use = journal.tool_use("Bash", {"command": command, "description": "run"})
    journal.bash_result(use_id(use), stdout, is_error=is_error)


RANKED = "# Review\n\n## Top risks\n\n1. Payment retries can double-charge customers.\n"
UNRANKED = "# Review\n\nLooks fine to me.\n"

MakeJournal = Callable[..., Journal]
