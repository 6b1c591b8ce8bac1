"""The one interface between a run and a coding agent: do a step, plan, review.

A run calls an :class:`Agent` for three things, each an independent call with everything it
needs in its request (an agent keeps no state between calls: a run may resume in another
process, and the planner must start fresh every time):

* :meth:`Agent.do_step`: carry out one step of the plan in the run's worktree (edit tools
  allowed). With no step (``request.step is None``) the agent works on the bare task, or,
  when ``request.feedback`` is not empty, fixes what the feedback names.
* :meth:`Agent.plan`: the fresh planner. Read-only: it may read files in ``workdir`` and
  must change none (the engine verifies the worktree unchanged afterwards and refuses the
  version of a planner that changed a file). It answers with a whole plan in the plan format
  (``docs/plan-format.md``) or says a person must decide.
* :meth:`Agent.review`: the optional review of the whole change: approve, or send it back
  with a reason.

``version``, ``turn`` and ``attempt`` say where in the run a request comes from. A request
made again after a crash has the same values, so a scripted agent can answer it the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Literal, Protocol, runtime_checkable

from plangate.failures import Failure
from plangate.plan.model import Step

__all__ = [
    "Agent",
    "Failure",
    "PlanOutcome",
    "PlanRequest",
    "ReviewOutcome",
    "ReviewRequest",
    "StepOutcome",
    "StepRequest",
]


def _no_evidence() -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class StepRequest:
    """What the agent is asked to do for one step (or, with ``step=None``, for the task).

    ``plan_text`` is the canonical text of the plan version being carried out (``None`` for
    a run without a plan, which has ``task`` instead). ``feedback`` holds the failures that
    come back to the agent: on a run without a plan a failing check or gate, after a review
    send-back the review's reason, after a reply the failures the run was waiting on.
    ``reply`` is the person's message that started this turn, if any.
    """

    run_id: str
    workdir: Path
    step: Step | None
    plan_text: str | None
    version: int = 0  # the plan version being carried out; 0 when the run has no plan
    task: str | None = None
    feedback: tuple[Failure, ...] = ()
    reply: str | None = None
    turn: int = 1  # a person's reply starts a new turn
    attempt: int = 0  # attempts already spent in this turn


@dataclass(frozen=True, slots=True)
class StepOutcome:
    """What came back from a step.

    ``status="escalate"`` with ``escalation`` saying why: the step cannot be done as written,
    needs a file the plan does not name, or is too large for one context. ``evidence`` maps
    an acceptance criterion id to the artifacts (paths relative to ``workdir``) the agent
    cites for it; the evidence gate accepts a cited artifact only if it exists.
    """

    status: Literal["done", "escalate"]
    message: str
    escalation: str | None = None
    evidence: Mapping[str, tuple[str, ...]] = field(default_factory=_no_evidence)


@dataclass(frozen=True, slots=True)
class PlanRequest:
    """The fresh planner's whole input. Never a conversation.

    ``previous_plan`` is the canonical text of the version that did not hold (``None`` when
    there is none yet and the planner plans ``task``). ``failures`` are the failed checks,
    gate items or the escalation, one-line summary each, a check with its output tail.
    ``changed_files`` and ``diff`` are the change since the run's base commit.
    ``version`` is the number the new version gets if it is accepted.
    """

    run_id: str
    workdir: Path
    previous_plan: str | None
    task: str | None
    failures: tuple[Failure, ...]
    changed_files: tuple[str, ...]
    diff: str
    version: int = 2
    turn: int = 1
    attempt: int = 0


@dataclass(frozen=True, slots=True)
class PlanOutcome:
    """The planner's answer: a whole plan (``plan_text``), or ``needs_person`` saying why a
    person must decide. Neither means the planner wrote no usable version."""

    plan_text: str | None
    needs_person: str | None
    message: str


@dataclass(frozen=True, slots=True)
class ReviewRequest:
    """The review of the whole change so far."""

    run_id: str
    workdir: Path
    plan_text: str | None
    task: str | None
    changed_files: tuple[str, ...]
    diff: str
    version: int = 0
    turn: int = 1
    attempt: int = 0


@dataclass(frozen=True, slots=True)
class ReviewOutcome:
    """``approved``, or sent back with ``reason`` (one line)."""

    approved: bool
    reason: str
    message: str = ""


@runtime_checkable
class Agent(Protocol):
    """A coding agent and its planner and reviewer. Implementations: ``ClaudeCodeAgent``
    (``plangate.agents.claude_code``), ``ScriptedAgent`` (``plangate.agents.scripted``)."""

    def do_step(self, request: StepRequest) -> StepOutcome: ...

    def plan(self, request: PlanRequest) -> PlanOutcome: ...

    def review(self, request: ReviewRequest) -> ReviewOutcome: ...
