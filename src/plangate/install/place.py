"""Whether plangate runs from a temporary environment, which hooks must never point into.

``uvx --from plangate plangate setup`` runs plangate from uv's cache, and ``uv cache clean``
deletes it; a ``pip install --target`` into a temporary folder goes with the next reboot.
Hooks registered from there exit 127 once it is gone, which Claude Code takes as a
non-blocking error: the guard would be off without a word. ``setup`` refuses, and
``doctor`` reports hooks that point there.

Temporary means: inside uv's cache (``$UV_CACHE_DIR``, ``$XDG_CACHE_HOME/uv``,
``~/.cache/uv``, or any ``uv/archive-v*`` / ``uv/builds-v*`` folder) or pipx's cache of ``pipx
run`` environments, always; or inside a temporary folder (``$TMPDIR``, ``/tmp``…) when the
Claude Code folder the hooks are registered in is not in one itself (a throwaway HOME, as
``plangate demo`` makes, goes with its hooks).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping

from plangate.errors import ConfigError

_UV_CACHE_PARTS = ("archive-v", "builds-v", "environments-v")


def _inside(path: str, folder: str) -> bool:
    if not folder:
        return False
    folder = os.path.normpath(os.path.abspath(folder))
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _both(path: str) -> list[str]:
    absolute = os.path.normpath(os.path.abspath(path))
    real = os.path.realpath(absolute)
    return [absolute] if real == absolute else [absolute, real]


def uv_cache_dirs(environ: Mapping[str, str]) -> list[str]:
    home = environ.get("HOME") or os.path.expanduser("~")
    found = [os.path.join(home, ".cache", "uv")]
    if environ.get("XDG_CACHE_HOME"):
        found.append(os.path.join(environ["XDG_CACHE_HOME"], "uv"))
    if environ.get("UV_CACHE_DIR"):
        found.append(environ["UV_CACHE_DIR"])
    return found


def temp_dirs(environ: Mapping[str, str] | None = None) -> list[str]:
    env = os.environ if environ is None else environ
    found = [tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev/shm"]
    found += [env[name] for name in ("TMPDIR", "TEMP", "TMP") if env.get(name)]
    return found


def _in_any(path: str, folders: list[str]) -> bool:
    return any(
        _inside(candidate, folder) or _inside(candidate, os.path.realpath(folder))
        for candidate in _both(path)
        for folder in folders
    )


def cache_reason(path: str, environ: Mapping[str, str] | None = None) -> str | None:
    """Why ``path`` is in an installer's cache of throwaway environments, or None."""
    env = os.environ if environ is None else environ
    for candidate in _both(path):
        parts = candidate.split(os.sep)
        for index, part in enumerate(parts[1:], start=1):
            if parts[index - 1] == "uv" and part.startswith(_UV_CACHE_PARTS):
                return "uv's cache"
            if parts[index - 1] == "pipx" and part == ".cache":
                return "pipx's cache of `pipx run` environments"
    if _in_any(path, uv_cache_dirs(env)):
        return "uv's cache"
    return None


def temporary_reason(
    path: str,
    config_dir: str,
    environ: Mapping[str, str] | None = None,
    temporary: list[str] | None = None,
) -> str | None:
    """Why hooks registered in ``config_dir`` must not run ``path``, or None when they may.

    ``temporary``: the temporary folders (default :func:`temp_dirs`).
    """
    reason = cache_reason(path, environ)
    if reason is not None:
        return reason
    folders = temp_dirs(environ) if temporary is None else temporary
    if _in_any(path, folders) and not _in_any(config_dir, folders):
        return "a temporary folder"
    return None


def refuse_temporary(python: str, root: str, claude_dir: str) -> None:
    """Hooks must not point into an environment that a cache clean or a reboot deletes."""
    for what, path in (("its Python", python), ("the plangate package", root)):
        reason = temporary_reason(path, claude_dir)
        if reason is not None:
            raise ConfigError(
                f"plangate runs from {reason}: {what} is {path}, and hooks registered from "
                "there stop working when it is deleted (Claude Code then skips them without "
                "a word)",
                "install plangate as a tool from its source folder or a wheel (`uv tool install "
                '<plangate folder>` or `pipx install <plangate folder>`; README, "Install as a '
                'user"), and run that `plangate setup` (or `setup --plugin`)',
            )
