"""``plangate report [--session ID] [--expect armed] [--json]``: the skill gates' counts.

Read from the session records (``<state root>/skill-gates/<session>/record.json``), never
from the trace logs (they rotate). Per session and gate:

    runs       skill runs the gate saw (a run starts at each load of the skill)
    fired      runs whose gate armed (it judged their first final stop)
    blocked    blocks, all runs together
    released   runs whose output met the gate
    exhausted  runs let through after 3 blocks
    observed   stops the gate saw in armed runs, judged or not
    errors     hook errors (each let a stop through unchecked)

Exit codes: 0 done; 1 ``SKILL_GATES_USAGE`` (a bad argument); 2 ``GATE_NOT_ARMED`` (with
``--expect armed``, a session without a ``fired`` marker, or no session at all); 3
``GATE_ERRORED`` (a session recorded a hook error). 3 wins over 2: an error explains why a
gate never armed.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from plangate.errors import ExitCodes
from plangate.gates import session_record
from plangate.gates.errors import GateError
from plangate.gates.gate import GATES
from plangate.journal.identity import valid_session_id

USAGE = "SKILL_GATES_USAGE"
NOT_ARMED = "GATE_NOT_ARMED"
ERRORED = "GATE_ERRORED"
EXIT_USAGE = 1
EXIT_NOT_ARMED = 2
EXIT_ERRORED = 3
EXPECT_ARMED = "armed"
EXIT_CODES = ExitCodes(
    {
        0: "done",
        EXIT_USAGE: f"bad usage (`{USAGE}`): a bad flag, `--expect` other than `armed`, a "
        "malformed session id",
        EXIT_NOT_ARMED: f"`{NOT_ARMED}`: with `--expect armed`, a session without a `fired` "
        "marker, or no session at all",
        EXIT_ERRORED: f"`{ERRORED}`: a session recorded a hook error (wins over 2)",
    },
    usage=EXIT_USAGE,
    usage_label=USAGE,
)
COUNTS = ("runs", "fired", "blocked", "released", "exhausted", "observed", "errors")


def gate_counts(entry: dict[str, Any]) -> dict[str, int]:
    """The counts of one gate's part of a record."""
    runs = list(entry.get("runs", {}).values())  # checked when read (gates.record_shape)
    return {
        "runs": len(runs),
        "fired": sum(1 for run in runs if run.get("fired_at")),
        "blocked": sum(run.get("blocked", 0) for run in runs),
        "released": sum(1 for run in runs if run.get("released_at")),
        "exhausted": sum(1 for run in runs if run.get("exhausted_at")),
        "observed": sum(run.get("observed", 0) for run in runs),
        "errors": entry.get("error_count", len(entry.get("errors", []))),
    }


def session_summary(
    session: str, record: dict[str, Any] | None, problem: str = ""
) -> dict[str, Any]:
    totals = dict.fromkeys(COUNTS, 0)
    gates: dict[str, Any] = {}
    if record is not None:
        recorded = record.get("gates", {})
        # the skill gates, then each workflow contract's done gate (``contract:<workflow>``)
        switches = [gate.switch for gate in GATES] + sorted(
            key for key in recorded if isinstance(key, str) and key.startswith("contract:")
        )
        for switch in switches:
            entry = recorded.get(switch)
            if not isinstance(entry, dict):
                continue
            counts = gate_counts(entry)
            for key in COUNTS:
                totals[key] += counts[key]
            gates[switch] = {
                "counts": counts,
                "runs": entry.get("runs", {}),
                "errors": entry.get("errors", []),
                "skipped": entry.get("skipped", []),
            }
    if problem:
        totals["errors"] += 1
    summary: dict[str, Any] = {"session": session, "counts": totals, "gates": gates}
    if problem:
        summary["problem"] = problem
    return summary


def _usage(err: TextIO, message: str) -> int:
    err.write(f"plangate report: {USAGE}: {message}\n")
    return EXIT_USAGE


def report(
    session: str | None,
    expect: str | None,
    as_json: bool,
    out: TextIO,
    *,
    err: TextIO | None = None,
    state_root: str | None = None,
) -> int:
    """Print each session's gate counts; the exit code as the module says."""
    err = err if err is not None else sys.stderr
    if expect is not None and expect != EXPECT_ARMED:
        return _usage(err, f"--expect takes `armed`, not {expect!r}")
    if session is not None and not valid_session_id(session):
        return _usage(err, f"{session!r} is not a Claude Code session id")
    names = [session] if session is not None else session_record.sessions(state_root)
    summaries = []
    for name in names:
        try:
            record = session_record.load(name, state_root)
        except GateError as error:
            summaries.append(session_summary(name, None, f"{error.code}: {error.why}"))
            continue
        if record is None and session is None:
            continue
        summary = session_summary(name, record)
        if record is None:
            summary["problem"] = "no skill-gate record for this session"
        summaries.append(summary)
    errored = [s["session"] for s in summaries if s["counts"]["errors"]]
    not_armed = [s["session"] for s in summaries if not s["counts"]["fired"]]
    code: str | None = None
    status = 0
    if errored:
        code, status = ERRORED, EXIT_ERRORED
    elif expect == EXPECT_ARMED and (not_armed or not summaries):
        code, status = NOT_ARMED, EXIT_NOT_ARMED
    if as_json:
        document = {
            "sessions": summaries,
            "expect": expect,
            "code": code,
            "exit": status,
            "not_armed": not_armed if expect == EXPECT_ARMED else [],
            "errored": errored,
        }
        out.write(json.dumps(document, indent=2) + "\n")
        return status
    _print_table(summaries, out)
    if code == ERRORED:
        out.write(
            f"{ERRORED}: {len(errored)} session(s) recorded a hook error, so some stops went "
            f"through unchecked: {', '.join(errored)} (see docs/skill-gates.md#gate-errored)\n"
        )
    elif code == NOT_ARMED:
        if not_armed:
            what = f"no gate armed in session(s) {', '.join(not_armed)}"
        else:
            what = "no session has a skill-gate record"
        out.write(
            f"{NOT_ARMED}: {what}: the hooks never loaded or the skill never ran (see "
            "docs/skill-gates.md#gate-not-armed)\n"
        )
    return status


def _print_table(summaries: list[dict[str, Any]], out: TextIO) -> None:
    if not summaries:
        out.write("no skill-gate records\n")
        return
    header = ["session", "gate", *COUNTS]
    rows: list[list[str]] = []
    for summary in summaries:
        if not summary["gates"]:
            rows.append([summary["session"], "-", *("0" for _ in COUNTS)])
        for switch, gate in summary["gates"].items():
            rows.append([summary["session"], switch, *(str(gate["counts"][k]) for k in COUNTS)])
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        out.write("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() + "\n")
    for summary in summaries:
        if summary.get("problem"):
            out.write(f"{summary['session']}: {summary['problem']}\n")


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("report", help="what the skill gates did, per session")
    parser.add_argument("--session", help="one session id")
    parser.add_argument("--expect", metavar="armed", help="exit 2 unless a gate armed")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    return report(args.session, args.expect, args.json, sys.stdout, err=sys.stderr)
