"""Where the Claude Code CLI is, and which version it is.

``$PLANGATE_CLAUDE_BIN`` wins; then the copy ``make setup`` pins in this checkout's
``node_modules``; then ``claude`` on ``PATH``.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from plangate.errors import ClaudeCodeError
from plangate.processes import run_bounded

CLAUDE_BIN_ENV = "PLANGATE_CLAUDE_BIN"
_NODE_BIN = Path("node_modules") / "@anthropic-ai" / "claude-code-linux-x64" / "claude"

_SETUP_REMEDY = "run `make setup` in the plangate checkout to install the pinned Claude Code CLI"


class ClaudeNotFoundError(ClaudeCodeError):
    """The Claude Code CLI is not installed where plangate looks for it."""

    def __init__(self, message: str, remedy: str = "") -> None:
        super().__init__(message, remedy or _SETUP_REMEDY)


def repo_root() -> Path | None:
    """The plangate checkout this module runs from (the folder with package.json), if any."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "package.json").is_file() and (parent / "pyproject.toml").is_file():
            return parent
    return None


def find_claude() -> Path:
    """The Claude Code CLI: ``$PLANGATE_CLAUDE_BIN``, the pinned npm copy, or ``claude``."""
    configured = os.environ.get(CLAUDE_BIN_ENV)
    if configured:
        path = Path(configured)
        if path.is_file() and os.access(path, os.X_OK):
            return path
        raise ClaudeNotFoundError(
            f"{CLAUDE_BIN_ENV}={configured} is not an executable file",
            f"unset {CLAUDE_BIN_ENV} or point it at a claude executable; `make setup` "
            "installs the pinned Claude Code CLI",
        )
    candidates: list[Path] = []
    root = repo_root()
    if root is not None:
        candidates.append(root / _NODE_BIN)
    candidates.append(Path.cwd() / _NODE_BIN)
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    on_path = shutil.which("claude")
    if on_path:
        return Path(on_path)
    raise ClaudeNotFoundError(
        f"the Claude Code CLI is not installed (looked for {_NODE_BIN} and `claude` on PATH; "
        f"{CLAUDE_BIN_ENV} is not set)"
    )


def claude_version(binary: Path | None = None, timeout: float = 30) -> str:
    """``claude --version``'s number, e.g. ``2.1.332``."""
    exe = binary or find_claude()
    try:
        done = run_bounded([str(exe), "--version"], timeout=timeout)
    except OSError as error:
        raise ClaudeCodeError(f"cannot run {exe} --version: {error}", _SETUP_REMEDY) from error
    if done.timed_out:
        raise ClaudeCodeError(f"{exe} --version did not answer within {timeout:g}s", _SETUP_REMEDY)
    if done.returncode != 0:
        said = done.stderr.strip()[-300:] or "no output"
        raise ClaudeCodeError(
            f"{exe} --version exited with status {done.returncode}: {said}", _SETUP_REMEDY
        )
    out = done.stdout
    match = re.search(r"\d+\.\d+\.\d+", out)
    return match.group(0) if match else out.strip()
