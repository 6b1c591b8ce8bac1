"""Helpers that run the real Claude Code CLI against the stand-in model (tests and demo)."""

from plangate.claude_cli import CLAUDE_BIN_ENV, ClaudeNotFoundError, claude_version, find_claude
from plangate.testing.claude import ClaudeEnv, ClaudeResult, project_slug, write_claude_json

__all__ = [
    "CLAUDE_BIN_ENV",
    "ClaudeEnv",
    "ClaudeNotFoundError",
    "ClaudeResult",
    "claude_version",
    "find_claude",
    "project_slug",
    "write_claude_json",
]
