"""The contracts' fold in the journal index: where the session's first workflow call is.

A decision needs the session from the start of the active workflow's run (the
phases entered since, the human turns, the edits): whatever came before a session's first
invocation of any workflow (a typed command or a Skill call of a skill a contract owns, a
Read or Agent call a phase's ``reads``/``agents`` name, or a Bash command naming an entry
skill's ``SKILL.md``) is dropped by the fold (its human turns kept apart: ``prior``)
(:meth:`plangate.contracts.state.Session.begin`). :class:`RunTracker` keeps the position of
that first record in the journal index (:mod:`plangate.journal.window`), so that after an
append the reader reloads the records from there on, not every saved event. The position
is conservative: a failed call, or a Read that matches a template only with its variables
unbound, also counts, which only makes the window start earlier. With no such call yet,
the window is the last record alone, and the fold finds no workflow, as it would in full.

The index holds the live chain only: a rewind or a new branch makes the reader read in
full, and the fold starts again from the first record. A phase entry (Skill, Read, Agent,
typed) keeps a windowed read only when a workflow run begins inside the window, or when it
enters a workflow's first phase (no earlier phase to check); otherwise an approval may rest
on a human turn before it, and it reads the whole session
(:class:`plangate.contracts.evaluate.ContractWorkflow`). Standard library only (hook path).
"""

from __future__ import annotations

import zlib

from plangate import __version__, jsonio
from plangate.contracts.entries import BASH, ENTRY_TOOLS, entered_by
from plangate.contracts.state import SKILL_TOOL, owns
from plangate.journal.events import HumanTurn, ToolUse
from plangate.journal.window import Fold

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from plangate.contracts.model import Contract
    from plangate.journal.records import Record
    from plangate.journal.window import Reload

VERSION = 3
"""Of the saved state (:attr:`RunTracker.key`). 2: a dict with named keys (:class:`RunState`);
3: a Bash command naming an entry skill's ``SKILL.md`` (Codex's start of a phase) counts."""
NONE_YET = -1
SHELL_ENTRY_TOOLS = (*ENTRY_TOOLS, BASH)


class RunState:
    """The fold's state after ``count`` owned records: the position of the first record
    that may hold a workflow invocation (``first``; :data:`NONE_YET` before one). Saved as
    ``{"count": …, "first": …}``."""

    __slots__ = ("count", "first")

    def __init__(self, count: int = 0, first: int = NONE_YET) -> None:
        self.count = count
        self.first = first

    def dump(self) -> dict[str, int]:
        return {"count": self.count, "first": self.first}

    @classmethod
    def load(cls, saved: dict[str, int]) -> RunState:
        return cls(saved["count"], saved["first"])


class RunTracker(Fold["RunState"]):
    """The fold for these contracts, read from ``cwd`` in ``project`` (Read paths are
    resolved against both, so they are part of the key)."""

    def __init__(self, contracts: list[Contract], cwd: str, project: str) -> None:
        self.contracts = contracts
        self.cwd = cwd
        self.project = project
        identity = [
            project,
            cwd,
            [
                [c.name, list(c.all_skills()), c.paths, [[p.reads, p.agents] for p in c.phases]]
                for c in contracts
            ],
        ]
        digest = zlib.crc32(jsonio.dumps(identity).encode("utf-8"))
        self.key = f"contracts-{VERSION}:{__version__}:{digest:08x}"

    def new(self) -> RunState:
        return RunState()

    def load(self, saved: Any) -> RunState:
        return RunState.load(saved)

    def step(self, state: RunState, position: int, records: list[Record], reload: Reload) -> bool:
        if state.first == NONE_YET:
            for offset, record in enumerate(records):
                if self.invokes(record):
                    state.first = position + offset
                    break
        state.count = position + len(records)
        return True

    def plan(self, state: RunState) -> tuple[int, list[int]] | None:
        if state.count == 0:
            return None
        return (state.count - 1 if state.first == NONE_YET else state.first), []

    def invokes(self, record: Record) -> bool:
        """Whether a record may hold a workflow invocation (light events: a call whose input
        the index did not keep counts)."""
        for event in record.events:
            if isinstance(event, HumanTurn):
                if event.command and any(owns(c, event.command) for c in self.contracts):
                    return True
            elif isinstance(event, ToolUse):
                if event.name != SKILL_TOOL and event.name not in SHELL_ENTRY_TOOLS:
                    continue
                data = event.input
                if data is None:
                    return True
                if event.name == SKILL_TOOL:
                    name = data.get("skill") or data.get("command")
                    if isinstance(name, str) and any(owns(c, name) for c in self.contracts):
                        return True
                elif entered_by(self.contracts, event.name, data, self.cwd, self.project):
                    return True
        return False
