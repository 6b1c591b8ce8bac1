"""``plangate runs [--json]``: every run, its state, attempts and plan version (the store only)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from plangate.commands.run import engine
from plangate.errors import ExitCodes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from plangate.runs.store import Store

EXIT_CODES = ExitCodes(
    {0: "listed (none included)", 1: "the runs database cannot be used", 2: "bad usage"},
    usage=2,
    failure=1,
)


def runs_command(*, as_json: bool = False, out: TextIO) -> int:
    """``plangate runs [--json]``: every run, its state, attempts and version."""
    from plangate.runs.engine import run_summary
    from plangate.runs.summary import carrier_line

    runs = engine()
    try:
        records = runs.store.runs()
        if as_json:
            rows = []
            for run in records:
                row = run_summary(run)
                row["interrupted"] = runs.interrupted(run)
                row["approval"] = _approval_state(runs.store, run.id)
                row["steps"] = [
                    {"key": s.key, "step": s.step, "status": s.outcome}
                    for s in runs.store.steps(run.id)
                ]
                rows.append(row)
            print(json.dumps(rows, indent=2), file=out)
            return 0
        if not records:
            print("No runs yet. Start one with `plangate run PLAN.md`.", file=out)
            return 0
        print(f"{'RUN':<10} {'STATE':<12} {'ATTEMPTS':<9} {'VERSION':<8} TITLE", file=out)
        for run in records:
            state = "interrupted" if runs.interrupted(run) else run.state
            used = f"{run.attempts_used}/{run.attempts_allowed}"
            version = str(run.version) if run.has_plan else "-"
            print(f"{run.id:<10} {state:<12} {used:<9} {version:<8} {run.title}", file=out)
            if run.errored is not None:
                print(f"{'':<10} {run.errored.line()}", file=out)
            carrier = carrier_line(run)
            if carrier is not None and state in ("running", "interrupted"):
                print(f"{'':<10} {carrier}", file=out)
            approval = _approval_state(runs.store, run.id)
            if approval not in (None, "approved"):
                print(f"{'':<10} plan not approved ({approval})", file=out)
        return 0
    finally:
        runs.store.close()


def _approval_state(store: Store, run_id: str) -> str | None:
    """The run's plan approval state (docs/review-to-run.md); ``None`` for a bare task."""
    from plangate.runs.approval import Approval

    text = store.approval(run_id)
    return None if text is None else Approval.loads(text).state


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("runs", help="list the runs")
    parser.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    return runs_command(as_json=args.json, out=sys.stdout)
