"""``plangate run``: start a plan-governed run and carry it here until it ends or waits.

``plangate run (PLAN.md | --task TEXT) [--repo DIR] [--attempts N] [--check CMD …]
[--review/--no-review] [--require-approval/--no-require-approval] [--detach]`` starts a run
and, unless detached, carries it in this process, printing the conversation, until it is
done or waiting on you. Ctrl+C (or SIGTERM) stops following: the command returns at once
and the turn in flight stays pending, so a worker resumes it (the runs engine carries turns
on daemon threads; nothing here waits for them). ``plangate reply``
(:mod:`plangate.commands.reply`) follows its turn with the same functions.

With ``--require-approval`` (or config ``require_approval``) a plan that its ``/autoplan``
Final Approval Gate did not approve, byte for byte, is refused before anything is written
(:data:`EXIT_UNAPPROVED`, one line naming the remedy); without it the run records the plan's
approval state (:mod:`plangate.runs.approval`) and shows it.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TextIO

from plangate.errors import EXIT_INTERRUPTED, ExitCodes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from plangate.runs.engine import Engine
    from plangate.runs.model import RunRecord

EXIT_DONE = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_WAITING = 3
EXIT_UNAPPROVED = 4
EXIT_CODES = ExitCodes(
    {
        EXIT_DONE: "done: the change is on the run's branch (with `--detach`: queued)",
        EXIT_FAILED: "failed: the runs engine or the agent cannot be started, or the turn "
        "stopped (the message says why; `plangate show RUN`)",
        EXIT_USAGE: "bad usage: a bad flag, a plan that does not parse or cannot run, a "
        "`--repo` that is not a git repository",
        EXIT_WAITING: "waiting on you: answer with `plangate reply RUN MESSAGE`",
        EXIT_UNAPPROVED: "refused by `--require-approval` (or config `require_approval`): the "
        "plan is not the one its /autoplan Final Approval Gate approved; no run was written",
    },
    usage=EXIT_USAGE,
    failure=EXIT_FAILED,
)


def engine() -> Engine:
    """This process's runs engine."""
    from plangate.runs.engine import Engine

    return Engine()


def follow(engine: Engine, run_id: str, turn: int, out: TextIO) -> int:
    """Print the turn's conversation until it ends; its exit code (130 when interrupted)."""
    from plangate.runs.engine import event_line

    def show(event: Any) -> None:
        print(event_line(run_id, event), file=out, flush=True)

    try:
        run = engine.wait(run_id, turn, on_event=show, after=_seen_before(engine, run_id, turn))
    except KeyboardInterrupt:
        print(
            f"Stopped following run {run_id}; it resumes with `plangate worker --until-idle`.",
            file=out,
            flush=True,
        )
        return EXIT_INTERRUPTED
    return _ending(run, out)


def _seen_before(engine: Engine, run_id: str, turn: int) -> int:
    """The last event of earlier turns, so a reply prints only its own turn (and the reply)."""
    earlier = [event.seq for event in engine.store.events(run_id) if event.turn < turn]
    return max(earlier, default=0)


def _ending(run: RunRecord, out: TextIO) -> int:
    if run.state == "waiting" and run.waiting is not None:
        if run.waiting.last_message:
            print(f"The agent's last message: {run.waiting.last_message}", file=out)
        print(f'Reply with: plangate reply {run.id} "<message>"', file=out)
        return EXIT_WAITING
    print(f"Run {run.id} is done: its change is on branch {run.branch}.", file=out)
    return EXIT_DONE


def detached(engine: Engine, run_id: str, out: TextIO, spawn: bool) -> int:
    """Say who takes a queued run. The one rule, on SQLite and PostgreSQL alike: when a
    worker with a fresh heartbeat is in the runs database, on any host, nothing is started
    and the workers decide which of them takes the run (:mod:`plangate.runs.handoff`); with
    none, a background ``plangate worker --until-idle`` is started here (on the machine that
    has the run's paths), which stops once no run is left. When the live workers are all of
    another workflow version, none of them can take it, and the message says so."""
    from plangate.runs import workflow
    from plangate.runs.engine import live_workers, spawn_worker

    if live_workers(engine.store, workflow.APPLICATION_VERSION):
        print(f"Run {run_id} is queued; a worker will take it.", file=out)
    elif live_workers(engine.store):
        print(
            f"Run {run_id} is queued, but every live worker runs another plangate workflow "
            f"version than {workflow.APPLICATION_VERSION}; start `plangate worker` of this "
            "plangate (or upgrade the workers) to run it.",
            file=out,
        )
    elif spawn:
        pid = spawn_worker()
        print(
            f"Run {run_id} is queued; no live worker serves the runs database, so started a "
            f"background worker here (process {pid}), which stops once no run is left. "
            f"Follow it with `plangate show {run_id}`.",
            file=out,
        )
    else:
        print(f"Run {run_id} is queued; start `plangate worker` to run it.", file=out)
    return EXIT_DONE


def raise_interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


@contextmanager
def on_sigterm(handler: Callable[[int, Any], None]) -> Iterator[None]:
    """Handle SIGTERM with ``handler`` for the duration (main thread only), then restore."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_command(
    plan: str | None,
    *,
    task: str | None = None,
    repo: str = ".",
    attempts: int | None = None,
    checks: Sequence[str] = (),
    review: bool = False,
    detach: bool = False,
    agent: str | None = None,
    require_approval: bool | None = None,
    out: TextIO,
    err: TextIO | None = None,
    spawn_worker: bool = True,
) -> int:
    """``plangate run``. Returns 0 (done or queued), 3 (waiting on you), 4 (refused: the
    plan is not approved) or 130."""
    from plangate.agents import DEFAULT_AGENT
    from plangate.runs.approval import UnapprovedPlanError
    from plangate.runs.engine import RunOptions

    agent = agent or DEFAULT_AGENT

    runs = engine()
    try:
        try:
            run = runs.create(
                RunOptions(
                    plan_path=plan,
                    task=task,
                    repo=repo,
                    attempts=attempts,
                    checks=tuple(checks),
                    review=review,
                    agent=agent,
                    require_approval=require_approval,
                )
            )
        except UnapprovedPlanError as error:
            print(f"plangate: {error}", file=err if err is not None else sys.stderr)
            return EXIT_UNAPPROVED
        print(f"Run {run.id}: {run.title or 'untitled'} ({run.worktree})", file=out, flush=True)
        with on_sigterm(raise_interrupt):
            runs.begin(run.id, 1, detach=detach)
            if detach:
                return detached(runs, run.id, out, spawn_worker)
            return follow(runs, run.id, 1, out)
    finally:
        runs.shutdown()  # a turn still in flight is left to the workers


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "run", help="carry out a plan (or a task) in a worktree of its own"
    )
    parser.add_argument("plan", nargs="?", help="the plan file (docs/plan-format.md)")
    parser.add_argument("--task", help="a bare task, run without a plan")
    parser.add_argument("--repo", default=".", help="the git repository (default: here)")
    parser.add_argument("--attempts", type=int, help="attempts for this run (default: config)")
    parser.add_argument(
        "--check", action="append", default=[], metavar="CMD", help="an extra check command"
    )
    parser.add_argument("--review", action=argparse.BooleanOptionalAction, default=False)
    parser.add_argument(
        "--require-approval",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="refuse a plan its /autoplan Final Approval Gate did not approve as it is "
        "(default: config require_approval, off)",
    )
    parser.add_argument("--detach", action="store_true", help="queue the run for a worker")
    parser.add_argument("--agent", default=None, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    if args.require_approval is False:  # --no-require-approval turns the config's gate off
        from plangate import agent_session

        agent_session.refuse_inside("run", "--no-require-approval")
    return run_command(
        args.plan,
        task=args.task,
        repo=args.repo,
        attempts=args.attempts,
        checks=args.check,
        review=args.review,
        detach=args.detach,
        agent=args.agent,
        require_approval=args.require_approval,
        out=sys.stdout,
    )
