"""The checks ``plangate doctor`` runs on an installation, each a :class:`Check`.

Every check reads; none changes anything (the state root check writes and removes one
temporary file). A problem names its remedy; a warning is worth knowing but not broken.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import tempfile
from collections.abc import Mapping

import plangate
from plangate import config, hook_registry
from plangate.claude_cli import NPM_INSTALL, VERIFIED_VERSIONS, claude_version, user_claude
from plangate.config import display_path
from plangate.errors import PlangateError
from plangate.install import codex_hooks, skill_bundle
from plangate.install.check import OK, PROBLEM, SETUP_AGAIN, WARN, Check
from plangate.install.hook_probe import STDLIB, probe
from plangate.install.place import temporary_reason
from plangate.install.plugin import build
from plangate.install.registrations import Registration, read_json, registrations
from plangate.install.skill_check import check_skills
from plangate.journal.fast import fast_min_bytes
from plangate.locations import claude_config_dir, state_root
from plangate.skill_names import (
    MARKETPLACE_NAME,
    marketplace_dir,
    plugin_dir,
)

SURVEY_DAYS = 14


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


def _runs_plangate(words: list[str]) -> bool:
    """Whether a hook command is plangate's ``<python> -S -c <entry> <folder>``."""
    return len(words) >= 4 and words[1:3] == ["-S", "-c"]


def _hook_interpreters(found: list[Registration]) -> list[tuple[str, str]]:
    """The (interpreter, plangate folder) pairs the registered hook commands run."""
    pairs: list[tuple[str, str]] = []
    for reg in found:
        for words in reg.commands:
            if _runs_plangate(words) and (words[0], words[-1]) not in pairs:
                pairs.append((words[0], words[-1]))
    return pairs


def check_hooks(found: list[Registration]) -> Check:
    problems: list[str] = []
    plugin = any(r.is_plugin for r in found)
    for reg in found:
        if not reg.commands:
            shown = reg.where if reg.is_plugin else display_path(reg.where)
            problems.append(f"{shown}: no hook command can be read")
        for words in reg.commands:
            if not _runs_plangate(words):
                problems.append(f"a hook command plangate cannot read: {shlex.join(words)}")
    pairs = _hook_interpreters(found)
    for python, root in pairs:
        config_dir = claude_config_dir()
        reason = temporary_reason(python, config_dir) or temporary_reason(root, config_dir)
        if not (os.path.isfile(python) and os.access(python, os.X_OK)):
            problems.append(f"the hooks' interpreter {python} does not exist")
        elif reason is not None:
            problems.append(f"the hooks run plangate from {reason} ({python})")
        else:
            probed = probe(python, root)
            version = probed.version if probed is not None else None
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
            SETUP_AGAIN.format(plugin=" --plugin" if plugin else ""),
        )
    pythons = ", ".join(sorted({python for python, _ in pairs}))
    return Check("hooks", OK, f"run plangate {plangate.__version__} with {pythons}")


def check_parser(found: list[Registration]) -> Check:
    """Which JSON parser the hooks read long journals with: msgspec, or the standard library
    (the fallback where msgspec has no wheel: the same verdicts, cold reads about twice as
    long)."""
    pairs = _hook_interpreters(found) or [(sys.executable, hook_registry.package_root())]
    said: list[str] = []
    without: list[str] = []
    for python, root in pairs:
        probed = probe(python, root)
        if probed is None:
            continue  # the hooks check names it
        parser = "the standard library" if probed.parser == STDLIB else probed.parser
        if probed.parser == STDLIB:
            without.append(python)
        if parser not in said:
            said.append(parser)
    if not said:
        return Check("parser", OK, "nothing to check: no hook interpreter imports plangate")
    whose = "the hooks parse" if found else "no hooks registered; this plangate parses"
    detail = f"{whose} journals of {fast_min_bytes() >> 20} MiB and more with {' and '.join(said)}"
    if without:
        return Check(
            "parser",
            WARN,
            f"{detail}: {', '.join(without)} cannot import msgspec, so cold reads of long "
            "journals take about twice as long (the verdicts are the same)",
            "reinstall plangate with its dependencies (`uv tool upgrade --reinstall plangate` "
            "or `pipx reinstall plangate`); without a msgspec wheel for this platform the "
            "standard library is the fallback",
        )
    return Check("parser", OK, detail)


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
    modules = {module for reg in found for module in reg.modules}
    wants = {
        hook_registry.CEO_REVIEW_GATE: ("stop", "Stop"),
        hook_registry.AUTOPLAN_GATE: ("stop", "Stop"),
        hook_registry.WORKFLOW_CONTRACTS: ("prompt_expansion", "contract"),
    }
    for name, (module, what) in wants.items():
        try:
            value, source = config.gate_switch(name, environ)
        except PlangateError as error:
            return Check("gate switches", PROBLEM, error.message, error.remedy)
        origin = {
            config.SOURCE_ENV: f"from {config.setting(name).env}",
            config.SOURCE_CONFIG: f"from {display_path(config.config_path())}",
        }.get(source, "default")
        parts.append(f"{name} {'on' if value else 'off'} ({origin})")
        if value and found and module not in modules:
            problems.append(f"{name} is on but no {what} hook is registered")
    if problems:
        plugin = any(r.is_plugin for r in found)
        return Check(
            "gate switches",
            PROBLEM,
            "; ".join([*parts, *problems]),
            SETUP_AGAIN.format(plugin=" --plugin" if plugin else "") + " to register it",
        )
    return Check("gate switches", OK, "; ".join(parts))


def check_filter(found: list[Registration]) -> Check:
    """Whether the guard is registered with its ``if`` conditions, so that a call it cannot
    decide starts no process (a registration from before them still decides right)."""
    wanted = sorted(hook_registry.GUARD_CONDITIONS)
    if not any("PreToolUse" in reg.events for reg in found):
        return Check(
            "hook filter",
            WARN,
            "nothing to check: the guard's hook is not registered",
            "run `plangate setup` (settings hooks) or `plangate setup --plugin`",
        )
    stale = [
        reg.where if reg.is_plugin else display_path(reg.where)
        for reg in found
        if "PreToolUse" in reg.events and sorted(map(str, reg.guard_conditions)) != wanted
    ]
    if stale:
        return Check(
            "hook filter",
            WARN,
            f"the guard in {', '.join(stale)} has no `if` conditions: every Read starts a "
            "plangate process (its decisions are the same)",
            SETUP_AGAIN,
        )
    return Check(
        "hook filter",
        OK,
        "only phase-file Reads and Agent calls start the guard (`if`: "
        + ", ".join(hook_registry.GUARD_CONDITIONS)
        + ")",
    )


def check_entries(found: list[Registration], cwd: str) -> Check:
    """Whether the contracts' Read and Agent phase entries known here are registered (their
    ``if`` conditions are derived when setup runs: a contract added later is not covered),
    and no contract found here fails to parse (a problem: its workflow is refused)."""
    serving = [reg for reg in found if "UserPromptExpansion" in reg.events]
    if not serving:
        return Check("contracts", OK, "the workflow contract hooks are not registered")
    from plangate.contracts import discovery, entries

    survey = entries.survey(cwd)
    broken = [(i, f) for i, f in survey.broken if i.origin != discovery.LIBRARY]
    if broken:
        setup = "plangate setup --plugin" if any(r.is_plugin for r in serving) else "plangate setup"
        notes = [entries.broken_note(item, fallback, setup) for item, fallback in broken]
        return Check(
            "contracts",
            PROBLEM,
            "; ".join(message for message, _ in notes),
            "; ".join(remedy for _, remedy in notes),
        )
    known = survey.covered()
    registered = [condition for reg in serving for condition in reg.entry_conditions]
    missing = entries.uncovered(known, registered)
    if missing:
        plugin = any(reg.is_plugin for reg in serving)
        return Check(
            "contracts",
            WARN,
            f"the Read and Agent phase entries of {', '.join(missing)} are not registered: "
            "such a call enters its phase unchecked (the contract was added after setup)",
            SETUP_AGAIN.format(plugin=" --plugin" if plugin else "")
            + " (it registers the entries of the contracts known then)",
        )
    wanted = entries.conditions(known)
    if not wanted:
        return Check("contracts", OK, "no contract here enters a phase by a Read or Agent")
    return Check("contracts", OK, "registered (`if`: " + ", ".join(wanted) + ")")


def run_checks(environ: Mapping[str, str], cwd: str, skills_source: str) -> list[Check]:
    found = registrations(cwd)
    probe.cache_clear()  # one probe per interpreter in a run, none kept from an earlier one
    return [
        check_registrations(found, skills_source),
        check_hooks(found),
        check_filter(found),
        check_entries(found, cwd),
        check_parser(found),
        check_skills(found, skills_source),
        check_claude(),
        check_state_root(),
        check_switches(environ, found),
        *protection_checks(environ, cwd, found),
        *codex_hooks.checks(environ, cwd, shutil.which("codex") is not None),
    ]


def protection_checks(
    environ: Mapping[str, str], cwd: str, found: list[Registration]
) -> list[Check]:
    """What keeps the hooks running and plangate's files out of the agent's reach
    (:mod:`plangate.install.protection`), and the installed files against their RECORD."""
    from plangate.install import protection
    from plangate.install.installed_files import check_installed_files

    scopes = protection.scopes(cwd)
    return [
        protection.check_protection(scopes, environ),
        protection.check_switched_off(scopes),
        protection.check_hook_scopes(found, environ, cwd),
        protection.check_exclusions(scopes),
        check_installed_files(),
    ]
