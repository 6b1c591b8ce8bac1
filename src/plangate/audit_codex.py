"""``plangate audit`` of a Codex CLI session (0.171.0; issue 36): the same report as for
Claude Code (:mod:`plangate.audit`), from Codex's own places.

* **the calls**: the session's rollout, read by :func:`plangate.journal.codex.read_rollout`
  (the shell tool as ``Bash``, ``apply_patch``, with their ``call_id``: the ``tool_use_id``
  Codex gives its hooks), every prompt the person typed (``UserPromptSubmit`` runs for each,
  not only a ``$skill``), and each turn's end (``Stop``): a turn is the rollout's
  ``task_started`` up to the next one; it ended when its ``task_complete`` is written (after
  its Stop hooks). A prompt's and a stop's trace line is the one whose hook began inside
  that turn; a call's is the one with its id;
* **the registrations**: every place Codex reads hooks from
  (:func:`plangate.install.codex_places.places`: ``/etc/codex``, ``$CODEX_HOME``'s
  ``hooks.json`` and ``config.toml`` ``[hooks]``, the project's ``.codex/``), each plangate
  handler with its trust: only a trusted (or managed) one runs. One never trusted, edited
  since it was trusted, or in a project Codex does not trust is *registered but skipped*:
  the calls it covers still count, and go unguarded. Codex's matcher is a regular
  expression searched in the tool's name (``*`` or none: every tool); ``Stop`` and
  ``UserPromptSubmit`` ignore it. A hook the trace shows ran earlier in the session and no
  place holds now still counts, with the matcher ``plangate setup --codex`` gives it;
* **the trace and the decision log**: as for Claude Code (a Codex hook's trace line carries
  the payload's ``session_id`` and ``tool_use_id``).
"""

from __future__ import annotations

import os
import re
import tomllib

from plangate import jsonio
from plangate.audit import (
    CODEX,
    PRE_TOOL_USE,
    STOP,
    Call,
    Registered,
    Report,
    Traced,
    answered,
    decided,
    trace_lines,
)
from plangate.errors import ConfigError
from plangate.install import codex_hooks, codex_places
from plangate.journal import codes
from plangate.journal.events import Event, HumanTurn, ToolUse

PROMPT = "UserPromptSubmit"
STARTED, COMPLETE = "task_started", "task_complete"
NOT_RUN = (codex_places.UNTRUSTED, codex_places.MODIFIED)
PROJECT_UNTRUSTED = "the project is not trusted"
ROLLOUT_GLOB_DEPTH = 3  # sessions/YYYY/MM/DD


class Turn:
    """One turn of the session: when it began, and whether it ended (``task_complete``)."""

    __slots__ = ("id", "start", "ended")

    def __init__(self, id: str, start: float, ended: str | None = None) -> None:
        self.id = id
        self.start = start
        self.ended = ended  # when its task_complete was written


def turns(path: str) -> list[Turn]:
    """The rollout's turns, in order (a line that cannot be read is passed over: the
    rollout reader has judged the file already)."""
    from plangate.audit import _seconds

    found: list[Turn] = []
    try:
        with open(path, "rb") as stream:
            for raw in stream:
                if len(raw) > codes.RECORD_MAX_BYTES or b'"event_msg"' not in raw:
                    continue
                try:
                    record = jsonio.loads(raw.decode("utf-8"))
                except (ValueError, UnicodeDecodeError):
                    continue
                if not isinstance(record, dict):
                    continue
                payload = record.get("payload")
                if not isinstance(payload, dict):
                    continue
                kind = payload.get("type")
                if kind == STARTED:
                    at = _seconds(str(record.get("timestamp") or ""))
                    if at is not None:
                        found.append(Turn(str(len(found)), at))
                elif kind == COMPLETE and found:
                    found[-1].ended = str(record.get("timestamp") or "") or "?"
                    turn_id = payload.get("turn_id")
                    if isinstance(turn_id, str):
                        found[-1].id = turn_id
    except OSError:
        return []
    return found


def _trusted_projects(config_text: str) -> set[str]:
    try:
        data = tomllib.loads(config_text)
    except tomllib.TOMLDecodeError:
        return set()
    projects = data.get("projects")
    if not isinstance(projects, dict):
        return set()
    return {
        os.path.realpath(path)
        for path, value in projects.items()
        if isinstance(value, dict) and value.get("trust_level") == "trusted"
    }


def registered(
    codex_home: str, cwd: str, system_dir: str = codex_places.SYSTEM_DIR
) -> list[Registered]:
    """plangate's handlers in every place Codex reads hooks from, each with its trust."""
    try:
        with open(os.path.join(codex_home, codex_hooks.CONFIG_FILE), encoding="utf-8") as stream:
            text = stream.read()
    except (OSError, UnicodeDecodeError):
        text = ""
    try:
        state = codex_hooks.trusted(text)
    except tomllib.TOMLDecodeError:
        state = {}
    project_trusted = bool(_trusted_projects(text) & set(codex_places.project_folders(cwd)))
    found: list[Registered] = []
    for place in codex_places.places(codex_home, cwd, system_dir):
        try:
            regs = codex_places.registrations(place)
        except ConfigError:
            continue  # not readable: Codex reads no hooks from it either (doctor says so)
        for reg in regs:
            trust = codex_places.trust_of(reg, state)
            if place.layer == codex_places.PROJECT and not project_trusted:
                trust = PROJECT_UNTRUSTED
            found.append(Registered(reg.event, reg.matcher, None, reg.module, place.shown, trust))
    return found


def skipped(regs: list[Registered]) -> list[Registered]:
    """The registrations Codex does not run."""
    return [reg for reg in regs if reg.trust in (*NOT_RUN, PROJECT_UNTRUSTED)]


def matcher_covers(matcher: str | None, tool: str) -> bool:
    """Codex's matcher: a regular expression searched in the tool name; ``*`` or none match
    every tool. One that does not compile counts as covering (an audit errs towards asking)."""
    if matcher is None or matcher in ("", "*"):
        return True
    try:
        return re.search(matcher, tool) is not None
    except re.error:
        return True


def covering(regs: list[Registered], event: str, tool: str | None = None) -> list[str]:
    """The hook modules registered for this event (and tool), each once."""
    found: dict[str, None] = {}
    for reg in regs:
        if reg.event != event:
            continue
        if event == PRE_TOOL_USE and tool is not None and not matcher_covers(reg.matcher, tool):
            continue
        found[reg.module] = None
    return list(found)


def earlier(ran: set[tuple[object, object]], regs: list[Registered]) -> list[Registered]:
    """Hooks the trace shows ran in this session that no place holds now, with the matcher
    ``plangate setup --codex`` registers them with."""
    have = {(reg.event, reg.module) for reg in regs}
    found: list[Registered] = []
    for event, module in sorted(ran, key=str):
        if not isinstance(event, str) or not isinstance(module, str) or (event, module) in have:
            continue
        matcher = codex_hooks.TOOL_MATCHER if event == PRE_TOOL_USE else None
        found.append(Registered(event, matcher, None, module, "trace"))
    return found


def _turn_of(at: float | None, all_turns: list[Turn]) -> int | None:
    if at is None:
        return None
    index = None
    for number, turn in enumerate(all_turns):
        if turn.start <= at:
            index = number
    return index


def audit(
    events: list[Event],
    session_id: str,
    rollout: str,
    *,
    project: str,
    state_root: str | None = None,
    codex_home: str | None = None,
    system_dir: str = codex_places.SYSTEM_DIR,
) -> Report:
    """Compare ``events`` (the rollout, read by ``read_rollout``) with the hook-call trace and
    the decision log."""
    from plangate import locations
    from plangate.audit import _seconds

    root = state_root if state_root is not None else locations.state_root()
    home = codex_home if codex_home is not None else codex_hooks.codex_home(os.environ)
    report = Report(session_id, rollout, CODEX)
    regs = registered(home, project, system_dir)
    lines, since = trace_lines(session_id, root)
    regs += earlier({(line.get("ev"), line.get("hook")) for line in lines}, regs)
    report.registered = regs
    report.skipped = skipped(regs)
    report.trace_since = since
    since_s = _seconds(since)
    traced = Traced(lines)
    all_turns = turns(rollout)
    bounds = [turn.start for turn in all_turns[1:]] + [float("inf")]
    found: list[tuple[Call, list[str], int | None]] = []  # the call, its hooks, its turn
    for event in events:
        if isinstance(event, ToolUse):
            call = Call("tool", event.tool_use_id, event.name, event.timestamp, "", [])
            command = (event.input or {}).get("command")
            if isinstance(command, str):
                one = " ".join(command.split())
                call.summary = one if len(one) <= 80 else one[:77] + "..."
            found.append((call, covering(regs, PRE_TOOL_USE, event.name), None))
        elif isinstance(event, HumanTurn):
            text = " ".join((event.text or "").split())
            call = Call("prompt", f"prompt@{event.order}", PROMPT, event.timestamp, text[:60], [])
            where = _turn_of(_seconds(event.timestamp), all_turns)
            found.append((call, covering(regs, PROMPT), where))
    prompted = {where for call, _, where in found if call.kind == "prompt"}
    for index, turn in enumerate(all_turns):
        if turn.ended is not None and index in prompted:  # a refused prompt's turn: no Stop
            call = Call("stop", f"stop@{turn.id}", STOP, turn.ended, "", [])
            found.append((call, covering(regs, STOP), index))
    for call, hooks, number in found:
        if not hooks:
            continue
        if call.kind == "tool":
            missing = answered(call, hooks, None, traced)
            at = _seconds(call.timestamp)
        elif number is None:
            continue  # a prompt before any turn began: not a shape Codex writes, not judged
        else:
            event_name = STOP if call.kind == "stop" else PROMPT
            seen = traced.hooks_between(event_name, all_turns[number].start, bounds[number])
            missing = [hook for hook in hooks if hook not in seen]
            at = all_turns[number].start
        report.checked += 1
        if not missing:
            continue
        call.hooks = missing
        if since is not None and (since_s is None or at is None or at < since_s):
            report.untraced.append(call)
        else:
            report.unguarded.append(call)
    decided(report, events, lines, root)
    return report


# -- finding the session ---------------------------------------------------------------------


def is_rollout(path: str) -> bool:
    """Whether ``path`` is a Codex rollout: its first line is a ``session_meta``."""
    from plangate.journal.codex import meta

    return meta(path, "id") is not None


def rollouts(codex_home: str) -> list[str]:
    """Every rollout under ``$CODEX_HOME/sessions/YYYY/MM/DD/``."""
    top = os.path.join(codex_home, "sessions")
    found: list[str] = []
    for folder, _, names in os.walk(top):
        depth = os.path.relpath(folder, top).count(os.sep) + 1 if folder != top else 0
        if depth != ROLLOUT_GLOB_DEPTH:
            continue
        found += [
            os.path.join(folder, name)
            for name in names
            if name.startswith("rollout-") and name.endswith(".jsonl")
        ]
    return found


def find_rollout(session_id: str, codex_home: str) -> str | None:
    """The rollout of the Codex session ``session_id`` (its file name ends with the id)."""
    tail = f"-{session_id}.jsonl"
    for path in sorted(rollouts(codex_home)):
        if path.endswith(tail):
            return path
    return None


def newest_rollout(project: str, codex_home: str, after: float = 0.0) -> str | None:
    """The newest rollout (modified after ``after``) of a session run in ``project``."""
    from plangate.journal.codex import meta

    here = os.path.realpath(project)
    dated = []
    for path in rollouts(codex_home):
        try:
            when = os.path.getmtime(path)
        except OSError:
            continue
        if when > after:
            dated.append((when, path))
    for _, path in sorted(dated, reverse=True):
        cwd = meta(path, "cwd")
        if cwd is not None and os.path.realpath(cwd) == here:
            return path
    return None
