"""One guarded call from payload to decision: read the journal, pick the path, decide.

Imported by the PreToolUse hook only once a call is known to enter a phase, so the cheap
path (every other Read and Agent call) never loads it.
"""

from __future__ import annotations

import os
import sys

from plangate.autoplan import layout
from plangate.guard import calls
from plangate.guard.decide import decide
from plangate.guard.literal_calls import split_literal
from plangate.guard.observe import JOURNAL, PAYLOAD, Observation, observe
from plangate.guard.outcome import Refusal
from plangate.guard.state import Installation
from plangate.journal.events import Event, ToolResult, ToolUse
from plangate.journal.owners import project_owners
from plangate.journal.paths import is_owned_path
from plangate.journal.records import Record
from plangate.locations import claude_config_dir, journal_index_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

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


def installation(cwd: str, project_dir: str) -> Installation:
    plangate = os.path.join(os.path.dirname(sys.executable), "plangate")
    skill_dirs = [
        os.path.join(claude_config_dir(), "skills", layout.SKILL_NAME),
        os.path.join(project_dir, ".claude", "skills", layout.SKILL_NAME),
    ]
    return Installation(plangate, skill_dirs, cwd)


def project_dir_of(payload: dict[str, Any]) -> str:
    """``$CLAUDE_PROJECT_DIR`` (the session's root even after a ``cd``), else the payload cwd."""
    configured = os.environ.get("CLAUDE_PROJECT_DIR")
    project = configured if configured is not None else payload.get("cwd")
    if not is_owned_path(project):
        raise Refusal("hook_input", "CLAUDE_PROJECT_DIR is not an absolute normal path")
    return str(project)


def evaluate(payload: dict[str, Any], call: calls.GuardedCall) -> Evaluation:
    try:
        project_dir = project_dir_of(payload)
    except Refusal as refusal:
        return Evaluation(refusal.code, "none", None, refusal.detail)
    cwd = str(payload["cwd"])
    tool_use_id = str(payload["tool_use_id"])

    def judge(wait_for_current: bool) -> Evaluation:
        seen = observe(
            str(payload["transcript_path"]),
            session_id=str(payload["session_id"]),
            tool_use_id=tool_use_id,
            owners=project_owners(project_dir),
            config_dir=claude_config_dir(),
            select=invocation_window,
            wait_for_current=wait_for_current,
            index_dir=journal_index_dir(),
        )
        if seen.code is not None:
            return Evaluation(seen.code, seen.path, seen.version, seen.detail, shapes=seen.shapes)
        assert seen.verdict is not None
        try:
            before, current = split_current(seen, payload, cwd)
            decide(before, current, seen.path == JOURNAL, call, installation(cwd, project_dir))
        except Refusal as refusal:
            return Evaluation(refusal.code, seen.path, seen.version, refusal.detail, refusal.keys)
        return Evaluation(None, seen.path, seen.version)

    outcome = judge(wait_for_current=False)
    if outcome.code == "publication_missing" and outcome.path == PAYLOAD:
        # Text written in the call's own message may not be in the journal yet; before
        # saying no report exists, give Claude Code the deadline to journal the call itself
        # (a report beside it is then `publication_unflushed`, which names the real fix).
        outcome = judge(wait_for_current=True)
    return outcome


def split_current(
    seen: Observation, payload: dict[str, Any], cwd: str
) -> tuple[list[Event], ToolUse]:
    """The events before the current call, and the current call itself."""
    assert seen.verdict is not None
    events = seen.verdict.events
    tool_use_id = str(payload["tool_use_id"])
    check_identities(events)
    if seen.path == PAYLOAD:
        if any(getattr(event, "tool_use_id", None) == tool_use_id for event in events):
            raise Refusal("current_mismatch", "the journal has a result for an unwritten call")
        last = events[-1]
        message_id = _open_message(events)
        current = ToolUse(
            last.order + 1,
            last.record,
            message_id,
            last.timestamp,
            tool_use_id,
            str(payload["tool_name"]),
            dict(payload["tool_input"]),
        )
        return events, current
    uses = [e for e in events if isinstance(e, ToolUse) and e.tool_use_id == tool_use_id]
    if len(uses) != 1 or uses[0].name != payload["tool_name"]:
        raise Refusal("current_mismatch", "the journal records another call under this id")
    journaled = uses[0]
    compare_inputs(journaled, payload, cwd, seen.version)
    return [e for e in events if e.order < journaled.order], journaled


def _open_message(events: list[Event]) -> str | None:
    """The message an unjournaled call may belong to: the last journaled one, unless that
    message already ran a tool (a later message then holds the call)."""
    message_id = next(
        (e.message_id for e in reversed(events) if not isinstance(e, ToolResult)), None
    )
    if message_id is None:
        return None
    answered = {e.tool_use_id for e in events if isinstance(e, ToolResult)}
    ran = any(
        isinstance(e, ToolUse) and e.message_id == message_id and e.tool_use_id in answered
        for e in events
    )
    return None if ran else message_id


def check_identities(events: list[Event]) -> None:
    orders = [event.order for event in events]
    if not events or any(b <= a for a, b in zip(orders, orders[1:], strict=False)):
        raise Refusal("event_order")
    seen_uses: set[str] = set()
    for event in events:
        if isinstance(event, ToolUse):
            if event.tool_use_id in seen_uses:
                raise Refusal("tool_identity")
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
        raise Refusal("current_mismatch", "the journaled call could not be reloaded")
    ours = _normalized(journaled.name, journaled.input, cwd)
    theirs = _normalized(journaled.name, payload["tool_input"], cwd)
    if ours == theirs:
        return
    missing = set(ours) - set(theirs)
    restricted = {key: ours[key] for key in theirs if key in ours}
    if missing and restricted == theirs and _newer_than_checked(version):
        raise Refusal("unseen_version", ", ".join(sorted(missing)))
    raise Refusal("current_mismatch", "the journal records different input for this call")


def _newer_than_checked(version: str | None) -> bool:
    if version is None:
        return False
    parts = version.split(".")[:3]
    try:
        numbers = tuple(int("".join(ch for ch in part if ch.isdigit()) or "0") for part in parts)
    except ValueError:
        return False
    return numbers > CHECKED_VERSION


def invocation_window(ordered: list[Record]) -> Iterable[Record]:
    """The records the decision needs in full.

    Every plangate Bash call and its results, and everything from the human turn before the
    init that binds the invocation. A re-run init of the same plans (``reused: true``) keeps
    the earlier binding, so the window reaches back over the whole trailing run of inits
    naming the same active plan and restore point.
    """
    chosen: set[int] = set()
    bash_ids: set[str] = set()
    inits: list[tuple[int, tuple[str, ...] | None]] = []
    for position, record in enumerate(ordered):
        for event in record.events:
            if isinstance(event, ToolUse) and event.name == "Bash":
                command = event.input.get("command") if event.input else None
                if command is None or "autoplan" in str(command):
                    bash_ids.add(event.tool_use_id)
                    chosen.add(position)
                    if command is None or " init " in f" {command} ":
                        inits.append((position, _init_pair(command)))
            elif isinstance(event, ToolResult) and event.tool_use_id in bash_ids:
                chosen.add(position)
    earliest = -1
    if inits:
        earliest, pair = inits[-1]
        for position, other in reversed(inits[:-1]):
            if pair is not None and other is not None and other != pair:
                break
            earliest = position
    start = 0
    for position, record in enumerate(ordered):
        if earliest >= 0 and position > earliest:
            break
        if any(event.kind == "human_turn" for event in record.events):
            start = position
    chosen.update(range(start, len(ordered)))
    return [ordered[position] for position in sorted(chosen)]


def _init_pair(command: object) -> tuple[str, ...] | None:
    """The (active plan, restore point) an init command names, when it can be read."""
    words = split_literal(command) if isinstance(command, str) else None
    if words is None or len(words) != 6 or words[1:3] != ["autoplan", "init"]:
        return None
    return (words[4], words[5])
