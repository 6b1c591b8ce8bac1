"""Reading Claude Code session journals exactly, in bounded memory, for hooks.

The public surface: :func:`read_journal` and its :class:`Verdict`, the event classes, and the
reason codes in :mod:`plangate.journal.codes`. Standard library only (hook path).
"""

from __future__ import annotations

from plangate.journal.events import (
    AssistantText,
    EndTurn,
    Event,
    HumanTurn,
    ReadRange,
    TaskNotification,
    ToolResult,
    ToolUse,
)
from plangate.journal.reader import ERROR, MISSING, READY, Verdict, read_journal
from plangate.journal.scan import Prefix

__all__ = [
    "ERROR",
    "MISSING",
    "READY",
    "AssistantText",
    "EndTurn",
    "Event",
    "HumanTurn",
    "Prefix",
    "ReadRange",
    "TaskNotification",
    "ToolResult",
    "ToolUse",
    "Verdict",
    "read_journal",
]
