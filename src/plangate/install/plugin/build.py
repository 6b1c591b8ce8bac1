"""The plugin's marketplace folder, as ``plangate setup --plugin`` writes it.

::

    <state root>/claude-plugin/
      .claude-plugin/marketplace.json
      .plangate-installed
      plangate/
        .claude-plugin/plugin.json
        .plangate-installed
        bin/plangate-hook          the launcher: the absolute interpreter, one line per hook
        hooks/hooks.json           the hooks the gate switches want, each running the launcher
        skills/<name>/...          the package's skills, rendered for this folder
"""

from __future__ import annotations

import json
import os
import shlex

import plangate
from plangate import hook_registry
from plangate.install import skill_bundle
from plangate.skill_names import PLUGIN_MARKER, PLUGIN_NAME, marketplace_dir

LAUNCHER = "bin/plangate-hook"
HOOKS_FILE = "hooks/hooks.json"
_TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "marketplace")
_MANIFESTS = (".claude-plugin/marketplace.json", f"{PLUGIN_NAME}/.claude-plugin/plugin.json")


def hook_name(module: str) -> str:
    """The launcher's argument for a hook module: ``pre_tool_use``, ``stop``…"""
    return module.removeprefix(hook_registry.HOOK_MODULE_PREFIX)


def launcher_text(python: str) -> str:
    """``bin/plangate-hook``: runs the hook its argument names with ``python``."""
    lines = [
        "#!/bin/sh",
        f"# Written by `plangate setup --plugin` (plangate {plangate.__version__}).",
        "# Runs a plangate hook with the Python plangate is installed in. After moving or",
        "# upgrading plangate, run `plangate setup --plugin` again; `plangate doctor` checks it.",
        'case "$1" in',
    ]
    modules = dict.fromkeys(spec.module for spec in hook_registry.HOOKS)  # each once, in order
    for module in modules:
        command = hook_registry.hook_command(module, python)
        lines.append(f"  {hook_name(module)}) exec {command} ;;")
    lines += [
        "esac",
        "echo \"plangate-hook: no hook named '$1'; run plangate setup --plugin again\" >&2",
        "exit 1",
    ]
    return "\n".join(lines) + "\n"


def launcher_commands(text: str) -> list[list[str]]:
    """The commands a launcher's ``exec`` lines run, split as the shell splits them."""
    found: list[list[str]] = []
    for line in text.splitlines():
        stripped = line.strip()
        if ") exec " in stripped and stripped.endswith(";;"):
            command = stripped.split(") exec ", 1)[1].removesuffix(";;").strip()
            try:
                found.append(shlex.split(command))
            except ValueError:
                found.append([])
    return found


def hooks_json(
    switches: dict[str, bool], entry_conditions: tuple[str, ...] = ()
) -> dict[str, object]:
    """``hooks/hooks.json`` for these gate switches: the same table as the settings hooks
    (``entry_conditions``: the contracts' Read and Agent entries, as setup derived them)."""
    hooks: dict[str, object] = {}
    wanted = hook_registry.wanted_hooks(
        switches.get(hook_registry.CEO_REVIEW_GATE, False),
        switches.get(hook_registry.AUTOPLAN_GATE, False),
        switches.get(hook_registry.WORKFLOW_CONTRACTS, False),
        entry_conditions,
    )
    for spec in wanted:
        launch = f'"${{CLAUDE_PLUGIN_ROOT}}/{LAUNCHER}" {hook_name(spec.module)}'
        groups = hooks.setdefault(spec.event, [])
        assert isinstance(groups, list)
        groups.append(hook_registry.matcher_group(spec, command=launch))
    return {
        "description": "plangate's phase publication guard and skill gates",
        "hooks": hooks,
    }


def _json(value: object) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def plugin_files(
    python: str,
    switches: dict[str, bool],
    skills_source: str,
    root: str | None = None,
    entry_conditions: tuple[str, ...] = (),
) -> dict[str, bytes]:
    """Every file of the marketplace folder at ``root`` (default: the state root's), by
    ``/``-separated relative path."""
    folder = root if root is not None else marketplace_dir()
    plugin_folder = os.path.join(folder, PLUGIN_NAME)
    files: dict[str, bytes] = {}
    for relative in _MANIFESTS:
        with open(os.path.join(_TEMPLATES, *relative.split("/")), encoding="utf-8") as stream:
            text = stream.read().replace("{{VERSION}}", plangate.__version__)
        files[relative] = text.encode("utf-8")
    marker = skill_bundle.marker_content()
    files[PLUGIN_MARKER] = marker
    files[f"{PLUGIN_NAME}/{PLUGIN_MARKER}"] = marker
    files[f"{PLUGIN_NAME}/{LAUNCHER}"] = launcher_text(python).encode("utf-8")
    files[f"{PLUGIN_NAME}/{HOOKS_FILE}"] = _json(hooks_json(switches, entry_conditions))
    for name, source in skill_bundle.bundled(skills_source):
        target = os.path.join(plugin_folder, "skills", name)
        for relative, data in skill_bundle.expected(source, target, python).items():
            files[f"{PLUGIN_NAME}/skills/{name}/{relative}"] = data
    return files


def skill_names_in(files: dict[str, bytes]) -> list[str]:
    prefix = f"{PLUGIN_NAME}/skills/"
    return sorted({path[len(prefix) :].split("/")[0] for path in files if path.startswith(prefix)})


EXECUTABLE = frozenset({f"{PLUGIN_NAME}/{LAUNCHER}"})
