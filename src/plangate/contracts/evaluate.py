"""One hook call from payload to decision: which contracts apply, the journal, the fold, the
rules, the decision log. Imported by the contract hooks only once a call may be covered.

Every decision becomes a :class:`plangate.decisions.reasons.Decision` (the guard's dispositions
and texts) and one line of the guard's decision log, with the workflow and the phase.
"""

from __future__ import annotations

import os
import time

from plangate import locations
from plangate.contracts import (
    compiled,
    contents,
    discovery,
    entries,
    progress,
    rules,
    state,
    untrusted,
)
from plangate.contracts.tracking import RunTracker
from plangate.decisions import contract_codes as codes
from plangate.decisions import log, reasons
from plangate.hook_io import protocol
from plangate.journal.codes import IDENTITY
from plangate.journal.codex_folder import is_codex_payload
from plangate.journal.owners import project_owners
from plangate.journal.reader import read_journal
from plangate.journal.settle import Settle
from plangate.journal.verdict import ERROR, Verdict
from plangate.tuning import setting

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from plangate.contracts.model import Contract, Phase
    from plangate.hook_io.protocol import Output
    from plangate.journal.events import Event
    from plangate.journal.records import Record
    from plangate.journal.window import Tracker

FILE_FACTS = (None, codes.CONTRACT_PHASE_ORDER, codes.CONTRACT_ARTIFACT)
"""Rulings the files alone prove, journal or not (the first call of a session, before
Claude Code has written a journal the reader accepts)."""
WANTED_TOOLS = frozenset(
    {"Skill", "Write", "Edit", "MultiEdit", "NotebookEdit", "Bash", "Read", "Agent"}
)


class Applying:
    """The contracts that apply to a project, and the broken files that would."""

    __slots__ = ("contracts", "broken")

    def __init__(self, contracts: list[Contract], broken: list[discovery.Found]) -> None:
        self.contracts = contracts
        self.broken = broken


def applying(project: str, state_root: str | None = None) -> Applying:
    cache = compiled.Cache(state_root)
    found = discovery.discover(project, cache.load, state_root)
    cache.save()
    contracts, broken = discovery.applying(found)
    return Applying(contracts, broken)


def project_dir(payload: dict[str, Any]) -> str:
    """``$CLAUDE_PROJECT_DIR``; in Codex CLI (which sets none, and gives a call's ``workdir``
    as the hook's ``cwd``) the folder its session runs in; else the payload's ``cwd``."""
    configured = os.environ.get("CLAUDE_PROJECT_DIR")
    if not configured:
        from plangate.journal.codex_folder import session_folder

        configured = session_folder(payload)
    project = configured or payload.get("cwd")
    if not isinstance(project, str) or not os.path.isabs(project):
        return os.getcwd()
    return os.path.normpath(project)


FOLD_SETTING = "fold"
"""``fold=0`` in ``PLANGATE_TUNING`` (:mod:`plangate.tuning`) turns the contracts' index fold
off: every read unpacks the whole saved session (slower, the same decisions)."""
INDEX_DIR = "contract-index"
"""The contract hooks' own journal indexes (``<state root>/contract-index``): kept apart from
the guard's, whose saved fold a read without its tracker must never leave behind. A read
goes on from it and reloads only the records from the session's first workflow call on
(:mod:`.tracking`; without a saved fold, the records :func:`select` names); a rewind makes
the reader read in full, so the live chain decides."""


PEOPLES_WORDS = frozenset({"human_turn", "queued_prompt"})
"""The events whose text may approve a phase."""


def select(ordered: list[Record]) -> Iterable[Record]:
    """The records the fold needs reloaded in full: the human turns and the tool calls it
    reads whose text or input the reader's first pass did not keep (large records)."""
    for record in ordered:
        for event in record.events:
            if event.kind in PEOPLES_WORDS and getattr(event, "text", None) is None:
                yield record
                break
            if (
                event.kind == "tool_use"
                and getattr(event, "name", None) in WANTED_TOOLS
                and getattr(event, "input", None) is None
            ):
                yield record
                break


class Read:
    __slots__ = ("events", "version", "problem", "windowed", "unsettled", "until")

    def __init__(
        self,
        events: list[Event],
        version: str | None,
        problem: str | None,
        windowed: bool = False,
        unsettled: bool = False,
        until: float = 0.0,
    ) -> None:
        self.events = events
        self.version = version
        self.problem = problem
        self.windowed = windowed  # the events are the tracker's window only
        # The call is not journaled yet and time is left until ``until`` (monotonic): a
        # prompt typed while the model worked may still land before the call (:func:`settles`).
        self.unsettled = unsettled
        self.until = until


JOURNAL_WAIT_SECONDS = 2.0
"""How long a read waits for Claude Code to journal what led to the current call."""
ANSWERED = frozenset({"human_turn", "queued_prompt", "tool_result", "task_notification"})
"""What the model's call may follow at once (the last event of the chain)."""


APPROVAL_CODES = frozenset({codes.CONTRACT_APPROVAL, codes.CONTRACT_SELF_APPROVAL})
"""Refusals that a person's approval not journaled yet may turn into an allow."""


def _journaled(verdict: Verdict, tool_use_id: str) -> bool:
    """The current call is in the journal (or recorded elsewhere: waiting changes nothing)."""
    if tool_use_id in verdict.stray_tool_uses:
        return True
    return any(getattr(event, "tool_use_id", None) == tool_use_id for event in verdict.events)


def _behind(verdict: Verdict, tool_use_id: str) -> bool:
    """The journal has not caught up with the current call: the call is not in it, and the
    live chain ends with the model's own words or call (or nothing), so the prompt or result
    the model answered with this call is still to be written."""
    if _journaled(verdict, tool_use_id):
        return False
    events = verdict.events
    return not events or events[-1].kind not in ANSWERED


def read_events(
    payload: dict[str, Any],
    project: str,
    tracker: Tracker | None = None,
    settle: float | None = None,
) -> Read:
    """The live chain's events; with ``tracker`` an indexed read reloads only the records
    from the session's first workflow call on (:mod:`.tracking`). A tool call's read waits (at most
    :data:`JOURNAL_WAIT_SECONDS`) while the journal is behind it: Claude Code writes a prompt's
    record asynchronously, and until then the newest record may be on a branch the person
    rewound away (a rewound approval would count). Still behind then, it decides on what is
    written. With ``settle`` (a monotonic deadline) it waits, until then, for the call itself
    (:func:`settles`)."""
    transcript = payload.get("transcript_path")
    session = payload.get("session_id")
    if not isinstance(transcript, str) or not isinstance(session, str):
        return Read([], None, "the payload names no journal")
    value = payload.get("tool_use_id")
    tool_use_id = value if isinstance(value, str) else None
    # A subagent's call is journaled in the subagent's file, never on the main chain.
    waits = tool_use_id is not None and payload.get("agent_id") is None
    until = time.monotonic() + JOURNAL_WAIT_SECONDS if settle is None else settle
    wait = Settle(until)
    codex = is_codex_payload(payload)
    while True:
        if codex:
            from plangate.journal.codex import read_rollout  # Codex CLI's session history

            verdict = read_rollout(transcript, session_id=session)
        else:
            verdict = read_journal(
                transcript,
                session_id=session,
                owners=project_owners(project),
                config_dir=locations.claude_config_dir(),
                select=select,
                tool_use_id=tool_use_id,
                index_dir=os.path.join(locations.state_root(), INDEX_DIR),
                tracker=tracker,
            )
        if verdict.status == ERROR or not waits:
            break
        if settle is None and not _behind(verdict, str(tool_use_id)):
            break
        if settle is not None and _journaled(verdict, str(tool_use_id)):
            break
        if not wait.again():
            break
    if verdict.status == ERROR and verdict.reason == IDENTITY and not os.path.lexists(transcript):
        # A new session's first prompt: Claude Code has not made the journal's folder yet.
        # No journal holds no approval, as when the file alone is not written yet.
        return Read([], None, None)
    if verdict.status == ERROR:
        return Read([], verdict.claude_code_version, verdict.reason or "error")
    events = verdict.events
    unsettled = waits and not _journaled(verdict, str(tool_use_id)) and wait.left()
    return Read(
        events, verdict.claude_code_version, None, verdict.window is not None, unsettled, until
    )


def tracker_for(contracts: list[Contract], cwd: str, project: str) -> Tracker | None:
    """The index fold for these contracts (None when ``fold`` of ``$PLANGATE_TUNING`` is 0)."""
    if setting(FOLD_SETTING, 1) == 0:
        return None
    return RunTracker(contracts, cwd, project)


def session_of(
    payload: dict[str, Any],
    project: str,
    contracts: list[Contract],
    cwd: str,
    *,
    whole: bool = True,
    settle: float | None = None,
    full: bool = False,
) -> tuple[state.Session, Read]:
    """The fold of the live chain for a phase entry. A windowed read is kept only when a
    workflow run begins inside its window: everything before that beginning is dropped by
    the fold anyway. Otherwise (no workflow call yet, the current call the only one, or a
    call the window counted that begins nothing) a human turn before the window may
    approve, and the whole session is read, unless ``whole`` is false (the entry of a
    workflow's first phase: no earlier phase to check, no approval to look for).
    ``settle``: :func:`read_events`'s. ``full``: the whole session, never a window (the
    person's turns before the conversation's first workflow call may approve a phase of the
    instance an earlier conversation left: :func:`unwindowed`)."""
    tracker = None if full else tracker_for(contracts, cwd, project)
    read = read_events(payload, project, tracker, settle)
    session = _fold(payload, read, contracts, cwd, project)
    if whole and read.windowed and session.contract is None:
        read = read_events(payload, project, settle=settle)
        session = _fold(payload, read, contracts, cwd, project)
    progress.carry(session, contracts, project, payload.get("session_id"))
    return session, read


def unwindowed(ruling: rules.Ruling, read: Read) -> bool:
    """Whether an entry refused for a missing approval on a windowed read is decided again on
    the whole session: the window begins at the conversation's first workflow call, and a
    person's turn before it (approving a phase an earlier conversation left) is outside it.
    Only refusals pay for the whole read."""
    return ruling.code in APPROVAL_CODES and read.windowed


def remember(
    payload: dict[str, Any],
    contract: Contract,
    phase: Phase,
    session: state.Session,
    values: dict[str, str],
    project: str,
) -> None:
    """An allowed entry of ``phase``: the workflow instance's progress notes it, with the
    approvals the conversation holds (:mod:`.progress`)."""
    session_id = payload.get("session_id")
    if not isinstance(session_id, str):
        return
    bound = dict(session.values if session.contract is contract else {})
    bound.update(values)
    original = session.values
    session.values = bound
    try:
        given = progress.given_now(contract, session, project) if session.contract else []
    finally:
        session.values = original
    progress.began(contract, phase.name, bound, project, session_id, given)


def _fold(
    payload: dict[str, Any], read: Read, contracts: list[Contract], cwd: str, project: str
) -> state.Session:
    """:func:`state.fold` with the queued prompts Claude Code's queue operations surround. In
    Codex a call runs in the session's folder unless its ``workdir`` says otherwise (the
    rollout reader makes that a ``cd``), whatever folder the current call runs in."""
    if is_codex_payload(payload):
        cwd = project
    lines = [event.record for event in read.events if event.kind == "queued_prompt"]
    paired: set[int] = set()
    transcript = payload.get("transcript_path")
    if lines and isinstance(transcript, str):
        from plangate.journal.trust import queued_pairs

        paired = queued_pairs(transcript, lines)
    return state.fold(read.events, contracts, cwd, project, skip=_id(payload), paired=paired)


def untrusted_ruling(
    payload: dict[str, Any],
    session: state.Session,
    read: Read,
    ruling: rules.Ruling,
    *,
    entry: bool = True,
) -> rules.Ruling:
    """``journal_untrusted`` for a call inside an active workflow whose journal holds what
    Claude Code never writes (:mod:`.untrusted`); otherwise ``ruling``, and a phase entry
    it lets start (or a run the fold found) marks the session active."""
    session_id = payload.get("session_id")
    if untrusted.refused_reason(read.problem):
        assert read.problem is not None
        workflow = untrusted.active_workflow(session_id)
        if workflow is not None:
            detail = untrusted.refusal_detail(read.problem)
            return rules.Ruling(untrusted.CODE, workflow, ruling.phase, detail)
    elif session.contract is not None and session.forged:
        detail = untrusted.forged_detail(session)
        current = session.current
        phase = ruling.phase or (current.name if current is not None else "?")
        return rules.Ruling(untrusted.CODE, session.contract.name, phase, detail)
    starts = entry and ruling.code in (None, codes.CONTRACT_UNVERIFIED)
    if session.contract is not None or starts:
        name = session.contract.name if session.contract is not None else ruling.workflow
        untrusted.mark_active(session_id, name)
    return ruling


def settles(ruling: rules.Ruling, read: Read) -> bool:
    """Whether a ruling is decided again once the journal holds the call itself.

    A prompt the person types while the model works is given to the model within its turn,
    after a tool result (a ``queued_command`` attachment). Claude Code 2.1.332 may journal
    it, with the model's next call, after that call's PreToolUse hook has read the journal:
    the hook's read then ends on the tool result, or on an older record still (the turn's
    prompt), which the journal-lag wait takes for caught up (docs/contracts.md,
    "Approvals"). The journal is written in order, so once it holds the call it holds every
    prompt the model saw before making it: a refusal for a missing approval, decided while
    the call is not journaled, waits (within the read's bound) for the call and is decided
    again on the journal alone. Nothing else waits."""
    return ruling.code in APPROVAL_CODES and read.unsettled


def logged(
    ruling: rules.Ruling, event: str, version: str | None, path: str = reasons.PATH_JOURNAL
) -> reasons.Decision:
    """The ruling as a guard decision, its log line (and one per approval it rests on)."""
    extra = {"workflow": ruling.workflow, "phase": ruling.phase, "event": event}
    if ruling.code is None:
        decision = reasons.Decision.allow(path, version)
        for phase, via in ruling.approvals:
            approval = {
                "workflow": ruling.workflow,
                "phase": phase,
                "event": "approval",
                "via": via,
            }
            log.append_decision(decision, extra=approval)
    else:
        decision = reasons.Decision.deny(
            ruling.code, detail=ruling.detail or None, path=path, claude_code_version=version
        )
    log.append_decision(decision, extra=extra)
    return decision


def unverified(workflow: str, detail: str, version: str | None, event: str) -> Output:
    decision = reasons.Decision.unverified(
        codes.CONTRACT_UNVERIFIED, detail=detail, claude_code_version=version
    )
    log.append_decision(decision, extra={"workflow": workflow, "event": event})
    notice = (
        f"[plangate] workflow {workflow} was NOT checked for this call: "
        f"{reasons.text(codes.CONTRACT_UNVERIFIED)} Detail: {detail}. "
        f"Run `plangate explain {codes.CONTRACT_UNVERIFIED}` for what to do."
    )
    return protocol.warning(notice, context=notice)


def invalid_ruling(broken: list[discovery.Found], skill: str) -> rules.Ruling | None:
    """A broken contract refuses its skill (beside-the-skill) or every skill (project, user)."""
    for item in broken:
        if item.skill is None or state.skill_matches(item.skill, skill):
            assert item.error is not None
            detail = f"{item.error.where()}: {item.error.message}"
            return rules.Ruling(codes.CONTRACT_INVALID, item.skill or "?", "?", detail)
    return None


def entry_ruling(
    payload: dict[str, Any], skill: str, args: str, event: str
) -> tuple[rules.Ruling, str | None] | None:
    """The ruling on starting ``skill`` (None: no contract covers it)."""
    project = project_dir(payload)
    found = applying(project)
    contract = next((c for c in found.contracts if state.owns(c, skill)), None)
    if contract is None:
        broken = invalid_ruling(found.broken, skill)
        return (broken, None) if broken is not None else None
    phase = state.phase_of(contract, skill)
    if phase is None:
        return None  # a helper skill of the workflow: no phase starts
    cwd = str(payload.get("cwd") or project)
    first = contract.index(phase.name) == 0  # rules.entry checks only the earlier phases
    session, read = session_of(payload, project, found.contracts, cwd, whole=not first)
    values = state.bind(contract, args) if phase.binds else {}
    ruling = _entry(contract, phase, session, project, values, read)
    full = unwindowed(ruling, read)
    if full:
        session, read = session_of(payload, project, found.contracts, cwd, full=True)
        ruling = _entry(contract, phase, session, project, values, read)
    if settles(ruling, read):
        session, read = session_of(
            payload, project, found.contracts, cwd, whole=not first, settle=read.until, full=full
        )
        ruling = _entry(contract, phase, session, project, values, read)
    ruling = untrusted_ruling(payload, session, read, ruling)
    if ruling.code is None:
        remember(payload, contract, phase, session, values, project)
    return ruling, read.version


def _entry(
    contract: Contract,
    phase: Phase,
    session: state.Session,
    project: str,
    values: dict[str, str],
    read: Read,
) -> rules.Ruling:
    ruling = rules.entry(contract, phase, session, project, values=values)
    if ruling.code is None and read.problem is None:
        from plangate.contracts import drift  # the phase left: its files; this one: a snapshot

        ruling = drift.at_entry(contract, phase, session, project, values, ruling)
    if read.problem is not None and ruling.code not in FILE_FACTS:
        # Without the journal only the files speak: an allow, a missing or short artifact
        # stand; a missing approval may be one the unread journal holds.
        ruling = rules.Ruling(codes.CONTRACT_UNVERIFIED, contract.name, phase.name, read.problem)
    return ruling


def call_entry(payload: dict[str, Any]) -> Output:
    """A Read or an Agent call (or a shell command reading an entry skill's ``SKILL.md``):
    refused when it enters a phase too early (the phase's ``reads`` and ``agents``), decided
    and logged as a Skill call's entry is."""
    tool = str(payload.get("tool_name"))
    tool_input = payload.get("tool_input")
    data: dict[str, Any] = tool_input if isinstance(tool_input, dict) else {}
    project = project_dir(payload)
    found = applying(project)
    cwd = str(payload.get("cwd") or project)
    if found.broken:
        refused = broken_entry(found.broken, tool, data, cwd, project)
        if refused is not None:
            decision = logged(refused, "entry", None)
            return decision.output(refused.facts)
    if entries.entered_by(found.contracts, tool, data, cwd, project) is None:
        return {}  # enters no phase whatever the variables (unbound: any value)
    settle: float | None = None
    full = False
    while True:
        session, read = session_of(payload, project, found.contracts, cwd, settle=settle, full=full)
        known = {session.contract.name: session.values} if session.contract is not None else {}
        hit = entries.entered_by(found.contracts, tool, data, cwd, project, known)
        if hit is None:
            return {}  # not this workflow's files (another feature's, say)
        contract, phase, values = hit
        ruling = _entry(contract, phase, session, project, values, read)
        if not full and unwindowed(ruling, read):
            full = True
            continue
        if settle is not None or not settles(ruling, read):
            break
        settle = read.until
    ruling = untrusted_ruling(payload, session, read, ruling)
    if ruling.code == codes.CONTRACT_UNVERIFIED:
        return unverified(ruling.workflow, ruling.detail, read.version, "entry")
    if ruling.code is None:
        remember(payload, contract, phase, session, values, project)
    decision = logged(ruling, "entry", read.version)
    return decision.output(ruling.facts)


def shell_call(payload: dict[str, Any], paths: list[str]) -> Output:
    """A shell command that may read an entry skill's ``SKILL.md`` (Codex CLI's start of a
    skill, :func:`.entries.entered_by`) and writes ``paths``: decided as a phase entry
    first; a refused entry refuses the command, otherwise its writes are decided."""
    output = call_entry(payload)
    decided = output.get("hookSpecificOutput")
    if isinstance(decided, dict) and decided.get("permissionDecision") == protocol.DENY:
        return output
    return pre_tool_use(payload, paths) if paths else output


def broken_entry(
    broken: list[discovery.Found],
    tool: str,
    data: dict[str, Any],
    cwd: str,
    project: str,
) -> rules.Ruling | None:
    """``contract_invalid`` for a Read or an Agent call that a broken contract's fallback
    (its last good version, or the entries the broken file names) makes a phase entry; any
    value of its variables counts. A Read of the broken file itself is never refused."""
    from plangate.contracts.templates import absolute

    cache = compiled.Cache()
    path = data.get("file_path")
    target = absolute(path, cwd) if tool == entries.READ and isinstance(path, str) else None
    for item in broken:
        if target == item.path:
            continue  # its own file
        kept = cache.fallbacks(item.path) or _fallbacks_now(cache, item.path)
        hit = next(
            (
                (found, kind)
                for fallback, kind in kept
                if (found := entries.entered_by([fallback], tool, data, cwd, project))
            ),
            None,
        )
        if hit is None:
            continue  # no fallback names this entry (or none is known, docs/contracts.md)
        (contract, phase, _), kind = hit
        assert item.error is not None
        shown = os.path.relpath(item.path, project) if _inside(item.path, project) else item.path
        line = f":{item.error.line}" if item.error.line else ""
        by = "its last good version" if kind == compiled.GOOD else "the broken file"
        detail = (
            f"{shown}{line}: {item.error.message}; by {by} this {tool} enters phase "
            f"{phase.name}; fix it, then `plangate contract check {shown}`"
        )
        return rules.Ruling(codes.CONTRACT_INVALID, contract.name, phase.name, detail)
    return None


def _fallbacks_now(cache: compiled.Cache, path: str) -> list[tuple[Contract, str]]:
    """The fallbacks when the saved cache holds none (it could not be written): parsed now."""
    from plangate.errors import ContractError

    try:
        cache.load(path)
    except ContractError:
        return cache.fallbacks(path)
    return []  # it parses now: the next call decides it in full


def _inside(path: str, folder: str) -> bool:
    return path.startswith(os.path.join(folder, ""))


def _id(payload: dict[str, Any]) -> str | None:
    value = payload.get("tool_use_id")
    return value if isinstance(value, str) else None


def pre_tool_use(payload: dict[str, Any], paths: list[str] | None) -> Output:
    """A Skill call (``paths`` None) or a write of ``paths``."""
    tool = str(payload.get("tool_name"))
    tool_input = payload.get("tool_input")
    data: dict[str, Any] = tool_input if isinstance(tool_input, dict) else {}
    if paths is None:
        name = data.get("skill") or data.get("command")
        if not isinstance(name, str):
            return {}
        args = data.get("args")
        found = entry_ruling(payload, name, args if isinstance(args, str) else "", "entry")
        if found is None:
            return {}
        ruling, version = found
        if ruling.code == codes.CONTRACT_UNVERIFIED:
            return unverified(ruling.workflow, ruling.detail, version, "entry")
        decision = logged(ruling, "entry", version)
        return decision.output(ruling.facts)
    project = project_dir(payload)
    contracts = applying(project).contracts
    if not contracts:
        return {}
    cwd = str(payload.get("cwd") or project)
    texts: dict[str, str] | None = None
    settle: float | None = None
    while True:
        read = read_events(payload, project, tracker_for(contracts, cwd, project), settle)
        if read.problem is not None:
            names = ",".join(c.name for c in contracts)
            unread = rules.Ruling(None, names, "")
            refused = untrusted_ruling(payload, state.Session(), read, unread, entry=False)
            if refused.code is not None:
                return logged(refused, "edit", read.version).output(refused.facts)
            return unverified(names, read.problem, read.version, "edit")
        session = _fold(payload, read, contracts, cwd, project)
        progress.carry(session, contracts, project, payload.get("session_id"))
        if session.contract is None:
            return {}
        refused = untrusted_ruling(payload, session, read, rules.Ruling(None, "", ""), entry=False)
        if refused.code is not None:
            return logged(refused, "edit", read.version).output(refused.facts)
        if texts is None:
            texts = _texts(tool, data, paths)
        edit_ruling = rules.edit(session, paths, project, contents=texts)
        if edit_ruling is None or edit_ruling.code is None:
            return {}  # an allowed edit: not logged (the log holds phase entries and refusals)
        if settle is not None or not settles(edit_ruling, read):
            break
        settle = read.until
    decision = logged(edit_ruling, "edit", read.version)
    return decision.output(edit_ruling.facts)


def _texts(tool: str, data: dict[str, Any], paths: list[str]) -> dict[str, str]:
    """Each written file's text after the call, where the call says it."""
    texts: dict[str, str] = {}
    for path in paths:
        text = contents.after(tool, data, path)
        if text is not None:
            texts[path] = text
    return texts
