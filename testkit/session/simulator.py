"""A simulated Claude Code 2.1.332 session for guard tests: real journal records, real tools.

:class:`SimulatedSession` writes the session journal exactly where and in the shape Claude
Code 2.1.332 writes it (``<home>/.claude/projects/<slug>/<session>.jsonl``;
:mod:`~testkit.session.writing`), *executes* the tool calls the test makes
(:mod:`~testkit.session.tools`) and runs the **real** PreToolUse hook that ``plangate setup``
registered (:mod:`~testkit.session.hooks`).

A typical test::

    session = SimulatedSession.create(tmp_path)          # runs `plangate setup`
    session.prompt("/autoplan plan.md")
    init = session.run(Call.bash(f'"{session.plangate}" autoplan init "{plan}" "{plan}" "{r}"'))
    read = Call.read(session.skill_file("sections/ceo-phase.md"))
    message = session.message(calls=[read], run=False)   # journaled, not executed
    outcome = session.hook(read)                         # journal path
    assert outcome.code is None
"""

from __future__ import annotations

import os
import uuid as uuid_module
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from plangate.locations import project_slug
from testkit.journals import VERSION
from testkit.session.base import BashMode, SlashStyle
from testkit.session.calls import Call, Message
from testkit.session.hooks import LOG_RELATIVE, HookRunner, clean_env, install, venv_plangate
from testkit.session.messages import MessageWriting
from testkit.session.tools import ToolRunner
from testkit.session.writing import JournalWriting, LiveJournal


class SimulatedSession(JournalWriting, MessageWriting, ToolRunner, HookRunner):
    """One Claude Code session in ``project_dir`` with its config in ``<home>/.claude``."""

    def __init__(
        self,
        project_dir: str | os.PathLike[str],
        home: str | os.PathLike[str],
        *,
        state_root: str | os.PathLike[str] | None = None,
        session_id: str | None = None,
        version: str = VERSION,
        cwd: str | os.PathLike[str] | None = None,
        bash_mode: BashMode = "auto",
        slash_style: SlashStyle = "interactive",
        git_branch: str = "main",
    ) -> None:
        self.project_dir = os.fspath(project_dir)
        self.home = os.fspath(home)
        self.state_root = (
            os.fspath(state_root)
            if state_root is not None
            else os.path.join(self.home, ".plangate")
        )
        self.session_id = session_id if session_id is not None else str(uuid_module.uuid4())
        self.journal = LiveJournal(
            lambda: self.journal_path,
            session_id=self.session_id,
            cwd=os.fspath(cwd) if cwd is not None else self.project_dir,
            version=version,
            git_branch=git_branch,
        )
        self.bash_mode = bash_mode
        self.slash_style = slash_style
        self.plangate = venv_plangate()
        self.prompts = 0
        self.turn_ended = False
        self.messages: list[Message] = []
        self.calls: dict[str, Call] = {}
        self._reads = {}
        self._fresh_turn = False

    @classmethod
    def create(
        cls,
        base: str | os.PathLike[str],
        *,
        project: str = "project",
        setup: bool = True,
        **options: Any,
    ) -> SimulatedSession:
        """A session in ``<base>/<project>`` with HOME ``<base>/home`` and state root
        ``<base>/state``; runs ``plangate setup`` unless ``setup=False``."""
        root = os.path.realpath(os.fspath(base))
        home = os.path.join(root, "home")
        state = os.path.join(root, "state")
        project_dir = os.path.join(root, project)
        os.makedirs(home, exist_ok=True)
        os.makedirs(project_dir, exist_ok=True)
        if setup:
            install(home, state)
        return cls(project_dir, home, state_root=state, **options)

    # --- places ------------------------------------------------------------------------------

    @property
    def version(self) -> str:
        return self.journal.version

    @property
    def config_dir(self) -> str:
        return os.path.join(self.home, ".claude")

    @property
    def journal_path(self) -> Path:
        return Path(
            self.config_dir, "projects", project_slug(self.project_dir), f"{self.session_id}.jsonl"
        )

    @property
    def log_path(self) -> Path:
        return Path(self.state_root, LOG_RELATIVE)

    def skill_file(self, relative: str) -> str:
        """A file of the installed /autoplan skill, e.g. ``sections/ceo-phase.md``."""
        return os.path.join(self.config_dir, "skills", "autoplan", relative)

    def environ(self, overrides: Mapping[str, str | None] | None = None) -> dict[str, str]:
        """The environment Claude Code gives hooks and Bash commands in this session."""
        env = clean_env()
        env["HOME"] = self.home
        env["CLAUDE_PROJECT_DIR"] = self.project_dir
        env["PLANGATE_STATE_ROOT"] = self.state_root
        for key, value in (overrides or {}).items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        return env
