"""Closed and published? The close packet was read in full after the phase was entered,
and the report that declares the phase complete was published after it.

A Read counts only for the lines it really delivered, checked against the file's current
lines; Claude Code's "file unchanged" reply counts by following it back to the identical
earlier Read that delivered them.
"""

from __future__ import annotations

import os

from plangate.autoplan import layout
from plangate.decisions import reasons
from plangate.guard import calls
from plangate.guard.artifact_checks import Binding, load_close_packet, read_active
from plangate.guard.state import History, Installation, PhaseState, Refusal
from plangate.journal.events import AssistantText, Event, ToolResult, ToolUse

PLAN_EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit"})
UNFLUSHED_MARK = "(code publication_unflushed"


def require_publication(
    phase: str,
    state: PhaseState,
    events: list[Event],
    history: History,
    binding: Binding,
    current: ToolUse,
    journaled: bool,
    installation: Installation,
    *,
    current_mode: bool,
) -> None:
    packets = [
        path
        for event in events
        if isinstance(event, ToolUse) and event.order >= state.entry_order
        for path, of in [close_packet_of(event, binding, installation)]
        if of == phase
    ]
    if not packets:
        raise Refusal(reasons.CLOSE_REQUIRED, layout.PHASE_NUMBERS[phase])
    packet = packets[-1]
    data, bound = load_close_packet(packet, binding, phase, installation.world)
    checkpoint = state.checkpoints.get(phase)
    if checkpoint is not None and bound.get("checkpoint") != checkpoint:
        raise Refusal(reasons.CLOSE_STALE, "the close packet belongs to an earlier checkpoint")
    close_order = _coverage(packet, data, events, history, binding, installation)
    edits = [
        event
        for event in events
        if isinstance(event, ToolUse)
        and event.name in PLAN_EDIT_TOOLS
        and event.order > close_order
        and _edits_active_plan(event, binding, installation)
    ]
    if any(not history.results_after(edit) for edit in edits):
        raise Refusal(reasons.MUTATION_PENDING)
    if current_mode:
        active = read_active(binding, installation.world)
        if layout.implementation_sha256(active) != bound.get("implementationSha256"):
            changed = any(history.single_success(edit) for edit in edits)
            raise Refusal(
                reasons.CLOSE_EDITS if changed else reasons.CLOSE_STALE,
                "the plan's implementation changed after the close packet",
            )
    from plangate.guard.publication import declares  # only once a close is complete

    reports = [
        event
        for event in events
        if isinstance(event, AssistantText)
        and event.order > close_order
        and event.text is not None
        and declares(event.text, phase)
    ]
    if not reports:
        raise Refusal(reasons.PUBLICATION_MISSING, phase)
    if not current_mode:
        return
    later = list(events) + ([current] if journaled else [])
    current_message = current.message_id
    for report in reports:
        if report.message_id is not None and report.message_id == current_message:
            continue
        if any(
            event.order > report.order
            and (isinstance(event, ToolResult) or event.message_id != report.message_id)
            for event in later
        ):
            return
    repeated = any(
        isinstance(event, ToolResult)
        and event.is_error
        and event.text
        and UNFLUSHED_MARK in event.text
        for event in events
        if event.order > binding.start
    )
    raise Refusal(reasons.PUBLICATION_REPEAT if repeated else reasons.PUBLICATION_UNFLUSHED, phase)


def close_packet_of(
    use: ToolUse, binding: Binding, installation: Installation
) -> tuple[str, str | None]:
    """The one answer to "is this call a Read of one of this invocation's close packets?":
    its resolved path and the packet's phase (``("", None)`` when it is not)."""
    file_path = use.input.get("file_path") if use.name == "Read" and use.input else None
    if not isinstance(file_path, str):
        return "", None
    path = calls.resolve(file_path, installation.cwd)
    if os.path.dirname(os.path.dirname(path)) != binding.artifact_dir:
        return "", None
    phase = calls.is_close_packet(path)
    return (path, phase) if phase is not None else ("", None)


def _coverage(
    packet: str,
    data: bytes,
    events: list[Event],
    history: History,
    binding: Binding,
    installation: Installation,
) -> int:
    """Every line of the packet was delivered by Reads of it; the order of the last one."""
    lines = layout.line_count(data)
    packet_lines = file_lines(data)
    covered: set[int] = set()
    close_order = -1
    for event in events:
        if (
            not isinstance(event, ToolUse)
            or close_packet_of(event, binding, installation)[0] != packet
        ):
            continue
        delivered = delivered_lines(event, packet, packet_lines, history, installation)
        if delivered is None:
            continue
        first, last, order = delivered
        covered.update(range(first, last + 1))
        close_order = max(close_order, order)
    if len(covered) < lines:
        raise Refusal(reasons.CLOSE_INCOMPLETE, f"{len(covered)} of {lines} lines read")
    return close_order


def file_lines(data: bytes) -> list[str] | None:
    """A file's lines as Claude Code's Read counts them (a final newline adds an empty
    line), each without the CR of a CRLF ending; None when it is not UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


def read_window(use: ToolUse) -> tuple[int, int | None] | None:
    tool_input = use.input or {}
    offset, limit = tool_input.get("offset", 1), tool_input.get("limit")
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 1:
        return None
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        return None
    return offset, limit


def delivered_lines(
    use: ToolUse,
    path: str,
    file_lines: list[str] | None,
    history: History,
    installation: Installation,
) -> tuple[int, int, int] | None:
    """The lines ``(first, last)`` a Read of ``path`` really delivered, checked against the
    file's current lines, and the order of the result that delivered them.

    Claude Code answers a Read of unchanged lines it already delivered with a short "file
    unchanged" reply; that reply counts only by following it back to an identical earlier
    Read whose own result delivered the lines.
    """
    window = read_window(use)
    if file_lines is None or window is None:
        return None
    seen: set[str] = set()
    current = use
    answered_at: int | None = None
    while True:
        result = history.single_success(current)
        if result is None or result.file is None or current.tool_use_id in seen:
            return None
        seen.add(current.tool_use_id)
        if answered_at is None:
            answered_at = result.order
        delivered = result.file
        if calls.resolve(delivered.file_path, installation.cwd) != path:
            return None
        if result.is_dedup_reply and delivered.is_dedup_witness:
            earlier = [
                e
                for e in history.events
                if isinstance(e, ToolUse)
                and e.name == "Read"
                and e.order < current.order
                and e.input is not None
                and isinstance(e.input.get("file_path"), str)
                and calls.resolve(e.input["file_path"], installation.cwd) == path
                and read_window(e) == window
            ]
            if not earlier:
                return None
            current = earlier[-1]
            continue
        first, count = delivered.start_line, delivered.num_lines
        if first is None or count is None or delivered.content is None or count < 1:
            return None
        offset, limit = window
        if first != offset or (limit is not None and limit < count):
            return None
        if delivered.total_lines != len(file_lines) or first + count - 1 > len(file_lines):
            return None
        content = delivered.content.split("\n")
        content = [line[:-1] if line.endswith("\r") else line for line in content]
        if content != file_lines[first - 1 : first - 1 + count]:
            return None
        return first, first + count - 1, answered_at


def _edits_active_plan(use: ToolUse, binding: Binding, installation: Installation) -> bool:
    file_path = use.input.get("file_path") if use.input else None
    if not isinstance(file_path, str):
        return use.input is None  # an edit too large to index counts, to be safe
    edited = calls.resolve(file_path, installation.cwd)
    return installation.world.canonical_path(edited) == binding.active


def read_in_full(use: ToolUse, path: str, history: History, installation: Installation) -> bool:
    """A phase-entry Read counts only when its result delivered the file's real lines."""
    try:
        data = installation.world.read_file(path, layout.MAX_ARTIFACT_BYTES + 1)
    except OSError:
        return False
    return delivered_lines(use, path, file_lines(data), history, installation) is not None
