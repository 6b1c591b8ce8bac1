"""Which names and folders are plangate's skills. Standard library only (hook path).

A skill of plangate's is known by its bare name (``autoplan``, installed into a skills
folder by ``plangate setup``) or by the name Claude Code gives it when it comes from
plangate's plugin (``plangate:autoplan``; a typed ``/plangate:autoplan`` or ``/autoplan``
is journaled with that name too). Another plugin's skill of the same bare name
(``other:autoplan``) is not plangate's, and neither is anything else.

Its files are in the user's and the project's skills folders, in the plugin folder that
``plangate setup --plugin`` builds in the state root, and, in a hook of that plugin, under
``$CLAUDE_PLUGIN_ROOT`` when that folder carries plangate's marker.
"""

from __future__ import annotations

import os

from plangate.locations import claude_config_dir, state_root
from plangate.state_root import MARKETPLACE

PLUGIN_NAME = "plangate"
"""The plugin's name, and so the prefix of its skills' names (``plangate:<skill>``)."""
MARKETPLACE_NAME = "plangate"
PLUGIN_ID = f"{PLUGIN_NAME}@{MARKETPLACE_NAME}"
"""What ``claude plugin install`` takes and Claude Code's settings record."""
MARKETPLACE_DIR = MARKETPLACE
"""The marketplace folder in the state root; the plugin is its subfolder :data:`PLUGIN_NAME`."""
PLUGIN_MARKER = ".plangate-installed"
"""Written into every folder plangate builds (the skills it installs, the plugin)."""
PLUGIN_ROOT_ENV = "CLAUDE_PLUGIN_ROOT"


def is_skill(name: object, skill: str) -> bool:
    """Whether ``name`` (a journaled command, a Skill tool's ``skill``) is plangate's ``skill``.

    ``autoplan``, ``/autoplan``, ``plangate:autoplan`` and ``/plangate:autoplan`` are; any
    other namespace, or another skill, is not.
    """
    if not isinstance(name, str):
        return False
    bare = name.strip()
    if bare.startswith("/"):
        bare = bare[1:]
    return bare == skill or bare == f"{PLUGIN_NAME}:{skill}"


def marketplace_dir() -> str:
    """The marketplace folder ``plangate setup --plugin`` builds: ``<state root>/claude-plugin``."""
    return os.path.join(state_root(), MARKETPLACE_DIR)


def plugin_dir() -> str:
    """The plugin folder inside it (``.claude-plugin/plugin.json``, ``skills/``, ``hooks/``)."""
    return os.path.join(marketplace_dir(), PLUGIN_NAME)


def _running_plugin_root() -> str | None:
    """``$CLAUDE_PLUGIN_ROOT`` when it is a plugin folder plangate built (a hook of the plugin)."""
    root = os.environ.get(PLUGIN_ROOT_ENV, "")
    if root and os.path.isabs(root) and os.path.isfile(os.path.join(root, PLUGIN_MARKER)):
        return os.path.normpath(root)
    return None


def skill_dirs(skill: str, project_dir: str) -> list[str]:
    """Every folder plangate's ``skill`` may be installed in, user's first, no duplicates."""
    found = [
        os.path.join(claude_config_dir(), "skills", skill),
        os.path.join(project_dir, ".claude", "skills", skill),
        os.path.join(plugin_dir(), "skills", skill),
    ]
    running = _running_plugin_root()
    if running is not None:
        extra = os.path.join(running, "skills", skill)
        if extra not in found:
            found.append(extra)
    return found
