"""The fresh planner: its input, built only from a typed record, and what its answer leads to.

:func:`build_request` is the only way the engine makes a :class:`PlanRequest`: the previous
version, the failures (one-line summary each, a check with its output tail), the changed
files and the diff. There is no parameter through which a conversation could pass.
:func:`judge` decides what the engine does with the answer: accept the version, refuse it
(a rule of :func:`~plangate.runs.validator.validate_version` broken, or the sandbox changed
while planning), or wait on a person (the planner says one must decide, or wrote no usable
version). Turning a model's text into a :class:`PlanOutcome` is the agent's job
(:func:`plangate.agents.answers.parse_plan_answer`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from plangate.agents.base import PlanOutcome, PlanRequest
from plangate.errors import PlangateError
from plangate.plan.model import Plan
from plangate.plan.parse import parse_plan
from plangate.runs.model import Failure
from plangate.runs.validator import Refusal, validate_version


def build_request(
    *,
    run_id: str,
    workdir: Path,
    previous_plan: str | None,
    task: str | None,
    failures: Sequence[Failure],
    changed_files: Sequence[str],
    diff: str,
    version: int,
    turn: int,
    attempt: int,
) -> PlanRequest:
    return PlanRequest(
        run_id=run_id,
        workdir=workdir,
        previous_plan=previous_plan,
        task=task,
        failures=tuple(failures),
        changed_files=tuple(changed_files),
        diff=diff,
        version=version,
        turn=turn,
        attempt=attempt,
    )


@dataclass(frozen=True, slots=True)
class Judgement:
    """What became of a planner's answer.

    ``accepted`` (with ``plan``), ``refused`` (the version broke a rule; ``refusal``),
    ``needs_person`` or ``no_version``. ``detail`` is the line after *Waiting on you*'s
    reason when the run must wait.
    """

    kind: Literal["accepted", "refused", "needs_person", "no_version"]
    detail: str
    plan: Plan | None = None
    refusal: Refusal | None = None


def _listed(items: Sequence[str], quoted: bool) -> str:
    shown = ", ".join(f"`{item}`" if quoted else item for item in items[:5])
    return shown + (f" and {len(items) - 5} more" if len(items) > 5 else "")


def changed_refusal(sandbox_changes: Sequence[str], outside: Sequence[str]) -> Refusal | None:
    """The refusal of a version whose planner changed something: ``sandbox_changes`` are
    paths in the worktree, ``outside`` changes elsewhere in words
    (:func:`plangate.runs.snapshots.describe`). ``None`` when nothing changed."""
    parts = []
    if sandbox_changes:
        parts.append(f"the sandbox ({_listed(sandbox_changes, quoted=True)})")
    if outside:
        where = "outside it" if sandbox_changes else "things outside the sandbox"
        parts.append(f"{where} ({_listed(outside, quoted=False)})")
    if not parts:
        return None
    return Refusal(
        "changed_sandbox", f"the planner changed {' and '.join(parts)}; planning is read-only"
    )


def judge(
    outcome: PlanOutcome,
    previous: Plan,
    executed: Sequence[int],
    changed_files: Sequence[str],
    sandbox_changes: Sequence[str],
    outside_changes: Sequence[str] = (),
) -> Judgement:
    """Accept or refuse a planner's answer. ``sandbox_changes`` are the paths the planner
    changed in the sandbox, ``outside_changes`` what it changed elsewhere, in words (the
    main repository's files and refs, the watched folders); it may change nothing."""
    changed = changed_refusal(sandbox_changes, outside_changes)
    if changed is not None:
        return Judgement("refused", f"new version refused: {changed}", refusal=changed)
    if outcome.plan_text is None:
        if outcome.needs_person:
            return Judgement("needs_person", f"a person must decide: {outcome.needs_person}")
        return Judgement("no_version", "the planner wrote no usable new version")
    try:
        plan = parse_plan(outcome.plan_text, source="<new version>")
    except PlangateError as error:
        return Judgement("no_version", f"the planner wrote no usable new version: {error}")
    refusal = validate_version(previous, executed, changed_files, plan)
    if refusal is not None:
        return Judgement("refused", f"new version refused: {refusal}", plan=plan, refusal=refusal)
    return Judgement("accepted", "", plan=plan)
