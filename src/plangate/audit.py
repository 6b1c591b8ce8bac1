"""What plangate decided in one session, beside what happened: ``plangate audit``.

A session's journal says which calls the model made, which slash commands the person typed
and where the model stopped. The hook-call trace (:mod:`plangate.hook_io.trace`) says which
of them a plangate hook answered, and how. :func:`audit` lines them up:

* **unguarded**: a call some registered plangate hook covers (its event, its matcher, its
  ``if`` condition; read from the settings files of every scope and the plugin) that has no
  trace line from that hook: the hooks were switched off (``disableAllHooks``), removed,
  crashed before they answered, or were killed at their timeout;
* **approvals**: the decision log's approval lines (``<state root>/analytics/
  autoplan-guard.jsonl``) given while this session ran, and who gave each (a person's turn
  in the session, or a ``plangate approve`` command);
* **refusals**: every trace line of the session whose hook refused, asked, or held a stop,
  with its code.

A call made before the trace reaches back (the trace keeps two generations of
:data:`~plangate.hook_io.trace.ROTATE_BYTES`; or plangate was older then) is counted as
**untraced**, not unguarded. Registrations are read as they are now: hooks removed from a
settings file are still expected when the trace shows they ran earlier in the session.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from typing import Any

from plangate import hook_registry, locations
from plangate.hook_io import trace
from plangate.journal.events import EndTurn, Event, HumanTurn, ToolResult, ToolUse

PRE_TOOL_USE = "PreToolUse"
EXPANSION = "UserPromptExpansion"
STOP = "Stop"
MANAGED_SETTINGS = "/etc/claude-code/managed-settings.json"
CLAUDE_CODE, CODEX = "claude-code", "codex"
"""The agent a session ran in (``Report.agent``); Codex's audit is :mod:`plangate.audit_codex`."""
APPROVAL_BY = {
    "human": "a person's turn in the session",
    "command": "a `plangate approve` command",
    "typed": "a person's typed command",
}
#: A typed command's expansion hook runs before its prompt is journaled; this much earlier,
#: and a stop's hook this much after the turn's end, still count as its trace (seconds).
EXPANSION_LEAD_S = 120.0
STOP_LAG_S = 120.0
UNKEYED_S = 120.0
"""A trace line without a call id (its payload was too large to read to the end) stands for
a call of its tool this close in time."""
REFUSED_BY_CLAUDE_CODE = "<tool_use_error>"
"""How Claude Code's own refusal of a call starts (its input invalid, a file its permission
rules deny): the call never ran, and for a file tool no PreToolUse hook was asked (2.1.332,
``tests/e2e/test_audit_sessions.py``), so no hook had it to decide."""


class Registered:
    """One plangate handler in one settings file: event, matcher, ``if`` and hook module."""

    __slots__ = ("event", "matcher", "condition", "module", "where", "trust")

    def __init__(
        self,
        event: str,
        matcher: str | None,
        condition: str | None,
        module: str,
        where: str,
        trust: str | None = None,
    ) -> None:
        self.event = event
        self.matcher = matcher
        self.condition = condition
        self.module = module
        self.where = where
        self.trust = trust  # Codex only: its trust by hash (None: Claude Code's, no trust)

    def shown(self) -> str:
        where = f"{self.where}, {self.trust}" if self.trust else self.where
        return f"{self.event}:{self.module} ({where})"

    def __repr__(self) -> str:
        return f"Registered({self.event!r}, {self.matcher!r}, {self.condition!r}, {self.module!r})"


class Call:
    """Something a hook should have answered: a tool call, a typed command or a stop."""

    __slots__ = ("kind", "id", "name", "timestamp", "summary", "hooks")

    def __init__(
        self, kind: str, id: str, name: str, timestamp: str, summary: str, hooks: list[str]
    ) -> None:
        self.kind = kind  # "tool", "typed", "prompt" (Codex), "stop"
        self.id = id
        self.name = name
        self.timestamp = timestamp
        self.summary = summary
        self.hooks = hooks  # the plangate hook modules that left no trace for it

    def as_dict(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in self.__slots__}

    def label(self) -> str:
        what = {"tool": self.name, "typed": f"/{self.name}", "prompt": "prompt", "stop": "stop"}[
            self.kind
        ]
        return f"{what} {self.summary}".strip()


class Report:
    """The audit of one session."""

    def __init__(self, session_id: str, journal: str, agent: str = CLAUDE_CODE) -> None:
        self.session_id = session_id
        self.journal = journal
        self.agent = agent
        self.skipped: list[Registered] = []  # Codex: registered, but Codex does not run them
        self.checked = 0
        self.unguarded: list[Call] = []
        self.untraced: list[Call] = []
        self.approvals: list[dict[str, object]] = []
        self.refusals: list[dict[str, object]] = []
        self.registered: list[Registered] = []
        self.trace_since: str | None = None

    @property
    def clean(self) -> bool:
        return not self.unguarded

    def as_dict(self) -> dict[str, object]:
        return {
            "session": self.session_id,
            "agent": self.agent,
            "journal": self.journal,
            "checked": self.checked,
            "unguarded": [call.as_dict() for call in self.unguarded],
            "untraced": [call.as_dict() for call in self.untraced],
            "approvals": self.approvals,
            "refusals": self.refusals,
            "registered": sorted({r.shown() for r in self.registered}),
            "skipped": sorted({r.shown() for r in self.skipped}),
            "trace_since": self.trace_since,
        }


# -- registrations ---------------------------------------------------------------------------


def settings_files(project: str, config_dir: str) -> list[str]:
    """Every settings file Claude Code reads for a session in ``project``, managed first."""
    return [
        MANAGED_SETTINGS,
        os.path.join(config_dir, "settings.json"),
        os.path.join(config_dir, "settings.local.json"),
        os.path.join(project, ".claude", "settings.json"),
        os.path.join(project, ".claude", "settings.local.json"),
    ]


def registered(project: str, config_dir: str) -> list[Registered]:
    """plangate's handlers in every scope's settings file and in its plugin."""
    found: list[Registered] = []
    seen: set[str] = set()
    for path in settings_files(project, config_dir):
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        data = _read_json(path)
        if isinstance(data, dict):
            found.extend(handlers(data.get("hooks"), path))
    found.extend(_plugin(config_dir))
    return found


def _plugin(config_dir: str) -> list[Registered]:
    try:
        from plangate.install.plugin import build
        from plangate.install.plugin import install as plugin_install
        from plangate.skill_names import plugin_dir

        if not plugin_install.registered(config_dir):
            return []
        data = _read_json(os.path.join(plugin_dir(), *build.HOOKS_FILE.split("/")))
    except Exception:  # noqa: BLE001 - a broken plugin folder registers nothing readable
        return []
    return handlers(data.get("hooks") if isinstance(data, dict) else None, "plugin")


def handlers(hooks: object, where: str) -> list[Registered]:
    """plangate's handlers in a settings file's ``hooks`` block."""
    found: list[Registered] = []
    if not isinstance(hooks, dict):
        return found
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else ():
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                continue
            matcher = group.get("matcher")
            for handler in group["hooks"]:
                if not isinstance(handler, dict):
                    continue
                module = hook_registry.hook_module(handler.get("command"))
                if module is None:
                    continue
                condition = handler.get("if")
                found.append(
                    Registered(
                        str(event),
                        matcher if isinstance(matcher, str) else None,
                        condition if isinstance(condition, str) else None,
                        module,
                        where,
                    )
                )
    return found


def _read_json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as stream:
            return json.load(stream)
    except (OSError, ValueError):
        return None


# -- matchers and conditions -----------------------------------------------------------------

_NAMES = re.compile(r"[A-Za-z0-9_|]+")


def matcher_covers(matcher: str | None, tool: str) -> bool:
    """Claude Code's matcher: none, empty or ``*`` match every tool; letters, digits and
    ``|`` are an exact list of names; anything else is a regular expression."""
    if matcher is None or matcher in ("", "*"):
        return True
    if _NAMES.fullmatch(matcher):
        return tool in matcher.split("|")
    try:
        return re.fullmatch(matcher, tool) is not None
    except re.error:
        return False


def condition_covers(
    condition: str | None, tool: str, tool_input: dict[str, Any] | None, cwd: str, home: str
) -> bool:
    """An ``if`` condition in permission-rule syntax: ``Tool`` or ``Tool(spec)``. A path
    spec (``//abs``, ``~/x``, ``/from-project``, ``**/any``, ``relative``) is a glob on the
    call's file; a ``Bash`` spec a glob on its command; an ``Agent`` spec its subagent type.
    A condition this cannot read counts as covering (an audit errs towards asking)."""
    if condition is None:
        return True
    text = condition.strip()
    name, paren, rest = text.partition("(")
    if name.strip() != tool:
        return False
    if not paren:
        return True
    spec = rest[:-1] if rest.endswith(")") else rest
    if tool_input is None:
        return True
    if tool == "Bash":
        command = tool_input.get("command")
        pattern = spec[:-2] + "*" if spec.endswith(":*") else spec
        return isinstance(command, str) and _glob(pattern, command, slash=False)
    if tool == "Agent":
        return tool_input.get("subagent_type") == spec
    path = tool_input.get("file_path") or tool_input.get("notebook_path") or tool_input.get("path")
    if not isinstance(path, str) or not path:
        return True
    target = os.path.normpath(path if os.path.isabs(path) else os.path.join(cwd, path))
    if spec.startswith("//"):
        pattern = spec[1:]
    elif spec.startswith("~/"):
        pattern = os.path.join(home, spec[2:])
    elif spec.startswith("/"):
        pattern = cwd.rstrip("/") + spec
    elif spec.startswith("**/"):
        return _glob(spec, target, slash=True, anywhere=True)
    else:
        pattern = os.path.join(cwd, spec)
    return _glob(pattern, target, slash=True)


def _glob(pattern: str, text: str, *, slash: bool, anywhere: bool = False) -> bool:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*" if slash else ".*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]" if slash else ".")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    regex = "".join(out)
    if anywhere:
        regex = "(?:.*/)?" + regex.removeprefix("(?:.*/)?")
    return re.fullmatch(regex, text, re.DOTALL) is not None


def covering(
    regs: Iterable[Registered],
    event: str,
    tool: str | None = None,
    tool_input: dict[str, Any] | None = None,
    cwd: str = "/",
    home: str = "/",
) -> list[str]:
    """The hook modules registered to answer this event (and tool call), each once."""
    found: dict[str, None] = {}
    for reg in regs:
        if reg.event != event:
            continue
        if tool is not None and not matcher_covers(reg.matcher, tool):
            continue
        if tool is not None and not condition_covers(reg.condition, tool, tool_input, cwd, home):
            continue
        found[reg.module] = None
    return list(found)


# -- the trace and the decision log ----------------------------------------------------------


def trace_lines(session_id: str, state_root: str) -> tuple[list[dict[str, Any]], str | None]:
    """The session's trace lines, oldest first, and, once the trace has been rotated, the
    oldest time it still reaches (None: it holds every call since it began)."""
    lines: list[dict[str, Any]] = []
    since: str | None = None
    needle = json.dumps(session_id).encode()
    old, current = trace.trace_paths(state_root)
    for path in (old, current):
        for raw in _lines(path):
            if since is None and path == old:
                since = _field(raw, "ts") or ""
            if needle not in raw:
                continue
            value = _loads(raw)
            if value is not None and value.get("sid") == session_id:
                lines.append(value)
    return lines, since


def _lines(path: str) -> Iterator[bytes]:
    from plangate.files import read_nofollow

    try:
        data = read_nofollow(path, 64 * 1024 * 1024)
    except OSError:
        return
    for raw in data.split(b"\n"):
        if raw.strip():
            yield raw


def _loads(raw: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _field(raw: bytes, name: str) -> str | None:
    value = _loads(raw)
    found = value.get(name) if value is not None else None
    return found if isinstance(found, str) else None


def decision_lines(state_root: str) -> list[dict[str, Any]]:
    from plangate.decisions import log

    found: list[dict[str, Any]] = []
    for raw in _lines(log.log_path(state_root)):
        value = _loads(raw)
        if value is not None:
            found.append(value)
    return found


# -- the audit -------------------------------------------------------------------------------


def expected(
    events: list[Event], regs: list[Registered], cwd: str, home: str, *, stops: bool = True
) -> list[tuple[Call, list[str], str | None]]:
    """Each call of the session some registration covers: the call, the hook modules that
    should have answered it, and the time before which a trace line may stand for it."""
    skipped = {
        event.tool_use_id
        for event in events
        if isinstance(event, ToolResult)
        and event.is_error
        and (event.text or "").lstrip().startswith(REFUSED_BY_CLAUDE_CODE)
    }
    following: list[str | None] = [None] * len(events)  # the next event's time, for stops
    upcoming: str | None = None
    for index in range(len(events) - 1, -1, -1):
        following[index] = upcoming
        upcoming = events[index].timestamp or upcoming
    found: list[tuple[Call, list[str], str | None]] = []
    for index, event in enumerate(events):
        if isinstance(event, ToolUse):
            if event.tool_use_id in skipped:
                continue
            hooks = covering(regs, PRE_TOOL_USE, event.name, event.input, cwd, home)
            call = Call("tool", event.tool_use_id, event.name, event.timestamp, "", [])
            call.summary = _summary(event)
            found.append((call, hooks, None))
        elif isinstance(event, HumanTurn) and event.command:
            hooks = covering(regs, EXPANSION)
            args = (event.arguments or "")[:60]
            call = Call(
                "typed",
                event.prompt_id or str(event.order),
                event.command,
                event.timestamp,
                args,
                [],
            )
            found.append((call, hooks, None))
        elif isinstance(event, EndTurn) and stops:
            hooks = covering(regs, STOP)
            call = Call("stop", f"stop@{event.order}", STOP, event.timestamp, "", [])
            found.append((call, hooks, following[index]))
    return found


def _summary(event: ToolUse) -> str:
    data = event.input or {}
    for key in ("command", "file_path", "notebook_path", "skill", "subagent_type", "pattern"):
        value = data.get(key)
        if isinstance(value, str) and value:
            one = " ".join(value.split())
            return one if len(one) <= 80 else one[:77] + "..."
    return ""


def _seconds(stamp: str | None) -> float | None:
    if not stamp:
        return None
    import datetime

    try:
        moment = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.timestamp()


class Traced:
    """The session's trace lines, indexed once: by call id, and by event with their times
    (the stops and typed commands, and the PreToolUse lines whose payload was too large to
    give the id)."""

    def __init__(self, lines: list[dict[str, Any]]) -> None:
        self.by_id: dict[str, set[str]] = {}
        self.timed: dict[str, list[tuple[float, str, str]]] = {}  # event: (t0, tool, hook)
        for line in lines:
            event, hook = line.get("ev"), line.get("hook")
            if not isinstance(event, str) or not isinstance(hook, str):
                continue
            key = line.get("id")
            if event == PRE_TOOL_USE and isinstance(key, str):
                self.by_id.setdefault(key, set()).add(hook)
                continue
            when = _seconds(line.get("t0") or line.get("ts"))
            if when is not None:
                tool = line.get("tool")
                self.timed.setdefault(event, []).append(
                    (when, tool if isinstance(tool, str) else "", hook)
                )

    def hooks_between(self, event: str, low: float, high: float, tool: str = "") -> set[str]:
        return {
            hook
            for when, named, hook in self.timed.get(event, ())
            if low <= when <= high and (not tool or named == tool)
        }


def answered(call: Call, hooks: list[str], later: str | None, traced: Traced) -> list[str]:
    """The hooks of ``hooks`` that left no trace line for ``call``."""
    at = _seconds(call.timestamp)
    if call.kind == "tool":
        seen = set(traced.by_id.get(call.id, ()))
        if at is not None and not seen.issuperset(hooks):  # a payload too large to read whole
            seen |= traced.hooks_between(PRE_TOOL_USE, at - UNKEYED_S, at + UNKEYED_S, call.name)
        return [hook for hook in hooks if hook not in seen]
    if at is None:
        return []
    if call.kind == "typed":
        seen = traced.hooks_between(EXPANSION, at - EXPANSION_LEAD_S, at + 5.0)
    else:
        seen = traced.hooks_between(STOP, at - 5.0, (_seconds(later) or at + STOP_LAG_S) + 5.0)
    return [hook for hook in hooks if hook not in seen]


def audit(
    events: list[Event],
    session_id: str,
    journal: str,
    *,
    project: str,
    cwd: str | None = None,
    state_root: str | None = None,
    config_dir: str | None = None,
    stops: bool = True,
    subagents: list[list[Event]] | None = None,
) -> Report:
    """Compare ``events`` (the session's journal, read by :mod:`plangate.journal`) and its
    subagents' (:func:`subagent_events`; their calls' hooks are called with the session's
    id) with the hook-call trace and the decision log."""
    root = state_root if state_root is not None else locations.state_root()
    config = config_dir if config_dir is not None else locations.claude_config_dir()
    report = Report(session_id, journal)
    regs = registered(project, config)
    lines, since = trace_lines(session_id, root)
    # A hook removed from the settings still counts where it answered earlier in the session.
    ran = {(line.get("ev"), line.get("hook")) for line in lines}
    regs += _earlier(ran, regs)
    report.registered = regs
    report.trace_since = since
    since_s = _seconds(since)
    home = os.path.expanduser("~")
    found = expected(events, regs, cwd or project, home, stops=stops)
    for agent in subagents or []:
        for call, hooks, later in expected(agent, regs, cwd or project, home, stops=False):
            if call.kind == "tool":
                call.summary = f"(subagent) {call.summary}".rstrip()
                found.append((call, hooks, later))
    traced = Traced(lines)
    for call, hooks, later in found:
        if not hooks:
            continue
        report.checked += 1
        missing = answered(call, hooks, later, traced)
        if not missing:
            continue
        call.hooks = missing
        at = _seconds(call.timestamp)
        if since is not None and (since_s is None or at is None or at < since_s):
            report.untraced.append(call)
        else:
            report.unguarded.append(call)
    decided(report, events, lines, root)
    return report


def decided(report: Report, events: list[Event], lines: list[dict[str, Any]], root: str) -> None:
    """The session's refusals (its trace lines, and commands the decision log shows refused
    while it ran) and its approvals, with who gave each, into ``report``."""
    report.refusals = [
        {
            "ts": line.get("ts"),
            "event": line.get("ev"),
            "tool": line.get("tool"),
            "id": line.get("id"),
            "hook": line.get("hook"),
            "answer": line.get("out"),
            "code": line.get("code"),
        }
        for line in lines
        if line.get("out") in ("deny", "ask", "block")
    ]
    decisions = decision_lines(root)
    report.approvals = approvals(events, lines, decisions)
    report.refusals += commands_refused(events, lines, decisions)


def _spans(lines: list[dict[str, Any]]) -> list[tuple[float, float]]:
    """When each traced hook call of the session ran (``t0`` is taken before its decision
    log lines, ``ts`` after them, both cut to the millisecond as the log's own are)."""
    found: list[tuple[float, float]] = []
    for line in lines:
        began, ended = _seconds(line.get("t0")), _seconds(line.get("ts"))
        if began is not None and ended is not None:
            found.append((began, ended))
    return found


def _span(events: list[Event]) -> tuple[float, float] | None:
    stamps = [s for e in events if (s := _seconds(e.timestamp)) is not None]
    return (min(stamps), max(stamps) + 1.0) if stamps else None


def commands_refused(
    events: list[Event], lines: list[dict[str, Any]], decisions: list[dict[str, Any]]
) -> list[dict[str, object]]:
    """The decision log's refusals made outside any hook call while the session ran (a
    plangate command that refused, run from the session)."""
    spans, span = _spans(lines), _span(events)
    if span is None:
        return []
    found: list[dict[str, object]] = []
    for line in decisions:
        at = _seconds(line.get("ts"))
        if line.get("decision") != "deny" or at is None or not span[0] <= at <= span[1]:
            continue
        if any(a <= at <= b for a, b in spans):
            continue  # a hook's own refusal: listed from the trace
        found.append(
            {
                "ts": line.get("ts"),
                "event": line.get("event") or "command",
                "tool": None,
                "id": None,
                "hook": None,
                "answer": "deny",
                "code": line.get("code"),
            }
        )
    return found


def subagent_events(journal: str, session_id: str) -> list[list[Event]]:
    """The events of each subagent journal of the session
    (``<project folder>/<session>/subagents/*.jsonl``), read with the skill gates' reader of
    subagent transcripts (the journal package's records and event builder); one that cannot
    be read is left out."""
    folder = os.path.join(os.path.dirname(journal), session_id, "subagents")
    try:
        names = sorted(name for name in os.listdir(folder) if name.endswith(".jsonl"))
    except OSError:
        return []
    from plangate.gates.errors import GateError
    from plangate.gates.transcript import read_agent

    found: list[list[Event]] = []
    for name in names:
        try:
            found.append(read_agent(os.path.join(folder, name), None).events)
        except (GateError, OSError):
            continue
    return found


def _earlier(traced: set[tuple[Any, Any]], regs: list[Registered]) -> list[Registered]:
    """Registrations the trace shows ran in this session but no settings file holds now:
    the hook table's own matcher (its ``if`` conditions are not known any more)."""
    have = {(reg.event, reg.module) for reg in regs}
    found: list[Registered] = []
    for event, module in sorted(traced, key=str):
        if (event, module) in have or not isinstance(event, str) or not isinstance(module, str):
            continue
        for spec in hook_registry.HOOKS:
            if spec.event == event and spec.module.endswith("." + module) and not spec.conditions:
                found.append(Registered(event, spec.matcher, None, module, "trace"))
                break
    return found


def approvals(
    events: list[Event], lines: list[dict[str, Any]], decisions: list[dict[str, Any]]
) -> list[dict[str, object]]:
    """The decision log's approvals given while this session ran: inside one of its hook
    calls (a person's turn or typed command, read from its journal), or, for a `plangate
    approve` command, between the session's first and last record."""
    spans, span = _spans(lines), _span(events)
    found: list[dict[str, object]] = []
    for line in decisions:
        if line.get("event") != "approval" or line.get("decision") != "allow":
            continue
        at = _seconds(line.get("ts"))
        if at is None:
            continue
        inside = any(a <= at <= b for a, b in spans)
        by_command = line.get("via") == "command" and span is not None and span[0] <= at <= span[1]
        if not inside and not by_command:
            continue
        via = str(line.get("via"))
        found.append(
            {
                "ts": line.get("ts"),
                "workflow": line.get("workflow"),
                "phase": line.get("phase"),
                "via": via,
                "by": APPROVAL_BY.get(via, via),
                "logged_by": "a hook of the session" if inside else "the command",
            }
        )
    return found


def render(report: Report) -> str:
    """The report for a person."""
    codex = report.agent == CODEX
    out = [f"session {report.session_id}", f"journal {report.journal}"]
    if codex:
        out[1:1] = ["agent Codex CLI (the session history is its rollout)"]
    if not report.registered:
        out.append(
            "no plangate hook is registered where Codex reads hooks: nothing to compare "
            "(run `plangate setup --codex`)"
            if codex
            else "no plangate hook is registered in any settings file: nothing to compare"
        )
    for reg in report.skipped:
        out.append(
            f"registered but skipped: {reg.event} hook `{reg.module}` in {reg.where} "
            f"({reg.trust}): Codex does not run it; run `plangate setup --codex` (or trust it "
            "in Codex's terminal UI), then `plangate doctor`"
        )
    out.append(f"{report.checked} call(s) a registered plangate hook covers")
    if report.unguarded:
        out.append(f"UNGUARDED: {len(report.unguarded)} call(s) no plangate hook decided")
        for call in report.unguarded:
            out.append(
                f"  {call.timestamp}  {call.label()}  [{call.id}]"
                f" (no answer from {', '.join(call.hooks)})"
            )
        out.append(
            "  the hooks were removed, not trusted by Codex (never, or edited since), crashed "
            "or timed out: run `plangate doctor` (and `plangate setup --codex` to trust them "
            "again), and see `plangate explain unguarded_calls`"
            if codex
            else "  the hooks were switched off (disableAllHooks), removed, crashed or timed "
            "out: run `plangate doctor`, and see `plangate explain unguarded_calls`"
        )
    else:
        out.append("every covered call was decided")
    if report.untraced:
        out.append(
            f"{len(report.untraced)} call(s) before the trace begins ({report.trace_since}): "
            "not known"
        )
    out.append(f"approvals: {len(report.approvals)}")
    for item in report.approvals:
        out.append(f"  {item['ts']}  {item['workflow']} {item['phase']}: by {item['by']}")
    out.append(f"refusals: {len(report.refusals)}")
    for item in report.refusals:
        what = item["tool"] or item["event"]
        out.append(f"  {item['ts']}  {what} {item['answer']} {item['code'] or ''}".rstrip())
    return "\n".join(out) + "\n"
