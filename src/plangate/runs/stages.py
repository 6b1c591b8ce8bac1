"""The stages of a turn that do its work, each a DBOS step: ``prepare`` (the worktree, the
plan, the reply), ``carry_out`` (one plan step, the bare task, or a fix), ``checks``,
``gate`` (the evidence gate) and ``review``.

Each is idempotent, because the step in flight when a process dies runs again when the turn
resumes: a step's commit is looked up by its key, a check round is keyed by run, turn and
attempt, and every row is keyed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from dbos import DBOS

from plangate.agents import load_agent
from plangate.agents.base import ReviewRequest, StepRequest
from plangate.errors import PlangateError
from plangate.plan.model import Check, Plan, Step
from plangate.plan.render import render_plan
from plangate.runs import checks, evidence, isolation, sandbox
from plangate.runs.context import (
    StepResult,
    TurnStart,
    attempt_key,
    carried,
    carrier_values,
    event,
    missing_path,
    plan_of,
    set_state,
    store_,
)
from plangate.runs.model import CheckRecord, Failure, StepRecord
from plangate.runs.store import TURN_RESET, Store
from plangate.runs.validator import named_files, normalize_path


@DBOS.step(name="plangate.prepare")
def prepare(run_id: str, turn: int) -> TurnStart:
    """Make the worktree (once), and gather what the turn starts from."""
    store = store_()
    run = store.run(run_id)
    if run is None:
        raise PlangateError(f"there is no run {run_id}", "see `plangate runs`")
    missing = missing_path(run, store)
    if missing is not None:  # before anything is made at a path this host does not share
        raise missing
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
            turn=turn,
            **carrier_values(),
            **TURN_RESET,
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
    return f"{attempt_key(turn, attempt)}/v{version}/{where}"


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
    store, worktree, _base, agent_spec = carried(run_id)
    run = store.run(run_id)
    assert run is not None
    key = _step_key(turn, attempt, version, number)
    known = store.step(run_id, key)
    if known is not None:
        return _step_result(known)
    plan = plan_of(run_id, version)
    step: Step | None = None if plan is None or number is None else plan.step(number)
    label = "the task" if plan is None else ("a fix" if step is None else f"step {number}")
    title = (
        f"Step {number}: {step.title}"
        if step is not None
        else ("Fix" if plan is not None or feedback or reply else "Task")
    )
    escalated_under = _escalated_under(store, run_id, version, number)
    shown = title
    if escalated_under is not None:
        shown += (
            f" (re-attempted under version {version}: it escalated under version {escalated_under})"
        )

    def done(
        sha: str, said: str, cited: tuple[tuple[str, tuple[str, ...]], ...] = ()
    ) -> StepResult:
        changed = tuple(sandbox.commit_files(worktree, sha))
        record = StepRecord(
            key, turn, attempt, version, number, "done", sha, changed, said, evidence=cited
        )
        _record_step(store, run_id, record, shown, label)
        return StepResult("done")

    existing = sandbox.find_commit(worktree, key)
    if existing is not None:
        return done(existing, "")
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
    watch = isolation.Watch.start(run, "step")  # a step's edits stay inside its worktree
    outcome = load_agent(agent_spec).do_step(request)
    message = outcome.message.strip()
    outside = watch.finish()

    def escalated(summary: str) -> StepResult:
        sandbox.reset(worktree)
        record = StepRecord(
            key, turn, attempt, version, number, "escalated", None, (), message, summary
        )
        _record_step(store, run_id, record, shown, label)
        return StepResult("escalated", Failure("escalation", summary))

    if outside:
        return escalated(isolation.wrote_outside(label, outside))
    if outcome.status == "escalate":
        why = " ".join((outcome.escalation or message or "no reason given").split())
        return escalated(
            f"{label} cannot be done as written: {why}" if step else f"the agent escalated: {why}"
        )
    dirty = sandbox.dirty_files(worktree)
    if plan is not None:
        allowed = (
            {normalize_path(path) for path in step.files} if step is not None else named_files(plan)
        )
        outside = [path for path in dirty if normalize_path(path) not in allowed]
        if outside:
            names = ", ".join(f"`{path}`" for path in outside[:3])
            more = f" and {len(outside) - 3} more" if len(outside) > 3 else ""
            return escalated(f"{label} needs {names}{more}, which the plan does not name")
    sha = sandbox.commit(worktree, key, title, message)
    return done(sha, message, tuple(sorted((c, tuple(p)) for c, p in outcome.evidence.items())))


def _escalated_under(store: Store, run_id: str, version: int, number: int | None) -> int | None:
    """The earlier version under which step ``number`` escalated (so it was not carried out,
    and ``version`` re-attempts it), or ``None``."""
    earlier = [
        s.version
        for s in store.steps(run_id)
        if s.status == "escalated" and number is not None and s.step == number
    ]
    earlier = [v for v in earlier if v < version]
    return max(earlier) if earlier else None


def _record_step(store: Store, run_id: str, record: StepRecord, title: str, label: str) -> None:
    with store.transaction() as conn:
        store.add_step(conn, run_id, record)
        if record.message:
            store.add_event(
                conn, run_id, f"{record.key}/agent", record.turn, "agent", record.message
            )
        if record.status == "done" and not record.changed_files:
            # No changes is not done: its criteria still need evidence (the gate's job).
            text = (
                f"{title}: no changes (commit {(record.commit or '')[:10]}); its criteria "
                "still need evidence."
            )
            store.add_event(conn, run_id, f"{record.key}/done", record.turn, "step", text)
        elif record.status == "done":
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
    store, worktree, _base, _agent = carried(run_id)
    run = store.run(run_id)
    assert run is not None
    round_key = attempt_key(turn, attempt)
    declared = _checks_of(plan_of(run_id, version), run.extra_checks)
    records = store.checks(run_id, round_key)
    if len(records) < len(declared):
        set_state(run_id, "checking")
        records = [
            checks.run_check(check, worktree, round_key=round_key, index=index, run_id=run_id)
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
    store, worktree, base, _agent = carried(run_id)
    plan = plan_of(run_id, version)
    if plan is None:
        return ()
    carried_out = store.steps(run_id)
    changed_by = {r.step: r.changed_files for r in carried_out if r.status == "done" and r.step}
    steps = [step for number in executed if (step := plan.step(number)) is not None]
    cited: dict[str, list[str]] = {}
    for done in carried_out:
        for criterion, paths in done.evidence:
            cited.setdefault(criterion, []).extend(paths)
    # A step that changed no file is evidence of nothing: its criteria need a check or an
    # artifact, or another step's change (docs/runs-design.md, "Steps kept, re-attempted").
    unchanged = [step for step in steps if not changed_by.get(step.number)]
    failures = evidence.gate(
        plan,
        [step for step in steps if step not in unchanged],
        sandbox.changed_files(worktree, base),
        records,
        cited,
        lambda path: (worktree / path).exists(),
    )
    failures = [_name_unchanged(failure, unchanged) for failure in failures]
    key = f"{attempt_key(turn, attempt)}/gate"
    if failures:
        text = "Evidence gate failed: " + "; ".join(f.summary for f in failures) + "."
        event(run_id, key, turn, "gate_failed", text)
    elif any(not record.passed for record in records):
        # The gate judges evidence only; a failing check still fails the round. Said so, the
        # viewer's "Check AC1 failed" beside it does not read as a contradiction (issue 34).
        event(
            run_id,
            key,
            turn,
            "gate_passed",
            "Evidence gate passed: every criterion has its evidence, but the failed check "
            "above still fails this round.",
        )
    else:
        event(run_id, key, turn, "gate_passed", "Evidence gate passed.")
    return tuple(failures)


def _name_unchanged(failure: Failure, unchanged: Sequence[Step]) -> Failure:
    """A gate failure says which step serving its criterion changed no file."""
    criterion = failure.summary.split(" ", 1)[0]
    names = [str(step.number) for step in unchanged if criterion in step.serves]
    if not names:
        return failure
    which = f"step {names[0]}" if len(names) == 1 else "steps " + ", ".join(names)
    return replace(failure, summary=f"{failure.summary} ({which} serving it changed no file)")


@DBOS.step(name="plangate.review")
def review(run_id: str, turn: int, attempt: int, version: int) -> Failure | None:
    """The optional review: ``None`` if it approves, else its send-back as a failure."""
    store, worktree, base, agent_spec = carried(run_id)
    run = store.run(run_id)
    assert run is not None
    plan = plan_of(run_id, version)
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
    key = f"{attempt_key(turn, attempt)}/review"
    before = sandbox.snapshot(worktree)
    watch = isolation.Watch.start(run, "review")  # the review is read-only, as the planner
    agent = load_agent(agent_spec)
    outcome = agent.review(request)
    isolation.record_note(run_id, f"{key}/isolation", turn, "review", agent)
    isolation.refuse_review_changes(worktree, before, watch.finish())
    if outcome.approved:
        event(run_id, key, turn, "review", "The review approved the change.")
        return None
    reason = " ".join(outcome.reason.split()) or "no reason given"
    event(run_id, key, turn, "review", f"The review sent the change back: {reason}.")
    return Failure("review", f"the review sent the change back: {reason}")
