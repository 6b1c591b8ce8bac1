"""Where the Claude Code CLI is, and which version it is.

``$PLANGATE_CLAUDE_BIN`` wins; then the copy ``make setup`` pins in this checkout's
``node_modules``; then ``claude`` on ``PATH``. When none is found, the remedy is ``make
setup`` in a checkout, and the npm command that installs the verified version elsewhere (a
wheel installed with ``uv tool install`` or ``pipx install`` has no checkout).
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

VERIFIED_VERSIONS = ("2.1.332",)
"""The Claude Code versions plangate's journal reader and hooks are verified with."""
NPM_INSTALL = f"npm install -g @anthropic-ai/claude-code@{VERIFIED_VERSIONS[-1]}"
_CHECKOUT_REMEDY = "run `make setup` in the plangate checkout to install the pinned Claude Code CLI"
_USER_REMEDY = (
    f"install the Claude Code CLI with `{NPM_INSTALL}`, or point {CLAUDE_BIN_ENV} at a "
    "claude executable"
)


class ClaudeNotFoundError(ClaudeCodeError):
    """The Claude Code CLI is not installed where plangate looks for it."""

    def __init__(self, message: str, remedy: str = "") -> None:
        super().__init__(message, remedy or install_remedy())


def repo_root() -> Path | None:
    """The plangate checkout this module runs from (the folder with package.json), if any."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "package.json").is_file() and (parent / "pyproject.toml").is_file():
            return parent
    return None


def install_remedy() -> str:
    """How to get the CLI: ``make setup`` in a checkout, else the npm command."""
    return _CHECKOUT_REMEDY if repo_root() is not None else _USER_REMEDY


def user_claude() -> Path | None:
    """The CLI a user's Claude Code sessions run: ``$PLANGATE_CLAUDE_BIN``, else ``claude`` on
    PATH (never a checkout's copy)."""
    configured = os.environ.get(CLAUDE_BIN_ENV)
    if configured:
        return Path(configured)
    on_path = shutil.which("claude")
    return Path(on_path) if on_path else None


def pinned_or_on_path(node_bin: Path, name: str) -> Path | None:
    """A CLI ``make setup`` pins with npm: ``node_bin`` (relative) in this checkout or the
    working folder, else ``name`` on PATH; None when none is an executable file."""
    root = repo_root()
    candidates = ([root / node_bin] if root is not None else []) + [Path.cwd() / node_bin]
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    on_path = shutil.which(name)
    return Path(on_path) if on_path else None


def find_claude() -> Path:
    """The Claude Code CLI: ``$PLANGATE_CLAUDE_BIN``, the pinned npm copy, or ``claude``."""
    configured = os.environ.get(CLAUDE_BIN_ENV)
    if configured:
        path = Path(configured)
        if path.is_file() and os.access(path, os.X_OK):
            return path
        raise ClaudeNotFoundError(
            f"{CLAUDE_BIN_ENV}={configured} is not an executable file",
            f"unset {CLAUDE_BIN_ENV} or point it at a claude executable ({install_remedy()})",
        )
    found = pinned_or_on_path(_NODE_BIN, "claude")
    if found is not None:
        return found
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
        raise ClaudeCodeError(f"cannot run {exe} --version: {error}", install_remedy()) from error
    if done.timed_out:
        raise ClaudeCodeError(
            f"{exe} --version did not answer within {timeout:g}s", install_remedy()
        )
    if done.returncode != 0:
        said = done.stderr.strip()[-300:] or "no output"
        raise ClaudeCodeError(
            f"{exe} --version exited with status {done.returncode}: {said}", install_remedy()
        )
    out = done.stdout
    match = re.search(r"\d+\.\d+\.\d+", out)
    return match.group(0) if match else out.strip()
