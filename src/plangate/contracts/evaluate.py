"""One hook call from payload to decision: which contracts apply, then the workflow contracts
as workflows on the engine (:mod:`plangate.engine`: read through the world, settle, fold,
rules, another pass by the contracts' policy), the decision log. Imported by the contract
hooks only once a call may be covered.

:class:`HistoryRead` is the contracts' read and settle, :class:`ContractWorkflow` their fold
and policy; :class:`SkillEntry`, :class:`CallEntry` and :class:`Edit` their rules for a
phase's entry by a skill, by a Read or Agent call, and for a write.

Every decision becomes a :class:`plangate.decisions.reasons.Decision` (the guard's dispositions
and texts) and one line of the guard's decision log, with the workflow and the phase.
"""

from __future__ import annotations

import os

from plangate import engine, locations
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
from plangate.engine import WAIT, Again, Workflow
from plangate.hook_io import protocol
from plangate.journal.codes import IDENTITY
from plangate.journal.codex_folder import is_codex_payload
from plangate.journal.settle import Settle
from plangate.journal.verdict import ERROR, Verdict
from plangate.journal.world import OS
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
    from plangate.journal.world import World

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


def project_dir(payload: dict[str, Any], world: World = OS) -> str:
    """The project the hook's agent names (:func:`~plangate.journal.codex_folder.hook_project`:
    ``$CLAUDE_PROJECT_DIR``, Codex's session folder read through ``world``), else the
    payload's ``cwd``."""
    from plangate.journal.codex_folder import hook_project

    project = hook_project(payload, world) or payload.get("cwd")
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
    __slots__ = ("events", "version", "problem", "windowed", "unsettled", "until", "handed_over")

    def __init__(
        self,
        events: list[Event],
        version: str | None,
        problem: str | None,
        windowed: bool = False,
        unsettled: bool = False,
        until: float = 0.0,
        handed_over: frozenset[int] = frozenset(),
    ) -> None:
        self.events = events
        self.version = version
        self.problem = problem
        self.windowed = windowed  # the events are the tracker's window only
        # The call is not journaled yet and time is left until ``until`` (monotonic): a
        # prompt typed while the model worked may still land before the call (:func:`settles`).
        self.unsettled = unsettled
        self.until = until
        # The lines of the queued prompts Claude Code handed over (Verdict.handed_over).
        self.handed_over = handed_over


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


class Pass:
    """A contract decision's pass (an attempt of :mod:`plangate.engine`): ``full``, the whole
    session, never a window (:func:`unwindowed`); ``whole_now``, this pass's read is whole
    because the window held no workflow run (the policy still counts it windowed);
    ``settle``, None: wait (at most :data:`JOURNAL_WAIT_SECONDS`) while the journal is
    behind the call; a monotonic deadline: wait until then for the call itself
    (:func:`settles`)."""

    __slots__ = ("full", "settle", "whole_now")

    def __init__(
        self, full: bool = False, settle: float | None = None, whole_now: bool = False
    ) -> None:
        self.full = full
        self.settle = settle
        self.whole_now = whole_now


class HistoryRead(Workflow):
    """The contracts' read and settle (steps 1 and 2 of :mod:`plangate.engine`): the live
    chain's events, read through the world; with a tracker (:meth:`tracker_of`) an indexed
    read reloads only the records from the session's first workflow call on
    (:mod:`.tracking`). A tool call's read waits while the journal is behind it: Claude Code
    writes a prompt's record asynchronously, and until then the newest record may be on a
    branch the person rewound away (a rewound approval would count). Still behind at the
    bound, it decides on what is written. A pass with ``settle`` waits, until then, for the
    call itself (:func:`settles`)."""

    def __init__(self, payload: dict[str, Any], project: str, tracker: Tracker | None = None):
        self.payload = payload
        self.project = project
        self.tracker = tracker
        value = payload.get("tool_use_id")
        self.tool_use_id = value if isinstance(value, str) else None
        # A subagent's call is journaled in the subagent's file, never on the main chain.
        self.waits = self.tool_use_id is not None and payload.get("agent_id") is None
        self.codex = is_codex_payload(payload)
        self.world: World = OS
        self.pass_tracker: Tracker | None = None
        self.wait = Settle(0.0)
        self.until = 0.0

    def tracker_of(self, attempt: Pass) -> Tracker | None:
        """The tracker a pass reads with (None: the whole session)."""
        return self.tracker

    def begin(self, world: World, attempt: Pass) -> Settle:
        self.world = world
        self.pass_tracker = self.tracker_of(attempt)
        settle = attempt.settle
        self.until = world.clock() + JOURNAL_WAIT_SECONDS if settle is None else settle
        self.wait = Settle(self.until, world.clock, world.sleep)
        return self.wait

    def read(self, world: World, attempt: Pass) -> Verdict | None:
        transcript = self.payload.get("transcript_path")
        session = self.payload.get("session_id")
        if not isinstance(transcript, str) or not isinstance(session, str):
            return None
        if self.codex:
            return world.read_rollout(transcript, session_id=session)
        return world.read_journal(
            transcript,
            session_id=session,
            owners=world.project_owners(self.project),
            config_dir=locations.claude_config_dir(),
            select=select,
            tool_use_id=self.tool_use_id,
            index_dir=os.path.join(locations.state_root(), INDEX_DIR),
            tracker=self.pass_tracker,
        )

    def caught_up(self, verdict: Verdict | None, attempt: Pass, wait: Settle) -> Read | str:
        if verdict is None:
            return Read([], None, "the payload names no journal")
        if verdict.status == ERROR or not self.waits:
            return self.behind(verdict, attempt)
        tool_use_id = str(self.tool_use_id)
        if attempt.settle is None and not _behind(verdict, tool_use_id):
            return self.behind(verdict, attempt)
        if attempt.settle is not None and _journaled(verdict, tool_use_id):
            return self.behind(verdict, attempt)
        return WAIT

    def behind(self, last: Verdict | None, attempt: Pass) -> Read:
        """The read as it is, caught up or not."""
        verdict = last
        if verdict is None:
            return Read([], None, "the payload names no journal")
        transcript = str(self.payload.get("transcript_path"))
        if (
            verdict.status == ERROR
            and verdict.reason == IDENTITY
            and not self.world.lexists(transcript)
        ):
            # A new session's first prompt: Claude Code has not made the journal's folder yet.
            # No journal holds no approval, as when the file alone is not written yet.
            return Read([], None, None)
        if verdict.status == ERROR:
            return Read([], verdict.claude_code_version, verdict.reason or "error")
        tool_use_id = str(self.tool_use_id)
        unsettled = self.waits and not _journaled(verdict, tool_use_id) and self.wait.left()
        windowed = verdict.window is not None
        return Read(
            verdict.events,
            verdict.claude_code_version,
            None,
            windowed,
            unsettled,
            self.until,
            verdict.handed_over,
        )


def read_events(
    payload: dict[str, Any],
    project: str,
    tracker: Tracker | None = None,
    settle: float | None = None,
    world: World = OS,
) -> Read:
    """One pass of the contracts' read and settle alone (:class:`HistoryRead` on
    :func:`plangate.engine.settle`)."""
    read: Read = engine.settle(HistoryRead(payload, project, tracker), world, Pass(settle=settle))
    return read


def tracker_for(contracts: list[Contract], cwd: str, project: str) -> Tracker | None:
    """The index fold for these contracts (None when ``fold`` of ``$PLANGATE_TUNING`` is 0)."""
    if setting(FOLD_SETTING, 1) == 0:
        return None
    return RunTracker(contracts, cwd, project)


class ContractWorkflow(HistoryRead):
    """The workflow contracts as a workflow on the engine (:mod:`plangate.engine`): the
    contracts' read and settle (:class:`HistoryRead`), the fold of the live chain
    (:func:`state.fold`, the workflow instance's progress carried across conversations), the
    rules of a subclass, and the policy for another pass:

    - a windowed read is kept only when a workflow run begins inside its window: everything
      before that beginning is dropped by the fold anyway. Otherwise (no workflow call yet,
      the current call the only one, or a call the window counted that begins nothing) a
      human turn before the window may approve, and the whole session is read (:meth:`fold`),
      unless ``whole`` is false (the entry of a workflow's first phase: no earlier phase to
      check, no approval to look for), or the subclass reads no more than the window (an edit);
    - an entry refused for a missing approval on a windowed read is decided again on the
      whole session (:func:`unwindowed`; not an edit, ``widens``), whether or not its pass
      waited for the call;
    - a refusal for a missing approval decided while the call is not journaled waits for the
      call, once (:func:`settles`)."""

    first = Pass()
    whole = True
    widens = True

    def __init__(
        self, payload: dict[str, Any], project: str, contracts: list[Contract], cwd: str
    ) -> None:
        super().__init__(payload, project)
        self.contracts = contracts
        self.cwd = cwd
        self.session = state.Session()

    def tracker_of(self, attempt: Pass) -> Tracker | None:
        if attempt.full or attempt.whole_now:
            return None
        return tracker_for(self.contracts, self.cwd, self.project)

    def fold(self, seen: Read, attempt: Pass) -> state.Session | Again | None:
        session = _fold(self.payload, seen, self.contracts, self.cwd, self.project)
        if self.whole and seen.windowed and session.contract is None:
            return Again(Pass(attempt.full, attempt.settle, whole_now=True))
        progress.carry(session, self.contracts, self.project, self.payload.get("session_id"))
        self.session = session
        return session

    def again(self, ruling: Any, seen: Read, attempt: Pass) -> Pass | None:
        if not isinstance(ruling, rules.Ruling):
            return None  # decided without a ruling the journal may change
        if not attempt.full and self.widens and unwindowed(ruling, seen):
            return Pass(True, attempt.settle)
        if attempt.settle is None and settles(ruling, seen):
            return Pass(attempt.full, seen.until)
        return None


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
    """:func:`state.fold` with the queued prompts Claude Code handed over (the reader found
    them in its one pass: ``Read.handed_over``). In Codex a call runs in the session's folder
    unless its ``workdir`` says otherwise (the rollout reader makes that a ``cd``), whatever
    folder the current call runs in."""
    if is_codex_payload(payload):
        cwd = project
    paired = read.handed_over
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


class SkillEntry(ContractWorkflow):
    """The entry of ``phase`` by starting its skill (a Skill call, a typed command)."""

    def __init__(
        self,
        payload: dict[str, Any],
        project: str,
        found: Applying,
        cwd: str,
        entered: tuple[Contract, Phase, dict[str, str]],
    ) -> None:
        super().__init__(payload, project, found.contracts, cwd)
        self.contract, self.phase, self.values = entered
        # The entry of a first phase checks no earlier one (rules.entry): its window will do.
        self.whole = self.contract.index(self.phase.name) != 0

    def rules(self, session: state.Session, seen: Read, attempt: Pass) -> rules.Ruling:
        return _entry(self.contract, self.phase, session, self.project, self.values, seen)


def entry_ruling(
    payload: dict[str, Any], skill: str, args: str, event: str, world: World = OS
) -> tuple[rules.Ruling, str | None] | None:
    """The ruling on starting ``skill`` (None: no contract covers it)."""
    project = project_dir(payload, world)
    found = applying(project)
    contract = next((c for c in found.contracts if state.owns(c, skill)), None)
    if contract is None:
        broken = invalid_ruling(found.broken, skill)
        return (broken, None) if broken is not None else None
    phase = state.phase_of(contract, skill)
    if phase is None:
        return None  # a helper skill of the workflow: no phase starts
    cwd = str(payload.get("cwd") or project)
    values = state.bind(contract, args) if phase.binds else {}
    workflow = SkillEntry(payload, project, found, cwd, (contract, phase, values))
    ruling, read = engine.decide(workflow, world)
    session = workflow.session
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


class CallEntry(ContractWorkflow):
    """The entry of a phase by a Read or an Agent call (or a shell command reading an entry
    skill's ``SKILL.md``): which phase, if any, it enters is known only on the session's
    fold (the workflow's bound variables)."""

    def __init__(
        self,
        payload: dict[str, Any],
        project: str,
        found: Applying,
        cwd: str,
        call: tuple[str, dict[str, Any]],
    ) -> None:
        super().__init__(payload, project, found.contracts, cwd)
        self.tool, self.data = call
        self.hit: tuple[Contract, Phase, dict[str, str]] | None = None

    def rules(self, session: state.Session, seen: Read, attempt: Pass) -> rules.Ruling | None:
        """The ruling on the phase the call enters; None: not this workflow's files (another
        feature's, say)."""
        known = {session.contract.name: session.values} if session.contract is not None else {}
        contracts, cwd, project = self.contracts, self.cwd, self.project
        self.hit = entries.entered_by(contracts, self.tool, self.data, cwd, project, known)
        if self.hit is None:
            return None
        contract, phase, values = self.hit
        return _entry(contract, phase, session, project, values, seen)


def call_entry(payload: dict[str, Any], world: World = OS) -> Output:
    """A Read or an Agent call (or a shell command reading an entry skill's ``SKILL.md``):
    refused when it enters a phase too early (the phase's ``reads`` and ``agents``), decided
    and logged as a Skill call's entry is."""
    tool = str(payload.get("tool_name"))
    tool_input = payload.get("tool_input")
    data: dict[str, Any] = tool_input if isinstance(tool_input, dict) else {}
    project = project_dir(payload, world)
    found = applying(project)
    cwd = str(payload.get("cwd") or project)
    if found.broken:
        refused = broken_entry(found.broken, tool, data, cwd, project)
        if refused is not None:
            decision = logged(refused, "entry", None)
            return decision.output(refused.facts)
    if entries.entered_by(found.contracts, tool, data, cwd, project) is None:
        return {}  # enters no phase whatever the variables (unbound: any value)
    workflow = CallEntry(payload, project, found, cwd, (tool, data))
    found_ruling, read = engine.decide(workflow, world)
    if found_ruling is None or workflow.hit is None:
        return {}  # not this workflow's files (another feature's, say)
    contract, phase, values = workflow.hit
    session = workflow.session
    ruling = untrusted_ruling(payload, session, read, found_ruling)
    if ruling.code == codes.CONTRACT_UNVERIFIED:
        return unverified(ruling.workflow, ruling.detail, read.version, "entry")
    if ruling.code is None:
        remember(payload, contract, phase, session, values, project)
    decision = logged(ruling, "entry", read.version)
    return decision.output(ruling.facts)


def shell_call(payload: dict[str, Any], paths: list[str], world: World = OS) -> Output:
    """A shell command that may read an entry skill's ``SKILL.md`` (Codex CLI's start of a
    skill, :func:`.entries.entered_by`) and writes ``paths``: decided as a phase entry
    first; a refused entry refuses the command, otherwise its writes are decided."""
    output = call_entry(payload, world)
    decided = output.get("hookSpecificOutput")
    if isinstance(decided, dict) and decided.get("permissionDecision") == protocol.DENY:
        return output
    return pre_tool_use(payload, paths, world) if paths else output


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


def pre_tool_use(payload: dict[str, Any], paths: list[str] | None, world: World = OS) -> Output:
    """A Skill call (``paths`` None) or a write of ``paths``, read through ``world``."""
    tool = str(payload.get("tool_name"))
    tool_input = payload.get("tool_input")
    data: dict[str, Any] = tool_input if isinstance(tool_input, dict) else {}
    if paths is None:
        name = data.get("skill") or data.get("command")
        if not isinstance(name, str):
            return {}
        args = data.get("args")
        found = entry_ruling(payload, name, args if isinstance(args, str) else "", "entry", world)
        if found is None:
            return {}
        ruling, version = found
        if ruling.code == codes.CONTRACT_UNVERIFIED:
            return unverified(ruling.workflow, ruling.detail, version, "entry")
        decision = logged(ruling, "entry", version)
        return decision.output(ruling.facts)
    project = project_dir(payload, world)
    contracts = applying(project).contracts
    if not contracts:
        return {}
    cwd = str(payload.get("cwd") or project)
    workflow = Edit(payload, project, contracts, cwd, (tool, data, paths))
    decided, read = engine.decide(workflow, world)
    if isinstance(decided, rules.Ruling):
        return logged(decided, "edit", read.version).output(decided.facts)
    output: Output = decided
    return output


class Edit(ContractWorkflow):
    """A write of ``paths`` inside an active workflow: read as far as the window (the edit
    rules need the run the window begins with), refused out of the phase's editable paths."""

    whole = False
    widens = False

    def __init__(
        self,
        payload: dict[str, Any],
        project: str,
        contracts: list[Contract],
        cwd: str,
        call: tuple[str, dict[str, Any], list[str]],
    ) -> None:
        super().__init__(payload, project, contracts, cwd)
        self.tool, self.data, self.paths = call
        self.texts: dict[str, str] | None = None

    def fold(self, seen: Read, attempt: Pass) -> state.Session | Again | None:
        if seen.problem is not None:
            return None  # nothing to fold: the rules refuse or let it through unverified
        return super().fold(seen, attempt)

    def rules(
        self, session: state.Session | None, seen: Read, attempt: Pass
    ) -> rules.Ruling | Output:
        """The refused edit's ruling, or the hook output (allowed, or decided without the
        edit rules)."""
        payload = self.payload
        if session is None:
            assert seen.problem is not None
            names = ",".join(c.name for c in self.contracts)
            unread = rules.Ruling(None, names, "")
            refused = untrusted_ruling(payload, state.Session(), seen, unread, entry=False)
            if refused.code is not None:
                return logged(refused, "edit", seen.version).output(refused.facts)
            return unverified(names, seen.problem, seen.version, "edit")
        if session.contract is None:
            return {}
        unruled = rules.Ruling(None, "", "")
        refused = untrusted_ruling(payload, session, seen, unruled, entry=False)
        if refused.code is not None:
            return logged(refused, "edit", seen.version).output(refused.facts)
        if self.texts is None:
            self.texts = _texts(self.tool, self.data, self.paths)
        ruling = rules.edit(session, self.paths, self.project, contents=self.texts)
        if ruling is None or ruling.code is None:
            return {}  # an allowed edit: not logged (the log holds phase entries and refusals)
        return ruling


def _texts(tool: str, data: dict[str, Any], paths: list[str]) -> dict[str, str]:
    """Each written file's text after the call, where the call says it."""
    texts: dict[str, str] = {}
    for path in paths:
        text = contents.after(tool, data, path)
        if text is not None:
            texts[path] = text
    return texts
