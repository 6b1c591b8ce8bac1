"""Loads, runs and final stops.

A session *loads* a skill with the Skill tool, a typed slash command, or a Read of the
skill's installed ``SKILL.md``. A *run* is the transcript from one load to the next load of
the same skill; the gate judges the latest run. Only a *final* stop is judged: in a session
a person answers, a stop that asks them something (a closing ``?``, ``AskUserQuestion``,
``STATUS: NEEDS_CONTEXT``) is not; in a session nobody answers (``claude -p``, the Agent SDK)
and in a subagent every stop is final. Hook path: standard library only.
"""

from __future__ import annotations

import os

from plangate import skill_names
from plangate.journal.events import (
    AssistantText,
    Event,
    HumanTurn,
    TaskNotification,
    ToolResult,
    ToolUse,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

SKILL_TOOL = "Skill"
ASK_TOOL = "AskUserQuestion"
AGENT_TOOLS = ("Agent", "Task")
WRITE_TOOLS = ("Write", "Edit", "MultiEdit")
HEADLESS = "headless"
INTERACTIVE = "interactive"


class Load:
    """One load of a skill: the event that loaded it and the arguments it was given."""

    __slots__ = ("skill", "key", "event", "via", "arguments")

    def __init__(self, skill: str, key: str, event: Event, via: str, arguments: str) -> None:
        self.skill = skill
        self.key = key
        self.event = event
        self.via = via
        self.arguments = arguments

    def __repr__(self) -> str:
        return f"Load({self.skill!r}, {self.key!r}, via={self.via!r})"

    @property
    def timestamp(self) -> str:
        return self.event.timestamp


def resolve(path: str, cwd: str) -> str:
    """``path`` made absolute against ``cwd`` and normalised (nothing resolved)."""
    return os.path.normpath(path if os.path.isabs(path) else os.path.join(cwd, path))


def same_file(first: str, second: str) -> bool:
    if first == second:
        return True
    try:
        return os.path.realpath(first) == os.path.realpath(second)
    except (OSError, ValueError):
        return False


def skill_files(skill: str, project_dir: str) -> list[str]:
    """Where the skill's ``SKILL.md`` is installed: the user's and the project's skills, and
    plangate's plugin (:func:`plangate.skill_names.skill_dirs`)."""
    return [
        os.path.join(folder, "SKILL.md") for folder in skill_names.skill_dirs(skill, project_dir)
    ]


def results_by_use(events: Iterable[Event]) -> dict[str, list[ToolResult]]:
    found: dict[str, list[ToolResult]] = {}
    for event in events:
        if isinstance(event, ToolResult):
            found.setdefault(event.tool_use_id, []).append(event)
    return found


def failed(use: ToolUse, results: Mapping[str, list[ToolResult]]) -> bool:
    """The call came back as an error."""
    return any(result.is_error for result in results.get(use.tool_use_id, ()))


def succeeded(use: ToolUse, results: Mapping[str, list[ToolResult]]) -> bool:
    """The call came back, and not as an error."""
    found = results.get(use.tool_use_id, ())
    return bool(found) and not any(result.is_error for result in found)


def loads(events: list[Event], skill: str, files: list[str], cwd: str) -> list[Load]:
    """Every load of ``skill`` in ``events``, in order."""
    results = results_by_use(events)
    found: list[Load] = []
    for event in events:
        if isinstance(event, HumanTurn):
            if skill_names.is_skill(event.command, skill):
                key = f"turn-{event.record}"
                found.append(Load(skill, key, event, "command", event.arguments or ""))
        elif isinstance(event, ToolUse) and event.input is not None:
            if failed(event, results):
                continue
            if event.name == SKILL_TOOL:
                name = event.input.get("skill") or event.input.get("command")
                if skill_names.is_skill(name, skill):
                    arguments = event.input.get("args")
                    found.append(
                        Load(
                            skill,
                            event.tool_use_id,
                            event,
                            "skill",
                            arguments if isinstance(arguments, str) else "",
                        )
                    )
            elif event.name == "Read":
                path = event.input.get("file_path")
                if isinstance(path, str) and path:
                    target = resolve(path, cwd)
                    if any(same_file(target, installed) for installed in files):
                        found.append(Load(skill, event.tool_use_id, event, "read", ""))
    return found


def run_events(events: list[Event], load: Load) -> list[Event]:
    """The events of the run ``load`` starts (everything after it)."""
    return [event for event in events if event.order > load.event.order]


# --- who answers ------------------------------------------------------------------------


def session_kind(
    prompt_source: str | None, entrypoint: str | None, environ: Mapping[str, str]
) -> str:
    """``headless`` when nobody answers the session (``claude -p``, the Agent SDK), else
    ``interactive``.

    In order: the latest typed turn's ``promptSource`` (``sdk`` or ``typed``), its
    ``entrypoint`` (``sdk-cli``, ``sdk-py``… or ``cli``), then Claude Code's environment
    (``CLAUDE_CODE_SESSION_ATTENDED=0``, ``CLAUDE_CODE_ENTRYPOINT``). Unknown: interactive,
    so a question is never held by mistake.
    """
    if prompt_source == "sdk":
        return HEADLESS
    if prompt_source == "typed":
        return INTERACTIVE
    for value in (entrypoint, environ.get("CLAUDE_CODE_ENTRYPOINT")):
        if isinstance(value, str) and value.startswith("sdk"):
            return HEADLESS
        if value == "cli":
            return INTERACTIVE
    if environ.get("CLAUDE_CODE_SESSION_ATTENDED") == "0":
        return HEADLESS
    return INTERACTIVE


def status_line(text: str) -> str | None:
    """The value of a ``STATUS: <value>`` line (the last one), if any."""
    found = None
    for line in text.splitlines():
        stripped = line.strip().strip("*_`").strip()
        if stripped.upper().startswith("STATUS:"):
            value = stripped[len("STATUS:") :].strip().strip("*_`").strip()
            if value:
                found = value.split()[0].upper()
    return found


def ends_with_question(text: str) -> bool:
    stripped = text.rstrip().rstrip("*_`'\")]\u201d\u2019").rstrip()
    return stripped.endswith(("?", "\uff1f"))


def _last_message_asks(events: list[Event]) -> bool:
    message = next(
        (e.message_id for e in reversed(events) if isinstance(e, (AssistantText, ToolUse))),
        None,
    )
    if message is None:
        return False
    return any(
        isinstance(e, ToolUse) and e.name == ASK_TOOL and e.message_id == message for e in events
    )


def last_text(events: list[Event]) -> str:
    for event in reversed(events):
        if isinstance(event, AssistantText) and event.text:
            return event.text
    return ""


def asks_the_user(events: list[Event], last_message: object) -> str | None:
    """Why the stop waits on the user (``status``, ``question``, ``ask-tool``), else None."""
    text = last_message if isinstance(last_message, str) else last_text(events)
    status = status_line(text)
    if status is not None:
        return "status" if status == "NEEDS_CONTEXT" else None
    if ends_with_question(text):
        return "question"
    if _last_message_asks(events):
        return "ask-tool"
    return None


def waiting_reviewers(events: list[Event], background: object) -> list[str]:
    """Background agents launched in the run that have not reported back yet."""
    waiting: list[str] = []
    if isinstance(background, list):
        for task in background:
            if not isinstance(task, dict):
                continue
            agentish = task.get("type") in ("subagent", "agent") or "agent_type" in task
            if agentish and task.get("status") in ("running", "pending", "queued", None):
                waiting.append(str(task.get("id") or "task"))
    results = results_by_use(events)
    notified = {e.tool_use_id for e in events if isinstance(e, TaskNotification)}
    for event in events:
        if isinstance(event, ToolUse) and event.name in AGENT_TOOLS:
            launched = any(r.is_async for r in results.get(event.tool_use_id, ()))
            if launched and event.tool_use_id not in notified:
                waiting.append(event.tool_use_id)
    return waiting


def written_files(events: list[Event], cwd: str) -> list[str]:
    """Files the events wrote with Write, Edit or MultiEdit (not failed), newest first."""
    results = results_by_use(events)
    found: list[str] = []
    for event in reversed(events):
        if isinstance(event, ToolUse) and event.name in WRITE_TOOLS and event.input is not None:
            path = event.input.get("file_path")
            if isinstance(path, str) and path and not failed(event, results):
                target = resolve(path, cwd)
                if target not in found:
                    found.append(target)
    return found


def read_files(events: list[Event], cwd: str) -> list[str]:
    """Files the events Read (not failed), newest first."""
    results = results_by_use(events)
    found: list[str] = []
    for event in reversed(events):
        if isinstance(event, ToolUse) and event.name == "Read" and event.input is not None:
            path = event.input.get("file_path")
            if isinstance(path, str) and path and not failed(event, results):
                target = resolve(path, cwd)
                if target not in found:
                    found.append(target)
    return found


def as_dict(value: object) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None
