"""The checks ``plangate doctor`` runs on an installation, each a :class:`Check`.

Every check reads; none changes anything (the state root check writes and removes one
temporary file). A problem names its remedy; a warning is worth knowing but not broken.
"""

from __future__ import annotations

import os
import shlex
import sys
import tempfile
from collections.abc import Mapping

import plangate
from plangate import config, hook_registry
from plangate.claude_cli import NPM_INSTALL, VERIFIED_VERSIONS, claude_version, user_claude
from plangate.config import display_path
from plangate.errors import PlangateError
from plangate.install import skill_bundle
from plangate.install.place import temporary_reason
from plangate.install.plugin import build
from plangate.install.registrations import Registration, read_json, registrations
from plangate.locations import claude_config_dir, state_root
from plangate.processes import run_bounded
from plangate.skill_names import (
    MARKETPLACE_NAME,
    PLUGIN_ID,
    PLUGIN_NAME,
    marketplace_dir,
    plugin_dir,
)

SURVEY_DAYS = 14
OK = "ok"
WARN = "warn"
PROBLEM = "problem"
_SETUP_AGAIN = "run `plangate setup{plugin}` again with the plangate you use"


class Check:
    __slots__ = ("name", "status", "detail", "remedy")

    def __init__(self, name: str, status: str, detail: str, remedy: str = "") -> None:
        self.name = name
        self.status = status
        self.detail = detail
        self.remedy = remedy

    def as_dict(self) -> dict[str, str]:
        return {
            "check": self.name,
            "status": self.status,
            "detail": self.detail,
            "remedy": self.remedy,
        }


def check_registrations(found: list[Registration], skills_source: str) -> Check:
    if not found:
        return Check(
            "registration",
            PROBLEM,
            "no plangate hooks are registered (no settings file names them, no plugin)",
            "run `plangate setup` (settings hooks) or `plangate setup --plugin`",
        )
    where = [r.where if r.is_plugin else display_path(r.where) for r in found]
    events = [event for r in found for event in r.events]
    twice = sorted({event for event in events if events.count(event) > 1})
    if len(found) > 1 and twice:
        plugin = any(r.is_plugin for r in found)
        remedy = (
            "keep one: `plangate setup --plugin --uninstall`, or `plangate setup --uninstall` "
            "for the settings hooks"
            if plugin
            else "run `plangate setup --project --uninstall` in the project (the user's "
            "settings register plangate already)"
        )
        return Check(
            "registration",
            PROBLEM,
            f"duplicate registration: {' and '.join(where)} both register {', '.join(twice)}; "
            "every stop would be judged twice",
            remedy,
        )
    plugin_reg = next((r for r in found if r.is_plugin), None)
    skills_dir = os.path.join(claude_config_dir(), "skills")
    copied = [
        name
        for name, _ in skill_bundle.bundled(skills_source)
        if skill_bundle.is_ours(os.path.join(skills_dir, name))
    ]
    if plugin_reg is not None and copied:
        return Check(
            "registration",
            PROBLEM,
            f"duplicate registration: the plugin and {display_path(skills_dir)} both install "
            f"{', '.join(copied)} (each loads under two names)",
            "run `plangate setup --uninstall` to remove the copies (the plugin stays)",
        )
    detail = "; ".join(
        f"{w}: {', '.join(r.events) or 'no hooks'}" for w, r in zip(where, found, strict=True)
    )
    if plugin_reg is not None:
        known = read_json(os.path.join(claude_config_dir(), "plugins", "known_marketplaces.json"))
        entry = known.get(MARKETPLACE_NAME) if isinstance(known, dict) else None
        location = entry.get("installLocation") if isinstance(entry, dict) else None
        if location != marketplace_dir() or not os.path.isdir(plugin_dir()):
            return Check(
                "registration",
                PROBLEM,
                f"Claude Code's {MARKETPLACE_NAME} marketplace is {location or 'not known'}, "
                f"not this installation's {display_path(marketplace_dir())}",
                "run `plangate setup --plugin` again",
            )
    return Check("registration", OK, detail)


def _version_of(python: str, root: str) -> str | None:
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); import plangate; print(plangate.__version__)"
    )
    try:
        done = run_bounded([python, "-S", "-c", probe, root], timeout=30)
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 and not done.timed_out else None


def check_hooks(found: list[Registration]) -> Check:
    problems: list[str] = []
    plugin = any(r.is_plugin for r in found)
    pairs: list[tuple[str, str, str]] = []
    for reg in found:
        if not reg.commands:
            shown = reg.where if reg.is_plugin else display_path(reg.where)
            problems.append(f"{shown}: no hook command can be read")
        for words in reg.commands:
            if len(words) >= 4 and words[1:3] == ["-S", "-c"]:
                pair = (words[0], words[-1], reg.where)
                if pair not in pairs:
                    pairs.append(pair)
            else:
                problems.append(f"a hook command plangate cannot read: {shlex.join(words)}")
    for python, root, _where in pairs:
        config_dir = claude_config_dir()
        reason = temporary_reason(python, config_dir) or temporary_reason(root, config_dir)
        if not (os.path.isfile(python) and os.access(python, os.X_OK)):
            problems.append(f"the hooks' interpreter {python} does not exist")
        elif reason is not None:
            problems.append(f"the hooks run plangate from {reason} ({python})")
        else:
            version = _version_of(python, root)
            if version is None:
                problems.append(f"{python} cannot import plangate from {root}")
            elif version != plangate.__version__:
                problems.append(f"the hooks run plangate {version}, this is {plangate.__version__}")
    if plugin:
        launcher = os.path.join(plugin_dir(), *build.LAUNCHER.split("/"))
        if not os.access(launcher, os.X_OK):
            problems.append(
                f"the plugin's launcher {display_path(launcher)} is missing or not executable"
            )
    if not found:
        return Check(
            "hooks", PROBLEM, "nothing to check: no hooks registered", "run `plangate setup`"
        )
    if problems:
        return Check(
            "hooks",
            PROBLEM,
            "; ".join(problems),
            _SETUP_AGAIN.format(plugin=" --plugin" if plugin else ""),
        )
    pythons = ", ".join(sorted({python for python, _, _ in pairs}))
    return Check("hooks", OK, f"run plangate {plangate.__version__} with {pythons}")


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
        remedy = _SETUP_AGAIN.format(plugin=" --plugin" if plugin else "")
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


def check_claude() -> Check:
    binary = user_claude()
    if binary is None:
        return Check(
            "claude",
            PROBLEM,
            "the Claude Code CLI is not on PATH (PLANGATE_CLAUDE_BIN is not set)",
            f"install it with `{NPM_INSTALL}`",
        )
    try:
        version = claude_version(binary)
    except PlangateError as error:
        return Check("claude", PROBLEM, error.message, error.remedy)
    if version not in VERIFIED_VERSIONS:
        return Check(
            "claude",
            WARN,
            f"Claude Code {version} at {binary}; plangate is verified with "
            f"{', '.join(VERIFIED_VERSIONS)}; {survey_summary(version)}",
            "run `plangate journal survey`: it judges your journals as the hooks do and counts "
            "them by verdict and Claude Code version; report journals it does not find ready",
        )
    return Check("claude", OK, f"Claude Code {version} at {binary} (verified)")


def survey_summary(version: str, since_days: float = SURVEY_DAYS) -> str:
    """What ``plangate journal survey`` finds of ``version``'s journals (the last days)."""
    from plangate.journal_survey import collect

    try:
        report = collect(since_days=since_days)
    except PlangateError as error:
        return f"`plangate journal survey` cannot run: {error.message}"
    counts = report["summary"]["by_version"].get(version)
    days = f"the last {since_days:g} days"
    if not counts:
        return f"`plangate journal survey` finds no journal of Claude Code {version} in {days}"
    return (
        f"`plangate journal survey` finds {counts['journals']} journal(s) of Claude Code "
        f"{version} in {days}, {counts['ready']} ready"
    )


def check_state_root() -> Check:
    root = state_root()
    existing = root
    while not os.path.isdir(existing):
        parent = os.path.dirname(existing)
        if parent == existing:
            break
        existing = parent
    try:
        handle, probe = tempfile.mkstemp(prefix=".plangate-doctor-", dir=existing)
        os.close(handle)
        os.unlink(probe)
    except OSError as error:
        return Check(
            "state root",
            PROBLEM,
            f"{display_path(existing)} cannot be written: {error.strerror or error}",
            "make it writable, or point PLANGATE_STATE_ROOT at a folder that is",
        )
    created = "" if existing == root else " (it will be created)"
    return Check("state root", OK, f"{display_path(root)} is writable{created}")


def check_switches(environ: Mapping[str, str], found: list[Registration]) -> Check:
    parts: list[str] = []
    problems: list[str] = []
    events = {event for reg in found for event in reg.events}
    for name in (hook_registry.CEO_REVIEW_GATE, hook_registry.AUTOPLAN_GATE):
        try:
            value, source = config.gate_switch(name, environ)
        except PlangateError as error:
            return Check("gate switches", PROBLEM, error.message, error.remedy)
        origin = {
            config.SOURCE_ENV: f"from {config.setting(name).env}",
            config.SOURCE_CONFIG: f"from {display_path(config.config_path())}",
        }.get(source, "default")
        parts.append(f"{name} {'on' if value else 'off'} ({origin})")
        if value and found and "Stop" not in events:
            problems.append(f"{name} is on but no Stop hook is registered")
    if problems:
        plugin = any(r.is_plugin for r in found)
        return Check(
            "gate switches",
            PROBLEM,
            "; ".join([*parts, *problems]),
            _SETUP_AGAIN.format(plugin=" --plugin" if plugin else "") + " to register it",
        )
    return Check("gate switches", OK, "; ".join(parts))


def run_checks(environ: Mapping[str, str], cwd: str, skills_source: str) -> list[Check]:
    found = registrations(cwd)
    return [
        check_registrations(found, skills_source),
        check_hooks(found),
        check_skills(found, skills_source),
        check_claude(),
        check_state_root(),
        check_switches(environ, found),
    ]
