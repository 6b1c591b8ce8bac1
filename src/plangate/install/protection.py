"""``plangate doctor``'s checks of what keeps plangate's hooks running and its files out of the
agent's reach: every Claude Code settings scope read (managed, local, project, user, in
Claude Code's order of precedence), then:

* ``protection``: hooks only, or hooks + the operating system (Claude Code's sandbox), and,
  when the sandbox is on, whether it holds (``failIfUnavailable``, no unsandboxed fallback,
  bubblewrap and socat present, neither ``allowNestedUserNamespaces`` nor
  ``enableWeakerNestedSandbox``);
* ``hooks off``: ``disableAllHooks`` in any scope (or the managed
  ``allowManagedHooksOnly``, which drops plangate's hooks too);
* ``hook scopes``: a settings file that registers plangate without hooks the gate switches
  want, or that setup registered (its backup is there) and that holds none now;
* ``exclusions``: an interpreter or a shell in ``sandbox.excludedCommands``.

A file given to ``claude --settings`` is not seen here: it belongs to one invocation.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Mapping
from typing import Any

from plangate import config, hook_registry
from plangate.config import display_path
from plangate.errors import PlangateError
from plangate.install import hardened, settings_file
from plangate.install.check import OK, PROBLEM, SETUP_AGAIN, Check
from plangate.install.registrations import Registration
from plangate.locations import claude_config_dir

MANAGED = "managed"
LOCAL = "local"
PROJECT = "project"
USER = "user"
DISABLE_ALL_HOOKS = "disableAllHooks"
MANAGED_HOOKS_ONLY = "allowManagedHooksOnly"


class Scope:
    """One settings file Claude Code reads: its scope, path and content (``{}`` if absent or
    unreadable; ``error`` says which)."""

    __slots__ = ("scope", "path", "data", "error")

    def __init__(self, scope: str, path: str, data: dict[str, Any], error: str = "") -> None:
        self.scope = scope
        self.path = path
        self.data = data
        self.error = error

    @property
    def shown(self) -> str:
        return display_path(self.path)


def managed_paths(managed_dir: str | None = None) -> list[str]:
    """The managed settings file and its drop-ins (``managed-settings.d/*.json``)."""
    folder = managed_dir if managed_dir is not None else hardened.MANAGED_DIR
    return [
        os.path.join(folder, "managed-settings.json"),
        *sorted(glob.glob(os.path.join(folder, "managed-settings.d", "*.json"))),
    ]


def scopes(cwd: str, managed_dir: str | None = None) -> list[Scope]:
    """The settings files, highest precedence first; each real file once."""
    listed = [(MANAGED, path) for path in managed_paths(managed_dir)]
    listed += [
        (LOCAL, os.path.join(cwd, ".claude", "settings.local.json")),
        (PROJECT, os.path.join(cwd, ".claude", "settings.json")),
        (USER, os.path.join(claude_config_dir(), "settings.json")),
    ]
    found: list[Scope] = []
    seen: set[str] = set()
    for scope, path in listed:
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        try:
            found.append(Scope(scope, path, settings_file.read(path).data))
        except PlangateError as error:
            found.append(Scope(scope, path, {}, error.message))
    return found


def _effective(found: list[Scope], name: str) -> tuple[object, Scope | None]:
    """``sandbox.<name>`` as Claude Code resolves it: the highest scope that sets it."""
    for scope in found:
        sandbox = scope.data.get(hardened.SANDBOX)
        if isinstance(sandbox, dict) and name in sandbox:
            return sandbox[name], scope
    return None, None


def check_protection(found: list[Scope], environ: Mapping[str, str]) -> Check:
    enabled, where = _effective(found, hardened.ENABLED)
    turned_on = [
        scope
        for scope in found
        if isinstance(scope.data.get(hardened.SANDBOX), dict)
        and scope.data[hardened.SANDBOX].get(hardened.ENABLED) is True
    ]
    if enabled is False and where is not None and turned_on:
        return Check(
            "protection",
            PROBLEM,
            f"hooks only: Claude Code's sandbox is on in {turned_on[0].shown}, and "
            f"{where.shown}, which outranks it, turns it off",
            f"remove sandbox.enabled from {where.shown} if you did not put it there; for a lock "
            "no project undoes, run claude with --settings (`plangate settings --hardened`)",
        )
    if enabled is not True or where is None:
        said = f" ({where.shown} turns it off)" if where is not None else ""
        return Check(
            "protection",
            OK,
            f"hooks only: Claude Code's sandbox is off{said}, so a Bash command can write what "
            "the hooks do not see (a file given to claude --settings is not seen here); "
            "`plangate setup --hardened` adds the operating system (docs/sandbox.md)",
        )
    problems: list[str] = []
    fail, fail_where = _effective(found, hardened.FAIL_IF_UNAVAILABLE)
    if fail is not True:
        problems.append(
            f"failIfUnavailable is {_said(fail, fail_where)}: without bubblewrap or socat every "
            "command runs unsandboxed"
        )
    fallback, fallback_where = _effective(found, hardened.ALLOW_UNSANDBOXED)
    if fallback is not False:
        problems.append(
            f"allowUnsandboxedCommands is {_said(fallback, fallback_where, 'true')}: a Bash call "
            "with dangerouslyDisableSandbox runs outside the sandbox"
        )
    for name, effect in hardened.WEAKENING.items():
        where_on = [scope.shown for scope in found if name in hardened.weakening(scope.data)]
        if where_on:
            problems.append(f"{name} is on in {', '.join(where_on)}: it {effect}")
    missing = hardened.missing_tools(environ)
    if missing:
        problems.append(
            f"{' and '.join(missing)} missing: the sandbox cannot start "
            f"(install them: {hardened.INSTALL_TOOLS})"
        )
    if problems:
        return Check(
            "protection",
            PROBLEM,
            f"Claude Code's sandbox is on ({where.shown}) but does not hold: "
            + "; ".join(problems),
            "run `plangate setup --hardened` again (it sets failIfUnavailable and turns the "
            "fallback off), and remove allowNestedUserNamespaces and enableWeakerNestedSandbox "
            "where they are set",
        )
    outranked = (
        "; a project's .claude/settings*.json outranks it: a lock no project undoes is "
        "claude --settings (`plangate settings --hardened`) or the managed settings"
        if where.scope == USER
        else ""
    )
    return Check(
        "protection",
        OK,
        f"hooks + operating system (Claude Code's sandbox, from {where.shown}){outranked}",
    )


def _said(value: object, where: Scope | None, default: str = "unset") -> str:
    if where is None:
        return f"{default} (not set in any settings file)"
    shown = str(value).lower() if isinstance(value, bool) else repr(value)
    return f"{shown} in {where.shown}"


def check_switched_off(found: list[Scope]) -> Check:
    problems: list[str] = []
    remedies: list[str] = []
    for scope in found:
        if scope.data.get(DISABLE_ALL_HOOKS) is True:
            problems.append(f"disableAllHooks is true in {scope.shown}: no hook runs")
            remedies.append(f'remove "disableAllHooks" from {scope.shown}')
        if scope.scope == MANAGED and scope.data.get(MANAGED_HOOKS_ONLY) is True:
            problems.append(
                f"allowManagedHooksOnly is true in {scope.shown}: only managed hooks run, "
                "plangate's are dropped"
            )
            remedies.append(
                f"register plangate's hooks in {scope.shown} (`plangate settings` prints them) "
                "or remove allowManagedHooksOnly"
            )
    if problems:
        return Check("hooks off", PROBLEM, "; ".join(problems), "; ".join(remedies))
    unreadable = [f"{scope.shown} ({scope.error})" for scope in found if scope.error]
    detail = f"no settings scope switches hooks off ({len(found)} read)"
    if unreadable:
        detail += f"; cannot read {', '.join(unreadable)}"
    return Check("hooks off", OK, detail)


def wanted_modules(environ: Mapping[str, str]) -> set[str]:
    """The hook modules a settings registration must run for the gate switches as set."""
    switches = {
        name: config.gate_switch(name, environ)[0]
        for name in (
            hook_registry.CEO_REVIEW_GATE,
            hook_registry.AUTOPLAN_GATE,
            hook_registry.WORKFLOW_CONTRACTS,
        )
    }
    specs = hook_registry.wanted_hooks(
        switches[hook_registry.CEO_REVIEW_GATE],
        switches[hook_registry.AUTOPLAN_GATE],
        switches[hook_registry.WORKFLOW_CONTRACTS],
    )
    return {spec.module.removeprefix(hook_registry.HOOK_MODULE_PREFIX) for spec in specs}


def check_hook_scopes(found: list[Registration], environ: Mapping[str, str], cwd: str) -> Check:
    problems: list[str] = []
    try:
        wanted = wanted_modules(environ)
    except PlangateError as error:
        return Check("hook scopes", PROBLEM, error.message, error.remedy)
    for reg in found:
        if reg.is_plugin:
            continue
        missing = sorted(wanted - set(reg.modules))
        if missing:
            problems.append(
                f"{display_path(reg.where)} registers plangate without {', '.join(missing)}"
            )
    registered = {os.path.realpath(reg.where) for reg in found if not reg.is_plugin}
    for path in (
        os.path.join(claude_config_dir(), "settings.json"),
        os.path.join(cwd, ".claude", "settings.json"),
    ):
        backup = settings_file.target_of(path) + settings_file.BACKUP_SUFFIX
        if os.path.exists(backup) and os.path.realpath(path) not in registered:
            problems.append(
                f"plangate setup registered its hooks in {display_path(path)} (its backup "
                f"{display_path(backup)} is there) and they are gone"
            )
    if problems:
        return Check(
            "hook scopes",
            PROBLEM,
            "; ".join(problems),
            SETUP_AGAIN.format(plugin="") + " (with --project for a project's settings)",
        )
    shown = ", ".join(display_path(reg.where) for reg in found if not reg.is_plugin)
    return Check(
        "hook scopes",
        OK,
        f"every settings registration has the hooks the switches want ({shown})"
        if shown
        else "no settings file registers plangate",
    )


def check_exclusions(found: list[Scope]) -> Check:
    problems = [
        f"{', '.join(listed)} in {scope.shown}"
        for scope in found
        if (listed := hardened.excluded_interpreters(scope.data))
    ]
    if problems:
        return Check(
            "exclusions",
            PROBLEM,
            "an interpreter or shell in sandbox.excludedCommands runs outside the sandbox with "
            "any code it is given: " + "; ".join(problems),
            "remove them from sandbox.excludedCommands (list only single tools that need to "
            "run outside, such as docker)",
        )
    return Check("exclusions", OK, "no interpreter or shell in sandbox.excludedCommands")
