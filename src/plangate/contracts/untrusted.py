"""Fail closed on a forged journal while a workflow is active (``journal_untrusted``).

A journal the reader refuses for a shape Claude Code never writes (a loop, two roots, a
record id used twice: :data:`plangate.journal.trust.UNTRUSTED_REASONS`), or a run whose fold
found records that are not a person's turn though they look like one
(:attr:`plangate.contracts.state.Session.forged`), says nothing a decision can rest on.
Outside a workflow the contracts stay out of the way (an unverified allow, as before). Inside
one, the call is refused and the final stop held.

"Inside a workflow" must be known when the journal cannot be read at all, so it is kept
apart from it: a contract decision that finds the session in a workflow run, or allows a
phase entry, marks the session (``<state root>/contract-runs/<session id>``, the workflow's
name). Only plangate writes there; the state root is a protected path. Standard library only
(hook path).
"""

from __future__ import annotations

import os

from plangate.decisions.defence_codes import JOURNAL_UNTRUSTED
from plangate.state_root import CONTRACT_RUNS, StateRoot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from plangate.contracts.state import Session

FOLDER = CONTRACT_RUNS
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


def _marker(session_id: str, state_root: str | None = None) -> str | None:
    if not session_id or not set(session_id) <= _SAFE or session_id.startswith("."):
        return None
    return StateRoot(state_root).file(FOLDER, session_id)


def mark_active(session_id: object, workflow: str, state_root: str | None = None) -> None:
    """Remember that ``session_id`` is in a run of ``workflow`` (once; a failure to write
    leaves the journal's word alone, as before)."""
    if not isinstance(session_id, str):
        return
    path = _marker(session_id, state_root)
    if path is None or os.path.exists(path):
        return
    try:
        folder = StateRoot(state_root).folder(FOLDER)
        folder.create(os.path.basename(path), workflow.encode("utf-8", "replace"))
    except OSError:
        return


def active_workflow(session_id: object, state_root: str | None = None) -> str | None:
    """The workflow ``session_id`` was last marked in (None: never)."""
    if not isinstance(session_id, str):
        return None
    path = _marker(session_id, state_root)
    if path is None:
        return None
    try:
        with open(path, "rb") as handle:
            name = handle.read(4096).decode("utf-8", "replace").strip()
    except OSError:
        return None
    return name or "?"


def refused_reason(problem: str | None) -> bool:
    """Whether a reader refusal is a shape Claude Code never writes."""
    if problem is None:
        return False
    from plangate.journal.trust import UNTRUSTED_REASONS

    return problem in UNTRUSTED_REASONS or problem.split(":", 1)[0] in UNTRUSTED_REASONS


def forged_detail(session: Session) -> str:
    """The forged records of a run, in words, for the refusal's detail."""
    seen: list[str] = []
    for what in session.forged:
        if what not in seen:
            seen.append(what)
    return "; ".join(seen)


def refusal_detail(problem: str) -> str:
    return (
        f"the journal was refused ({problem}): parent links or record ids Claude Code never writes"
    )


CODE = JOURNAL_UNTRUSTED
