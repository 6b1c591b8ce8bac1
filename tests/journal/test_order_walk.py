"""The causal order of the live chain equals the stable topological walk from its top,
however the file orders parents and children (the reader takes file order when parents come
first). Compact boundaries hang from their logical parent."""

from __future__ import annotations

import heapq

from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.journal.order import _causal_order
from plangate.journal.records import Record

STAMP = "2026-11-29T19:37:45.000Z"


def reference_walk(root: Record, records: list[Record]) -> list[int]:
    """The walk as specified: of the records whose parent is placed, the earliest next."""
    children: dict[str, list[Record]] = {}
    for record in records:
        if record.node and record.parent is not None:
            children.setdefault(record.parent, []).append(record)
    ready = [(root.index, root)]
    placed: list[int] = []
    while ready:
        _, record = heapq.heappop(ready)
        if record.index in placed:
            continue
        placed.append(record.index)
        for child in children.get(record.uuid or "", ()):
            heapq.heappush(ready, (child.index, child))
    return placed


def make(index: int, uuid: str, parent: str | None, *, boundary: bool = False) -> Record:
    raw: dict[str, object] = {
        "uuid": uuid,
        "parentUuid": None if boundary else parent,
        "cwd": "/home/user/project",
        "timestamp": STAMP,
        "isSidechain": False,
        "sessionId": "s",
        "type": "system" if boundary else "user",
    }
    if boundary:
        raw.update(subtype="compact_boundary", logicalParentUuid=parent)
    else:
        raw["message"] = {"role": "user", "content": "x"}
    return Record(index, 0, 1, raw)


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_the_order_is_the_walk_for_any_file_order(data: st.DataObject) -> None:
    size = data.draw(st.integers(min_value=1, max_value=14))
    parents: list[str | None] = [None]
    boundaries: set[int] = set()
    for node in range(1, size):
        parents.append(f"n{data.draw(st.integers(min_value=0, max_value=node - 1))}")
        if data.draw(st.booleans()):
            boundaries.add(node)  # hangs from its logical parent
    positions = data.draw(st.permutations(range(size)))
    records = sorted(
        (
            make(positions[node], f"n{node}", parents[node], boundary=node in boundaries)
            for node in range(size)
        ),
        key=lambda record: record.index,
    )
    root = next(record for record in records if record.uuid == "n0")
    ordered = _causal_order(root, records)
    assert [record.index for record in ordered] == reference_walk(root, records)
