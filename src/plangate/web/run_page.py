"""The run page: the conversation, the Plan panel at a version, the Version list, and the
reply box. ``/runs/ID`` shows the current version; ``/runs/ID/versions/N`` version N."""

from __future__ import annotations

import re

from plangate.runs.approval_view import approval_json
from plangate.runs.attempts import REASON_REVIEW
from plangate.runs.model import Event, RunRecord, StepRecord, VersionRecord
from plangate.web.pages import (
    TRIGGER_LABELS,
    Data,
    NotFound,
    accepted_versions,
    check_data,
    failure_data,
    latest_round,
    load_run,
    parse_version,
    run_url,
    stamp_of,
    tabs,
    why_headline,
)
from plangate.web.queries import Reader
from plangate.web.step_rows import step_rows as rows_of_steps

# How each kind of conversation line is drawn: (style, tone).
EVENT_STYLES = {
    "agent": ("agent", "plain"),
    "reply": ("you", "plain"),
    "plan_changed": ("card", "info"),
    "version_refused": ("card", "muted"),
    "waiting": ("card", "warn"),
    "errored": ("card", "bad"),
    "stopped": ("card", "warn"),
    "done": ("card", "ok"),
    "escalated": ("card", "warn"),
    "check_failed": ("line", "bad"),
    "check_passed": ("line", "ok"),
    "gate_failed": ("line", "bad"),
    "gate_passed": ("line", "ok"),
    "review": ("line", "plain"),
    "attempt": ("line", "warn"),
    "start": ("line", "plain"),
    "step": ("line", "plain"),
}
_VERSION_IN = re.compile(r"\bversion (\d+)\b")
_COMMIT_IN = re.compile(r"\(commit ([0-9a-f]{7,64})")


def _version_row(run: RunRecord, record: VersionRecord, records: list[VersionRecord]) -> Data:
    row: Data = {
        "seq": record.seq,
        "number": record.number,
        "accepted": record.accepted,
        "current": record.accepted and record.number == run.version,
        "trigger": record.trigger,
        "trigger_label": TRIGGER_LABELS.get(record.trigger, record.trigger),
        "why": record.why,
        "refusal": record.refusal,
        "attempts_used": record.attempts_used,
        "created_at": record.created_at,
        "failures": [failure_data(f) for f in record.failures],
        "url": None,
        "compare_url": None,
        "replaces": None,
    }
    if record.accepted and record.number is not None:
        row["url"] = run_url(run.id, "versions", str(record.number))
        if record.number > 1:
            row["compare_url"] = (
                run_url(run.id, "diff") + f"?from={record.number - 1}&to={record.number}"
            )
    else:
        before = [
            v.number for v in records if v.accepted and v.number is not None and v.seq < record.seq
        ]
        if before:
            row["replaces"] = before[-1]
            row["compare_url"] = run_url(run.id, "diff") + f"?from={before[-1]}&to=p{record.seq}"
    return row


def plan_panel(
    run: RunRecord, records: list[VersionRecord], steps: list[StepRecord], number: int
) -> Data:
    accepted = accepted_versions(records)
    record = accepted[number]
    plans = {n: parse_version(v.plan_text, n)[0] for n, v in accepted.items()}
    plan, problem = parse_version(record.plan_text, number)
    current = number == run.version
    step_rows = rows_of_steps(run, plans, steps, number, run_url(run.id, "changes"))
    return {
        "number": number,
        "of": len(accepted),
        "current": current,
        "title": plan.title if plan else "",
        "goal": plan.goal if plan else "",
        "trigger": record.trigger,
        "trigger_label": TRIGGER_LABELS.get(record.trigger, record.trigger),
        "why": record.why,
        "why_headline": why_headline(record),
        "failures": [failure_data(f) for f in record.failures],
        "attempts_used": record.attempts_used,
        "created_at": record.created_at,
        "steps": step_rows,
        "kept": sum(1 for s in step_rows if s["origin"] in ("kept", "unchanged")),
        "reattempted": sum(1 for s in step_rows if s["origin"] == "reattempted"),
        "added": sum(1 for s in step_rows if s["origin"] == "added"),
        "checks": [
            {"name": c.name, "command": c.command, "timeout_seconds": c.timeout_seconds}
            for c in (plan.checks if plan else ())
        ],
        "criteria": [{"id": c.id, "text": c.text} for c in (plan.criteria if plan else ())],
        "plan_text": record.plan_text,
        "parse_error": problem,
        "url": run_url(run.id, "versions", str(number)),
        "json_url": run_url(run.id, "versions", str(number)) + ".json",
        "previous_url": run_url(run.id, "versions", str(number - 1)) if number > 1 else None,
        "next_url": (
            run_url(run.id, "versions", str(number + 1)) if number + 1 in accepted else None
        ),
        "compare_url": (
            run_url(run.id, "diff") + f"?from={number - 1}&to={number}" if number > 1 else None
        ),
        "previous": number - 1 if number > 1 else None,
    }


def _conversation(run: RunRecord, events: list[Event], records: list[VersionRecord]) -> list[Data]:
    accepted = accepted_versions(records)
    refused = [v for v in records if not v.accepted]
    items = []
    for event in events:
        style, tone = EVENT_STYLES.get(event.kind, ("line", "plain"))
        if event.kind == "review":
            # A send-back is a failing round, drawn as one; an approval as a passing one.
            tone = "bad" if event.text.startswith(REASON_REVIEW) else "ok"
        text = event.text
        if event.kind == "reply":
            text = text.removeprefix("You: ")
        item: Data = {
            "seq": event.seq,
            "turn": event.turn,
            "kind": event.kind,
            "text": text,
            "created_at": event.created_at,
            "style": style,
            "tone": tone,
            "version": None,
            "version_url": None,
            "why": None,
            "link": None,
        }
        if event.kind == "plan_changed":
            match = _VERSION_IN.search(event.text)
            number = int(match.group(1)) if match else None
            if number is not None and number in accepted:
                record = accepted[number]
                item["version"] = number
                item["version_url"] = run_url(run.id, "versions", str(number))
                item["why"] = {
                    "why": record.why,
                    "trigger_label": TRIGGER_LABELS.get(record.trigger, record.trigger),
                    "failures": [failure_data(f) for f in record.failures],
                    "previous": number - 1 if number > 1 else None,
                    "previous_url": (
                        run_url(run.id, "versions", str(number - 1)) if number > 1 else None
                    ),
                }
        elif event.kind == "version_refused" and refused:
            earlier = [v for v in refused if v.created_at <= event.created_at]
            proposal = earlier[-1] if earlier else refused[-1]
            item["link"] = {"label": "See the refused proposal", "url": f"#proposal-{proposal.seq}"}
        elif event.kind in ("check_failed", "check_passed"):
            item["link"] = {"label": "Output", "url": run_url(run.id, "checks")}
        elif event.kind == "step":
            found = _COMMIT_IN.search(event.text)
            if found:
                item["link"] = {
                    "label": "Diff",
                    "url": run_url(run.id, "changes") + f"?commit={found.group(1)}",
                }
        items.append(item)
    return items


def run_page(reader: Reader, run_id: str, version: int | None = None) -> Data:
    run, records, summary = load_run(reader, run_id)
    accepted = accepted_versions(records)
    if version is not None and version not in accepted:
        raise NotFound(
            f"run {run_id} has no version {version}",
            f"its versions are 1 to {len(accepted)}" if accepted else "the run has no plan",
        )
    steps = reader.steps(run_id)
    check_records = reader.checks(run_id)
    shown = version if version is not None else (run.version if run.version in accepted else None)
    panel = plan_panel(run, records, steps, shown) if shown is not None else None
    rows = [_version_row(run, v, records) for v in records]
    for row in rows:
        row["selected"] = row["accepted"] and row["number"] == shown
    latest = latest_round(check_records)
    can_reply = summary["can_reply"]
    conversation = _conversation(run, reader.events(run_id), records)
    agent_lines = [m["text"] for m in conversation if m["kind"] == "agent"]
    return {
        "page": "version" if version is not None else "run",
        "run": summary,
        "tabs": tabs(run.id, "run", check_records),
        "plan": panel,
        "versions": list(reversed(rows)),
        "conversation": conversation,
        "last_agent_message": agent_lines[-1] if agent_lines else None,
        "latest_checks": [check_data(c, with_output=False) for c in latest],
        "reply": {
            "allowed": can_reply,
            "url": run_url(run.id, "reply"),
            "version": run.version,
            "turn": run.turn + 1,
            "error": None,
            "draft": "",
        },
        "approval": approval_json(reader, run_id),  # docs/review-to-run.md
        "stamp": stamp_of(reader, run_id),
        "stamp_url": run_url(run.id, "stamp.json"),
    }
