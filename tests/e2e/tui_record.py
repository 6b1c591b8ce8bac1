"""Describes journals for people and saves recordings of interactive sessions.

:func:`shapes` and :func:`describe_roots` label every record of a journal (on the parent
chain walked up from the newest record, a parallel block or its result, a side leaf, an
abandoned branch) and :func:`save_recording` writes a session's journals, the guard's
decision log, the model requests and a ``SHAPES.md`` into a folder. The tests call it when
``PLANGATE_TUI_RECORD=DIR`` is set; ``docs/journal-reading.md`` was written from such
recordings. This labelling is for reading journals by eye; the reader's own rule is
:mod:`plangate.journal.chain`.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tui import Tui, records

import plangate
from plangate.harness.standin import ModelRequest


def _short(value: object) -> str:
    return value[:8] if isinstance(value, str) else "null"


def record_kind(record: Mapping[str, Any]) -> str:
    """``type``, with ``/subtype`` or ``/attachment type`` when there is one."""
    kind = str(record.get("type"))
    if isinstance(record.get("subtype"), str):
        kind += f"/{record['subtype']}"
    attachment = record.get("attachment")
    if isinstance(attachment, dict) and isinstance(attachment.get("type"), str):
        kind += f"/{attachment['type']}"
    return kind


def summary(record: Mapping[str, Any]) -> str:
    """A few words of what a record holds."""
    message = record.get("message")
    if isinstance(message, dict):
        content = message.get("content")
        if isinstance(content, str):
            return content[:50].replace("\n", " ")
        if isinstance(content, list):
            parts: list[str] = []
            for block in content:
                if not isinstance(block, dict):
                    continue
                kind = block.get("type")
                if kind == "text":
                    parts.append("text " + repr(str(block.get("text", ""))[:40]))
                elif kind == "tool_use":
                    parts.append(f"tool_use {block.get('name')} …{str(block.get('id'))[-4:]}")
                elif kind == "tool_result":
                    parts.append(f"tool_result …{str(block.get('tool_use_id'))[-4:]}")
                else:
                    parts.append(str(kind))
            return "; ".join(parts)[:90].replace("\n", " ")
    attachment = record.get("attachment")
    if isinstance(attachment, dict):
        words = [attachment.get("hookEvent"), attachment.get("hookName")]
        tool = attachment.get("toolUseID")
        if isinstance(tool, str):
            words.append(f"toolUseID …{tool[-4:]}")
        prompt = attachment.get("prompt")
        if isinstance(prompt, str):
            words.append(repr(prompt[:40]))
        return " ".join(str(w) for w in words if w)[:90]
    content = record.get("content")
    return str(content)[:50].replace("\n", " ") if content is not None else ""


STATUSES = {
    "chain": "on the parentUuid chain walked up from the newest record",
    "parallel": "off that chain, but another content block of a reply on it (same "
    "message.id) or the tool_result of such a block: Claude Code puts it back",
    "preserved": "before a compact boundary on the chain, in the segment its compactMetadata "
    "keeps (preservedSegment head..tail): sent to the model ahead of the summary",
    "summarized": "replaced by the summary of a compact boundary on the chain: an ancestor "
    "of the boundary's logicalParentUuid that is not preserved, a record written under that "
    "logical parent before the boundary, or, for a boundary with no logical parent, an "
    "earlier tree that reaches no live record",
    "side": "an attachment or system record off the chain with no prompt or reply under it "
    "(e.g. a PreToolUse hook_success hanging from a tool_use)",
    "dead": "an abandoned branch: off the chain, hangs from a live record, and it or a "
    "record under it is a prompt or a reply",
    "dead root": "an abandoned tree that reaches no live record (a null-parent root)",
    "-": "no uuid: metadata (mode, permission-mode, file-history-snapshot, api-request, …)",
}


@dataclasses.dataclass
class Shape:
    """One record of a journal and where it stands (:data:`STATUSES`)."""

    line: int
    kind: str
    uuid: str | None
    parent: str | None
    #: ``logicalParentUuid`` when the key is there (a compact boundary).
    logical: str | None
    has_logical: bool
    status: str
    summary: str


def _walk_up(by_id: Mapping[str, Mapping[str, Any]], start: str | None) -> list[str]:
    """``start`` and its ancestors by parentUuid (stops at a loop or a missing parent)."""
    found: list[str] = []
    node = by_id.get(start) if start else None
    while node is not None and node["uuid"] not in found:
        found.append(node["uuid"])
        parent = node.get("parentUuid")
        node = by_id.get(parent) if isinstance(parent, str) else None
    return found


def shapes(journal: Path) -> list[Shape]:
    """Every record of the journal with its links and status (:data:`STATUSES`)."""
    recs = records(journal)
    by_id: dict[str, dict[str, Any]] = {}
    index: dict[str, int] = {}
    for number, r in enumerate(recs):
        if isinstance(r.get("uuid"), str):
            by_id[r["uuid"]] = r
            index[r["uuid"]] = number
    children: dict[str, list[str]] = {}
    for uid, r in by_id.items():
        parent = r.get("parentUuid")
        if isinstance(parent, str):
            children.setdefault(parent, []).append(uid)
    newest = next((r["uuid"] for r in reversed(recs) if isinstance(r.get("uuid"), str)), None)
    chain = set(_walk_up(by_id, newest))
    message_ids = {_message_id(by_id[u]) for u in chain if by_id[u].get("type") == "assistant"}
    message_ids.discard(None)
    parallel = {
        uid
        for uid, r in by_id.items()
        if uid not in chain and r.get("type") == "assistant" and _message_id(r) in message_ids
    }
    for uid, r in by_id.items():
        source = r.get("sourceToolAssistantUUID")
        if uid not in chain and source in chain | parallel:
            parallel.add(uid)
    preserved: set[str] = set()
    summarized: set[str] = set()
    boundaries = [u for u in chain if by_id[u].get("subtype") == "compact_boundary"]
    for b in boundaries:
        meta = by_id[b].get("compactMetadata")
        segment = meta.get("preservedSegment") if isinstance(meta, dict) else None
        if isinstance(segment, dict):
            kept = _walk_up(by_id, segment.get("tailUuid"))
            head = segment.get("headUuid")
            if head in kept:
                kept = kept[: kept.index(head) + 1]
            preserved.update(kept)
        logical = by_id[b].get("logicalParentUuid")
        if isinstance(logical, str):
            summarized.update(u for u in _walk_up(by_id, logical) if u not in preserved)
            # "Summarize from here": what came after the kept segment, before the boundary.
            todo = list(children.get(logical, []))
            while todo:
                u = todo.pop()
                if u in chain or u in parallel or u in summarized or index[u] > index[b]:
                    continue
                summarized.add(u)
                todo.extend(children.get(u, []))
    live = chain | parallel | preserved

    def top_of(uid: str) -> str:
        seen = {uid}
        node = by_id[uid]
        while True:
            parent = node.get("parentUuid")
            if not isinstance(parent, str) or parent not in by_id or parent in live:
                return str(node["uuid"])
            if parent in seen:
                return str(node["uuid"])
            seen.add(parent)
            node = by_id[parent]

    def conversational(uid: str) -> bool:
        todo, seen = [uid], set()
        while todo:
            u = todo.pop()
            if u in seen:
                continue
            seen.add(u)
            if by_id[u].get("type") in ("user", "assistant"):
                return True
            todo.extend(c for c in children.get(u, []) if c not in live)
        return False

    first_null_boundary = min(
        (index[b] for b in boundaries if not isinstance(by_id[b].get("logicalParentUuid"), str)),
        default=None,
    )
    found: list[Shape] = []
    for number, r in enumerate(recs, 1):
        rid: str | None = r["uuid"] if isinstance(r.get("uuid"), str) else None
        if rid is None:
            status = "-"
        elif rid in chain:
            status = "chain"
        elif rid in parallel:
            status = "parallel"
        elif rid in preserved:
            status = "preserved"
        else:
            top = top_of(rid)
            parent = by_id[top].get("parentUuid")
            attached = isinstance(parent, str) and parent in live
            before_null_boundary = (
                first_null_boundary is not None and index[rid] < first_null_boundary
            )
            if rid in summarized or (not attached and (top in summarized or before_null_boundary)):
                status = "summarized"
            elif not conversational(top):
                status = "side" if attached else "dead root"
            else:
                status = "dead" if attached else "dead root"
        parent_value = r.get("parentUuid")
        logical = r.get("logicalParentUuid")
        found.append(
            Shape(
                line=number,
                kind=record_kind(r),
                uuid=rid,
                parent=parent_value if isinstance(parent_value, str) else None,
                logical=logical if isinstance(logical, str) else None,
                has_logical="logicalParentUuid" in r,
                status=status,
                summary=summary(r),
            )
        )
    return found


def _message_id(record: Mapping[str, Any]) -> str | None:
    message = record.get("message")
    value = message.get("id") if isinstance(message, dict) else None
    return value if isinstance(value, str) else None


def describe_roots(journal: Path) -> list[str]:
    """Sentences on the journal's shape: null-parent records, compact boundaries, abandoned
    branches, parallel tool calls, side leaves."""
    rows = shapes(journal)
    by_id = {s.uuid: s for s in rows if s.uuid}
    notes: list[str] = []
    for s in rows:
        if not s.uuid or s.parent is not None:
            continue
        if s.kind == "system/compact_boundary":
            if s.logical:
                where = "in this file" if s.logical in by_id else "not in this file"
                logical = f"logicalParentUuid {_short(s.logical)} ({where})"
            else:
                logical = "logicalParentUuid null" if s.has_logical else "no logicalParentUuid"
            notes.append(
                f"compact boundary (line {s.line}) {_short(s.uuid)}: parentUuid null, "
                f"{logical}; status {s.status}"
            )
        else:
            notes.append(
                f"null-parent record (line {s.line}): {s.kind} {_short(s.uuid)} "
                f"({s.summary!r}); status {s.status}"
            )
    for s in rows:
        if s.status not in ("dead", "dead root") or not s.uuid:
            continue
        parent = by_id.get(s.parent) if s.parent else None
        if parent is not None and parent.status in ("dead", "dead root"):
            continue  # inside a branch already described
        where = (
            f"hangs from {_short(s.parent)} ({parent.kind}, {parent.status})"
            if parent is not None
            else "null parent"
        )
        size = _subtree_size(rows, s.uuid)
        notes.append(
            f"abandoned branch at line {s.line} ({s.kind} {_short(s.uuid)} {s.summary!r}): "
            f"{where}; {size} record(s)"
        )
    for status in ("preserved", "summarized"):
        group = [s for s in rows if s.status == status]
        if group:
            notes.append(f"{len(group)} {status} record(s), lines {group[0].line}-{group[-1].line}")
    for s in rows:
        if s.status == "parallel":
            parent = by_id.get(s.parent) if s.parent else None
            notes.append(
                f"parallel-call record off the parent chain, line {s.line}: {s.kind} "
                f"{_short(s.uuid)} ({s.summary}); parent {_short(s.parent)} "
                f"({parent.summary if parent else '?'})"
            )
    sides = [s for s in rows if s.status == "side"]
    if sides:
        kinds = sorted({s.kind for s in sides})
        notes.append(f"{len(sides)} side leaf record(s) off the chain: {', '.join(kinds)}")
    return notes


def _subtree_size(rows: Sequence[Shape], root: str | None) -> int:
    children: dict[str, list[str]] = {}
    for s in rows:
        if s.uuid and s.parent:
            children.setdefault(s.parent, []).append(s.uuid)
    count, todo, seen = 0, [root], set()
    while todo:
        uid = todo.pop()
        if uid is None or uid in seen:
            continue
        seen.add(uid)
        count += 1
        todo.extend(children.get(uid, []))
    return count


def shapes_table(journal: Path, *, metadata: bool = False) -> str:
    """A Markdown table of the records (without the uuid-less metadata records unless asked)."""
    lines = [
        "| line | type | uuid | parentUuid | logicalParentUuid | status | holds |",
        "|---:|---|---|---|---|---|---|",
    ]
    for s in shapes(journal):
        if s.uuid is None and not metadata:
            continue
        logical = _short(s.logical) if s.has_logical else ""
        holds = s.summary.replace("|", "\\|")
        lines.append(
            f"| {s.line} | {s.kind} | {_short(s.uuid) if s.uuid else ''} | "
            f"{_short(s.parent) if s.uuid else ''} | {logical} | {s.status} | {holds} |"
        )
    return "\n".join(lines)


def request_skeleton(request: ModelRequest) -> list[str]:
    """The conversation a model request carried: one line per message, its blocks."""
    lines: list[str] = []
    for message in request.messages:
        content = message.get("content")
        if isinstance(content, str):
            lines.append(f"{message.get('role')}: {content[:60]!r}")
            continue
        parts: list[str] = []
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                text_value = str(block.get("text", ""))
                if text_value.startswith("<system-reminder>"):
                    parts.append("reminder")
                else:
                    parts.append("text " + repr(text_value[:50]))
            elif kind == "tool_use":
                parts.append(f"tool_use {block.get('name')} …{str(block.get('id'))[-4:]}")
            elif kind == "tool_result":
                parts.append(f"tool_result …{str(block.get('tool_use_id'))[-4:]}")
            else:
                parts.append(str(kind))
        lines.append(f"{message.get('role')}: " + "; ".join(parts))
    return lines


def save_recording(
    dest: Path,
    title: str,
    tui: Tui,
    *,
    state_root: Path,
    requests: Iterable[ModelRequest] = (),
    notes: Sequence[str] = (),
) -> None:
    """Saves the session's journals (with subagent folders), the guard's decision log, the
    model requests' conversations and a SHAPES.md describing every journal into ``dest``."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    journals = tui.journals()
    for journal in journals:
        shutil.copy2(journal, dest / journal.name)
        folder = journal.with_suffix("")
        if folder.is_dir():
            shutil.copytree(folder, dest / folder.name)
    log = state_root / "analytics" / "autoplan-guard.jsonl"
    decision_lines = log.read_text(encoding="utf-8").splitlines() if log.is_file() else []
    (dest / "analytics").mkdir()
    (dest / "analytics" / "autoplan-guard.jsonl").write_text(
        "".join(line + "\n" for line in decision_lines), encoding="utf-8"
    )
    gates = state_root / "skill-gates"
    if gates.is_dir():
        shutil.copytree(gates, dest / "skill-gates")
    requests = list(requests)
    with (dest / "model-requests.txt").open("w", encoding="utf-8") as out:
        for number, request in enumerate(requests, 1):
            out.write(f"## main request {number}\n")
            out.writelines(f"  {line}\n" for line in request_skeleton(request))
    parts = [f"# {title}\n"]
    parts.extend(f"{note}\n" for note in notes)
    parts.append(f"\nplangate code that decided: `{Path(plangate.__file__).parent}`\n")
    parts.append("\nCLI runs in the pane:\n")
    parts.extend(f"- `claude {' '.join(argv[1:])}`\n" for argv in tui.launches)
    parts.append("\nGuard decisions (`analytics/autoplan-guard.jsonl`):\n\n")
    for line in decision_lines or ["(none)"]:
        parts.append(f"    {line}\n")
    for journal in journals:
        parts.append(f"\n## {journal.name}\n\n")
        parts.extend(f"- {sentence}\n" for sentence in describe_roots(journal))
        parts.append("\nStatus of a record:\n\n")
        parts.extend(f"- `{name}`: {meaning}\n" for name, meaning in STATUSES.items())
        parts.append("\n")
        parts.append(shapes_table(journal) + "\n")
    (dest / "SHAPES.md").write_text("".join(parts), encoding="utf-8")
