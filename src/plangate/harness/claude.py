"""Runs the real Claude Code CLI offline, against the stand-in model, in a throwaway HOME.

::

    with StandIn(script) as model:
        cc = ClaudeEnv.create(tmp_path, model)
        result = cc.run("read the notes", settings={"hooks": {...}})
        assert result.ok
        records = result.journal_path.read_text().splitlines()

A :class:`ClaudeEnv` is one fresh HOME and one project directory; run it several times to
``--resume`` or ``--continue`` a session. Every run has a timeout and, when it runs out, the
whole process group is killed, so a stuck session fails a test instead of hanging it.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from plangate.claude_cli import find_claude
from plangate.locations import project_slug
from plangate.processes import run_bounded

#: Environment variables never passed from the caller's environment to the CLI: they would
#: point it at a real account or make it think it runs inside another Claude Code session.
_DROPPED_ENV_PREFIXES = ("ANTHROPIC_", "CLAUDE", "OTEL_", "AWS_", "GOOGLE_", "VERTEX_")
_DROPPED_ENV = frozenset({"CLAUDECODE", "CLAUDE_CONFIG_DIR", "DISABLE_AUTOUPDATER"})


OutputFormat = Literal["json", "stream-json", "text"]
PermissionMode = Literal["default", "acceptEdits", "bypassPermissions", "plan", "dontAsk", "auto"]


class _StandInLike(Protocol):
    def env(self) -> dict[str, str]: ...


def write_claude_json(home: Path, project_dirs: Sequence[Path]) -> Path:
    """Pre-writes ``~/.claude.json`` so the CLI skips onboarding and trusts the projects."""
    path = home / ".claude.json"
    data: dict[str, Any] = {
        "hasCompletedOnboarding": True,
        "lastOnboardingVersion": "2.1.332",
        "numStartups": 1,
        "autoUpdates": False,
        "bypassPermissionsModeAccepted": True,
        "projects": {
            str(p): {
                "hasTrustDialogAccepted": True,
                "hasCompletedProjectOnboarding": True,
                "allowedTools": [],
            }
            for p in project_dirs
        },
    }
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


@dataclass
class ClaudeResult:
    """What one ``claude -p`` run did."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    duration: float
    timed_out: bool
    home: Path
    project_dir: Path
    output_format: str
    #: Parsed stdout: the result object for ``json``, the list of events for ``stream-json``.
    output: Any = None
    session_id: str | None = None
    #: The token every process of this run carried (see :func:`plangate.processes.end_marked`).
    run_token: str = ""

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    @property
    def projects_dir(self) -> Path:
        return self.home / ".claude" / "projects"

    @property
    def project_journal_dir(self) -> Path:
        return self.projects_dir / project_slug(str(self.project_dir))

    @property
    def journal_path(self) -> Path | None:
        """The main journal of this run's session (``<slug>/<session>.jsonl``)."""
        if self.session_id is None:
            return None
        path = self.project_journal_dir / f"{self.session_id}.jsonl"
        if path.exists():
            return path
        found = sorted(self.projects_dir.glob(f"*/{self.session_id}.jsonl"))
        return found[0] if found else path

    @property
    def journals(self) -> list[Path]:
        """Every journal file under ``~/.claude/projects/``."""
        return sorted(self.projects_dir.rglob("*.jsonl")) if self.projects_dir.exists() else []

    @property
    def subagent_journals(self) -> list[Path]:
        """The subagent journals of this run's session (``<session>/subagents/*.jsonl``)."""
        if self.session_id is None:
            return []
        folder = self.project_journal_dir / self.session_id
        return sorted(folder.rglob("*.jsonl")) if folder.exists() else []

    @property
    def result_text(self) -> str | None:
        """The final ``result`` text of a ``json`` or ``stream-json`` run."""
        events = self.output if isinstance(self.output, list) else [self.output]
        for event in reversed(events):
            if isinstance(event, dict) and event.get("type") == "result":
                value = event.get("result")
                return value if isinstance(value, str) else None
        return None

    def describe(self) -> str:
        """A few lines for a failing assertion."""
        return (
            f"claude exited {self.returncode}{' (timed out)' if self.timed_out else ''} "
            f"after {self.duration:.1f}s\nargs: {self.args}\n"
            f"stdout: {self.stdout[-2000:]}\nstderr: {self.stderr[-2000:]}"
        )


def _parse_output(stdout: str, output_format: str) -> tuple[Any, str | None]:
    if output_format == "json":
        try:
            data = json.loads(stdout)
        except ValueError:
            return None, None
        sid = data.get("session_id") if isinstance(data, dict) else None
        return data, sid if isinstance(sid, str) else None
    if output_format == "stream-json":
        events: list[Any] = []
        session_id: str | None = None
        for line in stdout.splitlines():
            line = line.strip()
            if not line:
                continue
            try:
                event = json.loads(line)
            except ValueError:
                continue
            events.append(event)
            if isinstance(event, dict) and isinstance(event.get("session_id"), str):
                session_id = event["session_id"]
        return events, session_id
    return None, None


def _clean_environ(base: Mapping[str, str]) -> dict[str, str]:
    return {
        k: v
        for k, v in base.items()
        if k not in _DROPPED_ENV and not k.startswith(_DROPPED_ENV_PREFIXES)
    }


@dataclass
class ClaudeEnv:
    """A throwaway HOME and project directory to run the CLI in, possibly several times."""

    home: Path
    project_dir: Path
    model_env: dict[str, str]
    binary: Path = field(default_factory=find_claude)
    extra_env: dict[str, str] = field(default_factory=dict)
    runs: list[ClaudeResult] = field(default_factory=list)

    @classmethod
    def create(
        cls,
        root: Path,
        standin: _StandInLike | Mapping[str, str],
        *,
        project_dir: Path | None = None,
        binary: Path | None = None,
        extra_env: Mapping[str, str] | None = None,
    ) -> ClaudeEnv:
        """Makes ``root/home`` (with ``.claude.json``), ``root/tmp`` (the CLI's TMPDIR, where it
        keeps background task output) and ``root/project`` (unless given)."""
        root = Path(root)
        home = root / "home"
        home.mkdir(parents=True, exist_ok=True)
        tmp = root / "tmp"
        tmp.mkdir(exist_ok=True)
        project = Path(project_dir) if project_dir is not None else root / "project"
        project.mkdir(parents=True, exist_ok=True)
        project = project.resolve()
        write_claude_json(home, [project])
        model_env = dict(standin) if isinstance(standin, Mapping) else standin.env()
        return cls(
            home=home.resolve(),
            project_dir=project,
            model_env=model_env,
            binary=binary or find_claude(),
            extra_env={"TMPDIR": str(tmp.resolve()), **(extra_env or {})},
        )

    @property
    def projects_dir(self) -> Path:
        return self.home / ".claude" / "projects"

    def environ(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = _clean_environ(os.environ)
        env.update(
            {
                "HOME": str(self.home),
                "USERPROFILE": str(self.home),
                "XDG_CONFIG_HOME": str(self.home / ".config"),
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_AUTOUPDATER": "1",
                "DISABLE_TELEMETRY": "1",
                "DISABLE_ERROR_REPORTING": "1",
                "CI": "1",
            }
        )
        env.update(self.model_env)
        env.update(self.extra_env)
        if extra:
            env.update(extra)
        return env

    def write_settings(self, settings: Mapping[str, Any], name: str | None = None) -> Path:
        """Writes a settings file for ``--settings`` into HOME and returns its path."""
        folder = self.home / "plangate-settings"
        folder.mkdir(exist_ok=True)
        path = folder / (name or f"settings-{len(list(folder.iterdir())) + 1}.json")
        path.write_text(json.dumps(settings, indent=2), encoding="utf-8")
        return path

    def run(
        self,
        prompt: str,
        *,
        settings: Mapping[str, Any] | Path | str | None = None,
        resume: str | None = None,
        continue_session: bool = False,
        fork_session: bool = False,
        session_id: str | None = None,
        allowed_tools: Sequence[str] | None = None,
        disallowed_tools: Sequence[str] | None = None,
        permission_mode: PermissionMode | None = None,
        output_format: OutputFormat = "json",
        max_turns: int | None = None,
        model: str | None = None,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        timeout: float = 120,
        cwd: Path | None = None,
    ) -> ClaudeResult:
        """Runs ``claude -p PROMPT`` and waits (at most ``timeout`` seconds) for it to end."""
        args: list[str] = [str(self.binary), "-p", prompt, "--output-format", output_format]
        if output_format == "stream-json":
            args.append("--verbose")
        if settings is not None:
            path = (
                Path(settings)
                if isinstance(settings, Path | str)
                else self.write_settings(settings)
            )
            args += ["--settings", str(path)]
        if resume is not None:
            args += ["--resume", resume]
        if continue_session:
            args.append("--continue")
        if fork_session:
            args.append("--fork-session")
        if session_id is not None:
            args += ["--session-id", session_id]
        if allowed_tools:
            args += ["--allowedTools", ",".join(allowed_tools)]
        if disallowed_tools:
            args += ["--disallowedTools", ",".join(disallowed_tools)]
        if permission_mode is not None:
            args += ["--permission-mode", permission_mode]
        if max_turns is not None:
            args += ["--max-turns", str(max_turns)]
        if model is not None:
            args += ["--model", model]
        args += list(extra_args)
        result = self._execute(args, cwd or self.project_dir, self.environ(env), timeout)
        result.output, result.session_id = _parse_output(result.stdout, output_format)
        self.runs.append(result)
        return result

    def _execute(
        self, args: list[str], cwd: Path, env: dict[str, str], timeout: float
    ) -> ClaudeResult:
        # Every process of this run carries the token, even those the CLI starts in process
        # groups of their own (its Bash tool does): they are found by it and ended afterwards,
        # and on a timeout too (hooks and shells included).
        token = uuid.uuid4().hex
        done = run_bounded(args, timeout=timeout, cwd=cwd, env=env, token=token)
        return ClaudeResult(
            args=args,
            returncode=done.returncode,
            stdout=done.stdout,
            stderr=done.stderr,
            duration=done.duration,
            timed_out=done.timed_out,
            home=self.home,
            project_dir=self.project_dir,
            output_format=args[args.index("--output-format") + 1],
            run_token=token,
        )
