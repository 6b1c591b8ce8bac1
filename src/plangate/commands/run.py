"""``plangate run``, ``runs``, ``show``, ``reply`` and ``worker``: plan-governed runs.

``plangate run (PLAN.md | --task TEXT) [--repo DIR] [--attempts N] [--check CMD …]
[--review/--no-review] [--detach]`` starts a run and, unless detached, carries it in this
process, printing the conversation, until it is done or waiting on you. ``plangate reply
RUN MESSAGE`` starts the next turn the same way. ``plangate worker`` serves the queue that
``--detach`` puts runs on. ``plangate runs`` and ``plangate show`` read the store only.

Exit codes: 0 done (or queued with ``--detach``), 3 waiting on you, 130 interrupted; errors
are :class:`~plangate.errors.PlangateError` for the CLI to print.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from plangate.errors import UsageError
from plangate.locations import state_root

TYPE_CHECKING = False
if TYPE_CHECKING:
    from plangate.runs.engine import Engine
    from plangate.runs.model import RunRecord

EXIT_DONE = 0
EXIT_WAITING = 3
EXIT_INTERRUPTED = 130


def _engine() -> Engine:
    from plangate.runs.engine import Engine

    return Engine()


def _follow(engine: Engine, run_id: str, turn: int, out: TextIO) -> int:
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


def _detached(engine: Engine, run_id: str, out: TextIO, spawn: bool) -> int:
    from plangate.runs.engine import live_workers, spawn_worker

    if live_workers(engine.store):
        print(f"Run {run_id} is queued; a worker will take it.", file=out)
    elif spawn:
        pid = spawn_worker(Path(state_root()) / "runs" / "worker.log")
        print(
            f"Run {run_id} is queued; started a background worker (process {pid}). "
            f"Follow it with `plangate show {run_id}`.",
            file=out,
        )
    else:
        print(f"Run {run_id} is queued; start `plangate worker` to run it.", file=out)
    return EXIT_DONE


def _stop(engine: Engine, out: TextIO, code: int = EXIT_INTERRUPTED) -> None:
    """Shut the engine down; if a turn is still in flight here, end the process at once so
    a worker resumes it (waiting for it would keep the command running)."""
    if not engine.shutdown():
        out.flush()
        os._exit(code)


def _raise_interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


@contextmanager
def _on_sigterm(handler: Callable[[int, Any], None]) -> Iterator[None]:
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
    out: TextIO,
    spawn_worker: bool = True,
) -> int:
    """``plangate run``. Returns 0 (done or queued), 3 (waiting on you) or 130."""
    from plangate.agents import DEFAULT_AGENT
    from plangate.runs.engine import RunOptions

    agent = agent or DEFAULT_AGENT

    engine = _engine()
    try:
        run = engine.create(
            RunOptions(
                plan_path=plan,
                task=task,
                repo=repo,
                attempts=attempts,
                checks=tuple(checks),
                review=review,
                agent=agent,
            )
        )
        print(f"Run {run.id}: {run.title or 'untitled'} ({run.worktree})", file=out, flush=True)
        with _on_sigterm(_raise_interrupt):
            engine.begin(run.id, 1, detach=detach)
            if detach:
                return _detached(engine, run.id, out, spawn_worker)
            return _follow(engine, run.id, 1, out)
    finally:
        _stop(engine, out)


def reply_command(
    run_id: str,
    message: str,
    *,
    detach: bool = False,
    out: TextIO,
    spawn_worker: bool = True,
) -> int:
    """``plangate reply RUN MESSAGE``: a new turn; followed like ``run`` unless detached."""
    engine = _engine()
    try:
        turn = engine.reply(run_id, message)
        run = engine.resolve(run_id)
        with _on_sigterm(_raise_interrupt):
            engine.begin(run.id, turn, detach=detach)
            if detach:
                return _detached(engine, run.id, out, spawn_worker)
            return _follow(engine, run.id, turn, out)
    finally:
        _stop(engine, out)


def worker_command(*, until_idle: bool = False, concurrency: int | None = None, out: TextIO) -> int:
    """``plangate worker [--until-idle] [--concurrency N]``: serve the run queue."""
    if concurrency is not None and concurrency < 1:
        raise UsageError(
            f"--concurrency {concurrency} is less than 1", "give --concurrency 1 or more"
        )
    engine = _engine()
    stop = threading.Event()

    def log(line: str) -> None:
        print(line, file=out, flush=True)

    try:
        log(f"worker {engine.executor_id} serving runs from {_where(engine.url)}")
        try:
            with _on_sigterm(lambda _signum, _frame: stop.set()):
                engine.serve(until_idle=until_idle, concurrency=concurrency, log=log, stop=stop)
        except KeyboardInterrupt:
            stop.set()
        if stop.is_set():
            flying = engine.in_flight()
            log(
                "worker stopped"
                + (f"; {flying} run turn(s) in flight resume in another worker" if flying else "")
            )
        else:
            log("worker done: no run left to take")
        return EXIT_DONE
    finally:
        _stop(engine, out, EXIT_DONE)


def _where(url: str) -> str:
    if url.startswith("sqlite:///"):
        return url.removeprefix("sqlite:///")
    return url.split("@")[-1]


def runs_command(*, as_json: bool = False, out: TextIO) -> int:
    """``plangate runs [--json]``: every run, its state, attempts and version."""
    from plangate.runs.engine import run_summary

    engine = _engine()
    try:
        records = engine.store.runs()
        if as_json:
            rows = []
            for run in records:
                row = run_summary(run)
                row["interrupted"] = engine.interrupted(run)
                rows.append(row)
            print(json.dumps(rows, indent=2), file=out)
            return 0
        if not records:
            print("No runs yet. Start one with `plangate run PLAN.md`.", file=out)
            return 0
        print(f"{'RUN':<10} {'STATE':<12} {'ATTEMPTS':<9} {'VERSION':<8} TITLE", file=out)
        for run in records:
            state = "interrupted" if engine.interrupted(run) else run.state
            used = f"{run.attempts_used}/{run.attempts_allowed}"
            version = str(run.version) if run.has_plan else "-"
            print(f"{run.id:<10} {state:<12} {used:<9} {version:<8} {run.title}", file=out)
        return 0
    finally:
        engine.store.close()


def show_data(engine: Engine, run: RunRecord) -> dict[str, Any]:
    """Everything ``plangate show --json`` prints."""
    from plangate.runs.engine import run_summary

    store = engine.store
    data = run_summary(run)
    data.update(
        {
            "repo": run.repo,
            "branch": run.branch,
            "worktree": run.worktree,
            "base_commit": run.base_commit,
            "agent": run.agent,
            "task": run.task,
            "plan_source": run.plan_source,
            "review": run.review,
            "interrupted": engine.interrupted(run),
            "waiting": None
            if run.waiting is None
            else {
                "reason": run.waiting.reason,
                "detail": run.waiting.detail,
                "last_message": run.waiting.last_message,
            },
            "versions": [
                {
                    "seq": v.seq,
                    "number": v.number,
                    "accepted": v.accepted,
                    "trigger": v.trigger,
                    "why": v.why,
                    "refusal": v.refusal,
                    "attempts_used": v.attempts_used,
                    "failures": [[f.kind, f.summary] for f in v.failures],
                    "created_at": v.created_at,
                }
                for v in store.versions(run.id)
            ],
            "steps": [
                {
                    "key": s.key,
                    "turn": s.turn,
                    "version": s.version,
                    "step": s.step,
                    "status": s.status,
                    "commit": s.commit,
                    "changed_files": list(s.changed_files),
                    "escalation": s.escalation,
                }
                for s in store.steps(run.id)
            ],
            "checks": [
                {
                    "round": c.round_key,
                    "name": c.name,
                    "command": c.command,
                    "passed": c.passed,
                    "exit_code": c.exit_code,
                    "timed_out": c.timed_out,
                    "duration_seconds": c.duration_seconds,
                    "tail": c.tail,
                }
                for c in store.checks(run.id)
            ],
            "failures": [
                {"turn": turn, "attempt": attempt, "kind": f.kind, "summary": f.summary}
                for turn, attempt, f in store.failures(run.id)
            ],
            "conversation": [
                {"seq": e.seq, "turn": e.turn, "kind": e.kind, "text": e.text}
                for e in store.events(run.id)
            ],
        }
    )
    return data


def show_command(
    run_id: str, *, version: int | None = None, as_json: bool = False, out: TextIO
) -> int:
    """``plangate show RUN [--version N] [--json]``."""
    engine = _engine()
    try:
        run = engine.resolve(run_id)
        if version is not None:
            return _show_version(engine, run, version, as_json, out)
        data = show_data(engine, run)
        if as_json:
            print(json.dumps(data, indent=2), file=out)
            return 0
        print(f"Run {run.id}: {run.title}", file=out)
        state = engine.describe_state(run)
        if run.waiting is not None:
            state += f": {run.waiting.reason} ({run.waiting.detail})"
        print(f"State: {state}", file=out)
        print(
            f"Attempts: {run.attempts_used} of {run.attempts_allowed} used in turn {run.turn}",
            file=out,
        )
        print(f"Branch: {run.branch} in {run.repo}", file=out)
        print(f"Worktree: {run.worktree}", file=out)
        if run.has_plan:
            print(f"Plan: version {run.version}", file=out)
            print("Versions:", file=out)
            for v in data["versions"]:
                label = f"version {v['number']}" if v["accepted"] else "refused"
                print(f"  {label}: {v['why']}", file=out)
                if v["refusal"]:
                    print(f"    {v['refusal']}", file=out)
        else:
            print(f"Task: {run.task}", file=out)
        print("Conversation:", file=out)
        from plangate.runs.engine import event_line
        from plangate.runs.model import Event

        for e in data["conversation"]:
            event = Event(e["seq"], e["kind"], e["text"], e["turn"])
            print("  " + event_line(run.id, event).replace("\n", "\n  "), file=out)
        return 0
    finally:
        engine.store.close()


def _show_version(engine: Engine, run: RunRecord, number: int, as_json: bool, out: TextIO) -> int:
    record = engine.store.version(run.id, number)
    if record is None:
        raise UsageError(
            f"run {run.id} has no version {number}",
            f"its versions are 1 to {run.version}" if run.has_plan else "the run has no plan",
        )
    if as_json:
        data = {
            "run": run.id,
            "number": record.number,
            "current": record.number == run.version,
            "trigger": record.trigger,
            "why": record.why,
            "attempts_used": record.attempts_used,
            "failures": [[f.kind, f.summary, f.output_tail] for f in record.failures],
            "plan_text": record.plan_text,
            "created_at": record.created_at,
        }
        print(json.dumps(data, indent=2), file=out)
        return 0
    current = " (current)" if record.number == run.version else ""
    print(f"Run {run.id}, version {number} of the plan{current}", file=out)
    print(f"Why this version: {record.why}", file=out)
    if number > 1:
        print(f"See version {number - 1}: plangate show {run.id} --version {number - 1}", file=out)
    print("", file=out)
    out.write(record.plan_text)
    return 0


def add_parsers(commands: argparse._SubParsersAction[Any]) -> None:
    """Add ``run``, ``runs``, ``show``, ``reply`` and ``worker`` to the CLI's subcommands;
    each sets ``handler(args) -> int``."""
    run = commands.add_parser("run", help="carry out a plan (or a task) in a worktree of its own")
    run.add_argument("plan", nargs="?", help="the plan file (docs/plan-format.md)")
    run.add_argument("--task", help="a bare task, run without a plan")
    run.add_argument("--repo", default=".", help="the git repository (default: here)")
    run.add_argument("--attempts", type=int, help="attempts for this run (default: config)")
    run.add_argument(
        "--check", action="append", default=[], metavar="CMD", help="an extra check command"
    )
    run.add_argument("--review", action=argparse.BooleanOptionalAction, default=False)
    run.add_argument("--detach", action="store_true", help="queue the run for a worker")
    run.add_argument("--agent", default=None, help=argparse.SUPPRESS)
    run.set_defaults(
        handler=lambda a: run_command(
            a.plan,
            task=a.task,
            repo=a.repo,
            attempts=a.attempts,
            checks=a.check,
            review=a.review,
            detach=a.detach,
            agent=a.agent,
            out=sys.stdout,
        )
    )
    runs = commands.add_parser("runs", help="list the runs")
    runs.add_argument("--json", action="store_true")
    runs.set_defaults(handler=lambda a: runs_command(as_json=a.json, out=sys.stdout))
    show = commands.add_parser("show", help="a run's state, attempts, versions and conversation")
    show.add_argument("run")
    show.add_argument("--version", type=int, help="show this version of the plan and why")
    show.add_argument("--json", action="store_true")
    show.set_defaults(
        handler=lambda a: show_command(a.run, version=a.version, as_json=a.json, out=sys.stdout)
    )
    reply = commands.add_parser("reply", help="answer a run that waits on you")
    reply.add_argument("run")
    reply.add_argument("message")
    reply.add_argument("--detach", action="store_true")
    reply.set_defaults(
        handler=lambda a: reply_command(a.run, a.message, detach=a.detach, out=sys.stdout)
    )
    worker = commands.add_parser("worker", help="take runs from the queue")
    worker.add_argument("--until-idle", action="store_true", help="stop when no run is left")
    worker.add_argument("--concurrency", type=int, help="runs at once in this worker")
    worker.set_defaults(
        handler=lambda a: worker_command(
            until_idle=a.until_idle, concurrency=a.concurrency, out=sys.stdout
        )
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m plangate.commands.run`` is the plangate CLI (the tests start runs so)."""
    from plangate.cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
