"""What registers plangate's hooks: the user's and the project's settings files, and the
plugin (Claude Code's record of it, its ``hooks/hooks.json`` and its launcher). Reads only.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Iterable
from typing import Any

from plangate import hook_registry
from plangate.errors import PlangateError
from plangate.install import settings_file
from plangate.install.plugin import build
from plangate.install.plugin import install as plugin_install
from plangate.locations import claude_config_dir
from plangate.skill_names import plugin_dir

#: The guard's matcher group (the contracts' Read and Agent entries share the matcher; the
#: module a handler runs tells them apart).
GUARD_MATCHER = next(spec.matcher for spec in hook_registry.HOOKS if spec.kind == "guard")
GUARD_MODULE = "pre_tool_use"
CONTRACT_MODULE = "contract_pre_tool_use"


class Registration:
    """One place that registers plangate's hooks: a settings file, or the plugin."""

    def __init__(
        self,
        where: str,
        events: list[str],
        commands: list[list[str]],
        guard_conditions: list[object] | None = None,
        entry_conditions: list[object] | None = None,
        modules: list[str] | None = None,
    ) -> None:
        self.where = where
        self.events = events
        self.commands = commands  # each hook command split as the shell splits it
        # the ``if`` of each of the guard's handlers (``None`` for a handler without one)
        self.guard_conditions = guard_conditions or []
        # the ``if`` of each handler of the contracts' Read and Agent entries
        self.entry_conditions = entry_conditions or []
        # the hook modules its handlers run (``stop``, ``contract_stop``…), each once
        self.modules = modules or []

    @property
    def is_plugin(self) -> bool:
        return self.where == "plugin"


def _split(command: object) -> list[str]:
    try:
        return shlex.split(command) if isinstance(command, str) else []
    except ValueError:
        return []


def registrations(cwd: str) -> list[Registration]:
    claude_dir = claude_config_dir()
    found: list[Registration] = []
    paths = [
        os.path.join(claude_dir, "settings.json"),
        os.path.join(cwd, ".claude", "settings.json"),
    ]
    seen: set[str] = set()
    for path in paths:
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        try:
            data = settings_file.read(path).data
        except PlangateError:
            continue
        groups = settings_file.plangate_groups(data)
        commands = [
            _split(handler.get("command"))
            for entries in groups.values()
            for _, group in entries
            for handler in group["hooks"]
            if hook_registry.is_plangate_handler(handler)
        ]
        entries = [group for _, group in groups.get("PreToolUse", [])]
        if groups:
            found.append(
                Registration(
                    path,
                    sorted(groups),
                    commands,
                    _conditions(entries, GUARD_MODULE),
                    _conditions(entries, CONTRACT_MODULE),
                    _modules(group for entries in groups.values() for _, group in entries),
                )
            )
    if plugin_install.registered(claude_dir):
        hooks: Any = read_json(os.path.join(plugin_dir(), *build.HOOKS_FILE.split("/")))
        events = (
            sorted(hooks["hooks"])
            if isinstance(hooks, dict) and isinstance(hooks.get("hooks"), dict)
            else []
        )
        launcher = os.path.join(plugin_dir(), *build.LAUNCHER.split("/"))
        try:
            with open(launcher, encoding="utf-8") as stream:
                commands = build.launcher_commands(stream.read())
        except OSError:
            commands = []
        events_of = hooks.get("hooks") if isinstance(hooks, dict) else None
        pre = events_of.get("PreToolUse") if isinstance(events_of, dict) else None
        entries = pre if isinstance(pre, list) else []
        found.append(
            Registration(
                "plugin",
                events,
                commands,
                _conditions(entries, GUARD_MODULE),
                _conditions(entries, CONTRACT_MODULE),
                _modules(
                    group
                    for listed in (events_of.values() if isinstance(events_of, dict) else ())
                    if isinstance(listed, list)
                    for group in listed
                ),
            )
        )
    return found


def _modules(groups: Iterable[Any]) -> list[str]:
    """The hook modules the handlers of these matcher groups run, each once, in order."""
    found: dict[str, None] = {}
    for group in groups:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        for handler in handlers if isinstance(handlers, list) else ():
            if not isinstance(handler, dict):
                continue
            name = hook_registry.hook_module(handler.get("command"))
            if name is not None:
                found[name] = None
    return list(found)


def _conditions(groups: list[Any], module: str) -> list[object]:
    """The ``if`` of each handler of the ``Read|Agent`` groups that runs hook ``module``
    (a settings command or the plugin's launcher)."""
    return [
        handler.get("if")
        for group in groups
        if isinstance(group, dict)
        and group.get("matcher") == GUARD_MATCHER
        and isinstance(group.get("hooks"), list)
        for handler in group["hooks"]
        if isinstance(handler, dict) and hook_registry.hook_module(handler.get("command")) == module
    ]


def read_json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as stream:
            return json.load(stream)
    except (OSError, ValueError):
        return None
