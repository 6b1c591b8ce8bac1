"""The run page: the conversation, the Plan panel at a version, the Version list, and the
reply box. ``/runs/ID`` shows the current version; ``/runs/ID/versions/N`` version N."""

from __future__ import annotations

import re

from plangate.plan.model import Step
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

STEP_LABELS = {
    "done": "done",
    "escalated": "escalated",
    "in_progress": "in progress",
    "pending": "pending",
    "not_carried_out": "not carried out",
}
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


def _step_status(
    step: Step,
    number: int,
    current: bool,
    run: RunRecord,
    done: dict[int, StepRecord],
    escalated: dict[tuple[int, int], StepRecord],
    first_open: int | None,
) -> str:
    record = done.get(step.number)
    if record is not None and record.version <= number:
        return "done"
    if (number, step.number) in escalated:
        return "escalated"
    if not current:
        return "not_carried_out"
    if run.state == "running" and step.number == first_open:
        return "in_progress"
    return "pending"


def plan_panel(
    run: RunRecord, records: list[VersionRecord], steps: list[StepRecord], number: int
) -> Data:
    accepted = accepted_versions(records)
    record = accepted[number]
    plan, problem = parse_version(record.plan_text, number)
    previous_plan = None
    if number - 1 in accepted:
        previous_plan, _ = parse_version(accepted[number - 1].plan_text, number - 1)
    done = {s.step: s for s in steps if s.status == "done" and s.step is not None}
    escalated = {
        (s.version, s.step): s for s in steps if s.status == "escalated" and s.step is not None
    }
    current = number == run.version
    step_rows = []
    if plan is not None:
        open_steps = [s.number for s in plan.steps if s.number not in done]
        first_open = open_steps[0] if open_steps else None
        for step in plan.steps:
            status = _step_status(step, number, current, run, done, escalated, first_open)
            if number == 1 or previous_plan is None:
                origin, origin_label = "first", ""
            elif previous_plan.step(step.number) == step:
                origin, origin_label = "kept", f"kept from v{number - 1}"
            else:
                origin, origin_label = "added", f"new in v{number}"
            record_done = done.get(step.number) if status == "done" else None
            record_escalated = escalated.get((number, step.number))
            step_rows.append(
                {
                    "number": step.number,
                    "title": step.title,
                    "files": list(step.files),
                    "serves": list(step.serves),
                    "body": step.body,
                    "status": status,
                    "status_label": STEP_LABELS[status],
                    "origin": origin,
                    "origin_label": origin_label,
                    "commit": record_done.commit if record_done else None,
                    "commit_url": (
                        run_url(run.id, "changes") + f"?commit={record_done.commit}"
                        if record_done and record_done.commit
                        else None
                    ),
                    "changed_files": list(record_done.changed_files) if record_done else [],
                    "escalation": record_escalated.escalation if record_escalated else None,
                }
            )
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
        "kept": sum(1 for s in step_rows if s["origin"] == "kept"),
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
        "stamp": stamp_of(reader, run_id),
        "stamp_url": run_url(run.id, "stamp.json"),
    }
