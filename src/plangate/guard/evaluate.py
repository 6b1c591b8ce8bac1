"""One guarded call from payload to decision: read the journal, pick the path, decide.

Imported by the PreToolUse hook only once a call is known to enter a phase, so the cheap
path (every other Read and Agent call) never loads it.
"""

from __future__ import annotations

import os
import sys

from plangate import skill_names
from plangate.autoplan import layout
from plangate.guard import calls, reasons
from plangate.guard.decide import Disarm, Unproven, decide
from plangate.guard.fold import Facts, GuardTracker, facts_of, invocation_window
from plangate.guard.observe import JOURNAL, PAYLOAD, Observation, observe
from plangate.guard.outcome import Refusal
from plangate.guard.state import Installation
from plangate.journal.events import Event, ToolResult, ToolUse
from plangate.journal.owners import project_owners
from plangate.journal.paths import is_owned_path
from plangate.journal.reader import Verdict, read_journal
from plangate.locations import claude_config_dir, journal_index_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FOLD_ENV = "PLANGATE_GUARD_FOLD"
FOLD_CHECK_ENV = "PLANGATE_GUARD_FOLD_CHECK"
"""When set (the guard tests set it), every windowed decision is also made in full and a
difference is a crash (the ``installation`` denial), so the tests prove them equal; when it
is an absolute path, each checked decision also appends a line there."""

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
    skill_dirs = skill_names.skill_dirs(layout.SKILL_NAME, project_dir)
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
    installed = installation(cwd, project_dir)

    def judge(wait_for_current: bool, windowed: bool = True) -> Evaluation:
        try:
            return judged(wait_for_current, windowed)
        except Unproven:
            return judged(wait_for_current, False)

    def judged(wait_for_current: bool, windowed: bool) -> Evaluation:
        seen = observe(
            str(payload["transcript_path"]),
            wait_for_current=wait_for_current,
            **journal_read(payload, project_dir, installed, windowed),
        )
        if seen.code is not None:
            return Evaluation(seen.code, seen.path, seen.version, seen.detail, shapes=seen.shapes)
        assert seen.verdict is not None
        window = seen.verdict.window
        prior: Disarm | None = None
        start = 0
        if window is not None:
            facts = facts_of(window)
            prior, start = facts.snapshot, window.cut_order
        try:
            before, current = split_current(seen, payload, cwd)
            decide(before, current, seen.path == JOURNAL, call, installed, prior, start)
        except Refusal as refusal:
            outcome = Evaluation(
                refusal.code, seen.path, seen.version, refusal.detail, refusal.keys
            )
        else:
            outcome = Evaluation(None, seen.path, seen.version)
        check = os.environ.get(FOLD_CHECK_ENV, "")
        if window is not None and check:
            _check_equal(outcome, judged(wait_for_current, False), check)
        return outcome

    outcome = judge(wait_for_current=False)
    if outcome.path == PAYLOAD and outcome.code is not None and _denies(outcome.code):
        # Allow fast, deny sure. On the payload path the journal may still lack records Claude
        # Code has not flushed: text in the call's own message (a report beside the call is
        # then `publication_unflushed`, which names the real fix), or even the previous
        # message's calls (a close Read not yet written reads as `close_required`). Before a
        # deny, give Claude Code the deadline to journal the call itself, and decide again.
        outcome = judge(wait_for_current=True)
    return outcome


def journal_read(
    payload: dict[str, Any], project_dir: str, installed: Installation, windowed: bool = True
) -> dict[str, Any]:
    """The guard's journal read, as keyword arguments of :func:`observe` and of
    :func:`~plangate.journal.reader.read_journal`, which observe passes them to."""
    return {
        "session_id": str(payload["session_id"]),
        "tool_use_id": str(payload["tool_use_id"]),
        "owners": project_owners(project_dir),
        "config_dir": claude_config_dir(),
        "select": invocation_window,
        "index_dir": journal_index_dir(),
        "tracker": GuardTracker(installed) if windowed and _fold_enabled() else None,
    }


def read_ahead(payload: dict[str, Any]) -> Verdict | None:
    """The first read a phase entry of this call's session would make, decided on by no one:
    it saves the journal index, with the guard's fold (:mod:`plangate.guard.preindex`).
    None when the call's project folder is not usable (the guard would refuse it)."""
    try:
        project_dir = project_dir_of(payload)
    except Refusal:
        return None
    installed = installation(str(payload["cwd"]), project_dir)
    arguments = journal_read(payload, project_dir, installed)
    return read_journal(str(payload["transcript_path"]), **arguments)


def _denies(code: str) -> bool:
    return reasons.disposition(code) in reasons.DENY_DISPOSITIONS


def _fold_enabled() -> bool:
    """``$PLANGATE_GUARD_FOLD=0`` turns the history fold off: every decision is made in full
    (slower on long sessions, the same outcome)."""
    return os.environ.get(FOLD_ENV) != "0"


def _check_equal(windowed: Evaluation, full: Evaluation, trace: str) -> None:
    ours = (windowed.code, windowed.path, windowed.detail, windowed.keys)
    theirs = (full.code, full.path, full.detail, full.keys)
    if ours != theirs:
        raise AssertionError(f"windowed decision {ours} differs from the full one {theirs}")
    if os.path.isabs(trace):
        with open(trace, "a", encoding="utf-8") as handle:
            handle.write(f"windowed {windowed.path} {windowed.code}\n")


def split_current(
    seen: Observation, payload: dict[str, Any], cwd: str
) -> tuple[list[Event], ToolUse]:
    """The events before the current call, and the current call itself. After a windowed
    read the events are the window's, and the guard's fold answers for the rest."""
    assert seen.verdict is not None
    events = seen.verdict.events
    tool_use_id = str(payload["tool_use_id"])
    window = seen.verdict.window
    facts = facts_of(window) if window is not None else None
    check_identities(events)
    if facts is not None and facts.repeated:
        raise Refusal("tool_identity")
    if seen.path == PAYLOAD:
        if facts is not None:
            mentioned = facts.mentions(tool_use_id)
        else:
            mentioned = any(getattr(event, "tool_use_id", None) == tool_use_id for event in events)
        if mentioned:
            raise Refusal("current_mismatch", "the journal has a result for an unwritten call")
        last = events[-1]
        message_id = _open_message(events, facts)
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


def _open_message(events: list[Event], facts: Facts | None = None) -> str | None:
    """The message an unjournaled call may belong to: the last journaled one, unless that
    message already ran a tool (a later message then holds the call)."""
    last = next((e for e in reversed(events) if not isinstance(e, ToolResult)), None)
    if last is None and facts is not None:
        raise Unproven("no message in the window")
    message_id = last.message_id if last is not None else None
    if message_id is None:
        return None
    if facts is not None:
        return None if facts.ran_in(message_id) else message_id
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
