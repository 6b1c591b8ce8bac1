"""``plangate doctor``'s skills check: the skills Claude Code loads are the package's.

With settings hooks Claude Code loads ``<config>/skills/``; with the plugin, the plugin folder
``plangate setup --plugin`` builds, and ``claude plugin install`` also copies it to
``<config>/plugins/cache/<marketplace>/<plugin>/<version>/`` (recorded in
``plugins/installed_plugins.json``). Each copy is compared with what this plangate installs;
an edited copy, or one of another version, is a problem whose remedy is named.
"""

from __future__ import annotations

import os
import sys

import plangate
from plangate.config import display_path
from plangate.install import skill_bundle
from plangate.install.check import OK, PROBLEM, SETUP_AGAIN, Check
from plangate.install.registrations import Registration, read_json
from plangate.locations import claude_config_dir
from plangate.skill_names import PLUGIN_ID, PLUGIN_NAME, plugin_dir


def _expected_python(found: list[Registration]) -> str:
    for reg in found:
        for words in reg.commands:
            if words:
                return words[0]
    return sys.executable


def _differences(name: str, source: str, target: str, rendered_at: str, python: str) -> str:
    """How the skill folder ``target`` differs from plangate's ``name`` as rendered for the
    folder ``rendered_at``; empty when it does not."""
    if not skill_bundle.is_ours(target):
        return f"{name} is not installed in {display_path(os.path.dirname(target))}"
    expected = skill_bundle.expected(source, rendered_at, python)
    installed = skill_bundle.tree(target)
    changed = sorted(
        p for p in set(expected) | set(installed) if expected.get(p) != installed.get(p)
    )
    if not changed:
        return ""
    return f"{name} differs from plangate {plangate.__version__}'s: " + ", ".join(
        f"{display_path(target)}/{p}" for p in changed[:3]
    )


def installed_copies() -> list[tuple[str, str]]:
    """The copies of plangate's plugin Claude Code records as installed
    (``plugins/installed_plugins.json``: ``<config>/plugins/cache/<marketplace>/<plugin>/
    <version>``), each with the version it records."""
    record = read_json(os.path.join(claude_config_dir(), "plugins", "installed_plugins.json"))
    plugins = record.get("plugins") if isinstance(record, dict) else None
    entries = plugins.get(PLUGIN_ID) if isinstance(plugins, dict) else None
    copies: list[tuple[str, str]] = []
    for entry in entries if isinstance(entries, list) else []:
        path = entry.get("installPath") if isinstance(entry, dict) else None
        if isinstance(path, str) and path and all(path != known for known, _ in copies):
            version = entry.get("version")
            copies.append((path, version if isinstance(version, str) else "unknown"))
    return copies


def check_skills(found: list[Registration], skills_source: str) -> Check:
    """The skills as Claude Code loads them: with settings hooks, ``<config>/skills/``; with
    the plugin, the plugin folder setup builds and every installed copy Claude Code made of
    it (an edited or stale copy is a problem)."""
    plugin = any(r.is_plugin for r in found)
    python = _expected_python(found)
    base = os.path.join(plugin_dir() if plugin else claude_config_dir(), "skills")
    problems: list[str] = []
    copy_problems: list[str] = []
    names: list[str] = []
    copies = installed_copies() if plugin else []
    for path, version in copies:
        if version != plangate.__version__:
            copy_problems.append(
                f"Claude Code's installed copy {display_path(path)} is plangate {version}'s, "
                f"this is {plangate.__version__}"
            )
    for name, source in skill_bundle.bundled(skills_source):
        names.append(name)
        rendered_at = os.path.join(base, name)
        problem = _differences(name, source, rendered_at, rendered_at, python)
        if problem:
            problems.append(problem)
        for path, _version in copies:
            target = os.path.join(path, "skills", name)
            problem = _differences(name, source, target, rendered_at, python)
            if problem:
                copy_problems.append(problem)
    copy_problems = [p for i, p in enumerate(copy_problems) if p not in copy_problems[:i]]
    if problems or copy_problems:
        remedy = SETUP_AGAIN.format(plugin=" --plugin" if plugin else "")
        if copy_problems:
            remedy = (
                "run `plangate setup --plugin --uninstall`, then `plangate setup --plugin`: "
                "Claude Code copies the plugin anew"
            )
        return Check(
            "skills",
            PROBLEM,
            "; ".join(problems + copy_problems),
            remedy + " (it replaces edited files: copy your changes elsewhere first)",
        )
    where = PLUGIN_NAME + " plugin" if plugin else display_path(base)
    if copies:
        where += ", and Claude Code's installed copy " + ", ".join(
            display_path(path) for path, _ in copies
        )
    return Check(
        "skills",
        OK,
        f"{', '.join(names) or 'none bundled'} match plangate {plangate.__version__} ({where})",
    )
