"""Runs the real Codex CLI offline, against the stand-in's Responses API, in a fresh CODEX_HOME.

::

    with StandIn(Script(main=[[shell("echo hi")], "done"])) as model:
        cx = CodexEnv.create(tmp_path, model)
        result = cx.exec("say hi")
        assert result.ok, result.describe()
        rollout = result.rollouts[0]

A :class:`CodexEnv` is one fresh HOME with ``CODEX_HOME`` (``HOME/.codex``) in it, whose
``config.toml`` names the stand-in as the only model provider (``wire_api = "responses"``,
the key read from an environment variable, no retries) and switches off everything that
would reach the network at start (analytics, plugin and app syncing, the update check), and
one project folder, trusted in that config so the terminal UI asks nothing. Its HTTP(S) proxy
is the stand-in itself (``127.0.0.1`` bypasses it), which refuses every tunnel and records it:
nothing reaches the network, and a test can assert that nothing tried. The model is a
slug from Codex's own catalog (:data:`MODEL`): with a name it does not know, Codex offers no
``apply_patch`` tool. Its ``TMPDIR`` is a folder beside the HOME, never above it: Codex
refuses to put its helper binaries (the sandbox's) under the temporary folder, and every
sandboxed command then fails.

Every run has a timeout and carries a run token, so a stuck session fails a test instead of
hanging it and leaves no process behind (:func:`plangate.processes.run_bounded`).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from plangate.claude_cli import pinned_or_on_path
from plangate.errors import PlangateError
from plangate.processes import run_bounded

CODEX_BIN_ENV = "PLANGATE_CODEX_BIN"
#: The Codex CLI version the stand-in and the harness are verified with (package.json pins it).
VERIFIED_VERSION = "0.171.0"
#: The npm launcher ``make setup`` installs (it starts the native binary of the platform).
_NODE_BIN = Path("node_modules") / ".bin" / "codex"
#: A model slug from the catalog bundled with 0.171.0 (the stand-in ignores it).
MODEL = "gpt-5.5"
#: The model provider's id in config.toml, and the variable its key is read from.
PROVIDER = "plangate-standin"
KEY_ENV = "PLANGATE_STANDIN_API_KEY"
#: What the terminal UI would offer to switch the model to (answered in advance).
_MIGRATION = {"gpt-5.5": "gpt-6-sol"}

#: Environment variables never passed from the caller's environment to the CLI: they would
#: point it at a real account or another CODEX_HOME.
_DROPPED_ENV_PREFIXES = ("OPENAI_", "CODEX_", "AZURE_OPENAI", "ANTHROPIC_", "CLAUDE")
_DROPPED_ENV = frozenset({"TMUX", "TMUX_PANE"})

Sandbox = Literal["read-only", "workspace-write", "danger-full-access"]


class CodexNotFoundError(PlangateError):
    """The Codex CLI is not installed where plangate looks for it."""


class _StandInLike(Protocol):
    def codex_base_url(self) -> str: ...


def find_codex() -> Path:
    """The Codex CLI: ``$PLANGATE_CODEX_BIN``, the pinned npm copy, or ``codex`` on PATH."""
    configured = os.environ.get(CODEX_BIN_ENV)
    if configured:
        path = Path(configured)
        if path.is_file() and os.access(path, os.X_OK):
            return path
        raise CodexNotFoundError(f"{CODEX_BIN_ENV}={configured} is not an executable file")
    found = pinned_or_on_path(_NODE_BIN, "codex")
    if found is not None:
        return found
    raise CodexNotFoundError(
        f"the Codex CLI is not installed (looked for {_NODE_BIN} and `codex` on PATH; "
        f"{CODEX_BIN_ENV} is not set): run `make setup` in the plangate checkout, or "
        f"`npm install -g @openai/codex@{VERIFIED_VERSION}`"
    )


def _toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a TOML basic string for these values


def config_toml(
    base_url: str, project_dirs: Sequence[Path], *, model: str = MODEL, extra: str = ""
) -> str:
    """The ``config.toml`` that points Codex at the stand-in and keeps it offline."""
    lines = [
        f"model = {_toml_string(model)}",
        f"model_provider = {_toml_string(PROVIDER)}",
        "check_for_update_on_startup = false",
        "",
        f"[model_providers.{PROVIDER}]",
        'name = "plangate stand-in"',
        f"base_url = {_toml_string(base_url)}",
        'wire_api = "responses"',
        f"env_key = {_toml_string(KEY_ENV)}",
        "request_max_retries = 0",
        "stream_max_retries = 0",
        "stream_idle_timeout_ms = 20000",
        "",
        "[analytics]",
        "enabled = false",
        "",
        "[features]",
        "plugins = false",
        "remote_plugin = false",
        "apps = false",
        "",
        "[tui]",
        "show_tooltips = false",
        "",
        "[notice.model_migrations]",
        *(f"{_toml_string(k)} = {_toml_string(v)}" for k, v in _MIGRATION.items()),
        "",
    ]
    for project in project_dirs:
        lines += [f"[projects.{_toml_string(str(project))}]", 'trust_level = "trusted"', ""]
    text = "\n".join(lines)
    return text + ("\n" + extra.strip() + "\n" if extra.strip() else "")


@dataclass
class CodexResult:
    """What one ``codex exec`` run did."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    duration: float
    timed_out: bool
    codex_home: Path
    project_dir: Path
    #: ``--json``'s events (one object a line), when the run asked for them.
    events: list[Any] = field(default_factory=list)
    run_token: str = ""

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    @property
    def thread_id(self) -> str | None:
        """The session's id (``thread.started``'s ``thread_id`` under ``--json``)."""
        for event in self.events:
            if isinstance(event, dict) and event.get("type") == "thread.started":
                value = event.get("thread_id")
                return value if isinstance(value, str) else None
        return None

    @property
    def rollouts(self) -> list[Path]:
        """Every session file (``sessions/YYYY/MM/DD/rollout-*.jsonl``) of this CODEX_HOME."""
        return rollouts(self.codex_home)

    @property
    def rollout(self) -> Path | None:
        """This run's session file (by its thread id), else the newest one."""
        found = self.rollouts
        if self.thread_id is not None:
            mine = [p for p in found if p.stem.endswith(self.thread_id)]
            if mine:
                return mine[0]
        return max(found, key=lambda p: p.stat().st_mtime) if found else None

    @property
    def last_message(self) -> str | None:
        """The last agent message (``item.completed`` of an ``agent_message`` under ``--json``)."""
        for event in reversed(self.events):
            item = event.get("item") if isinstance(event, dict) else None
            if isinstance(item, dict) and item.get("type") == "agent_message":
                value = item.get("text")
                return value if isinstance(value, str) else None
        return None

    def describe(self) -> str:
        """A few lines for a failing assertion."""
        return (
            f"codex exited {self.returncode}{' (timed out)' if self.timed_out else ''} "
            f"after {self.duration:.1f}s\nargs: {self.args}\n"
            f"stdout: {self.stdout[-2000:]}\nstderr: {self.stderr[-2000:]}"
        )


def rollouts(codex_home: Path) -> list[Path]:
    sessions = codex_home / "sessions"
    return sorted(sessions.rglob("rollout-*.jsonl")) if sessions.is_dir() else []


def _parse_events(stdout: str) -> list[Any]:
    events: list[Any] = []
    for line in stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                events.append(json.loads(line))
            except ValueError:
                continue
    return events


@dataclass
class CodexEnv:
    """A throwaway HOME (with CODEX_HOME) and project folder to run Codex in, possibly often."""

    home: Path
    codex_home: Path
    project_dir: Path
    base_url: str
    tmp: Path
    binary: Path = field(default_factory=find_codex)
    #: The HTTP(S) proxy every outside request goes to: the stand-in, which refuses and
    #: records it (:meth:`StandIn.outside_attempts`); ``None`` leaves the proxy unset.
    proxy: str | None = None
    model: str = MODEL
    extra_env: dict[str, str] = field(default_factory=dict)
    runs: list[CodexResult] = field(default_factory=list)

    @classmethod
    def create(
        cls,
        root: Path,
        standin: _StandInLike | str,
        *,
        project_dir: Path | None = None,
        binary: Path | None = None,
        model: str = MODEL,
        git: bool = True,
        extra_env: Mapping[str, str] | None = None,
    ) -> CodexEnv:
        """Makes ``root/home`` (``.codex/config.toml`` in it), ``root/tmp`` (Codex's TMPDIR)
        and ``root/project`` (unless given; a git repository unless ``git=False``).
        ``standin`` is a running stand-in or a provider base URL (``http://…/v1``)."""
        root = Path(root).resolve()
        home = root / "home"
        codex_home = home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        tmp = root / "tmp"
        tmp.mkdir(exist_ok=True)
        project = Path(project_dir) if project_dir is not None else root / "project"
        project.mkdir(parents=True, exist_ok=True)
        project = project.resolve()
        if git and not (project / ".git").exists():
            done = run_bounded(["git", "init", "-q", str(project)], timeout=60)
            if done.returncode != 0 or done.timed_out:
                raise PlangateError(f"git init {project} failed: {done.stderr.strip()}")
        base_url = standin if isinstance(standin, str) else standin.codex_base_url()
        proxy = None if isinstance(standin, str) else base_url.removesuffix("/v1")
        env = cls(
            home=home,
            codex_home=codex_home,
            project_dir=project,
            base_url=base_url,
            tmp=tmp,
            binary=binary or find_codex(),
            proxy=proxy,
            model=model,
            extra_env=dict(extra_env or {}),
        )
        env.write_config()
        return env

    @property
    def config_path(self) -> Path:
        return self.codex_home / "config.toml"

    def write_config(self, extra: str = "", projects: Sequence[Path] = ()) -> Path:
        """(Re)writes ``config.toml``; ``extra`` is appended TOML (hooks, trust state…)."""
        text = config_toml(
            self.base_url, [self.project_dir, *projects], model=self.model, extra=extra
        )
        self.config_path.write_text(text, encoding="utf-8")
        return self.config_path

    def environ(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in _DROPPED_ENV and not k.startswith(_DROPPED_ENV_PREFIXES)
        }
        env.update(
            {
                "HOME": str(self.home),
                "CODEX_HOME": str(self.codex_home),
                "XDG_CONFIG_HOME": str(self.home / ".config"),
                "TMPDIR": str(self.tmp),
                KEY_ENV: "sk-plangate-standin",
                "NO_PROXY": "127.0.0.1,localhost",
                "no_proxy": "127.0.0.1,localhost",
            }
        )
        for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "ALL_PROXY"):
            env.pop(name, None)
            if self.proxy is not None and name != "ALL_PROXY":
                env[name] = self.proxy
        env.update(self.extra_env)
        if extra:
            env.update(extra)
        return env

    @property
    def rollouts(self) -> list[Path]:
        return rollouts(self.codex_home)

    def exec(
        self,
        prompt: str,
        *,
        sandbox: Sandbox = "workspace-write",
        json_events: bool = True,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        timeout: float = 120,
        cwd: Path | None = None,
    ) -> CodexResult:
        """Runs ``codex exec PROMPT`` (stdin empty) and waits at most ``timeout`` seconds."""
        args = [str(self.binary), "exec", "-s", sandbox]
        if json_events:
            args.append("--json")
        args += [*extra_args, prompt]
        token = uuid.uuid4().hex
        done = run_bounded(
            args,
            timeout=timeout,
            cwd=cwd or self.project_dir,
            env=self.environ(env),
            token=token,
        )
        result = CodexResult(
            args=args,
            returncode=done.returncode,
            stdout=done.stdout,
            stderr=done.stderr,
            duration=done.duration,
            timed_out=done.timed_out,
            codex_home=self.codex_home,
            project_dir=self.project_dir,
            events=_parse_events(done.stdout) if json_events else [],
            run_token=token,
        )
        self.runs.append(result)
        return result

    def tui_command(self, *args: str) -> list[str]:
        """The terminal UI's argument list: ``codex --no-daemon ARGS`` (without the daemon,
        which would copy its binaries into CODEX_HOME and outlive the UI)."""
        return [str(self.binary), "--no-daemon", *args]
