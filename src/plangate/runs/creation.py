"""A new run: what ``plangate run`` asks for (:class:`RunOptions`), checked, and recorded as
a ``queued`` run with version 1 of its plan.

The checks happen here, before anything is queued, so a bad request is refused at the
command line and never reaches a worker, as a usage error (exit 2): a plan file that cannot
be read, does not parse or does not validate, no plan and no task (or both), fewer than one
attempt, an unknown agent, a folder that is not a git repository with a commit. The plan's approval
(:mod:`plangate.runs.approval`) is read here too and kept in the run's row; with
``require_approval`` (``--require-approval``, or config ``require_approval``) a plan that is
not the one its Final Approval Gate approved is refused before anything is written.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path

from plangate import config
from plangate.agents import load_agent
from plangate.errors import UsageError
from plangate.locations import state_root
from plangate.plan.errors import PlanFormatError
from plangate.plan.parse import parse_plan
from plangate.plan.render import render_plan
from plangate.plan.validate import validate_plan
from plangate.runs import sandbox
from plangate.runs.approval import Approval, read_approval, require
from plangate.runs.attempts import TRIGGER_SENTENCES
from plangate.runs.model import RunRecord
from plangate.runs.store import Store, now


@dataclass(frozen=True, slots=True)
class RunOptions:
    """What ``plangate run`` was asked for."""

    plan_path: str | None = None
    task: str | None = None
    repo: str = "."
    attempts: int | None = None
    checks: tuple[str, ...] = ()
    review: bool = False
    agent: str = "claude-code"
    require_approval: bool | None = None  # None: config ``require_approval``


def create(store: Store, options: RunOptions) -> RunRecord:
    """Check what was asked and record the run (``queued``), with version 1 of its plan."""
    if (options.plan_path is None) == (options.task is None):
        raise UsageError(
            "give a plan file or --task, not both and not neither",
            "run `plangate run PLAN.md` or `plangate run --task TEXT`",
        )
    attempts = options.attempts
    if attempts is None:
        value, _source = config.resolve("run_attempts")
        attempts = int(value)
    if attempts < 1:
        raise UsageError(f"--attempts {attempts} is less than 1", "give --attempts 1 or more")
    load_agent(options.agent)  # an unknown agent is refused now, not in the worker
    raw = ""
    if options.plan_path is not None:  # the file first: a missing plan is the first thing to fix
        path = Path(options.plan_path)
        try:
            raw = path.read_text(encoding="utf-8")
        except OSError as error:
            raise UsageError(
                f"cannot read the plan {path}: {error.strerror or error}",
                "give the path of a plan file (docs/plan-format.md)",
            ) from error
    head = sandbox.repo_head(options.repo)
    plan_text = None
    approval: Approval | None = None
    title = (options.task or "").strip().splitlines()[0][:80] if options.task else ""
    if options.plan_path is not None:
        path = Path(options.plan_path)
        try:
            plan = parse_plan(raw, source=str(path))
        except PlanFormatError as error:  # bad input on the command line: a usage error
            raise UsageError(
                error.message, error.remedy or "fix the plan (docs/plan-format.md)"
            ) from error
        problems = validate_plan(plan)
        if problems:
            raise UsageError(
                f"the plan {path} cannot run: {problems[0]}"
                + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""),
                "fix the plan (docs/plan-format.md lists what validate_plan reports)",
            )
        approval = read_approval(str(path))
        value, _source = config.resolve("require_approval", explicit=options.require_approval)
        if value:
            require(approval)
        plan_text = render_plan(plan)
        title = plan.title
    run_id = secrets.token_hex(4)
    worktree = Path(state_root()) / "runs" / run_id / "worktree"
    stamp = now()
    record = RunRecord(
        id=run_id,
        created_at=stamp,
        updated_at=stamp,
        repo=head.toplevel,
        base_commit=head.commit,
        branch=f"plangate/run-{run_id}",
        worktree=str(worktree),
        agent=options.agent,
        task=options.task,
        plan_source=None if options.plan_path is None else str(Path(options.plan_path).resolve()),
        has_plan=plan_text is not None,
        attempts_allowed=attempts,
        review=options.review,
        extra_checks=tuple(options.checks),
        state="queued",
        turn=1,
        attempts_used=0,
        version=1 if plan_text is not None else 0,
        title=title,
    )
    insert_new_run(store, record, plan_text, approval)
    return record


def approval_event(approval: Approval) -> str:
    """The conversation's first line about the plan's approval."""
    if approval.approved:
        return f"Plan approved by the Final Approval Gate {approval.gate_path}."
    return f"Plan not approved ({approval.state}): {approval.reason}."


def insert_new_run(
    store: Store, record: RunRecord, plan_text: str | None, approval: Approval | None = None
) -> None:
    """Record a new run and, when it has a plan, version 1 of it and its approval, in one
    transaction."""
    with store.transaction() as conn:
        store.insert_run(conn, record, None if approval is None else approval.dumps())
        if approval is not None:
            store.add_event(conn, record.id, "t1/approval", 1, "approval", approval_event(approval))
        if plan_text is not None:
            store.add_version(
                conn,
                record.id,
                "initial",
                accepted=True,
                trigger="initial",
                why=TRIGGER_SENTENCES["initial"],
                refusal=None,
                attempts_used=0,
                plan_text=plan_text,
            )
