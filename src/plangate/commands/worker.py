"""``plangate worker [--until-idle] [--concurrency N]``: take runs from the queue.

``plangate run --detach`` queues a run and starts ``python -m plangate worker --until-idle``
in the background when no worker with a fresh heartbeat that may take it is in the runs
database (on any host, whatever the backend); several workers share one queue on PostgreSQL,
each taking only the runs whose paths it sees (:mod:`plangate.runs.handoff`). The worker logs
one line per run it takes (``took run …``) or resumes (``resuming run … (it was carried by
…)``), one for a run it leaves to another worker because it cannot see its paths
(``leaving run … to another worker: …``), and one for a run no live worker can see, which
then waits (``cannot carry run … here: …``).
SIGTERM or Ctrl+C stops it at once: turns in flight stay pending and another worker resumes
them.
"""

from __future__ import annotations

import argparse
import sys
import threading
from typing import TextIO

from plangate.commands.run import EXIT_DONE, engine, on_sigterm
from plangate.errors import ExitCodes, UsageError

EXIT_CODES = ExitCodes(
    {
        EXIT_DONE: "stopped: no run left (`--until-idle`), or SIGTERM or Ctrl+C (turns in "
        "flight resume in another worker)",
        1: "the runs engine cannot be started (the message says why)",
        2: "bad usage: a bad flag, a `--concurrency` under 1",
    },
    usage=2,
    failure=1,
)


def worker_command(*, until_idle: bool = False, concurrency: int | None = None, out: TextIO) -> int:
    """``plangate worker [--until-idle] [--concurrency N]``: serve the run queue."""
    if concurrency is not None and concurrency < 1:
        raise UsageError(
            f"--concurrency {concurrency} is less than 1", "give --concurrency 1 or more"
        )
    runs = engine()
    stop = threading.Event()

    def log(line: str) -> None:
        print(line, file=out, flush=True)

    try:
        log(f"worker {runs.executor_id} serving runs from {_where(runs.url)}")
        try:
            with on_sigterm(lambda _signum, _frame: stop.set()):
                runs.serve(until_idle=until_idle, concurrency=concurrency, log=log, stop=stop)
        except KeyboardInterrupt:
            stop.set()
        if stop.is_set():
            flying = runs.in_flight()
            log(
                "worker stopped"
                + (f"; {flying} run turn(s) in flight resume in another worker" if flying else "")
            )
        else:
            log("worker done: no run left to take")
        return EXIT_DONE
    finally:
        runs.shutdown()  # turns still in flight are left to the other workers


def _where(url: str) -> str:
    if url.startswith("sqlite:///"):
        return url.removeprefix("sqlite:///")
    return url.split("@")[-1]


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("worker", help="take runs from the queue")
    parser.add_argument("--until-idle", action="store_true", help="stop when no run is left")
    parser.add_argument("--concurrency", type=int, help="runs at once in this worker")


def run(args: argparse.Namespace) -> int:
    return worker_command(until_idle=args.until_idle, concurrency=args.concurrency, out=sys.stdout)
