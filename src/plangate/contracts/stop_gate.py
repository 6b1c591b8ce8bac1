"""The contracts' Stop/SubagentStop gate: hold the final stop until the workflow is done,
and while the current phase has changed files outside its ``editable`` paths.

Once a session (or a subagent, in its own transcript) enters a workflow's ``done.after``
phase, each final stop is judged against the definition of done (:mod:`.done`). Seed 001's
machinery does the rest, as for the /autoplan gate: a ``fired`` marker at the run's first
final stop, at most 3 ``blocked`` stops (``stop_hook_active`` does not skip the check), then
``released`` or ``exhausted``; the session record (``skill-gates/<session>/record.json``,
under ``contract:<workflow>``), the trace log ``hooks/contract-gate.log`` and
``plangate report``. A stop that waits on the person in an interactive session is never
held. An error never blocks: it is a ``GATE_*`` error marker and the stop goes through.

Whatever the phase, a final stop while the current phase has changed files outside its
``editable`` paths since it began (:mod:`.drift`) is held too, naming them (``contract_drift``):
each different set of such files is a run of its own, held at most 3 times.
"""

from __future__ import annotations

import os

from plangate.contracts import done as done_check
from plangate.contracts import evaluate, progress, state, untrusted
from plangate.gates import session_record, skill_loads, stop_hook
from plangate.gates.errors import GATE_TIMEOUT, GATE_TRANSCRIPT, GateError, GateTimeout
from plangate.gates.gate import STOP, SUBAGENT_STOP, Gate
from plangate.gates.judgement import Judgement
from plangate.gates.timing import Deadline, deadline_ms
from plangate.journal.codex_folder import is_codex_payload
from plangate.journal.world import OS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TextIO

    from plangate.contracts.model import Contract
    from plangate.contracts.state import Invocation
    from plangate.gates.transcript import Stop, View
    from plangate.hook_io.protocol import Output
    from plangate.journal.world import World

HOOK = "contract-gate"
SWITCH_PREFIX = "contract:"


def gate_of(contract: Contract) -> Gate:
    return Gate(SWITCH_PREFIX + contract.name, HOOK, contract.name, (STOP, SUBAGENT_STOP))


def _judge(
    contract: Contract,
    view: View,
    project: str,
    cwd: str,
    env: dict[str, str],
    last_message: object,
    subagent: bool,
    agent: str | None,
    deadline: Deadline,
    session_id: str | None = None,
) -> Judgement | None:
    session = state.fold(view.events, [contract], cwd, project, paired=view.handed_over)
    if not subagent:
        progress.carry(session, [contract], project, session_id)
    if session.contract is not contract:
        return None
    if session.forged:
        return _untrusted(contract, untrusted.forged_detail(session))
    if not subagent and session_id is not None:
        given = progress.given_now(contract, session, project)
        progress.noted(contract, session.values, project, session_id, given)
    held = _drift(contract, session, view, project, env, last_message, subagent, agent)
    if held is not None or contract.done is None:
        return held
    runs = [inv for inv in session.entered if inv.phase and inv.phase.name == contract.done.after]
    if not runs:
        return None
    start = runs[-1]
    judgement = _run_of(contract, f"{start.via}-{start.order}", start, subagent, agent)
    if not _final(judgement, view, env, last_message, subagent):
        return judgement
    missing = done_check.shortfalls(contract, session.values, project, deadline.remaining())
    judgement.files = [os.path.relpath(s.path, project) for s in missing] or []
    judgement.met = not missing
    judgement.file = None
    if judgement.met and not subagent:
        progress.end(contract.name, session.values, project, progress.DONE)
    if missing:
        lines = "\n".join(f"- {s.text()}" for s in missing)
        judgement.instructions = (
            f"[plangate] Workflow {contract.name} is not done: its definition of done does "
            f"not hold yet.\n{lines}\nFinish this work (tick each task only once it is really "
            "done), then end your turn."
        )
    return judgement


def _run_of(
    contract: Contract, key: str, start: Invocation, subagent: bool, agent: str | None
) -> Judgement:
    """The judgement of one gate run, keyed ``key`` (a subagent's under its own id), begun by
    the phase entry ``start``."""
    judgement = Judgement(gate_of(contract), f"agent-{agent}/{key}" if subagent else key)
    judgement.agent = agent if subagent else None
    judgement.loaded_at = start.timestamp
    judgement.via = start.via
    return judgement


def _final(
    judgement: Judgement,
    view: View,
    env: dict[str, str],
    last_message: object,
    subagent: bool,
) -> bool:
    """Whether this stop is final (one that waits on the person in an interactive session
    is not held)."""
    if not subagent:
        kind = skill_loads.session_kind(view.prompt_source, view.entrypoint, env)
        if kind == skill_loads.INTERACTIVE:
            judgement.not_final = skill_loads.asks_the_user(view.events, last_message) or ""
    judgement.final = not judgement.not_final
    return judgement.final


def _drift(
    contract: Contract,
    session: state.Session,
    view: View,
    project: str,
    env: dict[str, str],
    last_message: object,
    subagent: bool,
    agent: str | None,
) -> Judgement | None:
    """The stop held while the current phase has changed files outside its ``editable``
    paths (:mod:`.drift`); None when it has not (or nothing compares). Each different set
    of such files is its own run, held at most 3 times."""
    from plangate.contracts import drift
    from plangate.contracts.snapshot import Unlisted

    phase = session.current
    if phase is None or not drift.watched(phase):
        return None
    start = session.entered[-1]
    try:
        names = drift.outside(contract, phase, session.values, project)
        why = None
    except Unlisted as error:
        names, why = [str(error)], str(error)
    if not names:
        return None
    import hashlib

    digest = hashlib.sha256("\0".join(names).encode()).hexdigest()[:12]
    key = f"drift-{phase.name}-{start.via}-{start.order}-{digest}"
    judgement = _run_of(contract, key, start, subagent, agent)
    if not _final(judgement, view, env, last_message, subagent):
        return judgement
    judgement.files = [] if why else names
    judgement.met = False
    judgement.file = None
    feature = drift.feature_of(contract, session.values)
    detail = (
        f"phase {phase.name}'s files could not be compared: {why}"
        if why
        else "files changed outside its editable paths: "
        + drift.describe(names, phase.name, contract.name, feature)
    )
    judgement.instructions = (
        f"[plangate] contract_drift: workflow {contract.name}, phase {phase.name}: {detail}. "
        "Restore them, or end your turn and tell the person which files changed: only they "
        "can accept the change (`plangate explain contract_drift`)."
    )
    return judgement


def _untrusted(contract: Contract, detail: str) -> Judgement:
    """A final stop held: the journal holds records Claude Code never writes while the
    workflow is active (``journal_untrusted``)."""
    from plangate.decisions import reasons

    judgement = Judgement(gate_of(contract), untrusted.CODE)
    judgement.final = True
    judgement.met = False
    judgement.instructions = (
        f"[plangate] {reasons.text(untrusted.CODE)} Detail: {detail}. "
        f"Run `plangate explain {untrusted.CODE}` for what to do."
    )
    return judgement


def _refused(error: GateError, session: str, contracts: list[Contract]) -> Judgement | None:
    """The held stop for a journal the reader refused for a shape Claude Code never writes,
    in a session marked active in one of ``contracts`` (None: the error stands)."""
    workflow = untrusted.active_workflow(session)
    contract = next((c for c in contracts if c.name == workflow), None)
    if error.code != GATE_TRANSCRIPT or contract is None:
        return None
    if not untrusted.refused_reason(error.refusal):
        return None
    return _untrusted(contract, untrusted.refusal_detail(str(error.refusal)))


def decide(
    payload: dict[str, Any],
    event: str,
    *,
    stderr: TextIO | None = None,
    alarm: Callable[[float], object] | None = None,
    world: World = OS,
) -> Output:
    """A contract's stop gate on this stop, reading and waiting through ``world``."""
    env = dict(os.environ)
    project = evaluate.project_dir(payload, world)
    contracts = [
        c
        for c in evaluate.applying(project).contracts
        if c.done is not None or any(p.editable is not None for p in c.phases)
    ]
    if not contracts:
        return {}
    session = payload.get("session_id")
    transcript = payload.get("transcript_path")
    if not isinstance(session, str) or not isinstance(transcript, str):
        return {}
    state_root = stop_hook.state_root_of(env)
    gates = [gate_of(c) for c in contracts]
    subagent = event == SUBAGENT_STOP
    agent_raw = payload.get("agent_id")
    agent = agent_raw if isinstance(agent_raw, str) and agent_raw else None
    agent_path = payload.get("agent_transcript_path")
    if subagent and (not isinstance(agent_path, str) or not agent_path):
        return {}
    outcome = stop_hook.Outcome()
    scope = f"agent:{agent or 'unknown'}" if subagent else "main"
    deadline = Deadline(deadline_ms(env), world=world)
    cancel = alarm(deadline.seconds) if alarm is not None else None
    errors: list[tuple[Gate, GateError]] = []
    judgements: list[Judgement] = []
    stop: Stop | None = None
    cwd = str(payload.get("cwd") or project)
    last = payload.get("last_assistant_message")

    def judge(view: View) -> list[Judgement]:
        found: list[Judgement] = []
        for contract in contracts:
            held = _judge(
                contract, view, project, cwd, env, last, subagent, agent, deadline, session
            )
            if held is not None:
                held.stop = view.matched
                found.append(held)
        return found

    try:
        from plangate.gates import transcript as reader

        previous = session_record.snapshot(session, state_root)
        after = stop_hook._after(previous, scope)
        if subagent:
            assert isinstance(agent_path, str)
            stop = reader.AgentStop(agent_path, agent, last, after, deadline, judge)
        elif is_codex_payload(payload):
            stop = reader.CodexStop(transcript, session, last, after, deadline, judge)
        else:
            stop = reader.SessionStop(transcript, session, last, after, deadline, judge)
        judgements = reader.judged(stop)
    except GateTimeout:
        timeout = GateError(GATE_TIMEOUT, f"the {deadline.seconds:g} s deadline passed")
        errors = [(gate, timeout) for gate in gates]
    except GateError as error:
        held = None if subagent else _refused(error, session, contracts)
        if held is not None:
            judgements.append(held)
        else:
            errors = [(gate, error) for gate in gates]
    except Exception as error:  # noqa: BLE001 - a broken gate lets the stop through
        failure = GateError(GATE_TRANSCRIPT, f"{type(error).__name__}: {error}"[:200])
        errors = [(gate, failure) for gate in gates]
    finally:
        if callable(cancel):
            cancel()
    if not judgements and not errors:
        return {}
    matched = stop.matched if stop is not None else None
    stop_hook._apply_all(
        session, judgements, errors, event, agent, scope, matched, state_root, outcome
    )
    return stop_hook.finish(outcome, state_root, stderr)
