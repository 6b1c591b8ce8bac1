"""What each page shows, as plain data: the page's template draws it, and its JSON twin is
the same dict. Nothing here knows about HTTP beyond the :class:`PageError` family, which
the app turns into a status code, once.

This module has the pieces every page shares, the runs list, the stamps pages poll and the
checks page; :mod:`~plangate.web.run_page` the run page, :mod:`~plangate.web.compare` the
version diff and the code changes.
"""

from __future__ import annotations

import re
from typing import Any

from plangate.errors import PlangateError
from plangate.plan.model import Plan
from plangate.plan.parse import parse_plan
from plangate.runs.attempts import TRIGGER_SENTENCES
from plangate.runs.model import (
    ACTIVE_STATES,
    ENDED_STATES,
    CheckRecord,
    Event,
    Failure,
    RunRecord,
    VersionRecord,
)
from plangate.runs.summary import attempts_by_turn, attempts_line, carrier_line, left_by
from plangate.web.queries import Reader, interrupted

Data = dict[str, Any]

STATE_LABELS = {
    "queued": "Queued",
    "running": "Running",
    "checking": "Checking",
    "replanning": "Re-planning",
    "waiting": "Waiting on you",
    "done": "Done",
    "errored": "Errored",
}
TRIGGER_LABELS = {
    "initial": "initial plan",
    "check": "check failed",
    "gate": "evidence gate failed",
    "escalation": "agent escalated",
}
_ROUND = re.compile(r"^t(\d+)/a(\d+)$")


class PageError(Exception):
    """A request the viewer cannot answer; ``status`` is the HTTP status."""

    status = 500
    title = "Something went wrong"

    def __init__(self, message: str, remedy: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.remedy = remedy


class BadRequest(PageError):
    status = 400
    title = "Bad request"


class NotFound(PageError):
    status = 404
    title = "Not found"


class Conflict(PageError):
    status = 409
    title = "Not now"


# -- shared pieces ---------------------------------------------------------------------------


def run_url(run_id: str, *rest: str) -> str:
    return "/".join([f"/runs/{run_id}", *rest])


def _title(run: RunRecord) -> str:
    if run.title:
        return run.title
    if run.task and run.task.strip():
        return run.task.strip().splitlines()[0][:80]
    return "Untitled run"


def why_headline(record: VersionRecord) -> str:
    """The trigger's sentence when the failures are listed under it, else the whole line."""
    sentence = TRIGGER_SENTENCES.get(record.trigger, "")
    if record.failures and sentence and record.why.startswith(sentence):
        return sentence
    return record.why


def failure_data(item: Failure) -> Data:
    return {"kind": item.kind, "summary": item.summary, "output_tail": item.output_tail}


def _event(event: Event | None) -> Data | None:
    if event is None:
        return None
    return {
        "seq": event.seq,
        "turn": event.turn,
        "kind": event.kind,
        "text": event.text,
        "created_at": event.created_at,
    }


def run_summary(run: RunRecord, *, versions: int, is_interrupted: bool) -> Data:
    waiting = None
    if run.waiting is not None:
        waiting = {
            "reason": run.waiting.reason,
            "detail": run.waiting.detail,
            "last_message": run.waiting.last_message,
        }
    errored = None
    if run.errored is not None:
        errored = {"error": run.errored.error, "log": run.errored.log}
    return {
        "id": run.id,
        "title": _title(run),
        "state": run.state,
        "state_label": STATE_LABELS.get(run.state, run.state),
        "active": run.state in ACTIVE_STATES,
        "interrupted": is_interrupted,
        "turn": run.turn,
        "attempts_used": run.attempts_used,
        "attempts_allowed": run.attempts_allowed,
        "version": run.version,
        "versions": versions,
        "has_plan": run.has_plan,
        "task": run.task,
        "repo": run.repo,
        "branch": run.branch,
        "base_commit": run.base_commit,
        "worktree": run.worktree,
        "agent": run.agent,
        "review": run.review,
        "created_at": run.created_at,
        "updated_at": run.updated_at,
        "waiting": waiting,
        "errored": errored,
        "notice": run.notice if run.state in ACTIVE_STATES else None,
        "worker": run.carried_by,
        "host": run.host,
        "carrier": carrier_line(run),
        "can_reply": run.state in ENDED_STATES,
        "url": run_url(run.id),
        "json_url": run_url(run.id) + ".json",
    }


def load_run(reader: Reader, run_id: str) -> tuple[RunRecord, list[VersionRecord], Data]:
    run = reader.run(run_id)
    if run is None:
        raise NotFound(f"there is no run {run_id!r}", "see the list of runs")
    records = reader.versions(run_id)
    accepted = sum(1 for v in records if v.accepted and v.number is not None)
    is_interrupted = interrupted(run.state, run.executor, *reader.executor_liveness())
    summary = run_summary(run, versions=accepted, is_interrupted=is_interrupted)
    # The same words as `plangate show`: a new turn has its own attempts, and says so.
    summary["attempts_line"] = attempts_line(run, attempts_by_turn(reader.failures(run_id)))
    # The hosts that left its queued turn, as `plangate show` tells them.
    summary["left_by"] = left_by(run, reader.misses(run_id, run.turn))
    return run, records, summary


def tabs(run_id: str, active: str, checks: list[CheckRecord] | None = None) -> list[Data]:
    """The run's views; the Checks tab says how many checks of the last round fail."""
    failing = sum(1 for c in latest_round(checks or []) if not c.passed)
    tabs = [
        ("run", "Conversation & plan", run_url(run_id), None),
        ("diff", "Plan versions", run_url(run_id, "diff"), None),
        ("changes", "Code changes", run_url(run_id, "changes"), None),
        ("checks", "Checks", run_url(run_id, "checks"), f"{failing} failing" if failing else None),
    ]
    return [
        {"key": key, "label": label, "url": url, "badge": badge, "active": key == active}
        for key, label, url, badge in tabs
    ]


def latest_round(records: list[CheckRecord]) -> list[CheckRecord]:
    if not records:
        return []
    last = records[-1].round_key
    return [c for c in records if c.round_key == last]


# -- the runs list ---------------------------------------------------------------------------


def runs_page(reader: Reader) -> Data:
    records = reader.runs()
    last = reader.last_events()
    counts = reader.version_counts()
    known, gone = reader.executor_liveness()
    rows = []
    for run in sorted(records, key=lambda r: (r.created_at, r.id), reverse=True):
        row = run_summary(
            run,
            versions=counts.get(run.id, 0),
            is_interrupted=interrupted(run.state, run.executor, known, gone),
        )
        row["last_event"] = _event(last.get(run.id))
        rows.append(row)
    states = {state: sum(1 for r in rows if r["state"] == state) for state in STATE_LABELS}
    return {
        "page": "runs",
        "runs": rows,
        "counts": {STATE_LABELS[s]: n for s, n in states.items() if n},
        "stamp": reader.list_stamp().value,
        "stamp_url": "/stamp.json",
    }


def accepted_versions(records: list[VersionRecord]) -> dict[int, VersionRecord]:
    return {v.number: v for v in records if v.accepted and v.number is not None}


def parse_version(text: str, number: int) -> tuple[Plan | None, str | None]:
    try:
        return parse_plan(text, source=f"<version {number}>"), None
    except PlangateError as error:
        return None, str(error)


def stamp_of(reader: Reader, run_id: str) -> str:
    stamp = reader.run_stamp(run_id)
    return "" if stamp is None else stamp.value


def stamp_page(reader: Reader, run_id: str | None) -> Data:
    if run_id is None:
        return {"stamp": reader.list_stamp().value}
    stamp = reader.run_stamp(run_id)
    if stamp is None:
        raise NotFound(f"there is no run {run_id!r}", "see the list of runs")
    return {"stamp": stamp.value, "state": stamp.state}


# -- checks ------------------------------------------------------------------------------------


def check_data(record: CheckRecord, *, with_output: bool = True) -> Data:
    data: Data = {
        "round": record.round_key,
        "index": record.index,
        "anchor": f"check-{record.round_key.replace('/', '-')}-{record.index}",
        "name": record.name,
        "command": record.command,
        "label": record.label,
        "passed": record.passed,
        "exit_code": record.exit_code,
        "timed_out": record.timed_out,
        "duration_seconds": record.duration_seconds,
        "tail": record.tail,
        "tail_lines": len(record.tail.splitlines()),
    }
    if with_output:
        data["output"] = record.output
        data["output_lines"] = len(record.output.splitlines())
    return data


def _round_label(key: str) -> tuple[int | None, int | None, str]:
    match = _ROUND.match(key)
    if not match:
        return None, None, key
    turn, attempt = int(match.group(1)), int(match.group(2))
    return turn, attempt, f"Turn {turn}, round {attempt + 1}"


def checks_page(reader: Reader, run_id: str) -> Data:
    run, _records, summary = load_run(reader, run_id)
    records = reader.checks(run_id)
    rounds: list[Data] = []
    for record in records:
        if not rounds or rounds[-1]["key"] != record.round_key:
            turn, attempt, label = _round_label(record.round_key)
            rounds.append(
                {
                    "key": record.round_key,
                    "turn": turn,
                    "attempt": attempt,
                    "label": label,
                    "checks": [],
                }
            )
        rounds[-1]["checks"].append(check_data(record))
    for item in rounds:
        item["passed"] = all(c["passed"] for c in item["checks"])
    return {
        "page": "checks",
        "run": summary,
        "tabs": tabs(run.id, "checks", records),
        "rounds": list(reversed(rounds)),
        "stamp": stamp_of(reader, run_id),
        "stamp_url": run_url(run.id, "stamp.json"),
    }
