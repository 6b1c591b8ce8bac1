"""The read-only sessions' confinement: a home of their own, no settings, an OS sandbox.

The planner and the review may read the run's worktree and must change nothing. Removing the
tools that write is not enough (issue 13): the CLI still loads the project's and the person's
settings, whose hooks run shell commands, and its ``Read`` reaches any file, the agent's own
session journals under ``~/.claude/projects/`` included. :func:`confined` sets up one call::

    with confined(worktree, environ, binary) as confinement:
        run_bounded([*confinement.prefix, *cli_args, *confinement.cli_flags],
                    env=confinement.environ, cwd=worktree, ...)

Three layers, each verified against Claude Code 2.1.332 offline:

1. **A home of its own.** ``HOME`` and ``CLAUDE_CONFIG_DIR`` point at a fresh folder made
   for this call and removed after it; the session's journal goes there, and the person's
   ``~/.claude`` (journals, settings, plugins, skills) is not the CLI's configuration. Only
   the login is copied in (``.credentials.json``, when the person's folder has one), so an
   OAuth login keeps working (a login the session refreshed is put back afterwards, unless
   the person's file changed meanwhile); ``ANTHROPIC_*`` variables pass through unchanged.
2. **Only what plangate passes.** ``--setting-sources ""`` loads no user, project or local
   settings (a project ``.claude/settings.json`` hook does not run), ``--strict-mcp-config``
   no MCP server, ``--settings`` adds ``disableAllHooks``. ``Read`` is offered but not
   pre-approved: in ``dontAsk`` mode the CLI then allows reads inside the working directory
   (the worktree) and refuses any other path ("Permission to use Read has been denied").
3. **An operating-system sandbox** when Debian's ``bubblewrap`` works here: the CLI runs
   under ``bwrap`` with the whole file system read-only (``--ro-bind / /``), the folders that
   hold other people's or other sessions' data hidden behind empty ``tmpfs`` mounts (HOME,
   the Claude config folder, plangate's state root, the main repository, ``/tmp``, ``/home``,
   ``/root``, ``/var/tmp``), the worktree mounted back read-only, the CLI's folder mounted back,
   and only the per-call folder writable. A write anywhere fails ("Read-only file system"),
   a read of a hidden folder finds nothing, whatever the CLI or a hook tries.

Without a working ``bwrap`` the first two layers still hold; :attr:`Confinement.note` says so
and the engine records it in the run's conversation. The snapshots of
:mod:`plangate.runs.snapshots` then still detect (and undo) what a session changed.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from plangate.processes import run_bounded

__all__ = [
    "BWRAP_ENV",
    "Confinement",
    "bwrap_problem",
    "confined",
    "hidden_folders",
    "isolated_flags",
]

#: Names the bubblewrap executable (default: ``bwrap`` on PATH); ``off`` disables the sandbox.
BWRAP_ENV = "PLANGATE_BWRAP"
#: Folders every confined session hides, besides those named by its environment.
ALWAYS_HIDDEN: tuple[str, ...] = ("/tmp", "/var/tmp", "/home", "/root")
#: Settings given with ``--settings``: no hook of any source, nothing written to the worktree.
SESSION_SETTINGS: Mapping[str, object] = {"disableAllHooks": True}


@dataclass(frozen=True, slots=True)
class Confinement:
    """How one read-only session runs: ``prefix`` goes before the CLI's arguments (the
    ``bwrap`` command, or nothing), ``cli_flags`` after them; ``environ`` is its whole
    environment; ``sandboxed`` says whether the OS sandbox is on, ``note`` what it is."""

    prefix: tuple[str, ...]
    cli_flags: tuple[str, ...]
    environ: dict[str, str]
    home: Path
    sandboxed: bool
    note: str


def isolated_flags() -> tuple[str, ...]:
    """The CLI flags that load no settings, hooks, plugins or MCP servers but plangate's."""
    return (
        "--setting-sources",
        "",
        "--strict-mcp-config",
        "--settings",
        json.dumps(dict(SESSION_SETTINGS), separators=(",", ":")),
    )


def _bwrap_binary(environ: Mapping[str, str]) -> str | None:
    configured = environ.get(BWRAP_ENV, "") or os.environ.get(BWRAP_ENV, "")
    if configured == "off":
        return None
    return shutil.which(configured or "bwrap")


@functools.lru_cache(maxsize=8)
def _probe(binary: str) -> str | None:
    """``None`` if ``binary`` can run a command in a read-only sandbox here, else why not."""
    try:
        done = run_bounded(
            [binary, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true"],
            timeout=20,
        )
    except OSError as error:
        return f"{binary} cannot be started: {error}"
    if done.timed_out:
        return f"{binary} cannot be started: it did not finish within 20 seconds"
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        return f"{binary} does not work here: {said[-1] if said else done.returncode}"
    return None


def bwrap_problem(environ: Mapping[str, str] | None = None) -> str | None:
    """``None`` when the OS sandbox can be used, else a sentence saying why not and what to
    do (install ``bubblewrap``)."""
    source = os.environ if environ is None else environ
    if source.get(BWRAP_ENV, "") == "off" or os.environ.get(BWRAP_ENV, "") == "off":
        return f"the operating-system sandbox is turned off ({BWRAP_ENV}=off)"
    binary = _bwrap_binary(source)
    if binary is None:
        return (
            "bubblewrap (bwrap) is not installed; install it (Debian: apt-get install bubblewrap)"
        )
    problem = _probe(binary)
    if problem is not None:
        return f"{problem}; allow unprivileged user namespaces or run as root"
    return None


def _config_dir(environ: Mapping[str, str]) -> Path | None:
    configured = environ.get("CLAUDE_CONFIG_DIR", "")
    if configured:
        return Path(configured)
    home = environ.get("HOME", "")
    return Path(home) / ".claude" if home else None


def _main_repository(worktree: Path) -> Path | None:
    """The top folder of the repository whose worktree ``worktree`` is (``None`` if git
    cannot say)."""
    try:
        done = run_bounded(
            ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
            cwd=worktree,
            timeout=30,
        )
    except OSError:
        return None
    common = done.stdout.strip()
    if done.timed_out or done.returncode != 0 or not common:
        return None
    path = Path(common)
    return path.parent if path.name == ".git" else path


def hidden_folders(
    worktree: Path, environ: Mapping[str, str], state_root: str | None = None
) -> list[str]:
    """The folders a sandboxed session sees empty: the fixed ones, the person's HOME and
    Claude config folder, the state root, the temporary folder and the main repository."""
    from plangate.locations import state_root as default_state_root

    named = [
        environ.get("HOME", ""),
        str(_config_dir(environ) or ""),
        state_root or default_state_root(),
        environ.get("TMPDIR", ""),
        str(_main_repository(worktree) or ""),
        *ALWAYS_HIDDEN,
    ]
    found: list[str] = []
    for name in named:
        if not name or not os.path.isabs(name) or not os.path.isdir(name):
            continue
        real = os.path.realpath(name)
        if real != "/" and real not in found:
            found.append(real)
    # A folder inside another is hidden with it; mounting it again would bring it back.
    return sorted(
        (p for p in found if not any(p != q and p.startswith(q + "/") for q in found)),
        key=len,
    )


def _sandbox_prefix(
    binary: str, worktree: Path, home: Path, cli: Path, hidden: Sequence[str]
) -> tuple[str, ...]:
    args = [binary, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for folder in hidden:
        args += ["--tmpfs", folder]
    tree = os.path.realpath(worktree)
    args += ["--ro-bind", tree, tree]
    real_cli = os.path.realpath(cli)
    # The CLI's own folder, so a CLI that is a script with files beside it runs too; only
    # the file when that folder would show a hidden one again (a CLI kept directly in HOME).
    folder = os.path.dirname(real_cli)
    shown = real_cli if any(h == folder or h.startswith(folder + "/") for h in hidden) else folder
    args += ["--ro-bind", shown, shown]
    if str(cli) != real_cli and os.path.isabs(cli):
        args += ["--ro-bind", real_cli, str(cli)]
    args += ["--bind", str(home), str(home)]
    args += ["--unshare-pid", "--die-with-parent", "--chdir", tree, "--"]
    return tuple(args)


CREDENTIALS = ".credentials.json"


def _fresh_home(environ: Mapping[str, str]) -> tuple[Path, bytes | None]:
    """A new folder for one session, with the person's login copied into its config folder;
    the login's bytes as copied (``None`` without one)."""
    home = Path(tempfile.mkdtemp(prefix="plangate-readonly-"))
    config = home / ".claude"
    config.mkdir()
    (home / "tmp").mkdir()
    source = _config_dir(environ)
    login = source / CREDENTIALS if source is not None else None
    if login is None or not login.is_file():
        return home, None
    data = login.read_bytes()
    target = config / CREDENTIALS
    target.write_bytes(data)
    target.chmod(0o600)
    return home, data


def _keep_refreshed_login(home: Path, environ: Mapping[str, str], copied: bytes | None) -> None:
    """A session that refreshed the login (an OAuth refresh may replace the refresh token)
    leaves the new one in its folder: put it back in the person's folder, unless that file
    changed meanwhile (another session refreshed it too)."""
    source = _config_dir(environ)
    if copied is None or source is None:
        return
    try:
        fresh = (home / ".claude" / CREDENTIALS).read_bytes()
        if fresh == copied or not fresh.strip() or (source / CREDENTIALS).read_bytes() != copied:
            return
        staged = source / f"{CREDENTIALS}.plangate-{os.getpid()}"
        staged.write_bytes(fresh)
        staged.chmod(0o600)
        os.replace(staged, source / CREDENTIALS)
    except OSError:
        return


@contextmanager
def confined(
    worktree: Path,
    environ: Mapping[str, str],
    cli: Path,
    *,
    state_root: str | None = None,
) -> Iterator[Confinement]:
    """The confinement of one read-only session in ``worktree``, whose environment would be
    ``environ`` and whose executable is ``cli``; its folder is removed afterwards."""
    hidden = hidden_folders(worktree, environ, state_root)
    home, login = _fresh_home(environ)
    try:
        env = dict(environ)
        env.update(
            {
                "HOME": str(home),
                "USERPROFILE": str(home),
                "CLAUDE_CONFIG_DIR": str(home / ".claude"),
                "XDG_CONFIG_HOME": str(home / ".config"),
                "XDG_CACHE_HOME": str(home / ".cache"),
                "XDG_DATA_HOME": str(home / ".local" / "share"),
                "XDG_STATE_HOME": str(home / ".local" / "state"),
                "TMPDIR": str(home / "tmp"),
            }
        )
        problem = bwrap_problem(environ)
        binary = _bwrap_binary(environ)
        if problem is None and binary is not None:
            prefix = _sandbox_prefix(binary, worktree, home, cli, hidden)
            note = "bubblewrap: the file system read-only, " + ", ".join(hidden) + " hidden"
            yield Confinement(prefix, isolated_flags(), env, home, True, note)
        else:
            note = (
                f"no operating-system sandbox ({problem}): only Claude Code's own settings "
                "and permission rules confine the session"
            )
            yield Confinement((), isolated_flags(), env, home, False, note)
    finally:
        _keep_refreshed_login(home, environ, login)
        shutil.rmtree(home, ignore_errors=True)
