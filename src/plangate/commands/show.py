"""``plangate show RUN [--version N] [--json]``: a run's state, attempts, plan versions and
why each exists, and its conversation (the store only)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from plangate.commands.run import engine as _engine
from plangate.errors import ExitCodes, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from plangate.runs.engine import Engine
    from plangate.runs.model import RunRecord

EXIT_CODES = ExitCodes(
    {
        0: "shown",
        1: "the runs database cannot be used",
        2: "bad usage: a bad flag, no such run (or an id that matches several), no such version",
    },
    usage=2,
    failure=1,
)


def show_data(engine: Engine, run: RunRecord) -> dict[str, Any]:
    """Everything ``plangate show --json`` prints."""
    from plangate.runs.engine import run_summary
    from plangate.runs.summary import attempts_by_turn, attempts_line, left_by

    store = engine.store
    data = run_summary(run)
    failures = store.failures(run.id)
    data.update(
        {
            "attempts_line": attempts_line(run, attempts_by_turn(failures)),
            "repo": run.repo,
            "branch": run.branch,
            "worktree": run.worktree,
            "base_commit": run.base_commit,
            "agent": run.agent,
            "task": run.task,
            "plan_source": run.plan_source,
            "review": run.review,
            "interrupted": engine.interrupted(run),
            "left_by": left_by(run, store.misses(run.id, run.turn)),
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
                    "status": s.outcome,
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
                for turn, attempt, f in failures
            ],
            "conversation": [
                {"seq": e.seq, "turn": e.turn, "kind": e.kind, "text": e.text}
                for e in store.events(run.id)
            ],
        }
    )
    from plangate.runs.approval_view import run_approval

    approval = run_approval(store, run.id)  # the plan's review and approval (review-to-run)
    data["approval"] = None if approval is None else approval.as_json()
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
        if run.waiting is not None and run.waiting.last_message:
            print(f"The agent's last message: {run.waiting.last_message}", file=out)
        from plangate.runs.summary import carrier_line, left_by_lines

        if data["left_by"] is not None:
            for line in left_by_lines(data["left_by"]):
                print(line, file=out)
        print(f"Attempts: {data['attempts_line']}", file=out)

        carrier = carrier_line(run)
        if carrier is not None:
            print(f"Carrier: {carrier}", file=out)
        print(f"Branch: {run.branch} in {run.repo}", file=out)
        print(f"Worktree: {run.worktree}", file=out)
        if run.has_plan:
            _print_approval(data, out)
            print(f"Plan: version {run.version}", file=out)
            print("Versions:", file=out)
            for v in data["versions"]:
                label = f"version {v['number']}" if v["accepted"] else "refused"
                print(f"  {label}: {v['why']}", file=out)
                _print_version_note(data, v["number"], out)
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


def _print_approval(data: dict[str, Any], out: TextIO) -> None:
    """The approval lines (docs/review-to-run.md); nothing for a run that predates them."""
    from plangate.runs.approval import Approval
    from plangate.runs.approval_view import relate

    if data.get("approval") is not None:
        view = relate(Approval.from_json(data["approval"]), ())
        for line in view.lines():
            print(line, file=out)
        approved = data["approval"].get("approved_version")
        if approved is not None:
            print(f"Approved version: {approved}", file=out)


def _print_version_note(data: dict[str, Any], number: int | None, out: TextIO) -> None:
    """What a version changed relative to the approved plan."""
    for note in (data.get("approval") or {}).get("versions", ()):
        if note["number"] == number and number is not None:
            if note["approved"]:
                print("    the approved plan", file=out)
            elif note["relative_to_approved"] is not None:
                delta = note["relative_to_approved"]
                kept = ", ".join(str(n) for n in delta["kept"]) or "none"
                print(
                    f"    relative to the approved plan: kept steps {kept}; {delta['summary']}",
                    file=out,
                )


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


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "show", help="a run's state, attempts, versions and conversation"
    )
    parser.add_argument("run")
    parser.add_argument("--version", type=int, help="show this version of the plan and why")
    parser.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    return show_command(args.run, version=args.version, as_json=args.json, out=sys.stdout)
