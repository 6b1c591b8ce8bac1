"""Which tool calls the guard decides: phase-entry Reads and reviewer dispatches.

Standard library only and cheap: the PreToolUse hook classifies every Read and Agent call
before it decides whether to read the journal at all.
"""

from __future__ import annotations

import os

from plangate.autoplan import layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DRIVER = "driver"
ARTIFACT = "artifact"
DISPATCH = "dispatch"
CLOSE_PACKET = "close_packet"
ALLOWED_AGENT_KEYS = frozenset({"prompt", "description", "subagent_type", "run_in_background"})

_DRIVER_PHASES = {name: phase for phase, name in layout.DRIVER_FILES.items()}


class GuardedCall:
    """A call that enters a phase: ``kind`` is driver, artifact or dispatch."""

    __slots__ = ("kind", "phase", "path", "prompt")

    def __init__(self, kind: str, phase: str, path: str | None, prompt: str | None) -> None:
        self.kind = kind
        self.phase = phase
        self.path = path
        self.prompt = prompt

    def __repr__(self) -> str:
        return f"GuardedCall({self.kind!r}, {self.phase!r}, {self.path or self.prompt!r})"


def resolve(file_path: str, cwd: str) -> str:
    """A Read path as Claude Code resolves it: ``~`` expanded, relative to the session cwd."""
    path = os.path.expanduser(file_path)
    if not os.path.isabs(path):
        path = os.path.join(cwd, path)
    return os.path.normpath(path)


def classify_read(path: str) -> GuardedCall | None:
    """A driver file or a checkpoint artifact (close packets are evidence, not entries)."""
    folder, name = os.path.split(path)
    parent, folder_name = os.path.split(folder)
    phase = _DRIVER_PHASES.get(name)
    in_sections = folder_name == layout.SECTIONS_DIR
    if phase is not None and in_sections and os.path.basename(parent) == layout.SKILL_NAME:
        return GuardedCall(DRIVER, phase, path, None)
    parsed = layout.parse_folder_name(folder_name)
    if parsed is not None:
        phase, kind = parsed
        if kind == "checkpoint" and name in layout.CHECKPOINT_FILES:
            return GuardedCall(ARTIFACT, phase, path, None)
    return None


def is_close_packet(path: str) -> str | None:
    """The phase of a close packet path, or None."""
    folder, name = os.path.split(path)
    if name != layout.CLOSE_PACKET:
        return None
    parsed = layout.parse_folder_name(os.path.basename(folder))
    if parsed is None or parsed[1] != "close":
        return None
    return parsed[0]


def classify(tool_name: str, tool_input: dict[str, Any], cwd: str) -> GuardedCall | None:
    if tool_name == "Read":
        file_path = tool_input.get("file_path")
        if not isinstance(file_path, str) or not file_path:
            return None
        return classify_read(resolve(file_path, cwd))
    if tool_name == "Agent":
        prompt = tool_input.get("prompt")
        if not isinstance(prompt, str):
            return None
        phase = layout.reviewer_phase(prompt)
        if phase is None:
            return None
        return GuardedCall(DISPATCH, phase, None, prompt)
    return None
