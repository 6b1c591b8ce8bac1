"""``plangate autoplan prepare-close <restore> <phase>``: the close packet.

Creates ``autoplan-<phase>-close-<random>/close-packet.md`` (immutable). It starts with the
heading and the ``Binding:`` line the guard reads, then the close procedure, the complete
current implementation section in a fenced block, and the report template whose declaration
line is ``Phase N complete``. The command prints where the packet is and the Read ranges that
cover it.
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

from plangate import jsonio
from plangate.autoplan import layout, plans, writes
from plangate.autoplan.checkpoint import check_phase, checkpoints
from plangate.errors import PlangateError

BINDING_KEYS = ("phase", "activePlan", "checkpoint", "implementationSha256", "report")


def phase_label(phase: str) -> str:
    """``Phase 2.5 (DX)``."""
    return f"Phase {layout.PHASE_NUMBERS[phase]} ({layout.PHASE_TITLES[phase]})"


def report_template(phase: str, next_phase: str) -> str:
    """The unfilled phase report; its declaration line is ``Phase N complete``."""
    number = layout.PHASE_NUMBERS[phase]
    following = (
        f"{phase_label(next_phase)}: the task list and the Final Approval Gate"
        if next_phase == "tasks"
        else phase_label(next_phase)
    )
    return (
        f"### {phase_label(phase)} report\n"
        f"Phase {number} complete\n"
        "\n"
        "Findings (highest risk first):\n"
        "1. [finding: what is wrong or missing, where in the plan, and what it would cost]\n"
        "2. [next finding, or remove this line]\n"
        "\n"
        "Decisions applied to the plan:\n"
        "1. [decision: what changed in the plan] because [reason, naming the finding it "
        "answers]\n"
        "2. [next decision, or remove this line]\n"
        "\n"
        "Open questions for the person:\n"
        "- [question that needs the person's judgement, or: none]\n"
        "\n"
        f"Next: {following}\n"
    )


def close_packet(
    binding_line: str, phase: str, next_phase: str, implementation: str, restore: str
) -> str:
    """The close packet's text."""
    number = layout.PHASE_NUMBERS[phase]
    return (
        f"{layout.CLOSE_PACKET_HEADING}\n"
        f"{binding_line}\n"
        "\n"
        f"This packet closes {phase_label(phase)} of the /autoplan review.\n"
        "\n"
        "## Close procedure\n"
        "\n"
        "1. Read this packet in full, every line to the end, in the Read ranges that "
        "prepare-close printed.\n"
        "2. Fill in the report template at the end of this packet: the findings of this "
        "phase, highest risk first, and each decision applied to the plan with its reason.\n"
        "3. Publish the filled report as your own assistant text, keeping the line "
        f"`Phase {number} complete` on a line of its own, in a message whose only tool call "
        f"is the Bash no-op `true autoplan-published {phase}`.\n"
        f"4. Enter {phase_label(next_phase)} in a later message.\n"
        "\n"
        "Do not change the plan's implementation section between reading this packet and "
        "publishing the report. If it must change, change it, then run "
        f'`plangate autoplan prepare-close "{restore}" {phase}` again and read the new packet.\n'
        "\n"
        "## Current implementation section\n"
        "\n"
        + plans.fenced(implementation)
        + "\n## Report template\n\n"
        + report_template(phase, next_phase)
    )


def prepare_close(restore: str, phase: str) -> dict[str, Any]:
    """Create the phase's close packet; return where it is and how to read it."""
    check_phase(phase)
    binding = writes.load_binding(restore)
    found = checkpoints(binding, phase)
    if not found:
        raise PlangateError(
            f"{phase_label(phase)} has no checkpoint for {binding.restore_path}",
            f'run `plangate autoplan checkpoint "{binding.restore_path}" {phase}` first',
        )
    _, manifest_path, _ = found[-1]
    active_text = plans.decode(binding.plan_bytes, binding.active_plan)
    implementation = plans.implementation_text(active_text, binding.active_plan)
    following = layout.due_phase(phase, binding.scope)
    binding_object = {
        "phase": phase,
        "activePlan": binding.active_plan,
        "checkpoint": manifest_path,
        "implementationSha256": layout.sha256_hex(implementation.encode("utf-8")),
        "report": {"number": layout.PHASE_NUMBERS[phase], "next": following},
    }
    binding_line = layout.BINDING_PREFIX + jsonio.dumps(binding_object)
    packet = close_packet(
        binding_line, phase, following, implementation, binding.restore_path
    ).encode("utf-8")
    folder = writes.create_folder(
        binding.artifact_dir,
        lambda token: layout.close_folder_name(phase, token),
        lambda _folder: {layout.CLOSE_PACKET: packet},
    )
    lines = layout.line_count(packet)
    return {
        "closePacketPath": os.path.join(folder, layout.CLOSE_PACKET),
        "sha256": layout.sha256_hex(packet),
        "bytes": len(packet),
        "lines": lines,
        "readRanges": layout.read_ranges(lines),
    }


def close_packets(
    binding: writes.InitBinding, phase: str
) -> list[tuple[int, str, dict[str, object]]]:
    """This invocation's readable close packets of ``phase``, oldest first.

    Each is ``(mtime, path, binding object)``; a packet belongs to the invocation when its
    binding names the active plan and a manifest of a checkpoint folder beside it.
    """
    found: list[tuple[int, str, dict[str, object]]] = []
    for name in sorted(os.listdir(binding.artifact_dir)):
        if layout.parse_folder_name(name) != (phase, "close"):
            continue
        path = os.path.join(binding.artifact_dir, name, layout.CLOSE_PACKET)
        try:
            data = layout.immutable_read(path)
        except layout.ArtifactError:
            continue
        bound = layout.close_binding(data)
        if (
            bound is None
            or tuple(bound) != BINDING_KEYS
            or bound["phase"] != phase
            or bound["activePlan"] != binding.active_plan
        ):
            continue
        found.append((os.lstat(path).st_mtime_ns, path, bound))
    found.sort(key=lambda item: (item[0], item[1]))
    return found


def prepare_close_command(restore: str, phase: str, out: TextIO | None = None) -> int:
    """Print prepare-close's JSON object (one line) and return 0."""
    result = prepare_close(restore, phase)
    (out if out is not None else sys.stdout).write(jsonio.dumps(result) + "\n")
    return 0
