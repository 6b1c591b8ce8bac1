"""Comparing: two versions of a run's plan (or a refused proposal), and the run's code
changes, whole or one step's commit."""

from __future__ import annotations

from plangate.runs.model import VersionRecord
from plangate.web import changes, diffs
from plangate.web.pages import (
    BadRequest,
    Data,
    NotFound,
    accepted_versions,
    load_run,
    parse_version,
    run_url,
    stamp_of,
    tabs,
)
from plangate.web.queries import Reader


def _version_token(
    token: str, accepted: dict[int, VersionRecord], records: list[VersionRecord]
) -> tuple[str, str, Data]:
    """``3`` (version 3) or ``p5`` (the refused proposal recorded fifth): label, text, info."""
    value = token.strip()
    if value.isdigit():
        number = int(value)
        if number not in accepted:
            raise NotFound(f"there is no version {number}", "pick one of the run's versions")
        record = accepted[number]
        return f"version {number}", record.plan_text, {"token": value, "number": number}
    if value.startswith("p") and value[1:].isdigit():
        seq = int(value[1:])
        found = next((v for v in records if v.seq == seq and not v.accepted), None)
        if found is None:
            raise NotFound(f"there is no refused proposal {value}", "pick one from the list")
        return "refused proposal", found.plan_text, {"token": value, "number": None}
    raise BadRequest(f"{token!r} is not a version", "give a version number, as in ?from=1&to=3")


def diff_page(reader: Reader, run_id: str, old: str | None, new: str | None, view: str) -> Data:
    run, records, summary = load_run(reader, run_id)
    accepted = accepted_versions(records)
    if view not in ("auto", "unified", "split"):
        raise BadRequest(f"view {view!r} is not unified or split", "use ?view=unified or split")
    numbers = sorted(accepted)
    choices = [{"token": str(n), "label": f"version {n}"} for n in numbers]
    choices += [
        {"token": f"p{v.seq}", "label": f"refused proposal ({v.refusal or 'refused'})"}
        for v in records
        if not v.accepted
    ]
    data: Data = {
        "page": "diff",
        "run": summary,
        "tabs": tabs(run.id, "diff", reader.checks(run_id)),
        "choices": choices,
        "view": view,
        "from": None,
        "to": None,
        "diff": None,
        "steps": None,
        "stamp": stamp_of(reader, run_id),
        "stamp_url": run_url(run.id, "stamp.json"),
    }
    if not numbers:
        return data
    to_token = new or str(run.version if run.version in accepted else numbers[-1])
    if old is None:
        to_number = int(to_token) if to_token.isdigit() else numbers[-1]
        old = str(max(1, to_number - 1))
    old_label, old_text, old_info = _version_token(old, accepted, records)
    new_label, new_text, new_info = _version_token(to_token, accepted, records)
    data["from"] = {**old_info, "label": old_label}
    data["to"] = {**new_info, "label": new_label}
    data["diff"] = diffs.text_diff(
        old_text, new_text, old_name=old_label, new_name=new_label, context=4
    )
    data["steps"] = _step_changes(old_text, new_text)
    return data


def _step_changes(old_text: str, new_text: str) -> Data | None:
    """Which steps the newer text kept, changed, added and dropped (``None``: unreadable)."""
    old, _ = parse_version(old_text, 0)
    new, _ = parse_version(new_text, 0)
    if old is None or new is None:
        return None
    old_steps = {s.number: s for s in old.steps}
    new_steps = {s.number: s for s in new.steps}
    return {
        "kept": [n for n in new_steps if old_steps.get(n) == new_steps[n]],
        "changed": [n for n in new_steps if n in old_steps and old_steps[n] != new_steps[n]],
        "added": [n for n in new_steps if n not in old_steps],
        "dropped": [n for n in old_steps if n not in new_steps],
    }


def changes_page(reader: Reader, run_id: str, commit: str | None, view: str) -> Data:
    run, _records, summary = load_run(reader, run_id)
    if view not in ("unified", "split"):
        raise BadRequest(f"view {view!r} is not unified or split", "use ?view=unified or split")
    if commit is not None and not changes.is_sha(commit):
        raise BadRequest(f"{commit!r} is not a commit", "pick one of the run's commits")
    steps = reader.steps(run_id)
    by_commit = {s.commit: s for s in steps if s.commit}
    data: Data = {
        "page": "changes",
        "run": summary,
        "tabs": tabs(run.id, "changes", reader.checks(run_id)),
        "view": view,
        "commit": commit,
        "commits": [],
        "files": [],
        "added": 0,
        "removed": 0,
        "truncated": False,
        "error": None,
        "diff_text": "",
        "stamp": stamp_of(reader, run_id),
        "stamp_url": run_url(run.id, "stamp.json"),
    }
    try:
        change = changes.run_change(run.repo, run.base_commit, run.branch, commit)
    except LookupError:
        raise NotFound(
            f"{commit} is not one of run {run_id}'s commits", "pick one from the list"
        ) from None
    except changes.ChangesError as error:
        data["error"] = str(error)
        return data
    for item in change.commits:
        step = by_commit.get(item.sha)
        data["commits"].append(
            {
                "sha": item.sha,
                "short": item.sha[:10],
                "subject": item.subject,
                "step": step.step if step else None,
                "version": step.version if step else None,
                "turn": step.turn if step else None,
                "url": run_url(run.id, "changes") + f"?commit={item.sha}",
                "selected": commit is not None and item.sha.startswith(commit),
            }
        )
    files = diffs.parse_git_diff(change.text)
    data["files"] = files
    data["added"] = sum(f["added"] for f in files)
    data["removed"] = sum(f["removed"] for f in files)
    data["truncated"] = change.truncated
    data["diff_text"] = change.text
    return data
