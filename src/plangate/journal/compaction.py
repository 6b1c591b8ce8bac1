"""Is a journal the reader refused as ``cycle`` really a compaction layout plangate cannot read?

Claude Code links a compact boundary (``system``/``compact_boundary``, null ``parentUuid``) to
the conversation before it through ``logicalParentUuid``, and the reader follows that link
like a parent. When the boundary's logical parent loops back (it names a record that
descends from the boundary) instead of reaching the conversation's root, the reader finds a
loop. The seed calls that ``unrecognized_shape:compaction_unreachable``: an unverified allow,
not the ``cycle`` fallback that ends /autoplan. A loop of ``parentUuid`` links alone is a
damaged journal and stays ``cycle``.

The reader (:func:`plangate.journal.reader.read_journal`) runs it only on a journal it found
a loop in (rare), reading the file again from its start, so that every reader of a journal
(the guard, the contracts, ``plangate journal inspect``) names it the same way. Standard
library and plangate only (hook path).
"""

from __future__ import annotations

from plangate import jsonio

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

_BOUNDARY = b'"compact_boundary"'


def loops_only_through_a_boundary(lines: Iterable[bytes]) -> bool:
    """Every loop of the journal's links (``lines``, its lines) passes through a compact
    boundary's logical-parent link: with ``parentUuid`` links alone the file has no loop, and
    with the boundaries' ``logicalParentUuid`` links it has one."""
    parents: dict[str, str] = {}
    logical: dict[str, str] = {}
    for line in lines:
        _link(line, parents, logical)
    if not logical or _has_loop(parents):
        return False
    return _has_loop({**parents, **logical})


def _link(line: bytes, parents: dict[str, str], logical: dict[str, str]) -> None:
    if b'"uuid"' not in line:
        return
    try:
        record = jsonio.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, jsonio.JSONError):
        return
    if not isinstance(record, dict):
        return
    uuid, parent = record.get("uuid"), record.get("parentUuid")
    if not isinstance(uuid, str):
        return
    if isinstance(parent, str):
        parents[uuid] = parent
    elif (
        parent is None
        and _BOUNDARY in line
        and record.get("type") == "system"
        and record.get("subtype") == "compact_boundary"
        and isinstance(record.get("logicalParentUuid"), str)
    ):
        logical[uuid] = record["logicalParentUuid"]


def _has_loop(links: dict[str, str]) -> bool:
    done: set[str] = set()
    for start in links:
        if start in done:
            continue
        path: set[str] = set()
        current: str | None = start
        while current is not None and current not in done:
            if current in path:
                return True
            path.add(current)
            current = links.get(current)
        done.update(path)
    return False
