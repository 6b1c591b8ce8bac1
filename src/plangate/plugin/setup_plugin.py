"""``plangate setup --plugin``: refuse what would register plangate twice, save the switches,
build the plugin folder and install it (:mod:`plangate.plugin`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TextIO

from plangate.config import display_path
from plangate.errors import ConfigError
from plangate.plugin import install as plugin_install
from plangate.skill_bundle import is_ours
from plangate.switch_lines import resolve_switches, save_switches


def installed_skills(skills_dir: str) -> list[str]:
    """The skill folders in ``skills_dir`` that plangate installed."""
    try:
        names = sorted(os.listdir(skills_dir))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [n for n in names if not n.startswith(".") and is_ours(os.path.join(skills_dir, n))]


def install_plugin(
    *,
    claude_dir: str,
    cwd: str,
    flags: dict[str, bool | None],
    out: TextIO,
    err: TextIO,
    skills_source: str,
    python: str,
    environ: Mapping[str, str],
) -> None:
    """Builds the plugin folder and installs it with ``claude plugin``; refuses first when
    plangate's settings hooks or skills are registered (the user's, or this project's)."""
    candidates = [
        os.path.join(claude_dir, "settings.json"),
        os.path.join(cwd, ".claude", "settings.json"),
    ]
    registered = plugin_install.settings_with_hooks(candidates)
    skills_dir = os.path.join(claude_dir, "skills")
    if registered or installed_skills(skills_dir):
        what = ", ".join(display_path(path) for path in registered) or display_path(skills_dir)
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
    stored, switches, sources = resolve_switches(flags, environ, err)
    save_switches(flags, switches, sources, stored.path, environ, out, err)
    folder = plugin_install.build_folder(python, switches, skills_source, out)
    plugin_install.install(folder, os.environ, out)  # the CLI's own environment
