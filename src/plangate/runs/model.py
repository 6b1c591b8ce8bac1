"""The values of a run. Plain frozen values; the store keeps them, the workflow passes them.

Every value here is picklable (DBOS records step results with pickle) and carries no
behaviour beyond formatting.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from plangate import markdown
from plangate.failures import Failure as Failure
from plangate.failures import FailureKind as FailureKind

RunState = Literal["queued", "running", "checking", "replanning", "waiting", "done", "errored"]
Trigger = Literal["initial", "check", "gate", "escalation"]

RUN_STATES: tuple[RunState, ...] = (
    "queued",
    "running",
    "checking",
    "replanning",
    "waiting",
    "done",
    "errored",
)
"""Every state a run can be in: ``queued`` until a process takes its turn; ``running``,
``checking`` and ``replanning`` while it is carried; at the end of a turn ``waiting`` (on a
person), ``done``, or ``errored`` (a bug stopped it: see :class:`Errored`)."""
ENDED_STATES: tuple[RunState, ...] = ("waiting", "done", "errored")
"""The states a turn ends in; a reply starts the next turn from any of them."""
ACTIVE_STATES: tuple[RunState, ...] = ("queued", "running", "checking", "replanning")
"""The states of a turn not yet ended: queued, or carried by a process."""


@dataclass(frozen=True, slots=True)
class Waiting:
    """Why a run waits on a person: the reason, the detail after it, the agent's last word."""

    reason: str
    detail: str
    last_message: str = ""

    def line(self) -> str:
        return f"Waiting on you: {self.reason} ({self.detail})"


@dataclass(frozen=True, slots=True)
class Errored:
    """Why a run is ``errored``: an unexpected exception (a bug, not an expected failure of a
    stage), one line, and the log file that holds its traceback."""

    error: str
    log: str

    def line(self) -> str:
        return f"Errored: {self.error} (traceback in {self.log})"


@dataclass(frozen=True, slots=True)
class VersionRecord:
    """A plan version and why it exists. A refused proposal has ``number=None``.

    ``trigger`` is what started it (``initial`` for the plan the run began with), ``why``
    the one line the Plan panel shows under *Why this version*.
    """

    seq: int
    number: int | None
    trigger: Trigger
    why: str
    accepted: bool
    refusal: str | None
    attempts_used: int
    plan_text: str
    failures: tuple[Failure, ...] = ()
    created_at: str = ""


@dataclass(frozen=True, slots=True)
class StepRecord:
    """A step the agent carried out (or escalated), with its commit and changed files.

    ``step`` is ``None`` for a turn on the bare task or a fix turn (after a review send-back
    or a reply, or a failing check on a run without a plan).
    """

    key: str
    turn: int
    attempt: int
    version: int
    step: int | None
    status: Literal["done", "escalated"]
    commit: str | None
    changed_files: tuple[str, ...]
    message: str
    escalation: str | None = None
    evidence: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def outcome(self) -> Literal["done", "no_changes", "escalated"]:
        """What became of the step as people are told it: a step carried out that changed
        no file is ``no_changes``, never plainly ``done`` (it still got its empty commit)."""
        if self.status == "done" and not self.changed_files:
            return "no_changes"
        return self.status


@dataclass(frozen=True, slots=True)
class CheckRecord:
    """One run of a declared check. ``output`` is the whole output; ``tail`` what is shown."""

    round_key: str
    index: int
    name: str | None
    command: str
    exit_code: int | None
    timed_out: bool
    duration_seconds: float
    output: str
    tail: str

    @property
    def passed(self) -> bool:
        return not self.timed_out and self.exit_code == 0

    @property
    def label(self) -> str:
        command = markdown.code_span(self.command)
        return command if self.name is None else f"{self.name} ({command})"


@dataclass(frozen=True, slots=True)
class Event:
    """One line of the run's conversation (append-only)."""

    seq: int
    kind: str
    text: str
    turn: int
    created_at: str = ""


@dataclass(frozen=True, slots=True)
class RunRecord:
    """A run as the store holds it."""

    id: str
    created_at: str
    updated_at: str
    repo: str
    base_commit: str
    branch: str
    worktree: str
    agent: str
    task: str | None
    plan_source: str | None
    has_plan: bool
    attempts_allowed: int
    review: bool
    extra_checks: tuple[str, ...]
    state: RunState
    turn: int
    attempts_used: int
    version: int
    waiting: Waiting | None = None
    title: str = ""
    executor: str | None = None
    errored: Errored | None = None
    notice: str | None = None  # a problem the process carrying it reports (its heartbeat)
    carried_by: str | None = None  # the executor carrying it, or that carried it last
    host: str | None = None  # carried_by's host
    extra: dict[str, str] = field(default_factory=dict)
