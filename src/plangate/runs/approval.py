"""Whether a plan is the one ``/autoplan`` approved: its Final Approval Gate, read and checked.

``/autoplan`` leaves, in the artifact folder ``<repo>/.plangate/tmp/autoplan/``
(``docs/autoplan-artifacts.md``), a ``gate.json`` naming the approved plan's path and
SHA-256, the phases that reviewed it with their close packets, and (since this module) an
immutable copy of the approved bytes. The active plan's first line names its restore point,
and so the folder; a plan without that line is looked up in the artifact folders of its
ancestors. :func:`read_approval` returns an :class:`Approval`:

==============  ==============================================================================
``approved``    a gate names this plan, its close packets verify, and the plan's bytes are the
                approved ones
``changed``     the gate approved other bytes of this plan: ``change`` says what differs from
                the approved copy (steps kept, added, removed, edited; sections)
``unreviewed``  no gate names this plan
``unverified``  a gate names it but cannot be trusted (unreadable, or its artifacts changed)
==============  ==============================================================================

The review record (decisions per phase, top risks, open questions, ``taste`` decisions) is
read from the approved plan's ``## Review record`` (:mod:`plangate.runs.review_record`).
``plangate run`` stores :meth:`Approval.as_json` in the run's row; ``--require-approval``
refuses anything but ``approved`` with :class:`UnapprovedPlanError`.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Any, Literal

from plangate.autoplan import layout
from plangate.errors import PlangateError
from plangate.plan import Plan, PlanFormatError, parse_plan, render_plan
from plangate.runs.plan_delta import PlanDelta, compare_plans
from plangate.runs.review_record import Decision, PhaseReview, ReviewRecord, read_review_record

ApprovalState = Literal["approved", "changed", "unreviewed", "unverified"]
APPROVAL_STATES: tuple[ApprovalState, ...] = ("approved", "changed", "unreviewed", "unverified")
SCHEMA = 1


class UnapprovedPlanError(PlangateError):
    """``--require-approval`` and the plan is not the one a Final Approval Gate approved."""


@dataclass(frozen=True, slots=True)
class Approval:
    """A plan's review and approval as the artifacts record them."""

    state: ApprovalState
    plan_path: str
    plan_sha256: str
    reason: str  # one line: why this state
    gate_path: str | None = None
    gate_sha256: str | None = None  # the gate's identity: the hash of gate.json's bytes
    gate_status: str | None = None
    approved_sha256: str | None = None
    restore_path: str | None = None
    phases: tuple[str, ...] = ()  # the phases the gate lists: ceo, design, dx, eng
    review: ReviewRecord = field(default_factory=ReviewRecord)
    change: PlanDelta | None = None  # state "changed" with an approved copy kept
    approved_text: str | None = None  # the approved plan, canonical (render_plan)

    @property
    def approved(self) -> bool:
        return self.state == "approved"

    def line(self) -> str:
        """``Approval: approved by the Final Approval Gate …`` as ``plangate show`` prints it."""
        if self.approved:
            return (
                f"Approval: approved by the Final Approval Gate {self.gate_path} "
                f"(gate {str(self.gate_sha256)[:12]}, plan sha256 {self.plan_sha256[:12]})"
            )
        return f"Approval: NOT APPROVED ({self.state}): {self.reason}"

    def as_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "state": self.state,
            "approved": self.approved,
            "reason": self.reason,
            "plan": {"path": self.plan_path, "sha256": self.plan_sha256},
            "gate": None
            if self.gate_path is None
            else {
                "path": self.gate_path,
                "sha256": self.gate_sha256,
                "status": self.gate_status,
                "approved_sha256": self.approved_sha256,
                "restore_path": self.restore_path,
                "phases": list(self.phases),
            },
            "review": [_phase_json(phase) for phase in self.review.phases],
            "open_questions": list(self.review.open_questions),
            "taste": [_decision_json(d) for d in self.review.taste],
            "change": None if self.change is None else self.change.as_json(),
            "approved_text": self.approved_text,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Approval:
        gate = data.get("gate") or {}
        plan = data.get("plan") or {}
        change = data.get("change")
        state = data.get("state")
        return cls(
            state=state if state in APPROVAL_STATES else "unverified",
            plan_path=str(plan.get("path", "")),
            plan_sha256=str(plan.get("sha256", "")),
            reason=str(data.get("reason", "")),
            gate_path=gate.get("path"),
            gate_sha256=gate.get("sha256"),
            gate_status=gate.get("status"),
            approved_sha256=gate.get("approved_sha256"),
            restore_path=gate.get("restore_path"),
            phases=tuple(gate.get("phases", ())),
            review=ReviewRecord(tuple(_phase_from(p) for p in data.get("review", ()))),
            change=PlanDelta.from_json(change) if isinstance(change, dict) else None,
            approved_text=data.get("approved_text"),
        )

    def dumps(self) -> str:
        return json.dumps(self.as_json(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def loads(cls, text: str) -> Approval:
        return cls.from_json(json.loads(text))


def _decision_json(d: Decision) -> dict[str, str]:
    return {
        "phase": d.phase,
        "id": d.id,
        "finding": d.finding,
        "severity": d.severity,
        "decision": d.decision,
        "change": d.change,
        "reason": d.reason,
    }


def _phase_json(phase: PhaseReview) -> dict[str, Any]:
    return {
        "number": phase.number,
        "name": phase.name,
        "title": phase.title,
        "decisions": [_decision_json(d) for d in phase.decisions],
        "top_risks": list(phase.top_risks),
        "open_questions": list(phase.open_questions),
    }


def _phase_from(data: dict[str, Any]) -> PhaseReview:
    return PhaseReview(
        str(data.get("number", "")),
        str(data.get("name", "")),
        tuple(Decision(**d) for d in data.get("decisions", ())),
        tuple(data.get("top_risks", ())),
        tuple(data.get("open_questions", ())),
    )


# --- reading the artifacts ----------------------------------------------------------------


def _gate_candidates(plan_path: str, data: bytes) -> list[str]:
    """Where a gate for this plan may be: its restore point's folder, then its ancestors'."""
    found: list[str] = []
    restore = layout.restore_header_path(data)
    if restore is not None:
        found.append(os.path.join(os.path.dirname(restore), layout.GATE))
    folder = os.path.dirname(plan_path)
    while True:
        candidate = os.path.join(layout.artifact_dir(folder), layout.GATE)
        if candidate not in found:
            found.append(candidate)
        parent = os.path.dirname(folder)
        if parent == folder:
            return found
        folder = parent


def _parse(text: str, source: str) -> Plan | None:
    try:
        return parse_plan(text, source=source)
    except PlanFormatError:
        return None


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


class _Gate:
    """One ``gate.json`` that names the plan, read and checked."""

    def __init__(self, path: str, raw: bytes, value: dict[str, Any]) -> None:
        self.path = path
        self.sha256 = hashlib.sha256(raw).hexdigest()
        self.value = value
        approved = value.get("approvedPlan") or {}
        self.approved_sha256 = str(approved.get("sha256", ""))
        self.status = str(value.get("status", ""))
        self.restore_path = value.get("restorePath")
        self.phases = tuple(str(p.get("phase", "")) for p in value.get("phases", ()))

    def problem(self) -> str | None:
        """Why the gate cannot be trusted, or ``None``: every close packet must verify."""
        for entry in self.value.get("phases", ()):
            packet = str(entry.get("closePacket", ""))
            try:
                data = layout.immutable_read(packet)
            except layout.ArtifactError as error:
                return f"the close packet of phase {entry.get('phase')} is {error.cause}: {packet}"
            if layout.sha256_hex(data) != entry.get("closePacketSha256"):
                return f"the close packet of phase {entry.get('phase')} changed: {packet}"
        if not self.phases:
            return f"the gate {self.path} lists no review phase"
        return None

    def approval(
        self,
        state: ApprovalState,
        path: str,
        digest: str,
        reason: str,
        review: ReviewRecord,
        change: PlanDelta | None = None,
        approved_text: str | None = None,
    ) -> Approval:
        """The approval of the plan at ``path`` by this gate."""
        return Approval(
            state,
            path,
            digest,
            reason,
            self.path,
            self.sha256,
            self.status,
            self.approved_sha256,
            self.restore_path,
            self.phases,
            review,
            change,
            approved_text,
        )

    def approved_copy(self) -> bytes | None:
        copy = self.value.get("approvedCopy")
        if not isinstance(copy, dict):
            return None
        try:
            return layout.read_verified(
                str(copy.get("path")), str(copy.get("sha256")), int(copy.get("bytes", -1))
            )
        except (layout.ArtifactError, ValueError):
            return None


def _load_gate(path: str, plan_path: str) -> _Gate | str | None:
    """The gate at ``path`` when it names ``plan_path``; ``None`` when there is none or it
    names another plan; why not, when a file is there that cannot be read as a gate."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        return None
    except OSError as error:
        return f"the gate {path} cannot be read ({error.strerror})"
    try:
        value = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return f"the gate {path} is not valid JSON"
    if not isinstance(value, dict) or not isinstance(value.get("approvedPlan"), dict):
        return f"the gate {path} has no approvedPlan object"
    if value["approvedPlan"].get("path") != plan_path:
        return None
    return _Gate(path, raw, value)


def read_approval(plan_path: str, data: bytes | None = None) -> Approval:
    """The approval of the plan at ``plan_path`` (its bytes ``data``, read when ``None``)."""
    path = layout.canonical_path(plan_path)
    if data is None:
        with open(path, "rb") as handle:
            data = handle.read()
    digest = hashlib.sha256(data).hexdigest()
    current = _parse(_decode(data), path)
    found = [g for g in (_load_gate(c, path) for c in _gate_candidates(path, data)) if g]
    gate = next((g for g in found if isinstance(g, _Gate)), None)
    unreadable = next((g for g in found if isinstance(g, str)), None)
    if gate is None and unreadable is not None:
        return Approval(
            "unverified",
            path,
            digest,
            f"{unreadable}; run `/autoplan {path}` again to render a new one",
            review=read_review_record(current.review_record) if current else ReviewRecord(),
        )
    if gate is None:
        restore = layout.restore_header_path(data)
        never = (
            f"no Final Approval Gate names this plan (its /autoplan review, restore point "
            f"{restore}, never rendered one)"
            if restore is not None
            else "no Final Approval Gate names this plan"
        )
        return Approval(
            "unreviewed",
            path,
            digest,
            never,
            review=read_review_record(current.review_record) if current else ReviewRecord(),
        )
    copy = gate.approved_copy() if gate.approved_sha256 != digest else data
    approved_plan = _parse(_decode(copy), path) if copy is not None else None
    review_source = approved_plan or current
    review = read_review_record(review_source.review_record) if review_source else ReviewRecord()
    approved_text = render_plan(approved_plan) if approved_plan is not None else None
    problem = gate.problem()
    if problem is not None:
        return gate.approval("unverified", path, digest, problem, review)
    if gate.approved_sha256 == digest:
        reason = f"the Final Approval Gate {gate.path} approved these bytes"
        return gate.approval("approved", path, digest, reason, review, None, approved_text)
    change = None
    if approved_plan is not None and current is not None:
        change = compare_plans(approved_plan, current)
        reason = f"edited after its approval: {change.describe()}"
    else:
        reason = (
            f"edited after its approval (sha256 {digest[:12]}, approved "
            f"{gate.approved_sha256[:12]}); no approved copy is kept to say what changed"
        )
    return gate.approval("changed", path, digest, reason, review, change, approved_text)


def require(approval: Approval) -> None:
    """Refuse a plan that is not approved, naming the remedy."""
    if approval.approved:
        return
    raise UnapprovedPlanError(
        f"--require-approval: the plan {approval.plan_path} is not approved ({approval.state}: "
        f"{approval.reason})",
        f"review and approve it with `/autoplan {approval.plan_path}` in Claude Code, or run "
        "without --require-approval (config: require_approval off)",
    )
