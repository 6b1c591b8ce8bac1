"""The one error hierarchy of plangate, and the shape of a command's exit codes.

    PlangateError            anything plangate expects and can explain; carries a remedy
    ├── UsageError           bad command-line input (the command's usage code)
    ├── ConfigError          a configuration or settings file that cannot be used
    ├── StateError           the state root cannot be read or written
    ├── AgentError           a run's coding agent failed or could not be started
    │   └── ClaudeCodeError  the Claude Code CLI is missing or misbehaved
    ├── GitError             git failed in a run's sandbox
    ├── CheckError           a run's declared check could not be run
    ├── PlanError            a plan that cannot be used (plangate.plan.errors.PlanFormatError)
    ├── ContractError        a workflow contract that cannot be used (names its line)
    ├── AgentSessionError    a command only a person may run, run inside an agent session
    └── RunErroredError      a run's turn ended on an unexpected error (a bug); see its log

A run waits on a person only for the errors of its own stages (:data:`RUN_STAGE_ERRORS`);
any other exception in a run is a bug: the run is marked ``errored`` and the traceback is
logged in the run's folder (``docs/runs-design.md``).

Errors become exit codes in exactly one place: :func:`plangate.cli.main`, from the command's
:class:`ExitCodes` table. Hooks never raise to Claude Code: :mod:`plangate.hook_io.runtime`
turns every failure into the documented outcome.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # the hook path imports this module: standard library basics only
    from collections.abc import Mapping

EXIT_INTERNAL = 70
"""An unexpected exception (a bug): ``EX_SOFTWARE``; no command uses it as an outcome."""
EXIT_INTERRUPTED = 130
"""Ctrl+C (or, for ``run`` and ``reply``, SIGTERM), as a shell reports SIGINT."""
COMMON_EXIT_CODES: dict[int, str] = {
    EXIT_INTERNAL: "internal error (a bug): its traceback is in a crash log, and one line on "
    "stderr says where",
    EXIT_INTERRUPTED: "interrupted: Ctrl+C (`run` and `reply`: SIGTERM too; the turn resumes in "
    "a worker)",
}
"""What every command may exit with besides its own table."""


class PlangateError(Exception):
    """An expected failure with a message for a person and the one thing to do about it."""

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


class ConfigError(PlangateError):
    """A configuration or settings file is unreadable or invalid."""


class StateError(PlangateError):
    """The state root could not be used."""


class AgentError(PlangateError):
    """A run's coding agent (its step, planner or review) failed or could not be started."""


class ClaudeCodeError(AgentError):
    """The Claude Code CLI could not be found or failed."""


class GitError(PlangateError):
    """A git command failed in a run's sandbox."""


class CheckError(PlangateError):
    """A run's declared check could not be run at all (a check that fails is no error)."""


class PlanError(PlangateError):
    """A plan that cannot be used."""


class ContractError(PlangateError):
    """A workflow contract that cannot be used: ``path`` and ``line`` (1-based; 0 when the
    error is about the whole file) say where."""

    def __init__(self, message: str, remedy: str = "", *, path: str = "", line: int = 0) -> None:
        super().__init__(message, remedy)
        self.path = path
        self.line = line
        self.more: list[ContractError] = []  # the file's other errors, found in the same read

    def where(self) -> str:
        """``file.toml:12`` (or just the file when no line is known)."""
        return f"{self.path}:{self.line}" if self.line else self.path


class AgentSessionError(PlangateError):
    """A command that opens or weakens a gate was run inside a coding agent's session
    (:func:`plangate.agent_session.refuse_inside`, the ``agent_command`` code): only a person
    may run it, in their own terminal."""


class RunErroredError(PlangateError):
    """A run's turn ended on an unexpected error (a bug); ``log`` is the traceback's file."""

    def __init__(self, message: str, remedy: str = "", *, log: str = "") -> None:
        super().__init__(message, remedy)
        self.log = log


RUN_STAGE_ERRORS: tuple[type[PlangateError], ...] = (AgentError, GitError, CheckError, PlanError)
"""The errors of a run's own stages: the run waits on a person; anything else is a bug."""


class ExitCodes:
    """One command's exit codes: its table in docs/exit-codes.md.

    ``codes`` maps every code the command exits with (besides :data:`COMMON_EXIT_CODES`) to
    what it means. ``usage`` is the one a :class:`UsageError` exits with (a bad flag
    included); it means nothing else. ``failure`` is the one any other
    :class:`PlangateError` exits with, or ``None`` when the command raises none, so that one
    escaping is a bug (:data:`EXIT_INTERNAL`). ``usage_label``, when given, starts the line
    a usage error prints (``plangate report: SKILL_GATES_USAGE: …``).
    """

    __slots__ = ("codes", "usage", "failure", "usage_label", "outcomes")

    def __init__(
        self,
        codes: Mapping[int, str],
        *,
        usage: int = 2,
        failure: int | None = None,
        usage_label: str = "",
    ) -> None:
        self.codes = dict(codes)
        self.usage = usage
        self.failure = failure
        self.usage_label = usage_label
        self.outcomes = frozenset(self.codes) - {usage}
        if self.usage not in self.codes:
            raise ValueError(f"usage code {self.usage} has no meaning in the table")
        if self.failure is not None and self.failure not in self.codes:
            raise ValueError(f"failure code {self.failure} has no meaning in the table")
        if self.failure == self.usage:
            raise ValueError("a failure must not share the usage code")
        common = set(COMMON_EXIT_CODES) & set(self.codes)
        if common:
            raise ValueError(f"codes {sorted(common)} are every command's; leave them out")

    def table(self) -> dict[int, str]:
        """Every code this command exits with, the common ones included, in order."""
        return dict(sorted({**self.codes, **COMMON_EXIT_CODES}.items()))
