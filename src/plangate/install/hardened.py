"""Hardened mode: Claude Code's own Bash sandbox, set so that what the hooks cannot see (a
``python3 -c`` that writes a settings file, a script that rewrites a contract) meets the
operating system instead (``docs/sandbox.md``).

The settings (:func:`sandbox_settings`):

* ``sandbox.enabled``, ``failIfUnavailable: true`` (no bubblewrap or socat: the session stops
  at start instead of running every command unsandboxed), ``allowUnsandboxedCommands: false``
  (``dangerouslyDisableSandbox`` is ignored and the command runs sandboxed);
* ``sandbox.filesystem.denyWrite``: the state root, plangate's package and the environment
  of the interpreter the hooks run (read-only in the sandbox even inside the project);
* ``permissions.deny`` ``Edit(...)`` rules for the same, every Claude Code settings file
  (user, project, local, managed) and every place a contract is found: the Write and Edit
  tools run outside the sandbox, and Claude Code adds these rules to the sandbox's
  ``denyWrite`` too.

Paths are absolute in Claude Code's rule syntax (``//`` then the path without its leading
slash; a single ``/`` would be relative to the settings file's folder).

``plangate setup --hardened`` merges them into the settings file setup edits (the user's,
or the project's with ``--project``); ``plangate settings --hardened`` prints them for
``claude --settings``. Only the second is a lock a project cannot undo: a project's
``.claude/settings*.json`` outranks the user's settings, while ``--settings`` (and managed
settings) outrank the project's. setup never writes the managed settings
(``/etc/claude-code``): they apply to every user and every tool on the machine.

The merge keeps the person's own keys. Turning the mode off (``--hardened=off``,
``--uninstall``) gives each key back the value it had before plangate's first change (the
settings backup, :mod:`plangate.install.settings_file`), so an uninstall still restores the
file byte for byte.
"""

from __future__ import annotations

import copy
import os
import shutil
import sys
from collections.abc import Mapping
from typing import Any

from plangate.errors import ConfigError

SANDBOX = "sandbox"
PERMISSIONS = "permissions"
FILESYSTEM = "filesystem"
DENY_WRITE = "denyWrite"
DENY = "deny"
EXCLUDED = "excludedCommands"
NESTED = "allowNestedUserNamespaces"
WEAKER = "enableWeakerNestedSandbox"
#: Switches that weaken the sandbox, each with what it lets a command do.
WEAKENING = {
    NESTED: "lets a command get past denyWrite",
    WEAKER: "runs commands in a weaker sandbox (meant for unprivileged containers)",
}
ENABLED = "enabled"
FAIL_IF_UNAVAILABLE = "failIfUnavailable"
ALLOW_UNSANDBOXED = "allowUnsandboxedCommands"

#: The switches hardened mode sets, and their values.
SWITCHES: dict[str, bool] = {ENABLED: True, FAIL_IF_UNAVAILABLE: True, ALLOW_UNSANDBOXED: False}

MANAGED_DIR = "/etc/claude-code"
MANAGED_SETTINGS = os.path.join(MANAGED_DIR, "managed-settings.json")

#: What the sandbox needs on Linux (bubblewrap's binary, and socat for its network proxy).
LINUX_TOOLS = (("bwrap", "bubblewrap"), ("socat", "socat"))
INSTALL_TOOLS = "apt-get install -y bubblewrap socat (or your distribution's packages)"

#: Commands that run any program or code they are given: one of them in
#: ``sandbox.excludedCommands`` runs ``python3 w.py`` (or ``sh -c …``) outside the sandbox.
INTERPRETERS = frozenset(
    {
        "python",
        "python3",
        "pypy",
        "pypy3",
        "node",
        "nodejs",
        "deno",
        "bun",
        "perl",
        "ruby",
        "php",
        "lua",
        "tclsh",
        "bash",
        "sh",
        "dash",
        "zsh",
        "ksh",
        "fish",
        "env",
        "exec",
        "eval",
        "xargs",
        "find",
        "nohup",
        "setsid",
        "timeout",
        "nice",
        "sudo",
        "su",
        "awk",
        "gawk",
        "make",
        "uv",
        "uvx",
        "npx",
        "npm",
        "pip",
        "pip3",
        "pipx",
        "git",
        "plangate",
    }
)


def absolute_rule_path(path: str) -> str:
    """``/a/b`` as Claude Code's absolute rule path ``//a/b``."""
    return "/" + os.path.abspath(path)


def hooks_environment(python: str) -> str | None:
    """The virtual environment the hooks' interpreter belongs to (``<env>/bin/python``,
    with ``pyvenv.cfg`` beside ``bin``), or ``None`` for a system interpreter."""
    folder = os.path.dirname(os.path.dirname(os.path.abspath(python)))
    return folder if os.path.isfile(os.path.join(folder, "pyvenv.cfg")) else None


def protected_folders(state_root: str, package_root: str, python: str) -> list[str]:
    """The folders no sandboxed command may write: the state root, plangate's package and
    its distribution's metadata, the hooks' environment."""
    folders = [state_root, os.path.join(package_root, "plangate")]
    environment = hooks_environment(python)
    if environment is not None:
        folders.append(environment)
    return [os.path.abspath(folder) for folder in folders]


def deny_rules(state_root: str, claude_dir: str, package_root: str, python: str) -> list[str]:
    """``permissions.deny`` for the Write and Edit tools (``Edit`` covers every tool that
    edits a file)."""
    rules = [
        f"Edit({absolute_rule_path(folder)}/**)"
        for folder in protected_folders(state_root, package_root, python)
    ]
    claude = absolute_rule_path(claude_dir)
    rules += [
        f"Edit({claude}/settings.json)",
        f"Edit({claude}/settings.local.json)",
        "Edit(//**/.claude/settings*.json)",
        f"Edit({absolute_rule_path(MANAGED_DIR)}/**)",
        f"Edit({claude}/skills/**/plangate.toml)",
        "Edit(//**/.claude/skills/**/plangate.toml)",
        "Edit(//**/.plangate/contracts/**)",
    ]
    return rules


def sandbox_settings(
    state_root: str,
    claude_dir: str,
    package_root: str,
    python: str,
    project: str | None = None,
) -> dict[str, Any]:
    """``{"sandbox": {...}, "permissions": {"deny": [...]}}`` of hardened mode. With
    ``project``, that project's contract folder is read-only in the sandbox too: the sandbox
    takes absolute paths only (a glob or a relative path there protects nothing, measured
    with Claude Code 2.1.332), so user settings cannot name every project's."""
    folders = protected_folders(state_root, package_root, python)
    if project is not None:
        folders.append(os.path.join(os.path.abspath(project), ".plangate", "contracts"))
    deny_write = [absolute_rule_path(folder) for folder in folders]
    return {
        SANDBOX: {**SWITCHES, FILESYSTEM: {DENY_WRITE: deny_write}},
        PERMISSIONS: {DENY: deny_rules(state_root, claude_dir, package_root, python)},
    }


def project_contracts(project: str) -> tuple[str, bool]:
    """The project's contract folder, created (empty) when missing: the sandbox keeps an
    existing folder read-only, while a missing one in ``denyWrite`` leaves ``.plangate`` itself
    unwritable, and with it the artifacts ``plangate autoplan`` writes in ``.plangate/tmp``
    (measured). Returns the folder and whether it was created."""
    folder = os.path.join(os.path.abspath(project), ".plangate", "contracts")
    if os.path.isdir(folder):
        return folder, False
    try:
        os.makedirs(folder)
    except OSError as error:
        raise ConfigError(
            f"cannot create {folder}: {error.strerror or error}",
            "create it yourself (mkdir -p .plangate/contracts), then run the command again",
        ) from None
    return folder, True


# -- what the sandbox needs -----------------------------------------------------------------


def missing_tools(environ: Mapping[str, str], platform: str = sys.platform) -> list[str]:
    """The packages Claude Code's sandbox needs here and cannot find on ``PATH``."""
    if not platform.startswith("linux"):
        return []  # macOS: Seatbelt, built in
    path = environ.get("PATH", os.defpath)
    return [package for binary, package in LINUX_TOOLS if shutil.which(binary, path=path) is None]


def require_tools(environ: Mapping[str, str], platform: str = sys.platform) -> None:
    """Refuses hardened mode where the sandbox cannot start: with ``failIfUnavailable`` every
    session would end at once."""
    if platform.startswith(("win", "cygwin")):
        raise ConfigError(
            "Claude Code's sandbox does not run on Windows, so hardened mode cannot be set up",
            "run plangate setup without --hardened (the hooks still hold), or use WSL 2",
        )
    missing = missing_tools(environ, platform)
    if missing:
        raise ConfigError(
            f"hardened mode needs {' and '.join(missing)} on PATH: Claude Code's sandbox runs "
            "every Bash command in them, and with failIfUnavailable a session without them "
            "stops at start",
            f"install them ({INSTALL_TOOLS}), then run plangate setup --hardened again",
        )


# -- reading the settings -------------------------------------------------------------------


def _object(data: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def excluded_interpreters(data: Mapping[str, Any]) -> list[str]:
    """The entries of ``sandbox.excludedCommands`` that name an interpreter or a shell
    (``python3``, ``python3:*``, ``/usr/bin/env *``, ``python3.12``)."""
    listed = _object(data, SANDBOX).get(EXCLUDED)
    found: list[str] = []
    for entry in listed if isinstance(listed, list) else ():
        if not isinstance(entry, str) or not entry.split():
            continue
        word = os.path.basename(entry.split()[0].split(":")[0].rstrip("*"))
        stem = word.rstrip("0123456789.")
        if word in INTERPRETERS or stem in INTERPRETERS:
            found.append(entry)
    return found


def switch(data: Mapping[str, Any], name: str) -> object:
    """``sandbox.<name>`` as the file says it (``None`` when absent)."""
    return _object(data, SANDBOX).get(name)


def weakening(data: Mapping[str, Any]) -> list[str]:
    """The switches of :data:`WEAKENING` that ``data`` turns on."""
    return [name for name in WEAKENING if switch(data, name) is True]


def is_hardened(data: Mapping[str, Any], block: Mapping[str, Any]) -> bool:
    """Whether ``data`` holds hardened mode as ``block`` sets it: the switches, and every
    deny rule."""
    if any(switch(data, name) is not value for name, value in SWITCHES.items()):
        return False
    deny = _object(data, PERMISSIONS).get(DENY)
    listed = deny if isinstance(deny, list) else []
    return all(rule in listed for rule in block[PERMISSIONS][DENY])


# -- merging and taking back ----------------------------------------------------------------


def _refuse(shown: str, problem: str, remedy: str) -> ConfigError:
    return ConfigError(f"{shown} {problem}; plangate leaves it as it is", remedy)


def check_mergeable(data: Mapping[str, Any], shown: str) -> None:
    """Refuses a file hardened mode cannot be merged into, or one that would undo it."""
    fix = "fix or move it, then run plangate setup --hardened again"
    for key in (SANDBOX, PERMISSIONS):
        if key in data and not isinstance(data[key], dict):
            raise _refuse(shown, f'has a "{key}" entry that is not a JSON object', fix)
    sandbox = _object(data, SANDBOX)
    if FILESYSTEM in sandbox and not isinstance(sandbox[FILESYSTEM], dict):
        raise _refuse(shown, '"sandbox.filesystem" is not a JSON object', fix)
    for container, key in (
        (_object(sandbox, FILESYSTEM), DENY_WRITE),
        (_object(data, PERMISSIONS), DENY),
    ):
        if key in container and not isinstance(container[key], list):
            raise _refuse(shown, f'has a "{key}" entry that is not a JSON array', fix)
    interpreters = excluded_interpreters(data)
    if interpreters:
        raise _refuse(
            shown,
            f"lists {', '.join(interpreters)} in sandbox.excludedCommands, which runs any code "
            "outside the sandbox",
            f"remove {', '.join(interpreters)} from sandbox.excludedCommands, then run plangate "
            "setup --hardened again",
        )
    for name in weakening(data):
        raise _refuse(
            shown,
            f"sets sandbox.{name}, which {WEAKENING[name]}",
            f"remove sandbox.{name}, then run plangate setup --hardened again",
        )


def merge(data: Mapping[str, Any], block: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` with hardened mode in: the switches set, the paths and rules added (each
    once, after the person's own). The input is not modified."""
    result = copy.deepcopy(dict(data))
    sandbox = result.setdefault(SANDBOX, {})
    sandbox.update(SWITCHES)
    filesystem = sandbox.setdefault(FILESYSTEM, {})
    _add(filesystem, DENY_WRITE, block[SANDBOX][FILESYSTEM][DENY_WRITE])
    _add(result.setdefault(PERMISSIONS, {}), DENY, block[PERMISSIONS][DENY])
    return result


def _add(container: dict[str, Any], key: str, items: list[str]) -> None:
    listed = container.setdefault(key, [])
    listed.extend(item for item in items if item not in listed)


def holds_rules(data: Mapping[str, Any], block: Mapping[str, Any]) -> bool:
    """Whether any of hardened mode's deny rules is in ``data`` (all or part of it was set)."""
    deny = _object(data, PERMISSIONS).get(DENY)
    return isinstance(deny, list) and any(rule in deny for rule in block[PERMISSIONS][DENY])


def take_back(
    data: Mapping[str, Any], block: Mapping[str, Any], before: Mapping[str, Any]
) -> dict[str, Any]:
    """``data`` with what :func:`merge` added taken out again, against ``before`` (the file
    as it was before plangate's first change; ``{}`` for a file plangate created): a switch
    still at hardened mode's value gets ``before``'s value back (or goes), an added path or
    rule goes unless ``before`` had it, and a container this empties goes unless ``before``
    had it. What the person changed since is kept. A file that holds none of hardened mode's
    rules is returned as it is: its sandbox keys are the person's."""
    result = copy.deepcopy(dict(data))
    if not holds_rules(data, block):
        return result
    sandbox, was_sandbox = result.get(SANDBOX), _object(before, SANDBOX)
    if isinstance(sandbox, dict):
        for name, value in SWITCHES.items():
            if name in sandbox and sandbox[name] is value:
                if name in was_sandbox:
                    sandbox[name] = was_sandbox[name]
                else:
                    del sandbox[name]
        filesystem = sandbox.get(FILESYSTEM)
        if isinstance(filesystem, dict):
            _remove(
                filesystem,
                DENY_WRITE,
                block[SANDBOX][FILESYSTEM][DENY_WRITE],
                _object(was_sandbox, FILESYSTEM),
            )
            _drop_if_empty(sandbox, FILESYSTEM, was_sandbox)
        _drop_if_empty(result, SANDBOX, before)
    permissions = result.get(PERMISSIONS)
    if isinstance(permissions, dict):
        _remove(permissions, DENY, block[PERMISSIONS][DENY], _object(before, PERMISSIONS))
        _drop_if_empty(result, PERMISSIONS, before)
    return result


def _remove(container: dict[str, Any], key: str, ours: list[str], was: Mapping[str, Any]) -> None:
    listed = container.get(key)
    if not isinstance(listed, list):
        return
    previous = was.get(key)
    kept_before: list[Any] = previous if isinstance(previous, list) else []
    kept = [item for item in listed if item not in ours or item in kept_before]
    if len(kept) == len(listed):
        return
    container[key] = kept
    if not kept and key not in was:
        del container[key]


def _drop_if_empty(container: dict[str, Any], key: str, was: Mapping[str, Any]) -> None:
    if container.get(key) == {} and key not in was:
        del container[key]
