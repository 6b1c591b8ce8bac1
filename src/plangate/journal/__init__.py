"""Reading Claude Code session journals exactly, in bounded memory, for hooks.

The public surface: :func:`read_journal` and its :class:`Verdict`, the event classes, and the
reason codes in :mod:`plangate.journal.codes`. Standard library only (hook path).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
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

_HOMES = {
    "AssistantText": "events",
    "EndTurn": "events",
    "Event": "events",
    "HumanTurn": "events",
    "ReadRange": "events",
    "TaskNotification": "events",
    "ToolResult": "events",
    "ToolUse": "events",
    "ERROR": "reader",
    "MISSING": "reader",
    "READY": "reader",
    "Verdict": "reader",
    "read_journal": "reader",
    "Prefix": "scan",
}


def __getattr__(name: str) -> object:
    # Loaded on first use, so a hook importing one small submodule (paths) does not pay for
    # the whole reader.
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'plangate.journal' has no attribute {name!r}")
    module = __import__(f"plangate.journal.{home}", fromlist=[name])
    return getattr(module, name)


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
