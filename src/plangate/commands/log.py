"""``plangate log [--json]``: what the phase publication guard decided, by code and disposition.

Reads the decision log (``<state root>/analytics/autoplan-guard.jsonl``, see
:mod:`plangate.decisions.log`). Lines that are not log objects are counted as skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, TextIO

from plangate.decisions import log as guard_log
from plangate.errors import ExitCodes, StateError

VERIFIED_LABEL = "(verified)"
EXIT_CODES = ExitCodes(
    {
        0: "summarised (an empty or missing log included)",
        1: "the log cannot be read",
        2: "bad usage",
    },
    usage=2,
    failure=1,
)


class _Row:
    __slots__ = ("code", "disposition", "count", "allow", "deny", "first", "last")

    def __init__(self, code: str | None, disposition: str) -> None:
        self.code = code
        self.disposition = disposition
        self.count = 0
        self.allow = 0
        self.deny = 0
        self.first: str | None = None
        self.last: str | None = None

    def add(self, decision: str, ts: str | None) -> None:
        self.count += 1
        if decision == "allow":
            self.allow += 1
        elif decision == "deny":
            self.deny += 1
        if ts is not None:
            if self.first is None or ts < self.first:
                self.first = ts
            if self.last is None or ts > self.last:
                self.last = ts

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


def _read_lines(path: str) -> list[str] | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read().splitlines()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise StateError(
            f"cannot read the guard's decision log {path}: {error.strerror or error}",
            "check the file's permissions, or set PLANGATE_STATE_ROOT to the right state root",
        ) from None


def summarize(path: str) -> dict[str, Any]:
    """The summary of the log at ``path`` (a missing file is an empty log)."""
    lines = _read_lines(path)
    total = _Row(None, "all")
    rows: dict[tuple[str | None, str], _Row] = {}
    dispositions: dict[str, int] = {}
    skipped = 0
    for line in lines or ():
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            skipped += 1
            continue
        if not isinstance(item, dict) or item.get("decision") not in ("allow", "deny"):
            skipped += 1
            continue
        code = item.get("code")
        code = code if isinstance(code, str) else None
        disposition = item.get("disposition")
        disposition = disposition if isinstance(disposition, str) else "unknown"
        ts = item.get("ts")
        ts = ts if isinstance(ts, str) else None
        key = (code, disposition)
        row = rows.get(key)
        if row is None:
            row = rows[key] = _Row(code, disposition)
        row.add(item["decision"], ts)
        total.add(item["decision"], ts)
        dispositions[disposition] = dispositions.get(disposition, 0) + 1
    ordered = sorted(rows.values(), key=lambda r: (-r.count, r.code or "", r.disposition))
    return {
        "path": path,
        "exists": lines is not None,
        "decisions": total.count,
        "allow": total.allow,
        "deny": total.deny,
        "first": total.first,
        "last": total.last,
        "skipped": skipped,
        "by_disposition": dict(sorted(dispositions.items())),
        "by_code": [row.as_dict() for row in ordered],
    }


def render(summary: dict[str, Any]) -> str:
    path = summary["path"]
    if not summary["decisions"]:
        where = "no decision log yet" if not summary["exists"] else "the decision log is empty"
        text = f"No guard decisions logged ({where}: {path}).\n"
        if summary["skipped"]:
            text += f"{summary['skipped']} unreadable line(s) skipped.\n"
        return text
    out = [
        f"Guard decision log: {path}",
        f"{summary['decisions']} decision(s): {summary['allow']} allow, {summary['deny']} deny, "
        f"from {summary['first'] or '?'} to {summary['last'] or '?'}",
    ]
    if summary["skipped"]:
        out.append(f"{summary['skipped']} unreadable line(s) skipped")
    out.append(
        "By disposition: "
        + ", ".join(f"{name} {count}" for name, count in summary["by_disposition"].items())
    )
    out.append("")
    table = [("code", "disposition", "count", "allow", "deny", "first", "last")]
    for row in summary["by_code"]:
        table.append(
            (
                row["code"] or VERIFIED_LABEL,
                row["disposition"],
                str(row["count"]),
                str(row["allow"]),
                str(row["deny"]),
                row["first"] or "-",
                row["last"] or "-",
            )
        )
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
    for line in table:
        out.append(
            "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        )
    out.append("")
    out.append("Run `plangate explain <code>` for what a code means and what to do.")
    return "\n".join(out) + "\n"


def log_summary(as_json: bool, out: TextIO, *, path: str | None = None) -> int:
    """Summarise the guard's decision log; 0 (an empty or missing log included).

    ``path`` defaults to ``<state root>/analytics/autoplan-guard.jsonl``. An unreadable log
    raises :class:`~plangate.errors.StateError` (exit 1).
    """
    target = path if path is not None else guard_log.log_path()
    if os.path.isdir(target):
        raise StateError(f"{target} is a folder, not the guard's decision log", "remove it")
    summary = summarize(target)
    if as_json:
        out.write(json.dumps(summary, indent=2) + "\n")
    else:
        out.write(render(summary))
    return 0


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("log", help="summarise the guard's decision log")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    return log_summary(args.json, sys.stdout)
