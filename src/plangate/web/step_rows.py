"""The Plan panel's step rows at one version: what became of each step, and where it comes
from (``docs/runs-design.md``, "Steps kept, re-attempted, or with no changes").

* **status**: ``done``; ``no_changes`` (carried out, but it changed no file: its criteria
  still needed evidence); ``escalated`` (at this version); ``in_progress``, ``pending``, or
  ``not_carried_out`` (an earlier version's step that never ran).
* **origin**: ``first`` (version 1), ``added`` (``new in v3``), ``kept`` (carried out under
  an earlier version and not run again: ``kept from v1`` names *that* version, however many
  versions kept it since), ``reattempted`` (it escalated under an earlier version, so it was
  not carried out, and this version runs it again), ``unchanged`` (same text as an earlier
  version, not carried out yet: ``unchanged from v1`` names where the text comes from).
"""

from __future__ import annotations

from typing import Any

from plangate.plan.model import Plan, Step
from plangate.runs.model import RunRecord, StepRecord

Data = dict[str, Any]

STEP_LABELS = {
    "done": "done",
    "no_changes": "no changes",
    "escalated": "escalated",
    "in_progress": "in progress",
    "pending": "pending",
    "not_carried_out": "not carried out",
}
_NOT_YET = ("pending", "not_carried_out")


def text_origin(plans: dict[int, Plan | None], number: int, step: Step) -> int:
    """The earliest version of the unbroken run of versions up to ``number`` that hold
    ``step`` word for word (``number`` itself when the step is new there)."""
    origin = number
    while (earlier := plans.get(origin - 1)) is not None and earlier.step(step.number) == step:
        origin -= 1
    return origin


def _status(
    step: Step,
    number: int,
    run: RunRecord,
    done: StepRecord | None,
    escalated: set[tuple[int, int]],
    first_open: int | None,
) -> str:
    if done is not None and done.version <= number:
        return done.outcome
    if (number, step.number) in escalated:
        return "escalated"
    if number != run.version:
        return "not_carried_out"
    if run.state == "running" and step.number == first_open:
        return "in_progress"
    return "pending"


def _origin(
    number: int, since: int, status: str, done: StepRecord | None, escalated_in: list[int]
) -> tuple[str, str]:
    if number == 1:
        return "first", ""
    if since == number:
        return "added", f"new in v{number}"
    if done is not None and since <= done.version < number:
        return "kept", f"kept from v{done.version}"
    earlier = [v for v in escalated_in if since <= v < number]
    if earlier:
        verb = "to re-attempt" if status in _NOT_YET else "re-attempted"
        return "reattempted", f"{verb} in v{number} (escalated in v{earlier[-1]})"
    return "unchanged", f"unchanged from v{since}"


def step_rows(
    run: RunRecord,
    plans: dict[int, Plan | None],
    records: list[StepRecord],
    number: int,
    commit_url: str,
) -> list[Data]:
    """The rows of version ``number``'s steps; ``commit_url`` is where a step's change is
    shown (``?commit=SHA`` is added)."""
    plan = plans.get(number)
    if plan is None:
        return []
    done = {r.step: r for r in records if r.status == "done" and r.step is not None}
    escalations = [r for r in records if r.status == "escalated" and r.step is not None]
    escalated = {(r.version, r.step) for r in escalations if r.step is not None}
    open_steps = [s.number for s in plan.steps if s.number not in done]
    first_open = open_steps[0] if open_steps else None
    rows = []
    for step in plan.steps:
        record = done.get(step.number)
        status = _status(step, number, run, record, escalated, first_open)
        carried = record if status in ("done", "no_changes") else None
        escalated_in = sorted(r.version for r in escalations if r.step == step.number)
        origin, label = _origin(
            number, text_origin(plans, number, step), status, carried, escalated_in
        )
        here = [r for r in escalations if r.step == step.number and r.version <= number]
        rows.append(
            {
                "number": step.number,
                "title": step.title,
                "files": list(step.files),
                "serves": list(step.serves),
                "body": step.body,
                "status": status,
                "status_label": STEP_LABELS[status],
                "origin": origin,
                "origin_label": label,
                "carried_out_in": carried.version if carried else None,
                "commit": carried.commit if carried else None,
                "commit_url": (
                    f"{commit_url}?commit={carried.commit}" if carried and carried.commit else None
                ),
                "changed_files": list(carried.changed_files) if carried else [],
                "escalation": here[-1].escalation if here else None,
                "escalated_in": here[-1].version if here else None,
            }
        )
    return rows
