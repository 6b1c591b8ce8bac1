"""One Stop or SubagentStop call, from payload to hook output.

1. Read each gate's switch (every call). Both off: no decision, nothing written.
2. Read the transcript until it is settled (the session's, or the subagent's own).
3. Each gate judges the latest run of its skill (:mod:`plangate.gates.judgement`).
4. Under the session lock, the record turns judgements into markers: ``fired`` at a run's
   first final stop, ``blocked`` (at most 3 per run), then ``released`` or ``exhausted``;
   nothing more for that run afterwards.
5. Markers go to the record, the trace log and the transcript (a block's reason, or
   ``systemMessage``); errors also to stderr. An error never blocks.
"""

from __future__ import annotations

import os

from plangate import config, locations
from plangate.gates import markers as mk
from plangate.gates import session_record, trace
from plangate.gates.errors import (
    GATE_BAD_PAYLOAD,
    GATE_STATE,
    GATE_TIMEOUT,
    GATE_TRANSCRIPT,
    GATE_UNEXPECTED,
    REMEDIES,
    GateError,
    GateTimeout,
    anchor,
)
from plangate.gates.gate import AUTOPLAN, CEO_REVIEW, SUBAGENT_STOP, Gate, gates_for
from plangate.gates.timing import Deadline, deadline_ms, utc_timestamp
from plangate.hook_io.protocol import block_stop, no_decision
from plangate.journal.events import ToolUse
from plangate.journal.identity import valid_session_id
from plangate.journal.world import OS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, TextIO

    from plangate.gates.judgement import Context, Judgement
    from plangate.gates.transcript import Stop, View
    from plangate.hook_io.protocol import Output, Payload
    from plangate.journal.events import Event
    from plangate.journal.world import World

BLOCK_CAP = 3
UNKNOWN_SESSION = "unknown"


class Outcome:
    """What one call produced: marker lines per gate, block reasons, errors for stderr."""

    __slots__ = ("markers", "reasons", "errors")

    def __init__(self) -> None:
        self.markers: list[tuple[Gate, mk.Marker]] = []
        self.reasons: list[str] = []
        self.errors: list[tuple[mk.Marker, str]] = []


def _error_marker(gate: Gate, session: str, error: GateError, agent: str | None) -> mk.Marker:
    fields: list[tuple[str, object]] = [("code", error.code), ("why", error.why)]
    if agent:
        fields.append(("agent", agent))
    return mk.Marker(gate.hook, mk.ERROR, session, fields)


def switches(
    event: str, environ: Mapping[str, str], state_root: str
) -> tuple[list[Gate], list[tuple[Gate, GateError]]]:
    """The gates that are on for this event, and the ones whose switch cannot be read."""
    from plangate.errors import ConfigError

    on: list[Gate] = []
    broken: list[tuple[Gate, GateError]] = []
    for gate in gates_for(event):
        try:
            enabled, source = config.gate_switch(
                gate.switch, environ, path=config.config_path(state_root)
            )
            if not enabled and source == config.SOURCE_ENV:
                # A settings file's env reaches the hooks: it may turn a gate on, never off.
                enabled, _ = config.gate_switch(
                    gate.switch, {}, path=config.config_path(state_root)
                )
        except ConfigError as error:
            broken.append((gate, GateError(GATE_STATE, f"the switch: {error.message}")))
            continue
        if enabled:
            on.append(gate)
    return on, broken


def decide(
    payload: Payload,
    event: str,
    *,
    environ: Mapping[str, str] | None = None,
    stderr: TextIO | None = None,
    alarm: Callable[[float], object] | None = None,
    world: World = OS,
) -> Output:
    """The hook output for one call. Never raises an :class:`Exception`.

    ``world`` is what the gates read and the time they run on (:mod:`plangate.journal.world`:
    the deadline, the transcript's reads and the settle loop; tests inject a clock)."""
    env = dict(os.environ if environ is None else environ)
    state_root = state_root_of(env)
    on, broken = switches(event, env, state_root)
    if not on and not broken:
        return {}
    outcome = Outcome()
    session = payload.get("session_id")
    if not valid_session_id(session):
        for gate in on or [g for g, _ in broken]:
            bad = GateError(GATE_BAD_PAYLOAD, "session_id is missing or not a session id")
            outcome.errors.append((_error_marker(gate, UNKNOWN_SESSION, bad, None), bad.code))
            outcome.markers.append((gate, outcome.errors[-1][0]))
        return finish(outcome, state_root, stderr)
    assert isinstance(session, str)
    try:
        _decide(payload, event, session, on, broken, env, state_root, outcome, alarm, world)
    except Exception as error:  # noqa: BLE001 - a broken gate lets the stop through
        failure = GateError(GATE_UNEXPECTED, f"{type(error).__name__}: {error}"[:200])
        agent = payload.get("agent_id")
        _record_errors(
            session,
            [(gate, failure) for gate in on],
            event,
            agent if isinstance(agent, str) and agent else None,
            state_root,
            outcome,
        )
    return finish(outcome, state_root, stderr)


def state_root_of(environ: Mapping[str, str]) -> str:
    """The state root ``environ`` names, else the process's."""
    return locations.state_root(environ if environ.get(locations.STATE_ROOT_ENV) else None)


def _context(
    payload: Payload, event: str, session: str, env: dict[str, str], state_root: str
) -> Context:
    from plangate.gates.judgement import Context

    cwd = payload.get("cwd")
    project = env.get("CLAUDE_PROJECT_DIR") or cwd
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        cwd = project if isinstance(project, str) and os.path.isabs(project) else os.getcwd()
    if not isinstance(project, str) or not os.path.isabs(project):
        project = cwd
    agent = payload.get("agent_id")
    return Context(
        event=event,
        session=session,
        cwd=cwd,
        project_dir=project,
        environ=env,
        state_root=state_root,
        agent_id=agent if isinstance(agent, str) and agent else None,
        last_message=payload.get("last_assistant_message"),
        background=payload.get("background_tasks"),
    )


def _decide(
    payload: Payload,
    event: str,
    session: str,
    on: list[Gate],
    broken: list[tuple[Gate, GateError]],
    env: dict[str, str],
    state_root: str,
    outcome: Outcome,
    alarm: Callable[[float], object] | None,
    seen: World,
) -> None:
    errors: list[tuple[Gate, GateError]] = list(broken)
    ctx = _context(payload, event, session, env, state_root)
    transcript = payload.get("transcript_path")
    if not isinstance(transcript, str) or not os.path.isabs(transcript):
        bad = GateError(GATE_BAD_PAYLOAD, "transcript_path is missing or not an absolute path")
        bad_all = errors + [(g, bad) for g in on]
        _record_errors(session, bad_all, event, ctx.agent_id, state_root, outcome)
        return
    subagent = event == SUBAGENT_STOP
    agent_path = payload.get("agent_transcript_path")
    if subagent and (not isinstance(agent_path, str) or not agent_path):
        # No transcript of its own: the subagent is left alone.
        _record_errors(session, errors, event, ctx.agent_id, state_root, outcome)
        return
    if not on:
        _record_errors(session, errors, event, ctx.agent_id, state_root, outcome)
        return
    deadline = Deadline(deadline_ms(env), world=seen)
    scope = f"agent:{ctx.agent_id or 'unknown'}" if subagent else "main"
    judgements: list[Judgement] = []
    stop: Stop | None = None
    cancel = alarm(deadline.seconds) if alarm is not None else None
    try:
        previous = session_record.snapshot(session, state_root)
        after = _after(previous, scope)

        def judge(view: View) -> list[Judgement]:
            found: list[Judgement] = []
            for gate in on:
                try:
                    judgement = _judge(gate, ctx, view, deadline, subagent)
                except GateError as error:
                    errors.append((gate, error))
                    continue
                judgement.stop = view.matched
                found.append(judgement)
            return found

        from plangate.gates.transcript import judged

        stop = _stop(transcript, agent_path, session, ctx, after, deadline, judge, on)
        judgements = judged(stop)
    except GateTimeout:
        timeout = GateError(GATE_TIMEOUT, f"the {deadline.seconds:g} s deadline passed")
        errors.extend((gate, timeout) for gate in on)
        judgements = []
    except GateError as error:
        errors.extend((gate, error) for gate in on)
        judgements = []
    finally:
        if callable(cancel):
            cancel()
    runs = [j for j in judgements if j.run is not None]
    if not runs and not errors:
        return  # not armed: nothing to record
    matched = stop.matched if stop is not None else None
    _apply_all(session, runs, errors, event, ctx.agent_id, scope, matched, state_root, outcome)


def _after(record: dict[str, Any] | None, scope: str) -> int | None:
    if record is None:
        return None
    value = record["stops"].get(scope)  # checked when read: an integer or absent
    return value if isinstance(value, int) else None


def _loaded(gates: list[Gate], ctx: Context) -> Callable[[list[Event]], bool]:
    """Whether an index of the transcript shows a load of any of these gates' skills."""
    from plangate.gates import skill_loads

    def armed(events: list[Event]) -> bool:
        unsure = any(
            isinstance(e, ToolUse)
            and e.input is None
            and e.name in (skill_loads.SKILL_TOOL, "Read")
            for e in events
        )  # a call too large for the index: read everything rather than miss a load
        return unsure or any(
            skill_loads.loads(
                events, gate.skill, skill_loads.skill_files(gate.skill, ctx.project_dir), ctx.cwd
            )
            for gate in gates
        )

    return armed


def _stop(
    transcript: str,
    agent_path: object,
    session: str,
    ctx: Context,
    after: int | None,
    deadline: Deadline,
    judge: Callable[[View], list[Judgement]],
    gates: list[Gate],
) -> Stop:
    """The stop's workflow: on the subagent's own transcript (only this session's), or on the
    session's journal, read whole only when an index of it shows a load of a gate's skill."""
    from plangate.gates.transcript import AgentStop, SessionStop

    last = ctx.last_message
    if ctx.event == SUBAGENT_STOP:
        assert isinstance(agent_path, str)
        _check_subagent_path(agent_path, transcript, session, ctx.agent_id)
        return AgentStop(agent_path, ctx.agent_id, last, after, deadline, judge)
    armed = _loaded(gates, ctx)
    return SessionStop(transcript, session, last, after, deadline, judge, armed)


def _check_subagent_path(path: str, transcript: str, session: str, agent: str | None) -> None:
    """Only this session's own subagent transcript is read (``GATE_TRANSCRIPT`` otherwise):
    a payload naming another file must not make this session's gate judge it."""
    from plangate.journal.identity import IdentityError, check_subagent_layout

    try:
        check_subagent_layout(path, transcript, session, agent)
    except IdentityError as error:
        raise GateError(GATE_TRANSCRIPT, error.detail) from None


def _judge(gate: Gate, ctx: Context, view: View, deadline: Deadline, subagent: bool) -> Judgement:
    from plangate.gates import skill_loads
    from plangate.gates.judgement import Judgement

    files = skill_loads.skill_files(gate.skill, ctx.project_dir)
    found = skill_loads.loads(view.events, gate.skill, files, ctx.cwd)
    if not found:
        return Judgement(gate)
    load = found[-1]
    key = f"agent-{ctx.agent_id}/{load.key}" if subagent else load.key
    judgement = Judgement(gate, key)
    judgement.agent = ctx.agent_id if subagent else None
    judgement.loaded_at = load.timestamp
    judgement.via = load.via
    run = skill_loads.run_events(view.events, load)
    if not subagent:
        if skill_loads.waiting_reviewers(run, ctx.background):
            judgement.not_final = "reviewer"
        elif (
            skill_loads.session_kind(view.prompt_source, view.entrypoint, ctx.environ)
            == skill_loads.INTERACTIVE
        ):
            judgement.not_final = skill_loads.asks_the_user(view.events, ctx.last_message) or ""
    judgement.final = not judgement.not_final
    if not judgement.final:
        return judgement
    if gate is CEO_REVIEW:
        from plangate.gates import ceo_review

        ceo_review.evaluate(judgement, ctx, run, view.events, load, deadline)
    elif gate is AUTOPLAN:
        from plangate.gates import autoplan

        autoplan.evaluate(judgement, ctx, run, load)
    deadline.check("judging the run")
    return judgement


# --- the record -------------------------------------------------------------------------


def _new_run(judgement: Judgement) -> dict[str, Any]:
    return {
        "skill": judgement.gate.skill,
        "agent": judgement.agent,
        "via": judgement.via,
        "loaded_at": judgement.loaded_at,
        "observed": 0,
        "blocked": 0,
        "fired_at": None,
        "released_at": None,
        "exhausted_at": None,
        "file": None,
    }


def apply(
    record: dict[str, Any],
    judgement: Judgement,
    session: str,
    event: str,
    now: str,
) -> tuple[list[mk.Marker], str | None]:
    """Turn one judgement into markers (and a block reason) and note it in ``record``."""
    gate = judgement.gate
    entry = session_record.gate_entry(record, gate.switch)
    skill = gate.skill
    agent: list[tuple[str, object]] = [("agent", judgement.agent)] if judgement.agent else []
    found: list[mk.Marker] = []
    assert judgement.run is not None
    run = entry["runs"].get(judgement.run)
    if not isinstance(run, dict):
        run = entry["runs"][judgement.run] = _new_run(judgement)
    stop = judgement.stop
    if judgement.final and stop is not None and stop >= 0 and run.get("last_stop") == stop:
        # The same stop judged twice (the hook registered twice): one answer, counted once.
        blocked = run.get("blocked", 0)
        if run.get("released_at") or run.get("exhausted_at") or judgement.met or not blocked:
            return found, None
        marker = _block_marker(judgement, session, event, blocked, agent)
        return found, marker.line() + "\n" + judgement.instructions
    run["observed"] = run.get("observed", 0) + 1
    if run.get("released_at") or run.get("exhausted_at"):
        return found, None
    if not judgement.final:
        run["waiting"] = judgement.not_final
        return found, None
    run.pop("waiting", None)
    if stop is not None and stop >= 0:
        run["last_stop"] = stop
    for reason in judgement.skipped:
        if reason not in entry["skipped"]:
            entry["skipped"].append(reason)
            skip: list[tuple[str, object]] = [("skill", skill), ("reason", reason), *agent]
            found.append(mk.Marker(gate.hook, mk.SKIPPED, session, skip))
    if not run.get("fired_at"):
        run["fired_at"] = now
        found.append(
            mk.Marker(gate.hook, mk.FIRED, session, [("skill", skill), ("on", event), *agent])
        )
    if judgement.phases is not None:
        run["phases"] = judgement.phases
        run["published"] = judgement.published
        run["missing"] = judgement.missing
    blocked = run.get("blocked", 0)
    fields: list[tuple[str, object]] = [("skill", skill)]
    if judgement.met:
        run["released_at"] = now
        if judgement.file is not None:
            run["file"] = judgement.file
            fields.append(("file", os.path.basename(judgement.file)))
        if judgement.phases is not None:
            fields.append(("phases", judgement.published or []))
        fields.append(("blocked", blocked))
        found.append(mk.Marker(gate.hook, mk.RELEASED, session, fields + agent))
        return found, None
    if blocked >= BLOCK_CAP:
        run["exhausted_at"] = now
        if judgement.missing is not None:
            fields.append(("missing", judgement.missing))
        fields.append(("blocked", blocked))
        found.append(mk.Marker(gate.hook, mk.EXHAUSTED, session, fields + agent))
        return found, None
    blocked += 1
    run["blocked"] = blocked
    marker = _block_marker(judgement, session, event, blocked, agent)
    found.append(marker)
    return found, marker.line() + "\n" + judgement.instructions


def _block_marker(
    judgement: Judgement,
    session: str,
    event: str,
    n: int,
    agent: list[tuple[str, object]],
) -> mk.Marker:
    via = "subagent-stop" if event == SUBAGENT_STOP else "stop"
    fields: list[tuple[str, object]] = [("skill", judgement.gate.skill), ("via", via)]
    if judgement.missing is not None:
        fields.append(("missing", judgement.missing))
        fields.append(("published", judgement.published or []))
    else:
        fields.append(("files", judgement.files or []))
    fields.append(("n", n))
    return mk.Marker(judgement.gate.hook, mk.BLOCKED, session, fields + agent)


def _error_entry(error: GateError, event: str, now: str, agent: str | None) -> dict[str, Any]:
    return {"code": error.code, "why": error.why, "on": event, "agent": agent, "at": now}


def _apply_all(
    session: str,
    judgements: list[Judgement],
    errors: list[tuple[Gate, GateError]],
    event: str,
    agent: str | None,
    scope: str,
    matched: int | None,
    state_root: str,
    outcome: Outcome,
) -> None:
    produced: list[tuple[Gate, mk.Marker]] = []
    reasons: list[str] = []
    error_markers: list[tuple[mk.Marker, str]] = []

    def change(record: dict[str, Any]) -> None:
        produced.clear()
        reasons.clear()
        error_markers.clear()
        now = utc_timestamp()
        for gate, error in errors:
            entry = session_record.gate_entry(record, gate.switch)
            session_record.add_error(entry, _error_entry(error, event, now, agent))
            marker = _error_marker(gate, session, error, agent)
            produced.append((gate, marker))
            error_markers.append((marker, error.code))
        for judgement in judgements:
            found, reason = apply(record, judgement, session, event, now)
            produced.extend((judgement.gate, marker) for marker in found)
            if reason is not None:
                reasons.append(reason)
        if matched is not None and judgements:
            record["stops"][scope] = matched
        session_record.add_markers(record, [marker.line() for _, marker in produced])

    try:
        session_record.update(session, change, state_root=state_root)
    except GateError as failure:
        # The record could not hold this call: nothing is blocked, everything is an error,
        # kept in the pending file so that `plangate report` still counts it.
        gates = sorted({g for g, _ in errors} | {j.gate for j in judgements}, key=_order)
        now = utc_timestamp()
        for gate, error in [(g, failure) for g in gates] + errors:
            marker = _error_marker(gate, session, error, agent)
            outcome.markers.append((gate, marker))
            outcome.errors.append((marker, error.code))
            try:
                entry = _error_entry(error, event, now, agent)
                session_record.append_pending(session, gate.switch, entry, state_root)
            except OSError:
                pass  # nowhere left to keep it: the trace log and stderr still say it
        return
    outcome.markers.extend(produced)
    outcome.reasons.extend(reasons)
    outcome.errors.extend(error_markers)
    if any(marker.event == mk.FIRED for _, marker in produced):
        session_record.clean_old(session, state_root)


def _order(gate: Gate) -> int:
    return 0 if gate is CEO_REVIEW else 1


def _record_errors(
    session: str,
    errors: list[tuple[Gate, GateError]],
    event: str,
    agent: str | None,
    state_root: str,
    outcome: Outcome,
) -> None:
    """Record errors alone (no judgement); if even that fails, report both failures."""
    if errors:
        _apply_all(session, [], errors, event, agent, "main", None, state_root, outcome)


def finish(outcome: Outcome, state_root: str, stderr: TextIO | None) -> Output:
    by_hook: dict[str, list[str]] = {}
    stamp = utc_timestamp()
    for gate, marker in outcome.markers:
        by_hook.setdefault(gate.hook, []).append(marker.trace_line(stamp))
    for hook, lines in by_hook.items():
        trace.append(hook, lines, state_root)
    if stderr is not None:
        for marker, code in outcome.errors:
            try:  # noqa: SIM105 - contextlib would cost the hook path an import
                stderr.write(f"{marker.line()}\n  fix: {REMEDIES[code]} (see {anchor(code)})\n")
            except (OSError, ValueError):
                pass
    system = "\n".join(marker.line() for _, marker in outcome.markers if marker.event != mk.BLOCKED)
    if outcome.reasons:
        return block_stop("\n\n".join(outcome.reasons), system_message=system or None)
    return no_decision(system or None)
