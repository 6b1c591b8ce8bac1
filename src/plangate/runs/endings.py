"""The stages that record a failing round and end a turn, each a DBOS step: ``round``
(spend an attempt), ``replan`` (a fresh planner writes the next version), and the turn's
end: ``wait`` (on a person), ``errored`` (a bug: the traceback to the run's log) or
``finish``.
"""

from __future__ import annotations

import logging

from dbos import DBOS

from plangate.agents import load_agent
from plangate.plan.render import render_plan
from plangate.runs import attempts, errorlog, isolation, planner, sandbox
from plangate.runs.context import ReplanResult, attempt_key, carried, plan_of, set_state, store_
from plangate.runs.model import Failure

logger = logging.getLogger("plangate.runs")


@DBOS.step(name="plangate.round")
def spend(run_id: str, turn: int, used: int, found: tuple[Failure, ...], allowed: int) -> None:
    """Record a failing round and the attempt it spent."""
    store = store_()
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
    store, worktree, base, agent_spec = carried(run_id)
    key = attempt_key(turn, attempt)
    known = store.version_by_key(run_id, key)
    if known is not None:
        if known.accepted:
            return ReplanResult(known.number, known.plan_text, "")
        return ReplanResult(None, None, known.refusal or "the planner wrote no usable version")
    run = store.run(run_id)
    assert run is not None
    previous = plan_of(run_id, version)
    assert previous is not None
    set_state(run_id, "replanning")
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
    watch = isolation.Watch.start(run, "planner")  # the repository, its refs, files outside
    agent = load_agent(agent_spec)
    outcome = agent.plan(request)
    changes = sandbox.changes_between(before, sandbox.snapshot(worktree))
    outside = watch.finish()
    if changes:
        sandbox.restore(worktree, before)
    isolation.record_note(run_id, f"{key}/isolation", turn, "planner", agent)
    judgement = planner.judge(outcome, previous, executed, changed, changes, outside)
    trigger = attempts.trigger_of(found)
    accepted = judgement.kind == "accepted" and judgement.plan is not None
    text = render_plan(judgement.plan) if judgement.plan is not None and accepted else ""
    with store.transaction() as conn:
        record = store.add_version(
            conn,
            run_id,
            key,
            accepted=accepted,
            trigger=trigger,
            why=attempts.why_line(trigger, found),
            refusal=None if accepted else judgement.detail,
            attempts_used=attempt,
            plan_text=text if accepted else outcome.plan_text or "",
            failure_items=found,
        )
        if record.number is not None:
            store.update_run(conn, run_id, version=record.number, state="running")
            line = attempts.plan_changed_line(record.number, trigger)
            store.add_event(conn, run_id, f"{key}/version", turn, "plan_changed", line)
            return ReplanResult(record.number, text, "")
        line = f"No new plan: {judgement.detail}."
        store.add_event(conn, run_id, f"{key}/refused", turn, "version_refused", line)
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
    store = store_()
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


@DBOS.step(name="plangate.errored")
def errored(run_id: str, turn: int, error: str, trace: str) -> None:
    """End the turn ``errored``: the traceback appended to the run's log first (so it is
    kept even if the database cannot be written), then the run marked, with the log's path."""
    store = store_()
    run = store.run(run_id)
    log = errorlog.write(errorlog.path(run_id, run), run_id, turn, error, trace)
    logger.error("run %s, turn %s: %s (traceback in %s)", run_id, turn, error, log)
    with store.transaction() as conn:
        store.update_run(
            conn, run_id, state="errored", error=error, error_log=log, executor=None, notice=None
        )
        store.add_event(
            conn,
            run_id,
            f"t{turn}/errored",
            turn,
            "errored",
            f"Stopped on an unexpected error: {error}. This is a bug in plangate, not in the "
            f"plan or the agent; the traceback is in {log}.",
        )


@DBOS.step(name="plangate.finish")
def finish(run_id: str, turn: int) -> None:
    store = store_()
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
