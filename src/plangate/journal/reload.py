"""Pass two: reload chosen records in full, checked against what pass one indexed.

Standard library only (hook path).
"""

from __future__ import annotations

import os

from plangate.journal import codes
from plangate.journal.building import EventBuilder, clean_bash_result
from plangate.journal.events import Event, ToolResult, ToolUse
from plangate.journal.records import Record
from plangate.journal.scan import ScanRefusal, parse_line
from plangate.journal.verdict import Verdict

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable


def reload_records(
    fd: int,
    chosen: Iterable[Record],
    bases: dict[int, int],
    verdict: Verdict,
    retained_max: int,
    counted: bool = True,
) -> Verdict | None:
    """Reload ``chosen`` in full; a record whose light events are not known (``counted``
    False: a windowed read) is checked by its id and slots alone."""
    builder = EventBuilder(full=True)
    retained = 0
    for record in chosen:
        retained += record.length
        if retained > retained_max:
            verdict.retained_bytes = retained
            return verdict.refuse(
                codes.OVERSIZED_INVOCATION,
                "the records this decision needs in full are over the retained-data budget",
            )
        data = os.pread(fd, record.length, record.offset)
        if len(data) != record.length:
            return verdict.refuse(codes.REWRITTEN, "a record changed length after it was indexed")
        try:
            raw = parse_line(data, record.index)
        except ScanRefusal:
            return verdict.refuse(codes.REWRITTEN, "a record no longer parses as it did")
        fresh = Record(record.index, record.offset, record.length, raw)
        events, slots = builder.build(raw, fresh, bases.get(record.index, 0))
        if (
            fresh.uuid != record.uuid
            or slots != record.slots
            or (counted and len(events) != len(record.events))
        ):
            return verdict.refuse(codes.REWRITTEN, "a record changed after it was indexed")
        record.events = events
    verdict.retained_bytes = retained
    return None


def clean_bash_results(events: list[Event]) -> None:
    bash_ids = {e.tool_use_id for e in events if isinstance(e, ToolUse) and e.name == "Bash"}
    if not bash_ids:
        return
    for event in events:
        if isinstance(event, ToolResult) and event.tool_use_id in bash_ids:
            clean_bash_result(event)


def reloader(fd: int, bases: dict[int, int]) -> Callable[[Record], tuple[Event, ...]]:
    """A record's events in full, numbered as its light ones (a tracker's ``reload``)."""

    def reload(record: Record) -> tuple[Event, ...]:
        data = os.pread(fd, record.length, record.offset)
        try:
            raw = parse_line(data, record.index)
        except ScanRefusal:
            return record.events  # the read that reloads it for the decision says why
        fresh = Record(record.index, record.offset, record.length, raw)
        return EventBuilder(full=True).build(raw, fresh, bases.get(record.index, 0))[0]

    return reload
