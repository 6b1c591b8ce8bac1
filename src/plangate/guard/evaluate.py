"""One guarded call from payload to decision: /autoplan's rules as a workflow on the engine.

Imported by the PreToolUse hook only once a call is known to enter a phase, so the cheap
path (every other Read and Agent call) never loads it. :class:`Autoplan` is the workflow
(:mod:`plangate.engine`): every read folds the live chain into the guard's state
(:mod:`plangate.guard.fold`), the window is folded into the invocation's state and the rules
judge it, once; only a deny reached on the payload path waits for Claude Code to journal the
call (a second pass), and is decided again on what it then wrote.
"""

from __future__ import annotations

import os
import sys

from plangate.decisions import reasons
from plangate.engine import decide
from plangate.guard import calls, world
from plangate.guard.decide import Invocation, fold_invocation, rules
from plangate.guard.fold import GuardTracker
from plangate.guard.observe import JOURNAL, PAYLOAD, Chain, JournalRead, Observation
from plangate.guard.state import Installation, Refusal
from plangate.journal.events import Event, ToolResult, ToolUse
from plangate.journal.paths import is_owned_path
from plangate.journal.reader import Verdict
from plangate.locations import claude_config_dir, journal_index_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from plangate.journal.settle import Settle
    from plangate.journal.world import World

CHECKED_VERSION = (2, 1, 332)
"""The newest Claude Code release whose payloads this guard was checked against."""


class Evaluation:
    """The outcome of one guarded call, before it becomes hook output."""

    __slots__ = ("code", "detail", "path", "version", "keys", "shapes")

    def __init__(
        self,
        code: str | None,
        path: str,
        version: str | None,
        detail: str = "",
        keys: list[str] | None = None,
        shapes: list[str] | None = None,
    ) -> None:
        self.code = code
        self.path = path
        self.version = version
        self.detail = detail
        self.keys = keys or []
        self.shapes = shapes or []


def installation(cwd: str, project_dir: str, seen: world.World) -> Installation:
    plangate = os.path.join(os.path.dirname(sys.executable), "plangate")
    return Installation(plangate, seen.skill_dirs(project_dir), cwd, seen)


def project_dir_of(payload: dict[str, Any]) -> str:
    """``$CLAUDE_PROJECT_DIR`` (the session's root even after a ``cd``), else the payload cwd."""
    configured = os.environ.get("CLAUDE_PROJECT_DIR")
    project = configured if configured is not None else payload.get("cwd")
    if not is_owned_path(project):
        raise Refusal(reasons.HOOK_INPUT, "CLAUDE_PROJECT_DIR is not an absolute normal path")
    return str(project)


class Autoplan(JournalRead):
    """/autoplan's seed-000 rules as a workflow on the engine (:mod:`plangate.engine`): the
    guard's read and settle (:class:`JournalRead`), then the fold of the window into the
    invocation's state (:func:`plangate.guard.decide.fold_invocation`) and the rules on it.
    A pass's attempt is ``wait_for_current``; its policy is "allow fast, deny sure"
    (:meth:`again`). Each pass folds the journal afresh, with a new :class:`GuardTracker`."""

    first = False

    def __init__(
        self,
        payload: dict[str, Any],
        call: calls.GuardedCall,
        installed: Installation,
        project_dir: str,
    ) -> None:
        self.payload = payload
        self.call = call
        self.installed = installed
        self.project_dir = project_dir
        self.transcript = str(payload["transcript_path"])
        super().__init__(
            self.transcript,
            session_id=str(payload["session_id"]),
            tool_use_id=str(payload["tool_use_id"]),
            owners=[],  # each pass's (begin)
            config_dir=claude_config_dir(),
            tracker=GuardTracker(installed, self.transcript),  # each pass's (begin)
            index_dir=journal_index_dir(),
        )

    def begin(self, world: World, attempt: bool) -> Settle:
        self.tracker = GuardTracker(self.installed, self.transcript)
        self.owners = world.project_owners(self.project_dir)
        return super().begin(world, attempt)

    def fold(self, seen: Observation, attempt: bool) -> Folded | Evaluation:
        """The invocation's state, or the evaluation a read or the fold itself decides."""
        if seen.code is not None:
            return Evaluation(seen.code, seen.path, seen.version, seen.detail, shapes=seen.shapes)
        chain = seen.chain
        assert chain is not None
        try:
            before, current = split_current(seen, chain, self.payload, self.installed.cwd)
            invocation = fold_invocation(
                before, current, self.installed, chain.snapshot(), chain.start
            )
        except Refusal as refusal:
            return Evaluation(refusal.code, seen.path, seen.version, refusal.detail, refusal.keys)
        return Folded(current, invocation)

    def rules(self, state: Folded | Evaluation, seen: Observation, attempt: bool) -> Evaluation:
        if isinstance(state, Evaluation):
            return state
        if state.invocation is not None:  # None: the invocation is over, nothing to guard
            journaled = seen.path == JOURNAL
            try:
                rules(state.invocation, state.current, journaled, self.call, self.installed)
            except Refusal as refusal:
                return Evaluation(
                    refusal.code, seen.path, seen.version, refusal.detail, refusal.keys
                )
        return Evaluation(None, seen.path, seen.version)

    def again(self, ruling: Evaluation, seen: Observation, attempt: bool) -> bool | None:
        """Allow fast, deny sure. On the payload path the journal may still lack records
        Claude Code has not flushed: text in the call's own message (a report beside the call
        is then ``publication_unflushed``, which names the real fix), or even the previous
        message's calls (a close Read not yet written reads as ``close_required``). Before a
        deny, give Claude Code the deadline to journal the call itself, and decide on that."""
        if attempt or ruling.path != PAYLOAD or ruling.code is None or not _denies(ruling.code):
            return None
        return True


class Folded:
    """The guard's state for the rules: the current call and the invocation's fold (None:
    the invocation is over)."""

    __slots__ = ("current", "invocation")

    def __init__(self, current: ToolUse, invocation: Invocation | None) -> None:
        self.current = current
        self.invocation = invocation


def evaluate(
    payload: dict[str, Any], call: calls.GuardedCall, seen: world.World | None = None
) -> Evaluation:
    """Decide ``call``, reading ``seen`` (:data:`plangate.guard.world.DEFAULT` unless told),
    on the engine (:func:`plangate.engine.decide`)."""
    seen = seen if seen is not None else world.DEFAULT
    try:
        project_dir = project_dir_of(payload)
    except Refusal as refusal:
        return Evaluation(refusal.code, "none", None, refusal.detail)
    installed = installation(str(payload["cwd"]), project_dir, seen)
    outcome: Evaluation = decide(Autoplan(payload, call, installed, project_dir), seen)[0]
    return outcome


def journal_read(
    payload: dict[str, Any], project_dir: str, tracker: GuardTracker
) -> dict[str, Any]:
    """The guard's journal read, as keyword arguments of the reader's (less the selection,
    which is the tracker's)."""
    return {
        "session_id": str(payload["session_id"]),
        "tool_use_id": str(payload["tool_use_id"]),
        "owners": tracker.installation.world.project_owners(project_dir),
        "config_dir": claude_config_dir(),
        "index_dir": journal_index_dir(),
        "tracker": tracker,
    }


def read_ahead(payload: dict[str, Any]) -> Verdict | None:
    """The first read a phase entry of this call's session would make, decided on by no one:
    it saves the journal index, with the guard's fold (:mod:`plangate.guard.preindex`).
    None when the call's project folder is not usable (the guard would refuse it)."""
    try:
        project_dir = project_dir_of(payload)
    except Refusal:
        return None
    seen = world.DEFAULT
    installed = installation(str(payload["cwd"]), project_dir, seen)
    tracker = GuardTracker(installed, str(payload["transcript_path"]))
    arguments = journal_read(payload, project_dir, tracker)
    return seen.read_journal(str(payload["transcript_path"]), select=tracker.select, **arguments)


def _denies(code: str) -> bool:
    return reasons.disposition(code) in reasons.DENY_DISPOSITIONS


def split_current(
    seen: Observation, chain: Chain, payload: dict[str, Any], cwd: str
) -> tuple[list[Event], ToolUse]:
    """The window's events before the current call, and the current call itself (journaled,
    or built from the payload after the last journaled record)."""
    events = chain.events
    tool_use_id = str(payload["tool_use_id"])
    check_identities(events)
    if chain.repeated:
        raise Refusal(reasons.TOOL_IDENTITY)
    if seen.path == PAYLOAD:
        if chain.mentions(tool_use_id):
            raise Refusal(
                reasons.CURRENT_MISMATCH, "the journal has a result for an unwritten call"
            )
        last = events[-1]
        current = ToolUse(
            last.order + 1,
            last.record,
            _open_message(events, chain),
            last.timestamp,
            tool_use_id,
            str(payload["tool_name"]),
            dict(payload["tool_input"]),
        )
        return events, current
    uses = [e for e in events if isinstance(e, ToolUse) and e.tool_use_id == tool_use_id]
    if len(uses) != 1 or uses[0].name != payload["tool_name"]:
        raise Refusal(reasons.CURRENT_MISMATCH, "the journal records another call under this id")
    journaled = uses[0]
    compare_inputs(journaled, payload, cwd, seen.version)
    return [e for e in events if e.order < journaled.order], journaled


def _open_message(events: list[Event], chain: Chain) -> str | None:
    """The message an unjournaled call may belong to: the last journaled one, unless that
    message already ran a tool (a later message then holds the call)."""
    last = next((e for e in reversed(events) if not isinstance(e, ToolResult)), None)
    message_id = last.message_id if last is not None else None
    if message_id is None or chain.ran_in(message_id):
        return None
    return message_id


def check_identities(events: list[Event]) -> None:
    orders = [event.order for event in events]
    if not events or any(b <= a for a, b in zip(orders, orders[1:], strict=False)):
        raise Refusal(reasons.EVENT_ORDER)
    seen_uses: set[str] = set()
    for event in events:
        if isinstance(event, ToolUse):
            if event.tool_use_id in seen_uses:
                raise Refusal(reasons.TOOL_IDENTITY)
            seen_uses.add(event.tool_use_id)


def _normalized(tool_name: str, tool_input: dict[str, Any], cwd: str) -> dict[str, Any]:
    value = dict(tool_input)
    if isinstance(value.get("file_path"), str):
        value["file_path"] = calls.resolve(value["file_path"], cwd)
    if tool_name == "Agent":
        value.pop("run_in_background", None)
    return value


def compare_inputs(
    journaled: ToolUse, payload: dict[str, Any], cwd: str, version: str | None
) -> None:
    """The journal must record the call Claude Code handed the hook."""
    if journaled.input is None:
        raise Refusal(reasons.CURRENT_MISMATCH, "the journaled call could not be reloaded")
    ours = _normalized(journaled.name, journaled.input, cwd)
    theirs = _normalized(journaled.name, payload["tool_input"], cwd)
    if ours == theirs:
        return
    missing = set(ours) - set(theirs)
    restricted = {key: ours[key] for key in theirs if key in ours}
    if missing and restricted == theirs and _newer_than_checked(version):
        raise Refusal(reasons.UNSEEN_VERSION, ", ".join(sorted(missing)))
    raise Refusal(reasons.CURRENT_MISMATCH, "the journal records different input for this call")


def _newer_than_checked(version: str | None) -> bool:
    if version is None:
        return False
    parts = version.split(".")[:3]
    try:
        numbers = tuple(int("".join(ch for ch in part if ch.isdigit()) or "0") for part in parts)
    except ValueError:
        return False
    return numbers > CHECKED_VERSION
