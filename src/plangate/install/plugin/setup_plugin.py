"""``plangate setup --plugin``: refuse what would register plangate twice, save the switches,
build the plugin folder and install it (:mod:`plangate.install.plugin`)."""

from __future__ import annotations

import os

from plangate import config, hook_registry
from plangate.config import display_path
from plangate.errors import ConfigError
from plangate.install.context import InstallContext, entry_conditions
from plangate.install.plugin import install as plugin_install
from plangate.install.skills_folder import installed_skills
from plangate.install.switches import resolve_switches, save_switches


def install_plugin(ctx: InstallContext) -> None:
    """Builds the plugin folder and installs it with ``claude plugin``; refuses first when
    plangate's settings hooks or skills are registered (the user's, or this project's)."""
    cwd = ctx.folder()
    candidates = [
        os.path.join(ctx.claude_dir, "settings.json"),
        os.path.join(cwd, ".claude", "settings.json"),
    ]
    registered = plugin_install.settings_with_hooks(candidates)
    if registered or installed_skills(ctx.skills_dir):
        what = ", ".join(display_path(path) for path in registered) or display_path(ctx.skills_dir)
        project_hint = (
            f" and `plangate setup --project --uninstall` in {display_path(cwd)}"
            if any(path == candidates[1] for path in registered)
            else ""
        )
        raise ConfigError(
            f"plangate is already set up through settings ({what}); installing the plugin "
            "as well would judge every stop twice",
            f"run `plangate setup --uninstall`{project_hint} first, then plangate setup "
            "--plugin again",
        )
    stored, switches, sources = resolve_switches(ctx.flags, ctx.environ, ctx.err)
    save_switches(ctx.flags, switches, sources, stored.path, ctx.environ, ctx.out, ctx.err)
    contracts, _ = config.gate_switch(hook_registry.WORKFLOW_CONTRACTS, ctx.environ)
    wanted = {**switches, hook_registry.WORKFLOW_CONTRACTS: contracts}
    conditions = entry_conditions(ctx, "plangate setup --plugin") if contracts else ()
    folder = plugin_install.build_folder(ctx.python, wanted, ctx.skills_source, ctx.out, conditions)
    plugin_install.install(folder, os.environ, ctx.out)  # the CLI's own environment
