"""The contracts' fold in the journal index: where the active workflow's run began.

A contract decision needs the session from the first skill invocation of the workflow now
active (a run of one workflow's invocations, not broken by another workflow's): the
phases entered since, the human turns, the edits. This :class:`~plangate.journal.window.Tracker`
folds that start position over the records as the reader indexes them, so that after an
append the reader reloads only the run (the window), not every saved event. With no
workflow invoked yet, the window is the last record alone and the fold finds nothing.

State: ``[records seen, run start or -1, workflow of the run or ""]``. Standard library only.
"""

from __future__ import annotations

from plangate.contracts.state import SKILL_TOOL, owns
from plangate.journal.events import HumanTurn, ToolUse
from plangate.journal.window import Tracker

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from plangate.contracts.model import Contract
    from plangate.journal.records import Record
    from plangate.journal.window import Reload

SCHEMA = "contracts:1:"


class ContractTracker(Tracker):
    def __init__(self, contracts: list[Contract]) -> None:
        self.contracts = contracts
        names = sorted(f"{c.name}={','.join(c.all_skills())}" for c in contracts)
        self.key = SCHEMA + ";".join(names)

    def start(self) -> Any:
        return [0, -1, ""]

    def _owner(self, name: object) -> str | None:
        if not isinstance(name, str):
            return None
        return next((c.name for c in self.contracts if owns(c, name)), None)

    def _invoked(self, record: Record, reload: Reload) -> str | None:
        events = record.events
        if any(isinstance(e, ToolUse) and e.name == SKILL_TOOL and e.input is None for e in events):
            events = reload(record)
        found: str | None = None
        for event in events:
            if isinstance(event, HumanTurn) and event.command:
                found = self._owner(event.command) or found
            elif isinstance(event, ToolUse) and event.name == SKILL_TOOL and event.input:
                found = self._owner(event.input.get("skill") or event.input.get("command")) or found
        return found

    def fold(self, state: Any, position: int, records: list[Record], reload: Reload) -> Any:
        seen, start, workflow = state
        for offset, record in enumerate(records):
            name = self._invoked(record, reload)
            if name is not None and name != workflow:
                start, workflow = position + offset, name
        return [max(seen, position + len(records)), start, workflow]

    def window(self, state: Any) -> tuple[int, list[int]] | None:
        seen, start, _ = state
        if seen <= 0:
            return None
        return (start if start >= 0 else seen - 1), []
