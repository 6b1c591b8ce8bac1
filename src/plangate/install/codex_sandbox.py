"""Whether Codex's own sandbox keeps the model's commands off the files that switch plangate
off: ``$CODEX_HOME`` (``hooks.json``, ``config.toml``) and plangate's state root.

plangate's PreToolUse hook refuses a shell command that names one of those places
(``protected_path``), but it cannot see a path a program computes (``python3 -c`` joining the
name from pieces). Measured with Codex 0.171.0 (docs/codex.md, "Codex's sandbox against a model
switching plangate off"): under ``-s workspace-write`` such a command is refused by the sandbox
("Read-only file system") unless the place lies in a root the sandbox lets commands write:
the working folder, ``/tmp`` and ``$TMPDIR`` (unless ``[sandbox_workspace_write]`` excludes
them) and the ``writable_roots`` listed there. ``.codex/`` inside a writable root stays
read-only. Under ``danger-full-access`` nothing stops it.

Doctor says which of these applies to the user's ``config.toml``; it changes nothing.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from typing import Any

from plangate.config import display_path
from plangate.install.check import WARN, Check
from plangate.locations import state_root

NAME = "codex sandbox"
FULL_ACCESS = "danger-full-access"
WORKSPACE_WRITE = "workspace-write"


def _inside(path: str, root: str) -> bool:
    path, root = os.path.realpath(path), os.path.realpath(root)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def writable_roots(settings: Mapping[str, Any], cwd: str) -> list[tuple[str, str]]:
    """(root, what to change) for the roots ``workspace-write`` lets commands write that
    doctor judges: the working folder and ``writable_roots``. ``/tmp`` and ``$TMPDIR`` are
    writable too (unless excluded), but only a test puts CODEX_HOME or the state root there;
    docs/codex.md says so."""
    table = settings.get("sandbox_workspace_write")
    table = table if isinstance(table, dict) else {}
    roots: list[tuple[str, str]] = [
        (cwd, "run Codex in the project folder, not in one that holds it (your HOME)")
    ]
    listed = table.get("writable_roots")
    for root in listed if isinstance(listed, list) else []:
        if isinstance(root, str):
            roots.append(
                (
                    os.path.expanduser(root),
                    f'take "{root}" out of writable_roots under [sandbox_workspace_write] in '
                    "the config.toml",
                )
            )
    return roots


def checks(environ: Mapping[str, str], home: str, config_text: str, cwd: str) -> list[Check]:
    """A warning for each way the model's commands can write the places that switch plangate
    off, under the sandbox the user's ``config.toml`` sets; none when the sandbox keeps them."""
    try:
        settings = tomllib.loads(config_text)
    except tomllib.TOMLDecodeError:
        return []  # the hooks check names a config.toml that is not TOML
    config = display_path(os.path.join(home, "config.toml"))
    places = [("Codex's folder", home), ("plangate's state root", state_root(environ))]
    cwd_root = os.path.realpath(cwd)
    mode = settings.get("sandbox_mode")
    if mode == FULL_ACCESS:
        return [
            Check(
                NAME,
                WARN,
                f'sandbox_mode = "{FULL_ACCESS}" in {config}: the model\'s commands run with '
                "no sandbox, and one that computes the path it writes (python3 -c …) can "
                "rewrite hooks.json, config.toml or plangate's state root where plangate's "
                "hook cannot see it",
                f'set sandbox_mode = "{WORKSPACE_WRITE}" in {config} (plangate does not change '
                "it for you)",
            )
        ]
    if mode not in (None, WORKSPACE_WRITE):
        return []  # read-only: commands write nothing
    found = []
    for what, path in places:
        for root, remedy in writable_roots(settings, cwd):
            here = os.path.realpath(root) == cwd_root
            if here and what == "Codex's folder":
                continue  # CODEX_HOME inside a project is a test's layout, not a person's
            if _inside(path, root) and not _dot_codex_inside(path, root):
                where = "this folder, where a Codex session" if here else "a writable root"
                found.append(
                    Check(
                        NAME,
                        WARN,
                        f"{what} {display_path(path)} lies in {display_path(root)}: in {where} "
                        "under workspace-write, the model's commands can write it, and one "
                        "that computes the path (python3 -c …) switches plangate off where its "
                        "hook cannot see it",
                        f"{remedy}, or move it out of {display_path(root)} "
                        f"(PLANGATE_STATE_ROOT, CODEX_HOME); the sandbox is set in {config}",
                    )
                )
                break
    return found


def _dot_codex_inside(path: str, root: str) -> bool:
    """Whether ``path`` is ``<root>/.codex`` or under it: Codex keeps that read-only."""
    return _inside(path, os.path.join(root, ".codex"))
