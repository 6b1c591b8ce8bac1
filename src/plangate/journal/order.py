"""Ownership and causal order: which records belong to this conversation, and in what order.

The conversation's root is found by walking parent links up from the first conversation
record. Exactly three root shapes are accepted:

1. a user message with a null parent;
2. an unbroken chain of SessionStart hook records (attachments, or the ``progress`` records
   Claude Code 2.1.3x wrote) from a null parent down to the first user turn;
3. a compact boundary whose logical parent is not in the file, or is one of its own
   descendants (the preserved segment Claude Code 2.1.3xx copies), only as the file's first
   record with an id (what ``--fork-session`` of a compacted session writes).

Records are then ordered by a stable topological walk from the root over parent links
(compact boundaries hang from their logical parent), taking the smallest file position among
the records that are ready. Timestamps are never used: Claude Code's go backwards.
Standard library only (hook path).
"""

from __future__ import annotations

from plangate.journal import codes
from plangate.journal.paths import fold_pair, realpath_or_none
from plangate.journal.records import Record

ROOT_SHAPE_MAX = 32


class Ownership:
    """The outcome for one owner directory."""

    __slots__ = ("reason", "ordered", "root_shape", "genesis", "owner")

    def __init__(
        self,
        reason: str | None,
        ordered: list[Record],
        root_shape: list[str],
        genesis: bool = False,
        owner: str | None = None,
    ) -> None:
        self.reason = reason
        self.ordered = ordered
        self.root_shape = root_shape
        self.genesis = genesis
        self.owner = owner


def own(records: list[Record], owners: list[str] | None) -> Ownership:
    """Decide ownership against each owner in turn (project dir first, then its worktrees).

    The first owner that owns the journal wins; otherwise the first refusal that is not
    ``foreign_cwd``; otherwise the first. ``owners=None`` judges the content alone, taking the
    root's own folder as the owner.
    """
    first = next((r for r in records if not r.metadata and r.role in ("user", "assistant")), None)
    if first is None:
        return Ownership(None, [], [])
    by_uuid, duplicate = _index(records)
    if duplicate:
        return Ownership(codes.COMPETING_ROOT, [], ["duplicate_uuid"])
    chain = _ancestry(first, by_uuid, records)
    if isinstance(chain, Ownership):
        return chain
    top, genesis = chain
    root_shape = [record.shape for record in top[:ROOT_SHAPE_MAX]]
    reason = _root_checks(top, genesis, records, by_uuid)
    if reason is not None:
        return Ownership(reason, [], root_shape, genesis)
    if owners is None:
        owners = [top[0].cwd or ""]
    outcomes = [_owned_by(top, genesis, owner) for owner in owners]
    chosen = next((o for o in outcomes if o is None), _choose_refusal(outcomes))
    if chosen is not None:
        return Ownership(chosen, [], root_shape, genesis)
    owner = owners[outcomes.index(None)]
    ordered = _causal_order(top[0], records, by_uuid)
    if ordered is None:
        return Ownership(codes.unrecognized("compaction_unreachable"), [], root_shape, genesis)
    return Ownership(None, ordered, root_shape, genesis, owner)


def _choose_refusal(outcomes: list[str | None]) -> str | None:
    for outcome in outcomes:
        if outcome != codes.FOREIGN_CWD:
            return outcome
    return outcomes[0] if outcomes else None


def _index(records: list[Record]) -> tuple[dict[str, Record], bool]:
    by_uuid: dict[str, Record] = {}
    for record in records:
        uuid = record.uuid
        if uuid is None:
            continue
        seen = by_uuid.get(uuid)
        if seen is None:
            by_uuid[uuid] = record
        elif seen.node and record.node:
            return by_uuid, True
        elif record.node:
            by_uuid[uuid] = record
    return by_uuid, False


def _ancestry(
    first: Record, by_uuid: dict[str, Record], records: list[Record]
) -> tuple[list[Record], bool] | Ownership:
    """Root-first chain from the root down to ``first``, and whether the root is a fork genesis."""
    if not first.node:
        return Ownership(first.exclusion_reason(), [], [first.shape])
    chain = [first]
    seen = {first.uuid}
    current = first
    first_with_id = next((record for record in records if record.uuid is not None), None)
    genesis = False
    while current.parent is not None:
        parent = by_uuid.get(current.parent)
        if parent is None:
            if current.via_logical_parent and current is first_with_id:
                genesis = True
                break
            # An ancestor is not written yet: nothing is owned until it is.
            return Ownership(None, [], [])
        if not parent.node:
            return Ownership(parent.exclusion_reason(), [], [parent.shape])
        if parent.uuid in seen:
            # --fork-session of a compacted session (Claude Code 2.1.3xx) copies the preserved
            # segment under the boundary, so the boundary's logical parent is one of its own
            # descendants: the loop closes through the file's first record, which starts the
            # conversation. Any other loop is a cycle.
            boundary = first_with_id
            if boundary is not None and boundary.via_logical_parent and boundary in chain:
                del chain[chain.index(boundary) + 1 :]
                genesis = True
                break
            return Ownership(codes.CYCLE, [], [parent.shape])
        seen.add(parent.uuid)
        chain.append(parent)
        current = parent
    chain.reverse()
    return chain, genesis


def _root_checks(
    top: list[Record], genesis: bool, records: list[Record], by_uuid: dict[str, Record]
) -> str | None:
    root = top[0]
    if not genesis:
        if not root.parent_null or root.via_logical_parent:
            return codes.unrecognized(f"root_parent:{root.shape}")
        for record in top[:-1]:
            if not record.session_start:
                return codes.unrecognized(f"preamble:{record.shape}")
        if top[-1].role != "user" or top[-1].type != "user":
            return codes.unrecognized(f"first_turn:{top[-1].shape}")
    if _other_roots(root, records, by_uuid):
        return codes.COMPETING_ROOT
    return None


def _other_roots(root: Record, records: list[Record], by_uuid: dict[str, Record]) -> bool:
    children: dict[str, list[Record]] | None = None
    for record in records:
        if record is root or not record.node or not record.parent_null:
            continue
        if record.via_logical_parent:
            continue
        if record.role == "user":
            return True
        if record.session_start:
            if children is None:
                children = _children(records)
            if _leads_to_message(record, children):
                return True
    return False


def _leads_to_message(start: Record, children: dict[str, list[Record]]) -> bool:
    frontier = [start]
    seen: set[str] = set()
    while frontier:
        record = frontier.pop()
        if record.uuid is None or record.uuid in seen:
            continue
        seen.add(record.uuid)
        for child in children.get(record.uuid, ()):
            if child.has_message:
                return True
            if child.session_start:
                frontier.append(child)
    return False


def _owned_by(top: list[Record], genesis: bool, owner: str) -> str | None:
    checked = top[:1] if genesis else top
    for record in checked:
        cwd = record.cwd or ""
        ours, theirs = fold_pair(owner, cwd)
        if ours == theirs:
            continue
        real_owner, real_cwd = realpath_or_none(owner), realpath_or_none(cwd)
        if real_owner is not None and real_owner == real_cwd:
            return codes.unrecognized("cwd_spelling")
        return codes.FOREIGN_CWD
    return None


def _children(records: list[Record]) -> dict[str, list[Record]]:
    children: dict[str, list[Record]] = {}
    for record in records:
        if record.node and record.parent is not None:
            children.setdefault(record.parent, []).append(record)
    return children


def _causal_order(
    root: Record, records: list[Record], by_uuid: dict[str, Record]
) -> list[Record] | None:
    """Records reachable from the root, parents before children, file position breaking ties.

    A compact boundary after the root whose logical parent is not in the file (Claude Code's
    automatic compaction can point at a record it never wrote) starts a segment that joins
    the order at its file position. None when a compact boundary's records cannot be reached
    from the root at all (its logical parent loops back).
    """
    starts = {
        record.index
        for record in records
        if record.node
        and record.via_logical_parent
        and record.index > root.index
        and record.parent not in by_uuid
    }
    ordered = _file_order(root, records, starts)
    if ordered is None:
        ordered = _walk(root, records, starts)
    placed = {record.index for record in ordered}
    for record in records:
        unreached = record.node and record.via_logical_parent and record.index not in placed
        if unreached and record.index > root.index:
            return None
    return ordered


def _file_order(root: Record, records: list[Record], starts: set[int]) -> list[Record] | None:
    """The walk's order when every parent comes before its children in the file, as Claude
    Code writes them: then it is file order. None when some placed record's child comes
    before it in the file, which needs the walk itself."""
    ordered: list[Record] = []
    placed: set[str] = set()
    waiting: list[Record] = []
    for record in records:
        starts_here = record is root or record.index in starts
        if not starts_here and not (record.node and record.parent in placed):
            if record.node and record.parent is not None:
                waiting.append(record)
            continue
        ordered.append(record)
        if record.uuid is not None:
            placed.add(record.uuid)
    if any(record.parent in placed for record in waiting):
        return None
    return ordered


def _walk(root: Record, records: list[Record], starts: set[int]) -> list[Record]:
    """A stable topological walk from the root: of the records whose parent is placed, the
    one earliest in the file comes next."""
    import heapq  # only for journals whose children precede their parents in the file

    children = _children(records)
    ready = [(root.index, root)]
    ready += [(record.index, record) for record in records if record.index in starts]
    heapq.heapify(ready)
    ordered: list[Record] = []
    placed: set[int] = set()
    while ready:
        _, record = heapq.heappop(ready)
        if record.index in placed:
            continue
        placed.add(record.index)
        ordered.append(record)
        for child in children.get(record.uuid or "", ()):
            if child.index not in placed:
                heapq.heappush(ready, (child.index, child))
    return ordered


def extend_order(
    placed: set[str], known: set[str], unresolved: set[str], appended: list[Record]
) -> list[Record] | None:
    """The causal order of records appended after an ordered journal, or None when it may
    differ from what :func:`own` would give for the whole file.

    ``placed`` are the uuids already in the order, ``known`` every uuid the earlier records
    carry and ``unresolved`` the logical parents of compact boundaries that start a segment.
    Every earlier record has a smaller file position, so the walk of :func:`_causal_order`
    places all of them before any appended one; the appended records then follow in the
    same walk among themselves, which is file order while each parent comes before its
    children (see :func:`_file_order`). A repeated id, another root, a new compact boundary,
    an id an earlier boundary was waiting for, or a record whose parent is not placed
    before it all need the full read instead. ``placed`` grows by the appended records.
    """
    fresh: set[str] = set()
    ordered: list[Record] = []
    for record in appended:
        uuid = record.uuid
        if uuid is not None:
            if uuid in known or uuid in fresh or uuid in unresolved:
                return None
            fresh.add(uuid)
        if not record.node:
            continue
        if uuid is None or record.parent_null or record.via_logical_parent:
            return None  # another root or a new segment
        if record.parent not in placed:
            return None  # a parent not placed before it (or not written yet)
        ordered.append(record)
        placed.add(uuid)
    return ordered
