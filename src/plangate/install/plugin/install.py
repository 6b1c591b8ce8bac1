"""Installing the plugin with the real ``claude plugin`` commands, and finding out whether it is.

``claude plugin marketplace add DIR --json`` and ``claude plugin install plangate@plangate
--json`` are non-interactive and idempotent on Claude Code 2.1.332; ``claude plugin
uninstall`` and ``claude plugin marketplace remove`` undo them. The CLI is
``$PLANGATE_CLAUDE_BIN`` or ``claude`` on PATH; without one, the commands are printed for the
person to run. Whether the plugin is installed is read from Claude Code's own records
(``plugins/installed_plugins.json``, ``enabledPlugins`` in the user's settings).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from collections.abc import Mapping
from typing import Any, TextIO

from plangate.claude_cli import CLAUDE_BIN_ENV
from plangate.config import display_path
from plangate.errors import ConfigError
from plangate.install import settings_file, skill_bundle
from plangate.install.plugin import build
from plangate.processes import run_bounded
from plangate.skill_names import MARKETPLACE_DIR, MARKETPLACE_NAME, PLUGIN_ID, marketplace_dir
from plangate.state_root import StateRoot

_TIMEOUT_S = 120
_ABSENT = ("not_installed", "not_configured", "not_found")


def claude_binary(environ: Mapping[str, str]) -> str | None:
    """``$PLANGATE_CLAUDE_BIN`` when set, else ``claude`` on PATH, else None."""
    configured = environ.get(CLAUDE_BIN_ENV, "")
    if configured:
        return configured
    return shutil.which("claude", path=environ.get("PATH", os.defpath))


def _read_json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as stream:
            return json.load(stream)
    except (OSError, ValueError):
        return None


def registered(claude_dir: str) -> bool:
    """Whether Claude Code records plangate's plugin as installed or enabled for the user."""
    installed = _read_json(os.path.join(claude_dir, "plugins", "installed_plugins.json"))
    if isinstance(installed, dict):
        plugins = installed.get("plugins")
        if isinstance(plugins, dict) and plugins.get(PLUGIN_ID):
            return True
    user = _read_json(os.path.join(claude_dir, "settings.json"))
    if isinstance(user, dict):
        enabled = user.get("enabledPlugins")
        if isinstance(enabled, dict) and enabled.get(PLUGIN_ID):
            return True
    return False


def install_commands(folder: str) -> list[list[str]]:
    return [
        ["claude", "plugin", "marketplace", "add", folder, "--json"],
        ["claude", "plugin", "install", PLUGIN_ID, "--json"],
    ]


def uninstall_commands() -> list[list[str]]:
    return [
        ["claude", "plugin", "uninstall", PLUGIN_ID, "--json"],
        ["claude", "plugin", "marketplace", "remove", MARKETPLACE_NAME, "--json"],
    ]


def _shown(command: list[str]) -> str:
    return shlex.join(command)


def _run_claude(binary: str, command: list[str], environ: Mapping[str, str]) -> dict[str, Any]:
    """Runs one ``claude plugin … --json`` command; its JSON answer (``outcome`` ok or not)."""
    args = [binary, *command[1:]]
    shown = _shown(command)
    remedy = "run the command yourself to see why, then run plangate setup --plugin again"
    try:
        done = run_bounded(args, timeout=_TIMEOUT_S, env=dict(environ))
    except OSError as error:
        raise ConfigError(
            f"cannot run {binary}: {error.strerror or error}",
            f"point {CLAUDE_BIN_ENV} at the claude executable, or unset it to use `claude` on PATH",
        ) from None
    if done.timed_out:
        raise ConfigError(f"`{shown}` did not finish within {_TIMEOUT_S} s", remedy)
    for line in reversed(done.stdout.splitlines()):
        try:
            answer = json.loads(line)
        except ValueError:
            continue
        if isinstance(answer, dict) and "outcome" in answer:
            return answer
    said = (done.stderr.strip() or done.stdout.strip())[-300:] or "no output"
    raise ConfigError(f"`{shown}` exited with status {done.returncode}: {said}", remedy)


def build_folder(
    python: str,
    switches: dict[str, bool],
    skills_source: str,
    out: TextIO,
    entry_conditions: tuple[str, ...] = (),
) -> str:
    """Writes the marketplace folder (only when it changed); returns its path."""
    folder = marketplace_dir()
    if os.path.lexists(folder) and not skill_bundle.is_ours(folder):
        raise ConfigError(
            f"{display_path(folder)} exists and was not built by plangate",
            "move it away, then run plangate setup --plugin again",
        )
    files = build.plugin_files(python, switches, skills_source, folder, entry_conditions)
    shown = display_path(folder)
    if skill_bundle.is_ours(folder) and skill_bundle.tree(folder) == files:
        print(f"unchanged plugin folder {shown}", file=out)
    else:
        verb = "updated" if os.path.isdir(folder) else "built"
        StateRoot().folder()  # the state root: a real folder of ours, made 0700 when missing
        skill_bundle.replace_folder(files, folder, build.EXECUTABLE)
        skills = ", ".join(build.skill_names_in(files)) or "no skills"
        print(f"{verb} plugin folder {shown} ({skills}; hooks: {_hook_list(switches)})", file=out)
    return folder


def _hook_list(switches: dict[str, bool], entry_conditions: tuple[str, ...] = ()) -> str:
    events = build.hooks_json(switches, entry_conditions)["hooks"]
    assert isinstance(events, dict)
    return ", ".join(events)


def install(folder: str, environ: Mapping[str, str], out: TextIO) -> None:
    """``claude plugin marketplace add`` and ``claude plugin install``, or prints them."""
    binary = claude_binary(environ)
    commands = install_commands(folder)
    if binary is None:
        print(
            f"Claude Code's CLI is not on PATH ({CLAUDE_BIN_ENV} is not set either); "
            "to install the plugin, run:",
            file=out,
        )
        for command in commands:
            print(f"  {_shown(command)}", file=out)
        return
    for command in commands:
        answer = _run_claude(binary, command, environ)
        if answer.get("outcome") != "ok":
            raise ConfigError(
                f"`{_shown(command)}` failed: {answer.get('message') or answer}",
                "fix what it says, then run plangate setup --plugin again",
            )
        print(f"ran `{_shown(command)}`: {answer.get('message', 'ok')}", file=out)
    print(
        "the plugin loads at the next Claude Code session (or /reload-plugins); "
        "its skills are /plangate:autoplan and /plangate:plan-ceo-review",
        file=out,
    )


def uninstall(claude_dir: str, environ: Mapping[str, str], out: TextIO) -> None:
    """Removes the plugin from Claude Code (or prints how), then its folder."""
    folder = marketplace_dir()
    binary = claude_binary(environ)
    if binary is None:
        if registered(claude_dir):
            print(
                f"Claude Code's CLI is not on PATH ({CLAUDE_BIN_ENV} is not set either); "
                "to remove the plugin, run:",
                file=out,
            )
            for command in uninstall_commands():
                print(f"  {_shown(command)}", file=out)
            print(
                f"kept {display_path(folder)}: the plugin runs from it until then; "
                "run plangate setup --plugin --uninstall again afterwards",
                file=out,
            )
            return
    else:
        for command in uninstall_commands():
            answer = _run_claude(binary, command, environ)
            if answer.get("outcome") == "ok":
                print(f"ran `{_shown(command)}`: {answer.get('message', 'ok')}", file=out)
            elif answer.get("failureCode") in _ABSENT:
                print(f"nothing to undo for `{_shown(command)}`", file=out)
            else:
                raise ConfigError(
                    f"`{_shown(command)}` failed: {answer.get('message') or answer}",
                    "fix what it says, then run plangate setup --plugin --uninstall again",
                )
    if skill_bundle.is_ours(folder):
        StateRoot().folder().remove_tree(MARKETPLACE_DIR)
        print(f"removed plugin folder {display_path(folder)}", file=out)
    else:
        print(f"no plugin folder in {display_path(folder)}", file=out)


def settings_with_hooks(paths: list[str]) -> list[str]:
    """The settings files among ``paths`` that register plangate's hooks."""
    found: list[str] = []
    for path in paths:
        try:
            current = settings_file.read(path)
        except ConfigError:
            continue
        if settings_file.plangate_groups(current.data):
            found.append(path)
    return found
