"""How a run's plan approval is told, beside its versions: which version is the approved one,
what each other version changed relative to it, and the gate's open questions and ``taste``
decisions. ``plangate show`` and the viewer both start from :func:`run_approval`::

    view = run_approval(store, run_id)       # None: the run has no plan, or predates approvals
    view.lines()                             # what ``plangate show`` prints
    view.as_json()                           # ``approval`` in ``plangate show --json``
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from plangate.plan import Plan, PlanFormatError, parse_plan
from plangate.runs.approval import Approval
from plangate.runs.model import VersionRecord
from plangate.runs.plan_delta import PlanDelta, compare_plans
from plangate.runs.store import Store


def _parse(text: str | None) -> Plan | None:
    if text is None:
        return None
    try:
        return parse_plan(text)
    except PlanFormatError:
        return None


@dataclass(frozen=True, slots=True)
class VersionNote:
    """One accepted version against the approved plan."""

    number: int
    approved: bool  # this version is the approved plan itself
    delta: PlanDelta | None  # what it changed relative to the approved plan (None: unknown)

    def line(self) -> str:
        if self.approved:
            return "the approved plan"
        if self.delta is None:
            return "no approved plan to compare with"
        kept = ", ".join(str(n) for n in self.delta.kept) or "none"
        return f"relative to the approved plan: kept steps {kept}; {self.delta.describe()}"

    def as_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "approved": self.approved,
            "relative_to_approved": None if self.delta is None else self.delta.as_json(),
        }


@dataclass(frozen=True, slots=True)
class RunApproval:
    """A run's approval and its versions against the approved plan."""

    approval: Approval
    notes: tuple[VersionNote, ...]

    @property
    def approved_version(self) -> int | None:
        return next((note.number for note in self.notes if note.approved), None)

    def note(self, number: int | None) -> VersionNote | None:
        return next((n for n in self.notes if n.number == number), None)

    def lines(self) -> list[str]:
        """The lines ``plangate show`` prints after the state."""
        approval = self.approval
        lines = [approval.line()]
        if self.approved_version is not None:
            lines.append(f"Approved version: {self.approved_version}")
        if approval.review.phases:
            reviewed = ", ".join(phase.title for phase in approval.review.phases)
            lines.append(f"Reviewed in: {reviewed}")
        if approval.review.open_questions:
            lines.append("Open questions from the gate:")
            lines += [f"  {i}. {q}" for i, q in enumerate(approval.review.open_questions, 1)]
        if approval.review.taste:
            lines.append("Taste decisions (flip them if you disagree):")
            lines += [
                f"  {d.id or 'Phase ' + d.phase}: {d.change or d.finding} ({d.reason})"
                for d in approval.review.taste
            ]
        return lines

    def as_json(self) -> dict[str, Any]:
        data = self.approval.as_json()
        data.pop("approved_text", None)  # the approved plan is version 1, or the copy it names
        data["approved_version"] = self.approved_version
        data["versions"] = [note.as_json() for note in self.notes]
        return data


def relate(approval: Approval, versions: Sequence[VersionRecord]) -> RunApproval:
    """Each accepted version against the approved plan."""
    approved_plan = _parse(approval.approved_text)
    notes: list[VersionNote] = []
    for version in versions:
        if version.number is None:
            continue
        is_approved = (
            approval.approved
            and approval.approved_text is not None
            and version.plan_text == approval.approved_text
        )
        current = _parse(version.plan_text)
        delta = None
        if not is_approved and approved_plan is not None and current is not None:
            delta = compare_plans(approved_plan, current)
        notes.append(VersionNote(version.number, is_approved, delta))
    return RunApproval(approval, tuple(notes))


def run_approval(store: Store, run_id: str) -> RunApproval | None:
    """The run's approval as recorded when it began, with its versions; ``None`` without."""
    text = store.approval(run_id)
    if text is None:
        return None
    return relate(Approval.loads(text), store.versions(run_id))


def approval_json(store: Store, run_id: str) -> dict[str, Any] | None:
    """The run's approval as ``plangate show --json`` and the viewer give it, or ``None``."""
    view = run_approval(store, run_id)
    return None if view is None else view.as_json()
