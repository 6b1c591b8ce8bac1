"""The live conversation: the records Claude Code itself would send to the model.

Claude Code 2.1.332 keeps every record it ever wrote in the journal, including what the
person abandoned, and picks the conversation by walking parent links up from the newest
record. The reader does the same (seen in real interactive sessions, ``docs/journal-reading.md``):

1. **Anchor.** The record holding the current tool call (the hook payload's ``tool_use_id``),
   or, when that call is not journaled yet or there is no call (Stop hooks, ``journal
   inspect``), the newest conversation record (a user or assistant message of the main
   session) in file order.
2. **Spine.** From the anchor, parent links up. A compact boundary hangs from its
   ``logicalParentUuid`` when that record is in the file; a boundary whose logical parent is
   missing or null ("Summarize from here" on the first prompt, or an automatic compaction
   pointing at a record never written) is the top, and so is a null-parent record.
3. **Side records.** Records hanging from the spine that belong to the same turns: the
   results of its tool calls, the other blocks of a message written one record per block
   (parallel tool calls: Claude Code chains the blocks and hangs each result from its own
   block, and 2.1.3x hung blocks and results from hook progress records), attachments,
   progress and system records. A side subtree ends at a record that starts a branch of its
   own: a user message that is not a tool result (a prompt, or an interruption notice) or a
   compact boundary. That record and everything under it is abandoned.
4. **Dropped.** Every other record of the main session is dropped, with its reason:
   ``abandoned_branch`` (a rewound or interrupted prompt and what followed it),
   ``summarized`` (what a compaction replaced: the messages "Summarize from here" took
   away, or the conversation before a boundary the chain stops at), ``abandoned_root``
   (another null-parent conversation: an interrupted first prompt, or a first prompt rewound
   and edited) and ``unreachable`` (an ancestor is not written yet).

Claude Code cannot tell two writers apart, so the reader refuses what it could not pick
from: an abandoned message written after the live chain went on past the point it branched
from (two processes appending to one session) is ``competing_root``. Standard library only
(hook path).
"""

from __future__ import annotations

from plangate.journal.events import ToolResult, ToolUse
from plangate.journal.joined import Joined
from plangate.journal.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Container

ABANDONED_BRANCH = "abandoned_branch"
ABANDONED_ROOT = "abandoned_root"
SUMMARIZED = "summarized"
UNREACHABLE = "unreachable"

DROP_REASONS = (ABANDONED_BRANCH, SUMMARIZED, ABANDONED_ROOT, UNREACHABLE)


def is_boundary(record: Record) -> bool:
    return record.type == "system" and record.subtype == "compact_boundary"


def starts_branch(record: Record) -> bool:
    """A record that begins a branch of its own when it hangs off the chain: a user message
    that is not a tool result, or a compact boundary."""
    if is_boundary(record):
        return True
    if record.role != "user" or not record.has_message:
        return False
    return not any(type(event) is ToolResult for event in record.events)


def find_anchor(records: list[Record], tool_use_id: str | None) -> Record | None:
    """The record of the current call, else the newest conversation record."""
    if tool_use_id is not None:
        holder = record_of_call(records, tool_use_id)
        if holder is not None:
            return holder
    return newest_conversation(records)


def record_of_call(records: list[Record], tool_use_id: str) -> Record | None:
    for record in reversed(records):
        if record.node and record.role == "assistant" and _holds(record, tool_use_id):
            return record
    return None


def newest_conversation(records: list[Record]) -> Record | None:
    for record in reversed(records):
        if record.node and record.conversation:
            return record
    return None


def fork_genesis(records: list[Record], by_uuid: dict[str, Record]) -> Record | None:
    """The file's first record with an id when it is a compact boundary whose logical parent
    is one of its own descendants: ``--fork-session`` of a compacted session (Claude Code
    2.1.3xx) copies the preserved segment under the boundary. Its link up is not followed."""
    first = next((record for record in records if record.uuid is not None), None)
    if first is None or not first.via_logical_parent:
        return None
    seen: set[int] = set()
    current = by_uuid.get(first.parent or "")
    while current is not None and current.index not in seen:
        if current is first:
            return first
        seen.add(current.index)
        current = by_uuid.get(current.parent) if current.parent is not None else None
    return None


def find_loop(
    records: list[Record], by_uuid: dict[str, Record], genesis: Record | None
) -> Record | None:
    """A record on a loop of parent links anywhere in the file, or None."""
    state: dict[int, int] = {}  # 1: on the path being walked, 2: known to end
    for record in records:
        if record.uuid is None or record.index in state:
            continue
        path: list[Record] = []
        current: Record | None = record
        while current is not None:
            seen = state.get(current.index)
            if seen == 2:
                break
            if seen == 1:
                return current
            state[current.index] = 1
            path.append(current)
            if current is genesis or current.parent is None:
                break
            current = by_uuid.get(current.parent)
        for walked in path:
            state[walked.index] = 2
    return None


class Spine:
    """The anchor's ancestry, anchor first, and why it could not be followed (if so)."""

    __slots__ = ("records", "waiting", "blocked_by", "foreign")

    def __init__(
        self,
        records: list[Record],
        waiting: bool = False,
        blocked_by: Record | None = None,
        foreign: bool = False,
    ) -> None:
        self.records = records
        self.waiting = waiting  # an ancestor is not written yet
        self.blocked_by = blocked_by  # an ancestor that is not a main-session record
        self.foreign = foreign  # an ancestor is another session's record


def climb(
    anchor: Record, by_uuid: dict[str, Record], genesis: Record | None, foreign: Container[str]
) -> Spine:
    spine = [anchor]
    current = anchor
    while current.parent is not None and current is not genesis:
        parent = by_uuid.get(current.parent)
        if parent is None:
            if current.parent in foreign:
                return Spine(spine, foreign=True)
            if current.via_logical_parent:
                break  # the boundary's logical parent was never written: it is the top
            return Spine(spine, waiting=True)
        if not parent.node:
            return Spine(spine, blocked_by=parent)
        spine.append(parent)
        current = parent
    return Spine(spine)


class Live:
    """Which records the conversation holds, which it dropped and why."""

    __slots__ = ("indices", "dropped", "growing")

    def __init__(self) -> None:
        self.indices: set[int] = set()
        self.dropped: dict[str, int] = {}
        self.growing = False  # an abandoned message was written after the chain went on


def gather(records: list[Record], spine: list[Record], by_uuid: dict[str, Record]) -> Live:
    """The live records (spine and side records) and the accounting of the rest."""
    live = Live()
    top = spine[-1]
    live.indices = {record.index for record in spine}
    went_on: dict[int, Record] = {}  # spine record -> its spine child
    for child, parent in zip(spine, spine[1:], strict=False):
        went_on[parent.index] = child
    children: dict[str, list[Record]] = {}
    for record in records:
        if record.node and record.parent is not None and record is not top:
            children.setdefault(record.parent, []).append(record)
    dead: dict[int, tuple[str, int | None]] = {}
    stack = list(spine)
    while stack:
        record = stack.pop()
        for child in children.get(record.uuid or "", ()):
            if child.index in live.indices or child.index in dead:
                continue
            if not starts_branch(child):
                live.indices.add(child.index)
                stack.append(child)
                continue
            next_on_chain = went_on.get(record.index)
            reason = ABANDONED_BRANCH
            if next_on_chain is not None and next_on_chain.via_logical_parent:
                reason = SUMMARIZED
            limit = next_on_chain.index if next_on_chain is not None else None
            if record.tail and next_on_chain is not None:
                # Riders (plangate.journal.compact) stand between the record and a child
                # hung from its tail: the chain goes on through them only when its next
                # record hangs there too, and then a branch off the record itself is left
                # where the first rider goes on.
                if child.hung_from_tail and not next_on_chain.hung_from_tail:
                    reason, limit = ABANDONED_BRANCH, None
                elif not child.hung_from_tail and next_on_chain.hung_from_tail:
                    reason, limit = ABANDONED_BRANCH, record.tail_first
            _drop_subtree(child, children, dead, (reason, limit))
    other_root = SUMMARIZED if is_boundary(top) else ABANDONED_ROOT
    for record in records:
        if record.node and record.index not in live.indices and record.index not in dead:
            _drop_tree(record, by_uuid, dead, live.indices, (other_root, top.index))
    for record in records:
        outcome = dead.get(record.index)
        if outcome is None:
            continue
        reason, limit = outcome
        live.dropped[reason] = live.dropped.get(reason, 0) + 1 + record.tail
        if limit is not None and record.index > limit and record.conversation:
            live.growing = True
    return live


def _drop_subtree(
    start: Record,
    children: dict[str, list[Record]],
    dead: dict[int, tuple[str, int | None]],
    outcome: tuple[str, int | None],
) -> None:
    stack = [start]
    while stack:
        record = stack.pop()
        if record.index in dead:
            continue
        dead[record.index] = outcome
        stack.extend(children.get(record.uuid or "", ()))


def _drop_tree(
    record: Record,
    by_uuid: dict[str, Record],
    dead: dict[int, tuple[str, int | None]],
    live: set[int],
    other_root: tuple[str, int | None],
) -> None:
    """Drop a record of another tree and its ancestors, with the reason its top gives."""
    path: list[Record] = []
    seen: set[int] = set()
    current = record
    while True:
        known = dead.get(current.index)
        if known is not None:
            outcome = known
            break
        if current.index in live:
            outcome = (ABANDONED_BRANCH, None)
            break
        path.append(current)
        seen.add(current.index)
        if current.parent is None:
            outcome = other_root
            break
        parent = by_uuid.get(current.parent)
        if parent is not None and parent.index in seen:
            outcome = other_root  # the fork genesis's link back into its own copy
            break
        if parent is None or not parent.node:
            missing = parent is None and not current.via_logical_parent
            outcome = (UNREACHABLE, None) if missing else other_root
            break
        current = parent
    for walked in path:
        dead[walked.index] = outcome


class Tip:
    """What a journal index keeps of the chain's end, so that a later read can prove that
    appended records extend the same chain: ``frontier`` maps the anchor and its live
    descendants to their parents (file order), ``uses`` their tool calls to them, ``calls``
    every tool call id of the main session's records (:class:`~.joined.Joined`: one string,
    which a saved index only adds to), ``newest`` the newest conversation record."""

    __slots__ = ("frontier", "uses", "calls", "newest")

    def __init__(
        self,
        frontier: dict[str, str | None],
        uses: dict[str, str],
        calls: Joined,
        newest: str | None,
    ) -> None:
        self.frontier = frontier
        self.uses = uses
        self.calls = calls
        self.newest = newest


def tip_of(records: list[Record], ordered: list[Record], anchor: Record) -> Tip:
    """The tip after a full read: ``ordered`` is the live chain in causal order."""
    frontier: dict[str, str | None] = {anchor.uuid or "": anchor.parent}
    for record in ordered:
        if record.parent in frontier and record.uuid is not None:
            frontier.setdefault(record.uuid, record.parent)
    calls = Joined()
    newest: str | None = None
    for record in records:
        if not record.node:
            continue
        if record.conversation:
            newest = record.uuid
        for event in record.events:
            if type(event) is ToolUse:
                calls.add(event.tool_use_id)  # one it cannot keep only costs a full read
    return Tip(frontier, _uses(ordered, frontier), calls, newest)


def extend_tip(tip: Tip, appended: list[Record], tool_use_id: str | None) -> Tip | None:
    """The tip once ``appended`` (records the order extension placed, in file order) are
    read, or None when the full read's chain could differ: its anchor would not descend from
    the earlier anchor, or an appended record would start a branch off the chain."""
    by_uuid = {record.uuid: record for record in appended if record.uuid is not None}
    anchor: str | None = None
    if tool_use_id is not None:
        found = record_of_call(appended, tool_use_id)
        if found is not None:
            anchor = found.uuid
        elif tool_use_id in tip.uses:
            anchor = tip.uses[tool_use_id]
        elif tool_use_id in tip.calls:
            return None  # the call is an earlier record off the tip: read in full
    latest = newest_conversation(appended)
    newest = latest.uuid if latest is not None else tip.newest
    if anchor is None:
        anchor = newest
    if anchor is None:
        return None
    path: set[str] = set()
    current: str | None = anchor
    while current is not None and current in by_uuid:
        path.add(current)
        current = by_uuid[current].parent
    if current is None or current not in tip.frontier:
        return None
    if any(starts_branch(record) and record.uuid not in path for record in appended):
        return None
    frontier: dict[str, str | None] = {}
    if anchor in tip.frontier:
        frontier[anchor] = tip.frontier[anchor]
        for uuid, parent in tip.frontier.items():
            if parent in frontier:
                frontier.setdefault(uuid, parent)
    else:
        frontier[anchor] = by_uuid[anchor].parent
    for record in appended:
        if record.parent in frontier and record.uuid is not None:
            frontier.setdefault(record.uuid, record.parent)
    uses = {use: uuid for use, uuid in tip.uses.items() if uuid in frontier}
    uses.update(_uses(appended, frontier))
    calls = Joined(tip.calls.text)
    for record in appended:
        for event in record.events:
            if type(event) is ToolUse:
                calls.add(event.tool_use_id)
    return Tip(frontier, uses, calls, newest)


def _holds(record: Record, tool_use_id: str) -> bool:
    return any(type(e) is ToolUse and e.tool_use_id == tool_use_id for e in record.events)


def _uses(records: list[Record], frontier: dict[str, str | None]) -> dict[str, str]:
    uses: dict[str, str] = {}
    for record in records:
        uuid = record.uuid
        if uuid is not None and uuid in frontier:
            for event in record.events:
                if type(event) is ToolUse:
                    uses[event.tool_use_id] = uuid
    return uses
