"""Attempt accounting and the Waiting-on-you reasons. Pure.

Every failing round spends one attempt, whatever failed in it (a failing check that also
leaves the evidence gate failing spends one, not two); review send-backs spend from the
same attempts; re-planning spends nothing of its own. When a failure leaves no attempt, the
run waits on a person with the detail ``out of attempts``: with three attempts a run
re-plans at most twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from plangate.runs.model import Failure, Trigger

REASON_CHECK = "The checks fail and need you"
REASON_GATE = "Evidence gate failed"
REASON_ESCALATION = "The plan did not cover this"
REASON_REVIEW = "The review sent the change back"
REASON_AGENT = "The agent needs you"
REASON_ERROR = "The run stopped on an error"

DETAIL_OUT_OF_ATTEMPTS = "out of attempts"

TRIGGER_SENTENCES: dict[Trigger, str] = {
    "initial": "The plan the run started with.",
    "check": "A check failed.",
    "gate": "The evidence gate failed.",
    "escalation": "The agent escalated.",
}

Action = Literal["replan", "retry", "wait"]


@dataclass(frozen=True, slots=True)
class Decision:
    """What a failing round leads to: ``replan``, ``retry`` (back to the agent), ``wait``."""

    action: Action
    attempts_used: int
    reason: str | None = None
    detail: str | None = None


def _kinds(failures: Sequence[Failure]) -> set[str]:
    return {failure.kind for failure in failures}


def trigger_of(failures: Sequence[Failure]) -> Trigger:
    """What starts a re-plan after ``failures``: a check failure outranks the gate."""
    kinds = _kinds(failures)
    if "check" in kinds:
        return "check"
    if "gate" in kinds:
        return "gate"
    return "escalation"


def waiting_reason(failures: Sequence[Failure], has_plan: bool = True) -> str:
    """The reason a person sees when the run waits after ``failures``."""
    kinds = _kinds(failures)
    if "check" in kinds:
        return REASON_CHECK
    if "gate" in kinds:
        return REASON_GATE
    if "escalation" in kinds:
        return REASON_ESCALATION if has_plan else REASON_AGENT
    return REASON_REVIEW


def decide(
    failures: Sequence[Failure],
    attempts_used_before: int,
    attempts_allowed: int,
    has_plan: bool,
) -> Decision:
    """Spend one attempt for a failing round and say what happens next.

    With a plan, a failing check, gate or an escalation re-plans; a review send-back goes
    back to the agent. Without a plan nothing re-plans: a failing check or gate goes back to
    the agent, and an escalation waits on a person (there is no plan to correct).
    """
    if not failures:
        raise ValueError("a round without failures spends no attempt")
    used = attempts_used_before + 1
    reason = waiting_reason(failures, has_plan)
    if used >= attempts_allowed:
        return Decision("wait", used, reason, DETAIL_OUT_OF_ATTEMPTS)
    kinds = _kinds(failures)
    if kinds == {"review"}:
        return Decision("retry", used)
    if has_plan:
        return Decision("replan", used)
    if "escalation" in kinds:
        return Decision("wait", used, reason, failures[0].summary)
    return Decision("retry", used)


def why_line(trigger: Trigger, failures: Sequence[Failure]) -> str:
    """*Why this version*: the trigger's sentence and the failures in one line."""
    sentence = TRIGGER_SENTENCES[trigger]
    items = "; ".join(failure.summary for failure in failures)
    return f"{sentence} {items}" if items else sentence


def plan_changed_line(number: int, trigger: Trigger) -> str:
    """The conversation line for a new version: ``Plan changed to version 2: A check failed.``"""
    return f"Plan changed to version {number}: {TRIGGER_SENTENCES[trigger]}"
