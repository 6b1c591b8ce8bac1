"""Ownership and causal order: which records belong to this conversation, and in what order.

The conversation is the live chain (:mod:`.chain`): the anchor's ancestry and the records
hanging from it that belong to the same turns. Its top must have one of three shapes:

1. a user message with a null parent;
2. an unbroken chain of SessionStart hook records (attachments, or the ``progress`` records
   Claude Code 2.1.3x wrote) from a null parent down to the first user turn;
3. a compact boundary whose logical parent is missing or null ("Summarize from here" on the
   first prompt, an automatic compaction pointing at a record never written), or one of its
   own descendants (the preserved segment ``--fork-session`` of a compacted session copies).

Records are then ordered by a stable topological walk from the top over parent links
(compact boundaries hang from their logical parent), taking the smallest file position among
the records that are ready. Timestamps are never used: Claude Code's go backwards.
Standard library only (hook path).
"""

from __future__ import annotations

from plangate.journal import codes
from plangate.journal.chain import climb, find_anchor, find_loop, fork_genesis, gather, is_boundary
from plangate.journal.compact import Uncompacted
from plangate.journal.paths import fold_pair, realpath_or_none
from plangate.journal.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Container

    from plangate.journal.index import Placed

ROOT_SHAPE_MAX = 32


class Ownership:
    """The outcome for one owner directory. ``dropped`` counts the main-session records the
    live chain does not hold, by reason (:data:`plangate.journal.chain.DROP_REASONS`);
    ``anchor`` is the record the chain was followed up from."""

    __slots__ = ("reason", "ordered", "root_shape", "genesis", "owner", "dropped", "anchor")

    def __init__(
        self,
        reason: str | None,
        ordered: list[Record],
        root_shape: list[str],
        genesis: bool = False,
        owner: str | None = None,
        dropped: dict[str, int] | None = None,
        anchor: Record | None = None,
    ) -> None:
        self.reason = reason
        self.ordered = ordered
        self.root_shape = root_shape
        self.genesis = genesis
        self.owner = owner
        self.dropped = dropped if dropped is not None else {}
        self.anchor = anchor


def own(
    records: list[Record],
    owners: list[str] | None,
    tool_use_id: str | None = None,
    foreign: Container[str] | None = None,
) -> Ownership:
    """Decide ownership against each owner in turn (project dir first, then its worktrees).

    The chain is followed up from the record of ``tool_use_id`` (the current call), else from
    the newest conversation record. The first owner that owns the journal wins; otherwise
    the first refusal that is not ``foreign_cwd``; otherwise the first. ``owners=None``
    judges the content alone, taking the top's own folder as the owner. ``foreign`` are the
    ids of records of another session in the file: a chain through one is refused.
    """
    first = next((r for r in records if not r.metadata and r.role in ("user", "assistant")), None)
    if first is None:
        return Ownership(None, [], [])
    by_uuid, duplicate = _index(records)
    if duplicate:
        return Ownership(codes.COMPETING_ROOT, [], ["duplicate_uuid"])
    genesis_record = fork_genesis(records, by_uuid)
    looped = find_loop(records, by_uuid, genesis_record)
    if looped is not None:
        return Ownership(codes.CYCLE, [], [looped.shape])
    anchor = find_anchor(records, tool_use_id)
    if anchor is None:
        return Ownership(first.exclusion_reason(), [], [first.shape])
    spine = climb(anchor, by_uuid, genesis_record, foreign or set())
    if spine.foreign:
        return Ownership(codes.COMPETING_ROOT, [], ["another_session"])
    if spine.waiting:
        return Ownership(None, [], [])  # an ancestor is not written yet: nothing owned until it is
    if spine.blocked_by is not None:
        blocked = spine.blocked_by
        return Ownership(blocked.exclusion_reason(), [], [blocked.shape])
    top = spine.records[-1]
    genesis = is_boundary(top)
    head = _head(spine.records)
    if any(record.tail for record in head[:-1]):
        # The riders may stand above the first turn, where each one's shape is judged.
        raise Uncompacted("event-less records ride on the conversation's preamble")
    root_shape = [record.shape for record in head[:ROOT_SHAPE_MAX]]
    reason = _root_checks(head, genesis)
    if reason is not None:
        return Ownership(reason, [], root_shape, genesis)
    live = gather(records, spine.records, by_uuid)
    if live.growing:
        return Ownership(codes.COMPETING_ROOT, [], root_shape, genesis, dropped=live.dropped)
    if owners is None:
        owners = [top.cwd or ""]
    outcomes = [_owned_by(head, genesis, owner) for owner in owners]
    chosen = next((o for o in outcomes if o is None), _choose_refusal(outcomes))
    if chosen is not None:
        return Ownership(chosen, [], root_shape, genesis, dropped=live.dropped)
    owner = owners[outcomes.index(None)]
    chosen_records = [record for record in records if record.index in live.indices]
    ordered = _causal_order(top, chosen_records)
    return Ownership(None, ordered, root_shape, genesis, owner, live.dropped, anchor)


def _head(spine: list[Record]) -> list[Record]:
    """The top of the chain down to its first conversation record, top first."""
    head: list[Record] = []
    for record in reversed(spine):
        head.append(record)
        if record.role in ("user", "assistant"):
            break
    return head


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


def _root_checks(head: list[Record], genesis: bool) -> str | None:
    if genesis:
        return None
    root = head[0]
    if not root.parent_null or root.via_logical_parent:
        return codes.unrecognized(f"root_parent:{root.shape}")
    for record in head[:-1]:
        if not record.session_start:
            return codes.unrecognized(f"preamble:{record.shape}")
    last = head[-1]
    if last.role != "user" or last.type != "user":
        return codes.unrecognized(f"first_turn:{last.shape}")
    return None


def _owned_by(head: list[Record], genesis: bool, owner: str) -> str | None:
    checked = head[:1] if genesis else head
    for record in checked:
        cwd = record.cwd or ""
        ours, theirs = fold_pair(owner, cwd)
        if ours == theirs:
            continue
        real_owner, real_cwd = realpath_or_none(owner), realpath_or_none(cwd)
        if real_owner is not None and real_owner == real_cwd:
            return codes.unrecognized(codes.CWD_SPELLING)
        return codes.FOREIGN_CWD
    return None


def _children(records: list[Record]) -> dict[str, list[Record]]:
    children: dict[str, list[Record]] = {}
    for record in records:
        if record.node and record.parent is not None:
            children.setdefault(record.parent, []).append(record)
    return children


def _causal_order(top: Record, live: list[Record]) -> list[Record]:
    """The live records (a tree under ``top``, in file order), parents before children, file
    position breaking ties."""
    ordered = _file_order(top, live)
    if ordered is None and any(record.tail for record in live):
        # A walk may put records between an owner and its riders.
        raise Uncompacted("the live records are not in file order")
    return ordered if ordered is not None else _walk(top, live)


def _file_order(root: Record, records: list[Record]) -> list[Record] | None:
    """The walk's order when every parent comes before its children in the file, as Claude
    Code writes them: then it is file order. None when some placed record's child comes
    before it in the file, which needs the walk itself."""
    ordered: list[Record] = []
    placed: set[str] = set()
    waiting: list[Record] = []
    for record in records:
        if record is not root and not (record.node and record.parent in placed):
            if record.node and record.parent is not None:
                waiting.append(record)
            continue
        ordered.append(record)
        if record.uuid is not None:
            placed.add(record.uuid)
    if any(record.parent in placed for record in waiting):
        return None
    return ordered


def _walk(root: Record, records: list[Record]) -> list[Record]:
    """A stable topological walk from the root: of the records whose parent is placed, the
    one earliest in the file comes next."""
    import heapq  # only for journals whose children precede their parents in the file

    children = _children(records)
    ready = [(root.index, root)]
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
    placed: Placed | set[str],
    known: Placed | set[str],
    unresolved: set[str],
    appended: list[Record],
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
