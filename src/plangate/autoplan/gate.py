"""``plangate gate render <restore>``: the Final Approval Gate's ``gate.json``.

Written atomically into the artifact folder: the approved plan's path and SHA-256, the scope,
each applicable review phase with the checkpoint and close packet that closed it, the task
list's size and ``"status": "awaiting-approval"``. It also keeps an immutable copy of the
approved plan's bytes, ``approved-<first 16 hex of its sha256>.md`` (``approvedCopy``), so a
later edit of the plan can be compared with what was approved (:mod:`plangate.runs.approval`).
The command cannot see the session, so
"published" is the guard's business; what the gate records is that every applicable phase
was closed (its latest checkpoint has a close packet) before the gate was rendered.
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

from plangate import files, jsonio
from plangate.autoplan import layout, plans, writes
from plangate.autoplan.checkpoint import checkpoints
from plangate.autoplan.close import close_packets, phase_label
from plangate.errors import PlangateError


def applicable_phases(scope: dict[str, Any]) -> list[str]:
    """The review phases a plan with this scope goes through, in order."""
    return [
        phase for phase in layout.REVIEW_PHASES if phase in ("ceo", "eng") or bool(scope.get(phase))
    ]


def _phase_entry(binding: writes.InitBinding, phase: str) -> dict[str, Any]:
    restore = binding.restore_path
    found = checkpoints(binding, phase)
    if not found:
        raise PlangateError(
            f"{phase_label(phase)} was never run for {restore} (no checkpoint)",
            "finish that phase first: its checkpoint, review and close",
        )
    _, manifest_path, _ = found[-1]
    packets = [
        item for item in close_packets(binding, phase) if item[2]["checkpoint"] == manifest_path
    ]
    if not packets:
        raise PlangateError(
            f"{phase_label(phase)} was not closed after its latest checkpoint {manifest_path}",
            f'run `plangate autoplan prepare-close "{restore}" {phase}` and finish the close '
            "procedure",
        )
    _, packet_path, _ = packets[-1]
    packet = layout.immutable_read(packet_path)
    return {
        "phase": phase,
        "number": layout.PHASE_NUMBERS[phase],
        "checkpoint": manifest_path,
        "closePacket": packet_path,
        "closePacketSha256": layout.sha256_hex(packet),
    }


APPROVED_COPY_PREFIX = "approved-"


def keep_approved_copy(artifact_dir: str, data: bytes) -> dict[str, Any]:
    """Keep ``data`` (the approved plan's bytes) immutable beside the gate; where and what."""
    digest = layout.sha256_hex(data)
    path = os.path.join(artifact_dir, f"{APPROVED_COPY_PREFIX}{digest[:16]}.md")
    try:
        writes.write_immutable(path, data)
    except FileExistsError:
        layout.read_verified(path, digest, len(data))  # the same bytes, kept earlier
    return {"path": path, "sha256": digest, "bytes": len(data)}


def gate_render(restore: str) -> dict[str, Any]:
    """Write ``gate.json`` for this restore point's invocation; return its content."""
    binding = writes.load_binding(restore)
    text = plans.decode(binding.plan_bytes, binding.active_plan)
    plan = plans.parse(text, binding.active_plan)
    plans.check_ready(plan, binding.active_plan)
    phases = [_phase_entry(binding, phase) for phase in applicable_phases(binding.scope)]
    gate_path = os.path.join(binding.artifact_dir, layout.GATE)
    gate: dict[str, Any] = {
        "schema": 1,
        "gatePath": gate_path,
        "status": "awaiting-approval",
        "approvedPlan": {
            "path": binding.active_plan,
            "sha256": layout.sha256_hex(binding.active_bytes),
            "bytes": len(binding.active_bytes),
        },
        "approvedCopy": keep_approved_copy(binding.artifact_dir, binding.active_bytes),
        "restorePath": binding.restore_path,
        "originalSha256": binding.record["originalSha256"],
        "scope": binding.scope,
        "phases": phases,
        "tasks": len(plan.steps),
    }
    files.replace(gate_path, writes.json_bytes(gate), None, durable=True)
    return gate


def gate_render_command(restore: str, out: TextIO | None = None) -> int:
    """Print the gate (one line) and return 0."""
    result = gate_render(restore)
    (out if out is not None else sys.stdout).write(jsonio.dumps(result) + "\n")
    return 0
