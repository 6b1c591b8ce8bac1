"""``plangate setup --hardened[=on|off]``: hardened mode (:mod:`.hardened`) in the settings file
setup edits, turned on, kept, refreshed or taken back, and the lines setup prints for it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plangate import hook_registry
from plangate.config import display_path
from plangate.errors import ConfigError
from plangate.install import hardened, settings_file
from plangate.install.context import InstallContext
from plangate.locations import state_root

LOCK_NOTE = (
    "note: a project's .claude/settings.json or settings.local.json outranks {shown} and can "
    "turn the sandbox off; for a lock no project undoes, run claude with "
    "`--settings` (`plangate settings --hardened`) or put those keys in the managed settings "
    f"({hardened.MANAGED_SETTINGS}); see docs/sandbox.md"
)


def block_for(ctx: InstallContext) -> dict[str, Any]:
    """Hardened mode's settings for this installation (with ``--project``, for that project)."""
    return hardened.sandbox_settings(
        state_root(),
        ctx.claude_dir,
        hook_registry.package_root(),
        ctx.python,
        project=ctx.folder() if ctx.project else None,
    )


def before_plangate(settings: settings_file.SettingsFile) -> dict[str, Any]:
    """The file as it was before plangate's first change: the backup's content, else the
    file itself while it holds none of plangate's handlers, else ``{}`` (plangate made it)."""
    try:
        with open(settings.target + settings_file.BACKUP_SUFFIX, "rb") as stream:
            raw = stream.read()
    except OSError:
        return {} if settings_file.plangate_groups(settings.data) else dict(settings.data)
    try:
        return settings_file.parse(settings.target + settings_file.BACKUP_SUFFIX, raw)
    except ConfigError:
        return {}


def settle(
    ctx: InstallContext,
    current: settings_file.SettingsFile,
    data: Mapping[str, Any],
    wanted: bool | None,
) -> tuple[dict[str, Any], list[str]]:
    """``data`` (the merged hooks) with hardened mode as ``wanted``: on, off, or ``None``
    (kept as the file has it, refreshed when on). Refuses (before any change) when it cannot
    be turned on: the sandbox's tools missing, or a file that would undo it. Returns the new
    content and the lines to print."""
    block = block_for(ctx)
    shown = display_path(ctx.settings_path)
    on_now = hardened.is_hardened(current.data, block)
    if wanted is None:
        if not on_now and not hardened.holds_rules(current.data, block):
            return dict(data), []
        wanted = on_now
        if not wanted:
            return dict(data), [
                f"note: {shown} holds part of plangate's hardened mode; run "
                "`plangate setup --hardened` to complete it or `--hardened=off` to take it out"
            ]
    if wanted:
        hardened.require_tools(ctx.environ)
        hardened.check_mergeable(data, shown)
        created = ctx.project and hardened.project_contracts(ctx.folder())[1]
        merged = hardened.merge(data, block)
        verb = "unchanged" if on_now else "set"
        lines = [
            f"{verb} hardened mode in {shown}: every Bash command runs in Claude Code's sandbox "
            "(bubblewrap), the state root, settings files, contracts and plangate's package "
            "read-only"
        ]
        if created:
            lines.append(
                f"created {display_path(ctx.folder())}/.plangate/contracts (empty): the sandbox "
                "keeps it read-only"
            )
        if verb == "set":
            lines.append(LOCK_NOTE.format(shown=shown))
        return merged, lines
    back = hardened.take_back(data, block, before_plangate(current))
    if back == dict(data):
        return back, [f"no hardened mode in {shown}"]
    return back, [f"took hardened mode out of {shown} (its keys as they were before plangate)"]


def without(
    current: settings_file.SettingsFile, data: Mapping[str, Any], block: Mapping[str, Any]
) -> dict[str, Any]:
    """``--uninstall``: hardened mode taken out too (a no-op where it never was)."""
    return hardened.take_back(data, block, before_plangate(current))
