"""The one error hierarchy of plangate.

    PlangateError            anything plangate expects and can explain; carries a remedy
    ├── UsageError           bad command-line input (exit 2)
    ├── ConfigError          a configuration or settings file that cannot be used
    ├── ClaudeCodeError      the Claude Code CLI is missing or misbehaved
    └── StateError           the state root cannot be read or written

Errors become exit codes in exactly one place: :func:`plangate.cli.main`. Hooks never raise
to Claude Code: :mod:`plangate.hooks.runtime` turns every failure into the documented outcome.
"""

from __future__ import annotations


class PlangateError(Exception):
    """An expected failure with a message for a person and the one thing to do about it."""

    exit_code = 1

    def __init__(self, message: str, remedy: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.remedy = remedy

    def __str__(self) -> str:
        if self.remedy:
            return f"{self.message} ({self.remedy})"
        return self.message


class UsageError(PlangateError):
    """The command line asked for something that cannot be done."""

    exit_code = 2


class ConfigError(PlangateError):
    """A configuration or settings file is unreadable or invalid."""


class ClaudeCodeError(PlangateError):
    """The Claude Code CLI could not be found or failed."""


class StateError(PlangateError):
    """The state root could not be used."""
