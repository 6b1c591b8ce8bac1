"""The user's plangate registration, carried into a throwaway HOME for ``doctor --live``.

``plangate doctor --live`` must prove the hooks the user has, not a fresh ``plangate setup``:
their settings hooks exactly as registered (the interpreter they name included), or the
plugin copy Claude Code actually loads. Nothing of the user's is written: the settings groups
are copied into the throwaway ``~/.claude/settings.json`` with the skills Claude Code loads
from their ``~/.claude/skills``, and the installed plugin copy is loaded read-only with
``--plugin-dir``. Other tools' hooks are left behind: a live check must not fire them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plangate.errors import PlangateError
from plangate.hook_registry import HOOK_MODULE_PREFIX
from plangate.install import settings_file
from plangate.install.plugin import install as plugin_install
from plangate.install.plugin.build import LAUNCHER
from plangate.install.skill_check import installed_copies
from plangate.skill_names import PLUGIN_ID, plugin_dir

#: The skills plangate installs, which the live checks load.
SKILLS = ("autoplan", "plan-ceo-review")

#: The events whose registration the live checks need: the guard, and the gates' Stop hook.
GUARD_EVENT = "PreToolUse"
STOP_EVENT = "Stop"


#: A hook module in a registered command: ``from plangate.hooks.X import``, ``-m
#: plangate.hooks.X``, or the plugin's launcher ``…/bin/plangate-hook" X``.
MODULE = re.compile(
    r"\b" + re.escape(HOOK_MODULE_PREFIX) + r"(\w+)|" + re.escape(LAUNCHER) + r"\"? +(\w+)"
)


class NotSetUp(PlangateError):
    """plangate's hooks are registered nowhere Claude Code would load them."""


@dataclass(frozen=True)
class Carried:
    """What the throwaway HOME now holds of the user's registration."""

    where: str  # how the user's registration is named in the check lines
    skills: Path  # the folder the session loads plangate's skills from
    extra_args: tuple[str, ...]  # claude options that load it (``--plugin-dir``)
    events: frozenset[str]  # the hook events it registers
    modules: frozenset[str] = frozenset()  # the plangate hook modules its commands run

    def runs(self, module: str) -> bool:
        """Whether a hook of this registration runs ``plangate.hooks.<module>``."""
        return HOOK_MODULE_PREFIX + module in self.modules


def carry(home: Path, claude_dir: str, project: str) -> Carried:
    """Carries the registration of ``claude_dir`` (the user's config folder; ``project``'s
    ``.claude/settings.json`` too) into ``home``; the plugin wins when both are there, as
    setup refuses to keep both."""
    if plugin_install.registered(claude_dir):
        return _carry_plugin(claude_dir)
    return _carry_settings(home, claude_dir, project)


def _carry_settings(home: Path, claude_dir: str, project: str) -> Carried:
    paths = [os.path.join(claude_dir, "settings.json")]
    local = os.path.join(project, ".claude", "settings.json")
    if os.path.realpath(local) != os.path.realpath(paths[0]):
        paths.append(local)
    hooks: dict[str, list[Any]] = {}
    found: list[str] = []
    for path in paths:
        if not os.path.isfile(path):
            continue
        groups = settings_file.plangate_groups(settings_file.read(path).data)
        if groups:
            found.append(path)
        for event, entries in groups.items():
            hooks.setdefault(event, []).extend(group for _, group in entries)
    if not hooks:
        raise NotSetUp(
            f"no plangate hook is registered in {' or '.join(paths)}, and the plugin is not "
            "installed",
            "run `plangate setup` (or `plangate setup --plugin`), then `plangate doctor --live`",
        )
    target = home / ".claude"
    target.mkdir(parents=True, exist_ok=True)
    (target / "settings.json").write_text(json.dumps({"hooks": hooks}, indent=2), "utf-8")
    skills = target / "skills"
    for name in SKILLS:
        source = Path(claude_dir) / "skills" / name
        if source.is_dir():
            shutil.copytree(source, skills / name, symlinks=True)
    where = "settings hooks in " + ", ".join(found)
    return Carried(where, skills, (), frozenset(hooks), hook_modules(hooks))


def _carry_plugin(claude_dir: str) -> Carried:
    path = loaded_plugin()
    if path is None:
        raise NotSetUp(
            f"Claude Code records the plugin {PLUGIN_ID} as installed, but neither its folder "
            f"({plugin_dir()}) nor an installed copy is there",
            "run `plangate setup --plugin` again, then `plangate doctor --live`",
        )
    try:
        hooks = json.loads((path / "hooks" / "hooks.json").read_text("utf-8"))["hooks"]
    except (OSError, ValueError, KeyError, TypeError):
        hooks = {}
    if not isinstance(hooks, dict):
        hooks = {}
    args = ("--plugin-dir", str(path))
    where = f"the plugin at {path}"
    return Carried(where, path / "skills", args, frozenset(hooks), hook_modules(hooks))


def hook_modules(hooks: dict[str, Any]) -> frozenset[str]:
    """The ``plangate.hooks.<name>`` modules the handlers of a ``hooks`` block run."""
    found = set()
    for groups in hooks.values():
        for group in groups if isinstance(groups, list) else ():
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler in handlers if isinstance(handlers, list) else ():
                command = handler.get("command") if isinstance(handler, dict) else None
                if isinstance(command, str):
                    for match in MODULE.finditer(command):
                        found.add(HOOK_MODULE_PREFIX + (match.group(1) or match.group(2)))
    return frozenset(found)


def loaded_plugin() -> Path | None:
    """The plugin folder Claude Code runs: the folder ``setup --plugin`` builds, from which a
    marketplace added from a local folder runs it; else the copy it records as installed."""
    built = Path(plugin_dir())
    if (built / ".claude-plugin" / "plugin.json").is_file():
        return built
    for path, _version in installed_copies():
        if os.path.isdir(path):
            return Path(path)
    return None
