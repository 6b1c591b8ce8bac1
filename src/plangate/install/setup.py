"""``plangate setup``: install the skills, save the gate switches, register the hooks.

What setup owns, and nothing else:

* ``<claude config>/skills/<name>/`` for every skill folder bundled in ``plangate/skills/``,
  each marked with a ``.plangate-installed`` file. A skill folder without that file is
  someone else's and is never touched: setup refuses before changing anything.
* The gate switches given as flags, saved to ``<state root>/config.json``.
* plangate's handlers in ``<claude config>/settings.json`` (``--project``:
  ``<cwd>/.claude/settings.json``), edited by :mod:`plangate.install.settings_file`.
* With ``--hardened`` (``=off`` takes it out): Claude Code's Bash sandbox and deny rules in
  the same settings file (:mod:`plangate.install.hardening`, ``docs/sandbox.md``).
* With ``--plugin``, instead of the skills and the settings hooks: the plugin folder in the
  state root and its installation through ``claude plugin`` (:mod:`plangate.install.plugin`).

Settings hooks and the plugin are never both registered (a stop would be judged twice), and
hooks never point into a temporary environment (:mod:`plangate.install.place`): setup refuses
both, naming the remedy.

Every check that can refuse (the settings file parses, no foreign skill in the way, the
config file is readable) runs before the first change. Each action prints one line.
``--uninstall`` removes plangate's handlers and its marked skill folders and keeps the
config (plangate's own state, outside Claude Code's folder).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from typing import Any, TextIO

from plangate import config, hook_registry
from plangate.config import display_path
from plangate.errors import ConfigError, UsageError
from plangate.install import codex_hooks, hardening, settings_file, skill_bundle, skills_folder
from plangate.install.context import InstallContext, entry_conditions
from plangate.install.place import refuse_temporary
from plangate.install.plugin import install as plugin_install
from plangate.install.plugin import setup_plugin
from plangate.install.switches import resolve_switches, save_switches
from plangate.skill_names import PLUGIN_ID

SKILLS_LOCK = ".plangate-skills-lock"


def setup(
    *,
    project: bool,
    uninstall: bool,
    ceo_review_gate: bool | None,
    autoplan_gate: bool | None,
    out: TextIO,
    err: TextIO | None = None,
    cwd: str | None = None,
    skills_source: str | None = None,
    python: str | None = None,
    environ: Mapping[str, str] | None = None,
    plugin: bool = False,
    hardened: bool | None = None,
    codex: bool = False,
) -> int:
    """Install (or with ``uninstall`` remove) plangate's skills and hooks. Returns 0.

    ``ceo_review_gate``/``autoplan_gate``: the flag's value, or ``None`` when not given.
    ``cwd``, ``skills_source``, ``python`` and ``environ`` default to the process's own.
    ``hardened``: hardened mode on or off (:mod:`plangate.install.hardening`), ``None`` to
    keep it as the settings file has it.
    """
    ctx = InstallContext.create(
        project=project,
        out=out,
        err=err,
        ceo_review_gate=ceo_review_gate,
        autoplan_gate=autoplan_gate,
        cwd=cwd,
        skills_source=skills_source,
        python=python,
        environ=environ,
    )
    if codex:
        return _setup_codex(ctx, uninstall=uninstall, plugin=plugin, hardened=hardened)
    if plugin and project:
        raise UsageError(
            "--plugin takes no --project: the plugin is installed for the user",
            "run `plangate setup --plugin` without --project",
        )
    if uninstall:
        if hardened is not None:
            raise UsageError(
                "--uninstall takes no --hardened: it takes hardened mode out with the hooks",
                "run `plangate setup --uninstall` alone",
            )
        if ceo_review_gate is not None or autoplan_gate is not None:
            raise UsageError(
                "--uninstall takes no gate switches",
                "run `plangate setup --uninstall` alone; the saved switches are kept",
            )
        if plugin:
            plugin_install.uninstall(ctx.claude_dir, os.environ, out)  # the CLI's own environment
        else:
            remove(ctx)
        return 0
    refuse_temporary(ctx.python, hook_registry.package_root(), ctx.claude_dir)
    if plugin:
        if hardened is not None:
            raise UsageError(
                "--hardened takes no --plugin: the plugin cannot set Claude Code's sandbox",
                "run `plangate settings --hardened > hardened.json` and start claude with "
                "`--settings hardened.json` (docs/sandbox.md)",
            )
        setup_plugin.install_plugin(ctx)
        return 0
    if plugin_install.registered(ctx.claude_dir):
        raise ConfigError(
            f"plangate is installed as a Claude Code plugin ({PLUGIN_ID}); "
            "registering its hooks in settings too would judge every stop twice",
            "keep the plugin (`plangate setup --plugin` updates it), or run "
            "`plangate setup --plugin --uninstall` first",
        )
    install(ctx, hardened)
    return 0


def _setup_codex(
    ctx: InstallContext, *, uninstall: bool, plugin: bool, hardened: bool | None
) -> int:
    """``--codex``: the hooks in Codex's ``hooks.json`` and their trust in its ``config.toml``
    (:mod:`plangate.install.codex_hooks`); nothing of Claude Code's is touched."""
    given = [
        name
        for name, value in (
            ("--project", ctx.project),
            ("--plugin", plugin),
            ("--hardened", hardened is not None),
            ("a gate switch", any(value is not None for value in ctx.flags.values())),
        )
        if value
    ]
    if given:
        raise UsageError(
            f"--codex takes no {given[0]}: it registers the workflow contract hooks for the user",
            "run `plangate setup --codex` (or `--codex --uninstall`) alone",
        )
    environ = ctx.environ
    if uninstall:
        codex_hooks.uninstall(environ, ctx.out)
        return 0
    home = codex_hooks.codex_home(environ)
    refuse_temporary(ctx.python, hook_registry.package_root(), home)
    codex_hooks.install(environ, ctx.python, ctx.out)
    return 0


# -- install ---------------------------------------------------------------------------------


def install(ctx: InstallContext, hardened: bool | None = None) -> None:
    """The skills into ``ctx.skills_dir``, the switches saved, the hooks in the settings
    (and hardened mode as ``hardened`` wants it)."""
    if not ctx.python:
        raise ConfigError(
            "cannot tell which Python runs plangate (sys.executable is empty)",
            "run setup with the installation's interpreter: `<python> -m plangate setup`",
        )
    out, settings_path, skills_dir = ctx.out, ctx.settings_path, ctx.skills_dir
    with settings_file.locked(settings_path):
        current = settings_file.read(settings_path)  # refuses an unusable file first
        skills = skill_bundle.bundled(ctx.skills_source)
        for name, _ in skills:
            skills_folder.check_ours_or_absent(os.path.join(skills_dir, name))
        stored, switches, sources = resolve_switches(ctx.flags, ctx.environ, ctx.err)
        contracts, _ = config.gate_switch(hook_registry.WORKFLOW_CONTRACTS, ctx.environ)
        conditions = entry_conditions(ctx) if contracts else ()
        block = hook_registry.hook_settings(
            switches[hook_registry.CEO_REVIEW_GATE],
            switches[hook_registry.AUTOPLAN_GATE],
            ctx.python,
            workflow_contracts=contracts,
            entry_conditions=conditions,
        )
        # computed now: a hooks entry of the wrong type refuses before any change
        new_data = settings_file.merge_hooks(current.data, block, path=settings_path)
        new_data, hardened_lines = hardening.settle(ctx, current, new_data, hardened)
        settings_file.render(new_data)  # and so does a number JSON cannot hold

        save_switches(ctx.flags, switches, sources, stored.path, ctx.environ, out, ctx.err)
        if skills or os.path.isdir(skills_dir):
            os.makedirs(ctx.claude_dir, exist_ok=True)
            with _skills_lock(ctx, "plangate setup"):
                skills_folder.sync_skills(skills, skills_dir, ctx.python, out)
        if not skills:
            print("no skills bundled with this plangate to install", file=out)

        before = settings_file.plangate_groups(current.data)
        after = settings_file.plangate_groups(new_data)
        shown = display_path(settings_path)
        wanted = {**switches, hook_registry.WORKFLOW_CONTRACTS: contracts}
        specs = hook_registry.wanted_hooks(
            switches[hook_registry.CEO_REVIEW_GATE],
            switches[hook_registry.AUTOPLAN_GATE],
            contracts,
            conditions,
        )
        for event in block:
            label = _label(event, wanted, specs)
            if event not in before:
                print(f"registered {label} in {shown}", file=out)
            elif before[event] == after.get(event):
                print(f"unchanged {label} in {shown}", file=out)
            else:
                print(f"updated {label} in {shown}", file=out)
        for event, groups in before.items():
            if event not in block:
                print(f"removed {_removed_label(event, groups)} from {shown}", file=out)
        for line in hardened_lines:
            print(line, file=out)
        result = settings_file.write(current, new_data)
        _report_backup(result, settings_path, out)


def _skills_lock(ctx: InstallContext, command: str) -> config.FileLock:
    return config.FileLock(
        os.path.join(ctx.claude_dir, SKILLS_LOCK),
        message=f"another plangate setup is changing {display_path(ctx.skills_dir)}",
        remedy=f"wait for it to finish, then run {command} again",
    )


def _label(
    event: str,
    switches: Mapping[str, bool] | None,
    registered: list[hook_registry.HookSpec] | None = None,
) -> str:
    """``Stop gate (autoplan_gate)``; an event holding several registrations names each:
    ``PreToolUse guard (Read|Agent), contracts (Skill|…)``."""
    specs = [
        spec
        for spec in (registered if registered is not None else hook_registry.HOOKS)
        if spec.event == event and switches is not None and spec.wanted(dict(switches))
    ]
    if not specs:
        spec = hook_registry.BY_EVENT.get(event)
        if spec is None:
            return f"{event} hook"
        specs = [spec]
    parts = []
    for spec in specs:
        if spec.matcher is not None:
            parts.append(f"{spec.kind} ({spec.matcher})")
        elif switches is None:
            parts.append(spec.kind)
        else:
            serving = [name for name in spec.switches if switches.get(name)]
            parts.append(f"{spec.kind} ({', '.join(serving)})")
    return f"{event} {', '.join(parts)}"


def _removed_label(event: str, groups: list[tuple[int, Any]]) -> str:
    """What removing ``groups`` (plangate's matcher groups of ``event``) takes out, in the
    words setup registered them with: ``Stop gate, contracts``, ``PreToolUse guard
    (Read|Agent), contracts (Skill|…)``."""
    parts: list[str] = []
    for _, group in groups:
        modules = {
            hook_registry.hook_module(handler.get("command"))
            for handler in group.get("hooks", [])
            if isinstance(handler, dict)
        }
        matcher = group.get("matcher")
        spec = next(
            (
                spec
                for spec in hook_registry.HOOKS
                if spec.event == event
                and spec.module.rsplit(".", 1)[1] in modules
                and spec.matcher == matcher
            ),
            None,
        )
        if spec is None:
            part = "hook"
        else:
            part = spec.kind if spec.matcher is None else f"{spec.kind} ({spec.matcher})"
        if part not in parts:
            parts.append(part)
    return f"{event} {', '.join(parts)}" if parts else f"{event} hook"


def _report_backup(result: settings_file.WriteResult, settings_path: str, out: TextIO) -> None:
    if result.backup is not None:
        print(
            f"backed up {display_path(settings_path)} to "
            f"{display_path(settings_path + settings_file.BACKUP_SUFFIX)}",
            file=out,
        )


# -- uninstall -------------------------------------------------------------------------------


def remove(ctx: InstallContext) -> None:
    """``--uninstall`` of the settings hooks: plangate's handlers, then its skill folders."""
    out, settings_path, skills_dir = ctx.out, ctx.settings_path, ctx.skills_dir
    # The whole uninstall holds the settings lock (when there is a folder to lock in), so a
    # setup running at the same time sees either everything of ours or nothing.
    has_folder = os.path.isdir(os.path.dirname(settings_file.target_of(settings_path)))
    lock = (
        settings_file.locked(settings_path, create_folder=False)
        if has_folder
        else contextlib.nullcontext()
    )
    with lock:
        if has_folder:
            _remove_hooks(settings_path, out, hardening.block_for(ctx))
        else:
            print(f"no plangate hooks in {display_path(settings_path)}", file=out)
        if ctx.project and _user_settings_have_ours(ctx.claude_dir):
            print(
                f"kept the skills in {display_path(skills_dir)}: "
                f"{display_path(os.path.join(ctx.claude_dir, 'settings.json'))} still registers "
                "plangate (run `plangate setup --uninstall` without --project to remove them)",
                file=out,
            )
        elif skills_folder.installed_skills(skills_dir):
            with _skills_lock(ctx, "plangate setup --uninstall"):
                skills_folder.remove_skills(skills_dir, out)
        else:
            print(f"no plangate skills in {display_path(skills_dir)}", file=out)

    config_file = config.config_path()
    if os.path.exists(config_file):
        print(
            f"kept {display_path(config_file)} (plangate's own settings; "
            "delete it yourself if you want it gone)",
            file=out,
        )


def _remove_hooks(settings_path: str, out: TextIO, hardened_block: dict[str, Any]) -> None:
    shown = display_path(settings_path)
    current = settings_file.read(settings_path)
    before = settings_file.plangate_groups(current.data)
    new_data = settings_file.merge_hooks(current.data, {}, path=settings_path)
    unhardened = hardening.without(current, new_data, hardened_block)
    if unhardened != new_data:
        print(f"took hardened mode out of {shown}", file=out)
    new_data = unhardened
    for event, groups in before.items():
        print(f"removed {_removed_label(event, groups)} from {shown}", file=out)
    result = settings_file.write(current, new_data, restore_backup=True)
    _report_backup(result, settings_path, out)
    if result.action == settings_file.RESTORED:
        print(f"restored {shown} to its content from before plangate", file=out)
    elif result.action == settings_file.DELETED:
        print(f"deleted {shown}: nothing but plangate's hooks was in it", file=out)
    elif not before:
        print(f"no plangate hooks in {shown}", file=out)


def _user_settings_have_ours(claude_dir: str) -> bool:
    try:
        user = settings_file.read(os.path.join(claude_dir, "settings.json"))
    except ConfigError:
        return False
    return bool(settings_file.plangate_groups(user.data))
