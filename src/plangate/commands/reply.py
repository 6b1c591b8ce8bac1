"""``plangate reply RUN MESSAGE [--detach]``: answer a run, starting its next turn.

The turn is carried and followed here as ``plangate run`` does (:mod:`plangate.commands.run`)
unless ``--detach`` puts it on the queue.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from plangate.commands.run import (
    EXIT_DONE,
    EXIT_FAILED,
    EXIT_USAGE,
    EXIT_WAITING,
    detached,
    engine,
    follow,
    on_sigterm,
    raise_interrupt,
)
from plangate.errors import ExitCodes

EXIT_CODES = ExitCodes(
    {
        EXIT_DONE: "done: the change is on the run's branch (with `--detach`: queued)",
        EXIT_FAILED: "failed: the runs engine or the agent cannot be started, or the turn "
        "stopped (the message says why; `plangate show RUN`)",
        EXIT_USAGE: "bad usage: a bad flag, no such run, an empty reply, a run that is not "
        "waiting on you",
        EXIT_WAITING: "waiting on you again: answer with `plangate reply RUN MESSAGE`",
    },
    usage=EXIT_USAGE,
    failure=EXIT_FAILED,
)


def reply_command(
    run_id: str,
    message: str,
    *,
    detach: bool = False,
    out: TextIO,
    spawn_worker: bool = True,
) -> int:
    """``plangate reply RUN MESSAGE``: a new turn; followed like ``run`` unless detached."""
    runs = engine()
    try:
        turn = runs.reply(run_id, message)
        run = runs.resolve(run_id)
        with on_sigterm(raise_interrupt):
            runs.begin(run.id, turn, detach=detach)
            if detach:
                return detached(runs, run.id, out, spawn_worker)
            return follow(runs, run.id, turn, out)
    finally:
        runs.shutdown()  # a turn still in flight is left to the workers


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("reply", help="answer a run that waits on you")
    parser.add_argument("run")
    parser.add_argument("message")
    parser.add_argument("--detach", action="store_true")


def run(args: argparse.Namespace) -> int:
    return reply_command(args.run, args.message, detach=args.detach, out=sys.stdout)
