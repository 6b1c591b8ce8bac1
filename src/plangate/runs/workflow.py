"""The run as a DBOS Transact workflow: one workflow per turn, each stage a step.

A turn starts when a run starts and again with every reply. Its stages are DBOS steps:
``prepare`` (the worktree, the plan, the reply), one ``carry_out`` per plan step (or one
for the bare task, or a fix turn), ``checks``, ``gate``, ``review``, ``round`` (spend an
attempt), ``replan``, and the turn's end, ``wait`` or ``finish``. DBOS records each step's
result, so a killed turn resumes after its last completed step; the step in flight runs
again, which is why every step is idempotent (a step's commit is looked up by its key, a
check round is keyed by run, turn and attempt, every row is keyed).

The workflow function only decides; it reads nothing but step results, so it replays the
same way. Waiting on a person ends the turn's workflow (see ``docs/runs-design.md``): a
reply starts the next turn's workflow, ``<run id>.t<turn>``, so no process sits blocked for
days and a wait survives an upgrade of plangate.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from dbos import DBOS

from plangate.agents import load_agent
from plangate.agents.base import ReviewRequest, StepRequest
from plangate.errors import PlangateError
from plangate.plan.model import Check, Plan, Step
from plangate.plan.parse import parse_plan
from plangate.plan.render import render_plan
from plangate.runs import attempts, checks, evidence, planner, sandbox
from plangate.runs.model import CheckRecord, Failure, StepRecord
from plangate.runs.store import Store
from plangate.runs.validator import named_files, normalize_path

QUEUE = "plangate-runs"
# Bump when the sequence of steps a turn records changes: DBOS recovers a workflow only in a
# process of the same application version.
WORKFLOW_VERSION = "1"
APPLICATION_VERSION = f"plangate-runs-{WORKFLOW_VERSION}"
WORKFLOW_NAME = "plangate.run_turn"


class _Context:
    """What the steps of this process use: the store and this executor's id."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.store: Store | None = None
        self.executor_id = ""


CONTEXT = _Context()


def bind(store: Store, executor_id: str) -> None:
    """Point this process's workflow steps at ``store``."""
    with CONTEXT.lock:
        CONTEXT.store = store
        CONTEXT.executor_id = executor_id


def _store() -> Store:
    store = CONTEXT.store
    if store is None:
        raise PlangateError("the runs engine is not started", "start it with plangate run")
    return store


def workflow_id(run_id: str, turn: int) -> str:
    return f"{run_id}.t{turn}"


def _key(turn: int, attempt: int) -> str:
    return f"t{turn}/a{attempt}"


# -- values passed between steps ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TurnStart:
    has_plan: bool
    task: str | None
    plan_text: str | None
    version: int
    executed: tuple[int, ...]
    feedback: tuple[Failure, ...]
    reply: str | None
    attempts_allowed: int
    review: bool


@dataclass(frozen=True, slots=True)
class StepResult:
    status: Literal["done", "escalated"]
    failure: Failure | None = None


@dataclass(frozen=True, slots=True)
class ReplanResult:
    number: int | None
    plan_text: str | None
    detail: str


# -- the workflow --------------------------------------------------------------------------


@DBOS.workflow(name=WORKFLOW_NAME)
def run_turn(run_id: str, turn: int) -> str:
    """Carry a run through one turn; the state it ends in (``done`` or ``waiting``)."""
    try:
        return _turn(run_id, turn)
    except Exception as error:
        if type(error).__module__.startswith("dbos"):
            raise
        line = " ".join(str(error).split()) or type(error).__name__
        wait(run_id, turn, attempts.REASON_ERROR, line[:500], kind="stopped")
        return "waiting"


def _turn(run_id: str, turn: int) -> str:
    start = prepare(run_id, turn)
    plan_text, version = start.plan_text, start.version
    executed = list(start.executed)
    feedback, reply = start.feedback, start.reply
    used = 0
    while True:
        escalation: Failure | None = None
        worked = False
        if plan_text is not None:
            last = executed[-1] if executed else 0
            for step in parse_plan(plan_text).steps:
                if step.number <= last:
                    continue
                worked = True
                result = carry_out(run_id, turn, used, version, step.number, reply, feedback)
                reply, feedback = None, ()
                if result.failure is not None:
                    escalation = result.failure
                    break
                executed.append(step.number)
        if not worked and (plan_text is None or reply is not None or feedback):
            result = carry_out(run_id, turn, used, version, None, reply, feedback)
            reply, feedback = None, ()
            escalation = result.failure
        found: tuple[Failure, ...]
        if escalation is not None:
            found = (escalation,)
        else:
            records = run_checks(run_id, turn, used, version)
            found = tuple(failure for failure in map(_check_failure, records) if failure)
            found += run_gate(run_id, turn, used, version, tuple(executed), records)
            if not found and start.review:
                sent_back = review(run_id, turn, used, version)
                if sent_back is not None:
                    found = (sent_back,)
        if not found:
            finish(run_id, turn)
            return "done"
        decision = attempts.decide(found, used, start.attempts_allowed, plan_text is not None)
        spend(run_id, turn, decision.attempts_used, found, start.attempts_allowed)
        used = decision.attempts_used
        if decision.action == "wait":
            wait(run_id, turn, decision.reason or "", decision.detail or "")
            return "waiting"
        if decision.action == "retry" or plan_text is None:
            feedback = found
            continue
        outcome = replan(run_id, turn, used, version, tuple(executed), found)
        if outcome.plan_text is None or outcome.number is None:
            reason = attempts.waiting_reason(found)
            wait(run_id, turn, reason, outcome.detail)
            return "waiting"
        plan_text, version = outcome.plan_text, outcome.number
        feedback = found


def _check_failure(record: CheckRecord) -> Failure | None:
    return None if record.passed else checks.failure(record)


# -- helpers the steps share ----------------------------------------------------------------


def _plan_of(run_id: str, version: int) -> Plan | None:
    if version <= 0:
        return None
    record = _store().version(run_id, version)
    if record is None:
        raise PlangateError(f"run {run_id} has no plan version {version}", "start a new run")
    return parse_plan(record.plan_text, source=f"<version {version}>")


def _event(run_id: str, key: str, turn: int, kind: str, text: str) -> None:
    store = _store()
    with store.transaction() as conn:
        store.add_event(conn, run_id, key, turn, kind, text)


def _state(run_id: str, state: str) -> None:
    store = _store()
    with store.transaction() as conn:
        store.update_run(conn, run_id, state=state)


def _run(run_id: str) -> tuple[Store, Path, str, str]:
    """The store, worktree, base commit and agent of the run; and the run marked as carried
    by this process (a turn resumed elsewhere after a crash changes hands)."""
    store = _store()
    run = store.run(run_id)
    if run is None:
        raise PlangateError(f"there is no run {run_id}", "see `plangate runs`")
    if run.executor != CONTEXT.executor_id:
        with store.transaction() as conn:
            store.update_run(conn, run_id, executor=CONTEXT.executor_id)
    return store, Path(run.worktree), run.base_commit, run.agent


# -- the steps -------------------------------------------------------------------------------


@DBOS.step(name="plangate.prepare")
def prepare(run_id: str, turn: int) -> TurnStart:
    """Make the worktree (once), and gather what the turn starts from."""
    store = _store()
    run = store.run(run_id)
    if run is None:
        raise PlangateError(f"there is no run {run_id}", "see `plangate runs`")
    worktree = Path(run.worktree)
    sandbox.create(run.repo, worktree, run.branch, run.base_commit)
    accepted = [v for v in store.versions(run_id) if v.accepted and v.number is not None]
    current = accepted[-1] if accepted else None
    executed = tuple(
        record.step
        for record in store.steps(run_id)
        if record.status == "done" and record.step is not None
    )
    reply = store.reply(run_id, turn) if turn > 1 else None
    feedback: tuple[Failure, ...] = ()
    if turn > 1 and store.event_kind(run_id, f"t{turn - 1}/waiting") == "waiting":
        earlier = store.failures(run_id, turn - 1)
        if earlier:
            last_attempt = max(attempt for _, attempt, _ in earlier)
            feedback = tuple(f for _, attempt, f in earlier if attempt == last_attempt)
    with store.transaction() as conn:
        store.update_run(
            conn,
            run_id,
            state="running",
            executor=CONTEXT.executor_id,
            turn=turn,
            attempts_used=0,
            waiting_reason=None,
            waiting_detail=None,
        )
        if turn == 1:
            where = (
                f"version {current.number} of the plan" if current else "the task, without a plan"
            )
            store.add_event(
                conn,
                run_id,
                "t1/start",
                turn,
                "start",
                f"Run started on branch {run.branch} from {run.base_commit[:10]}, "
                f"working from {where}.",
            )
        else:
            store.add_event(
                conn, run_id, f"t{turn}/start", turn, "start", f"Turn {turn}: carrying on."
            )
    return TurnStart(
        has_plan=run.has_plan,
        task=run.task,
        plan_text=None if current is None else current.plan_text,
        version=0 if current is None or current.number is None else current.number,
        executed=tuple(sorted(set(executed))),
        feedback=feedback,
        reply=reply,
        attempts_allowed=run.attempts_allowed,
        review=run.review,
    )


def _step_key(turn: int, attempt: int, version: int, number: int | None) -> str:
    where = "fix" if number is None else f"s{number}"
    return f"{_key(turn, attempt)}/v{version}/{where}"


def _step_result(record: StepRecord) -> StepResult:
    if record.status == "done":
        return StepResult("done")
    return StepResult(
        "escalated", Failure("escalation", record.escalation or "the agent escalated")
    )


@DBOS.step(name="plangate.carry_out")
def carry_out(
    run_id: str,
    turn: int,
    attempt: int,
    version: int,
    number: int | None,
    reply: str | None,
    feedback: tuple[Failure, ...],
) -> StepResult:
    """Have the agent carry out step ``number`` of ``version`` (``None``: the task, or a fix
    turn), then commit it, or record its escalation."""
    store, worktree, _base, agent_spec = _run(run_id)
    run = store.run(run_id)
    assert run is not None
    key = _step_key(turn, attempt, version, number)
    known = store.step(run_id, key)
    if known is not None:
        return _step_result(known)
    plan = _plan_of(run_id, version)
    step: Step | None = None if plan is None or number is None else plan.step(number)
    label = "the task" if plan is None else ("a fix" if step is None else f"step {number}")
    title = (
        f"Step {number}: {step.title}"
        if step is not None
        else ("Fix" if plan is not None or feedback or reply else "Task")
    )
    existing = sandbox.find_commit(worktree, key)
    if existing is not None:
        record = StepRecord(
            key,
            turn,
            attempt,
            version,
            number,
            "done",
            existing,
            tuple(sandbox.commit_files(worktree, existing)),
            "",
        )
        _record_step(store, run_id, record, title, label)
        return StepResult("done")
    sandbox.reset(worktree)
    request = StepRequest(
        run_id=run_id,
        workdir=worktree,
        step=step,
        plan_text=None if plan is None else render_plan(plan),
        version=version,
        task=run.task,
        feedback=feedback,
        reply=reply,
        turn=turn,
        attempt=attempt,
    )
    outcome = load_agent(agent_spec).do_step(request)
    message = outcome.message.strip()
    if outcome.status == "escalate":
        sandbox.reset(worktree)
        why = " ".join((outcome.escalation or message or "no reason given").split())
        summary = (
            f"{label} cannot be done as written: {why}" if step else f"the agent escalated: {why}"
        )
        record = StepRecord(
            key, turn, attempt, version, number, "escalated", None, (), message, summary
        )
        _record_step(store, run_id, record, title, label)
        return StepResult("escalated", Failure("escalation", summary))
    dirty = sandbox.dirty_files(worktree)
    if plan is not None:
        allowed = (
            {normalize_path(path) for path in step.files} if step is not None else named_files(plan)
        )
        outside = [path for path in dirty if normalize_path(path) not in allowed]
        if outside:
            sandbox.reset(worktree)
            names = ", ".join(f"`{path}`" for path in outside[:3])
            more = f" and {len(outside) - 3} more" if len(outside) > 3 else ""
            summary = f"{label} needs {names}{more}, which the plan does not name"
            record = StepRecord(
                key, turn, attempt, version, number, "escalated", None, (), message, summary
            )
            _record_step(store, run_id, record, title, label)
            return StepResult("escalated", Failure("escalation", summary))
    sha = sandbox.commit(worktree, key, title, message)
    record = StepRecord(
        key,
        turn,
        attempt,
        version,
        number,
        "done",
        sha,
        tuple(sandbox.commit_files(worktree, sha)),
        message,
        evidence=tuple(sorted((cid, tuple(paths)) for cid, paths in outcome.evidence.items())),
    )
    _record_step(store, run_id, record, title, label)
    return StepResult("done")


def _record_step(store: Store, run_id: str, record: StepRecord, title: str, label: str) -> None:
    with store.transaction() as conn:
        store.add_step(conn, run_id, record)
        if record.message:
            store.add_event(
                conn, run_id, f"{record.key}/agent", record.turn, "agent", record.message
            )
        if record.status == "done":
            files = len(record.changed_files)
            text = (
                f"{title} done (commit {(record.commit or '')[:10]}, "
                f"{files} file{'s' if files != 1 else ''} changed)."
            )
            store.add_event(conn, run_id, f"{record.key}/done", record.turn, "step", text)
        else:
            text = f"The agent escalated at {label}: {record.escalation}."
            store.add_event(conn, run_id, f"{record.key}/escalated", record.turn, "escalated", text)
        store.update_run(conn, run_id, state="running", last_message=record.message or None)


def _checks_of(plan: Plan | None, extra: Sequence[str]) -> list[Check]:
    declared = list(plan.checks) if plan is not None else []
    commands = {check.command for check in declared}
    declared += [Check(command) for command in extra if command not in commands]
    return declared


@DBOS.step(name="plangate.checks")
def run_checks(run_id: str, turn: int, attempt: int, version: int) -> tuple[CheckRecord, ...]:
    """Run the declared checks (the plan's and the run's ``--check`` commands) once per
    round; the records without their whole output (the store keeps that)."""
    store, worktree, _base, _agent = _run(run_id)
    run = store.run(run_id)
    assert run is not None
    round_key = _key(turn, attempt)
    declared = _checks_of(_plan_of(run_id, version), run.extra_checks)
    records = store.checks(run_id, round_key)
    if len(records) < len(declared):
        _state(run_id, "checking")
        records = [
            checks.run_check(check, worktree, round_key=round_key, index=index)
            for index, check in enumerate(declared)
        ]
        with store.transaction() as conn:
            store.add_checks(conn, run_id, records)
            for record in records:
                kind = "check_passed" if record.passed else "check_failed"
                text = checks.summary(record)
                store.add_event(
                    conn,
                    run_id,
                    f"{round_key}/check{record.index}",
                    turn,
                    kind,
                    text[0].upper() + text[1:] + ".",
                )
    return tuple(replace(record, output="") for record in records)


@DBOS.step(name="plangate.gate")
def run_gate(
    run_id: str,
    turn: int,
    attempt: int,
    version: int,
    executed: tuple[int, ...],
    records: tuple[CheckRecord, ...],
) -> tuple[Failure, ...]:
    """The evidence gate over the executed steps, the change, the checks and the citations."""
    store, worktree, base, _agent = _run(run_id)
    plan = _plan_of(run_id, version)
    if plan is None:
        return ()
    steps = [step for number in executed if (step := plan.step(number)) is not None]
    cited: dict[str, list[str]] = {}
    for record in store.steps(run_id):
        for criterion, paths in record.evidence:
            cited.setdefault(criterion, []).extend(paths)
    failures = evidence.gate(
        plan,
        steps,
        sandbox.changed_files(worktree, base),
        records,
        cited,
        lambda path: (worktree / path).exists(),
    )
    key = f"{_key(turn, attempt)}/gate"
    if failures:
        text = "Evidence gate failed: " + "; ".join(f.summary for f in failures) + "."
        _event(run_id, key, turn, "gate_failed", text)
    else:
        _event(run_id, key, turn, "gate_passed", "Evidence gate passed.")
    return tuple(failures)


@DBOS.step(name="plangate.review")
def review(run_id: str, turn: int, attempt: int, version: int) -> Failure | None:
    """The optional review: ``None`` if it approves, else its send-back as a failure."""
    store, worktree, base, agent_spec = _run(run_id)
    run = store.run(run_id)
    assert run is not None
    plan = _plan_of(run_id, version)
    request = ReviewRequest(
        run_id=run_id,
        workdir=worktree,
        plan_text=None if plan is None else render_plan(plan),
        task=run.task,
        changed_files=tuple(sandbox.changed_files(worktree, base)),
        diff=sandbox.diff(worktree, base),
        version=version,
        turn=turn,
        attempt=attempt,
    )
    outcome = load_agent(agent_spec).review(request)
    key = f"{_key(turn, attempt)}/review"
    if outcome.approved:
        _event(run_id, key, turn, "review", "The review approved the change.")
        return None
    reason = " ".join(outcome.reason.split()) or "no reason given"
    _event(run_id, key, turn, "review", f"The review sent the change back: {reason}.")
    return Failure("review", f"the review sent the change back: {reason}")


@DBOS.step(name="plangate.round")
def spend(run_id: str, turn: int, used: int, found: tuple[Failure, ...], allowed: int) -> None:
    """Record a failing round and the attempt it spent."""
    store = _store()
    with store.transaction() as conn:
        store.add_failures(conn, run_id, turn, used, found)
        store.update_run(conn, run_id, attempts_used=used)
        store.add_event(
            conn,
            run_id,
            f"t{turn}/spent{used}",
            turn,
            "attempt",
            f"Attempt {used} of {allowed} spent.",
        )


@DBOS.step(name="plangate.replan")
def replan(
    run_id: str,
    turn: int,
    attempt: int,
    version: int,
    executed: tuple[int, ...],
    found: tuple[Failure, ...],
) -> ReplanResult:
    """A fresh planner writes a new version from the previous one, the failures, the
    changed files and the diff; the sandbox must be unchanged afterwards."""
    store, worktree, base, agent_spec = _run(run_id)
    key = _key(turn, attempt)
    known = store.version_by_key(run_id, key)
    if known is not None:
        if known.accepted:
            return ReplanResult(known.number, known.plan_text, "")
        return ReplanResult(None, None, known.refusal or "the planner wrote no usable version")
    run = store.run(run_id)
    assert run is not None
    previous = _plan_of(run_id, version)
    assert previous is not None
    _state(run_id, "replanning")
    sandbox.reset(worktree)
    before = sandbox.snapshot(worktree)
    changed = sandbox.changed_files(worktree, base)
    request = planner.build_request(
        run_id=run_id,
        workdir=worktree,
        previous_plan=render_plan(previous),
        task=run.task,
        failures=found,
        changed_files=changed,
        diff=sandbox.diff(worktree, base),
        version=version + 1,
        turn=turn,
        attempt=attempt,
    )
    outcome = load_agent(agent_spec).plan(request)
    changes = sandbox.changes_between(before, sandbox.snapshot(worktree))
    if changes:
        sandbox.restore(worktree, before)
    judgement = planner.judge(outcome, previous, executed, changed, changes)
    trigger = attempts.trigger_of(found)
    why = attempts.why_line(trigger, found)
    with store.transaction() as conn:
        if judgement.kind == "accepted" and judgement.plan is not None:
            text = render_plan(judgement.plan)
            record = store.add_version(
                conn,
                run_id,
                key,
                accepted=True,
                trigger=trigger,
                why=why,
                refusal=None,
                attempts_used=attempt,
                plan_text=text,
                failure_items=found,
            )
            assert record.number is not None
            store.update_run(conn, run_id, version=record.number, state="running")
            store.add_event(
                conn,
                run_id,
                f"{key}/version",
                turn,
                "plan_changed",
                attempts.plan_changed_line(record.number, trigger),
            )
            return ReplanResult(record.number, text, "")
        store.add_version(
            conn,
            run_id,
            key,
            accepted=False,
            trigger=trigger,
            why=why,
            refusal=judgement.detail,
            attempts_used=attempt,
            plan_text=outcome.plan_text or "",
            failure_items=found,
        )
        store.add_event(
            conn,
            run_id,
            f"{key}/refused",
            turn,
            "version_refused",
            f"No new plan: {judgement.detail}.",
        )
    return ReplanResult(None, None, judgement.detail)


@DBOS.step(name="plangate.wait")
def wait(
    run_id: str,
    turn: int,
    reason: str,
    detail: str,
    kind: str = "waiting",
) -> None:
    """End the turn Waiting on you, with the reason and the detail after it. ``kind`` is
    ``stopped`` when an error ended the turn: the next turn then gets no failures back."""
    store = _store()
    with store.transaction() as conn:
        store.update_run(
            conn,
            run_id,
            state="waiting",
            waiting_reason=reason,
            waiting_detail=detail,
            executor=None,
        )
        store.add_event(
            conn,
            run_id,
            f"t{turn}/waiting",
            turn,
            kind,
            f"Waiting on you: {reason} ({detail}).",
        )


@DBOS.step(name="plangate.finish")
def finish(run_id: str, turn: int) -> None:
    store = _store()
    with store.transaction() as conn:
        store.update_run(conn, run_id, state="done", executor=None)
        store.add_event(
            conn,
            run_id,
            f"t{turn}/done",
            turn,
            "done",
            "Done: every step is carried out, the checks pass and the evidence gate passed.",
        )
