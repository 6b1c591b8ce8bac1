"""The final stop of a session in a workflow is held once when calls went unguarded.

The Stop hooks' policies (:mod:`plangate.hooks.contract_stop` for a workflow contract, in
Claude Code or Codex CLI; :mod:`plangate.hooks.stop` for /autoplan) run :func:`hold` before
their gate (:mod:`plangate.hook_io.runtime`): when the session is in a workflow (a contract's
phase is current, or /autoplan was loaded while the /autoplan gate is on) and
:func:`plangate.audit.audit` (:func:`plangate.audit_codex.audit` for a Codex session) finds
tool calls that a registered plangate hook covers and none decided (the hooks were switched
off with ``disableAllHooks``, removed, crashed or timed out; in Codex, a PreToolUse hook
edited since it was trusted, which Codex skips in silence), the stop is held with
``unguarded_calls``, naming a few of them and counting the rest. The hold is recorded by a
marker, ``<state root>/audit-holds/<session>.<count>``, created with ``O_EXCL`` (two Stop
hooks that run at once hold once between them), so the next stop goes through; a later stop
with more unguarded calls (the hooks switched off again) is held again, once. Anything that
fails here lets the stop go on to the gate as before.
"""

from __future__ import annotations

import os

from plangate.state_root import AUDIT_HOLDS, StateRoot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from plangate.hook_io.runtime import Answer
    from plangate.journal.events import Event
    from plangate.journal.world import World

HOLDS_DIR = AUDIT_HOLDS
NAMED = 3
"""How many unguarded calls the hold names; the rest are counted."""
READ_SECONDS = 4.0
"""The journal read's bound; the gate that runs next has its own."""
RAW_MAX_BYTES = 256 * 1024 * 1024
"""An /autoplan session is told by its bytes first (a search, no parse), up to this much."""
CONTRACT = "contract"
AUTOPLAN = "autoplan"
AUTOPLAN_SKILLS = ("autoplan", "plangate:autoplan")


def hold(kind: str) -> Callable[[dict[str, Any]], Answer | None]:
    """The Stop policy's first step for ``kind``: :func:`held`, and None (the gate decides)
    when anything in it fails: the hold never stands in the gate's way."""

    def before(payload: dict[str, Any]) -> Answer | None:
        try:
            return held(payload, kind)
        except Exception:  # noqa: BLE001 - the hold never stands in the gate's way
            return None

    return before


def held(
    payload: dict[str, Any], kind: str, state_root: str | None = None, world: World | None = None
) -> Answer | None:
    """The hold for this Stop payload (``unguarded_calls``, logged), or None to let the
    gates decide. ``world``: what the session's history is read through (the operating
    system's unless told)."""
    if payload.get("hook_event_name") != "Stop":
        return None
    session = payload.get("session_id")
    transcript = payload.get("transcript_path")
    cwd = payload.get("cwd")
    if not (isinstance(session, str) and isinstance(transcript, str) and isinstance(cwd, str)):
        return None
    from plangate.journal.identity import valid_session_id

    if not valid_session_id(session) or not os.path.isabs(cwd):
        return None
    from plangate.journal.codex_folder import hook_project, is_codex_payload

    codex = is_codex_payload(payload)
    project = os.path.normpath(hook_project(payload, world) or cwd)
    root = state_root
    if root is None:
        from plangate import locations

        root = locations.state_root()
    if kind == CONTRACT:
        from plangate.contracts.discovery import covered

        if not covered(project):
            return None
    elif not _autoplan_gate_on() or not _mentions(transcript, b"autoplan"):
        return None  # no /autoplan in the session: no journal parse on an ordinary stop
    events = _events(transcript, session, codex, world)
    if events is None or not in_workflow(events, kind, project, cwd):
        return None
    if codex:
        from plangate import audit_codex

        report = audit_codex.audit(events, session, transcript, project=project, state_root=root)
    else:
        from plangate import audit

        report = audit.audit(
            events,
            session,
            transcript,
            project=project,
            cwd=cwd,
            state_root=root,
            stops=False,
            subagents=audit.subagent_events(transcript, session),
        )
    calls = [call for call in report.unguarded if call.kind == "tool"]
    if not calls or not _mark(root, marker_name(session, len(calls))):
        return None
    return block(calls, root, codex)


def _autoplan_gate_on() -> bool:
    """The /autoplan gate's switch (with it off, the skill gates' Stop hook loads nothing)."""
    from plangate import config
    from plangate.errors import ConfigError
    from plangate.hook_registry import AUTOPLAN_GATE

    try:
        return bool(config.gate_switch(AUTOPLAN_GATE)[0])
    except ConfigError:
        return True  # a broken switch: the gate records it, and the hold stands


def _mentions(path: str, word: bytes) -> bool:
    from plangate.files import contains_nofollow

    try:
        return contains_nofollow(path, word, RAW_MAX_BYTES)
    except OSError:
        return False


def _events(transcript: str, session: str, codex: bool, world: World | None) -> list[Event] | None:
    """The session's events: Claude Code's journal, or Codex's rollout (``codex``)."""
    from plangate.hook_io.runtime import within

    if world is None:
        from plangate.journal.world import OS

        world = OS

    if codex:
        verdict = within(READ_SECONDS, lambda: world.read_rollout(transcript, session_id=session))
    else:
        verdict = within(
            READ_SECONDS, lambda: world.read_journal(transcript, session_id=session, full=True)
        )
    if verdict is None or not verdict.ready:
        return None
    return verdict.events


def in_workflow(events: list[Event], kind: str, project: str, cwd: str) -> bool:
    """A contract's phase is current (``contract``), or /autoplan was loaded (``autoplan``)."""
    from plangate.journal.events import HumanTurn, ToolUse

    if kind == AUTOPLAN:
        for event in events:
            if isinstance(event, HumanTurn) and event.command in AUTOPLAN_SKILLS:
                return True
            if isinstance(event, ToolUse) and event.name == "Skill" and event.input:
                skill = event.input.get("skill")
                if skill in AUTOPLAN_SKILLS:
                    return True
        return False
    from plangate.contracts import evaluate, state

    contracts = evaluate.applying(project).contracts
    session = state.fold(events, contracts, cwd, project)
    return session.contract is not None and session.current is not None


def marker_name(session: str, count: int) -> str:
    """The hold's marker for ``count`` unguarded calls in ``session``."""
    return f"{session}.{count}"


def _mark(root: str, name: str) -> bool:
    """Record the hold; False when another stop hook recorded it first (or it cannot be)."""
    try:
        StateRoot(root).folder(HOLDS_DIR).create(name)
    except OSError:
        return False
    return True


def detail(calls: list[Any]) -> str:
    """A few of the unguarded calls by name, then how many more."""
    named = "; ".join(f"{call.name} {call.id}" for call in calls[:NAMED])
    rest = len(calls) - NAMED
    more = f"; and {rest} more" if rest > 0 else ""
    return f"{len(calls)} unguarded: {named}{more}"


def block(calls: list[Any], root: str, codex: bool = False) -> Answer:
    from plangate.decisions import log, reasons
    from plangate.decisions.defence_codes import UNGUARDED_CALLS
    from plangate.hook_io.runtime import Answer
    from plangate.journal.codex_folder import AGENT

    agent = AGENT if codex else None  # the reason names the agent it holds
    decision = reasons.Decision.deny(
        UNGUARDED_CALLS, detail=detail(calls), claude_code_version=agent
    )
    log.append_decision(decision, state_root=root, extra={"event": "stop"})
    return Answer(decision)  # the runner writes it as a Stop block
