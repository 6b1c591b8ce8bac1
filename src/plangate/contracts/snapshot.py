"""A project's files, listed, measured and kept: the snapshots behind :mod:`.drift`.

**The list.** In a git repository, ``git ls-files -z --cached --others --exclude-standard``
in the project folder: tracked and untracked files, ignored ones left out. Outside one, a
walk of the project, without the folders of :data:`WALK_SKIPS`, up to :data:`WALK_LIMIT`
files (a larger project outside git gets no snapshot: the phase is not checked by its
files). Both leave out ``__pycache__`` folders, ``.claude/settings.local.json`` (Claude Code
writes it when the person allows a tool for good) and the state root when it lies inside the
project. For git, the repository's own files that decide what git lists or runs are kept
too (:class:`Repository`): ``info/exclude`` and the user's ``core.excludesFile`` (a pattern
added there would hide a new file; the compare lists with the same ``core.excludesFile``),
the repository's ``config`` and its hooks (a hook added or changed runs the next time the
person uses git): a change to any counts.

**The measure.** Each file's size, ``mtime_ns``, ``ctime_ns``, inode and mode, and a SHA-1
of its content (a symbolic link: of its target's name; a file over :data:`HASH_LIMIT`: none,
judged by its measure alone). At compare time only a file whose measure differs is read
again, so a file restored as it was (``git checkout -- FILE``) counts as unchanged. The
figures behind this choice: ``benchmarks/contract_drift.py``.

**Where it is kept.** ``<state root>/contract-drift/<digest>.json``, one file per project,
workflow, bound variables (the feature) and phase, written whole by rename, never through a
link (:mod:`plangate.files`, :mod:`plangate.state_root`); ``<digest>.latest`` beside it
names the phase begun last for the project and workflow, for an entry in a session whose
journal holds no phase yet.

Standard library only (hook path); git runs through :func:`plangate.processes.run_bounded`
(about 1.5 ms more a call than a bare ``subprocess.run``, on phase entries only), and
``hashlib`` is imported when a snapshot is taken or compared.
"""

from __future__ import annotations

import os
import stat

from plangate import files, jsonio

TYPE_CHECKING = False
if TYPE_CHECKING:
    from plangate.state_root import Folder

FOLDER = "contract-drift"
VERSION = 3
HASH_LIMIT = 16 * 1024 * 1024
"""Files larger than this are judged by their measure only (never read whole)."""
WALK_LIMIT = 20_000
"""Outside git, a project with more files than this gets no snapshot."""
WALK_SKIPS = frozenset(
    {".git", "node_modules", ".venv", "venv", ".tox", ".mypy_cache", ".pytest_cache"}
)
"""Folders a walk outside git leaves out (dependencies and caches, not the project's work)."""
ALWAYS_SKIPPED = "__pycache__"
LEFT_OUT = frozenset({".claude/settings.local.json"})
"""Files never compared: Claude Code writes this one when the person allows a tool for good
(a settings file, protected as such: ``docs/threat-model.md``)."""
READ_LIMIT = 256 * 1024 * 1024
MEASURED = 5
"""An entry's measure: size, ``mtime_ns``, ``ctime_ns``, inode, mode; then the digest.
The change time cannot be set back by a process (a write in place with the old size and
``mtime`` restored still moves it), so a file whose content changed always differs."""

Entry = list[object]  # [size, mtime_ns, ctime_ns, inode, mode, digest or None]
MODE, DIGEST = 4, 5
"""Where an :data:`Entry` keeps the mode and the digest. Entries stay plain lists, as saved:
a snapshot has one per project file, loaded at every phase entry and final stop."""


class Unlisted(Exception):
    """The project's files could not be listed (git failed): the compare cannot clear them."""


class Snapshot:
    """The project's files as a phase began; for git, the repository's own files that decide
    what git lists or runs (``outside``: ``info/exclude``, the user's ``core.excludesFile``,
    the repository's ``config`` and its hooks), each with its content digest, and the hooks
    folder (a hook added there later counts)."""

    __slots__ = ("kind", "entries", "outside", "hooks")

    def __init__(
        self,
        kind: str,
        entries: dict[str, Entry],
        outside: dict[str, str | None] | None = None,
        hooks: str | None = None,
    ) -> None:
        self.kind = kind  # "git" or "walk"
        self.entries = entries
        self.outside = outside or {}
        self.hooks = hooks

    @property
    def global_excludes(self) -> str | None:
        """The ``core.excludesFile`` the list was made with (the second file kept)."""
        names = list(self.outside)
        return names[1] if len(names) > 1 else None


# --- listing and measuring ----------------------------------------------------------------


GIT_SECONDS = 8.0
"""One git call's bound: a git that hangs is ended with what it started (``run_bounded``),
rather than left running after the hook answered at its own deadline."""


def _git_env() -> dict[str, str]:
    """The environment for git, without what would point it at another repository/index."""
    return {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("GIT_") or key in ("GIT_CONFIG_NOSYSTEM",)
    }


def _git(project: str, *args: str) -> bytes | None:
    """git's output in ``project``; None when it is not a repository (or git is missing, or it
    did not answer within :data:`GIT_SECONDS`: the entry is then refused, never cleared)."""
    from plangate.processes import run_bounded

    try:
        done = run_bounded(
            ["git", "-c", "core.quotepath=off", "-c", "core.fsmonitor=false", *args],
            cwd=project,
            env=_git_env(),
            timeout=GIT_SECONDS,
        )
    except OSError:
        return None
    return done.stdout_bytes if done.returncode == 0 and not done.timed_out else None


class Repository:
    """The files of a git repository outside its work tree that decide what ``git ls-files``
    lists or what git runs: ``info/exclude``, the user's ``core.excludesFile`` (configured,
    or git's default), the repository's ``config``, and the hooks folder."""

    __slots__ = ("exclude", "global_excludes", "config", "hooks")

    def __init__(self, exclude: str, global_excludes: str, config: str, hooks: str) -> None:
        self.exclude = exclude
        self.global_excludes = global_excludes
        self.config = config
        self.hooks = hooks

    def files(self) -> list[str]:
        """The files kept, in order: the two ignore files first, then config and hooks."""
        return [self.exclude, self.global_excludes, self.config, *_hook_files(self.hooks)]


def repository(project: str) -> Repository | None:
    """The repository ``project`` is in (None: not in a git work tree)."""
    out = _git(
        project,
        *("rev-parse", "--is-inside-work-tree", "--git-path", "info/exclude"),
        *("--git-path", "config", "--git-path", "hooks"),
    )
    lines = [line.strip() for line in out.split(b"\n")] if out is not None else []
    if len(lines) < 4 or lines[0] != b"true":
        return None
    exclude, config, hooks = (os.path.join(project, os.fsdecode(line)) for line in lines[1:4])
    configured = _git(project, "config", "--path", "--get", "core.excludesFile")
    if configured and configured.strip():
        path = os.path.expanduser(os.fsdecode(configured.strip()))
        global_excludes = os.path.join(project, path)
    else:
        base = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
        global_excludes = os.path.join(base, "git", "ignore")
    return Repository(exclude, global_excludes, config, hooks)


def _hook_files(folder: str) -> list[str]:
    try:
        return sorted(os.path.join(folder, name) for name in os.listdir(folder))
    except OSError:
        return []


def listing(
    project: str, kind: str, global_excludes: str | None = None
) -> tuple[str, list[str]] | None:
    """(kind, the project's files relative to it): ``git`` lists them with git, with
    ``global_excludes`` as ``core.excludesFile`` (a failure raises :class:`Unlisted`);
    ``walk`` walks the folder (None past :data:`WALK_LIMIT`)."""
    if kind == "git":
        pinned = ["-c", f"core.excludesFile={global_excludes}"] if global_excludes else []
        out = _git(project, *pinned, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
        if out is None:
            raise Unlisted("`git ls-files` failed: repair the repository (`git status` says why)")
        names = [os.fsdecode(name) for name in out.split(b"\0") if name]
        return kind, [name for name in dict.fromkeys(names) if _kept(name)]
    walked = _walk(project)
    return None if walked is None else (kind, walked)


def _kept(name: str) -> bool:
    return name not in LEFT_OUT and ALWAYS_SKIPPED not in name.split("/")


def _walk(project: str) -> list[str] | None:
    found: list[str] = []
    pending = [""]
    while pending:
        relative = pending.pop()
        try:
            items = list(os.scandir(os.path.join(project, relative) if relative else project))
        except OSError:
            continue
        for item in items:
            name = f"{relative}/{item.name}" if relative else item.name
            if item.is_dir(follow_symlinks=False):
                if item.name not in WALK_SKIPS and item.name != ALWAYS_SKIPPED:
                    pending.append(name)
                continue
            if name in LEFT_OUT:
                continue
            found.append(name)
            if len(found) > WALK_LIMIT:
                return None
    return found


def digest(path: str, info: os.stat_result) -> str | None:
    """The content digest of one file (module docstring); None when it is not read."""
    import hashlib

    if stat.S_ISLNK(info.st_mode):
        try:
            return "link:" + hashlib.sha1(os.fsencode(os.readlink(path))).hexdigest()
        except OSError:
            return None
    if not stat.S_ISREG(info.st_mode) or info.st_size > HASH_LIMIT:
        return None
    try:
        return hashlib.sha1(files.read_nofollow(path, HASH_LIMIT + 1)).hexdigest()
    except OSError:
        return None


def _measure(info: os.stat_result) -> list[object]:
    return [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_mode]


def take(project: str, state_root: str | None = None) -> Snapshot | None:
    """The project's files now, with their measure and digest (None: too many outside git)."""
    repo = repository(project)
    found = listing(
        project, "walk" if repo is None else "git", None if repo is None else repo.global_excludes
    )
    if found is None:
        return None
    kind, names = found
    skipped = _state_inside(project, state_root)
    entries: dict[str, Entry] = {}
    for name in names:
        if skipped is not None and (name == skipped or name.startswith(skipped + "/")):
            continue
        path = os.path.join(project, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue  # listed by git, gone from the disk: not there now
        entries[name] = [*_measure(info), digest(path, info)]
    if repo is None:
        return Snapshot(kind, entries)
    outside = {path: _file_digest(path) for path in repo.files()}
    return Snapshot(kind, entries, outside, repo.hooks)


def _file_digest(path: str) -> str | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return digest(path, info)


def _state_inside(project: str, state_root: str | None) -> str | None:
    """The state root relative to the project when it lies inside it (left out)."""
    from plangate import locations

    root = os.path.normpath(state_root or locations.state_root())
    inside = os.path.relpath(root, project)
    if inside == "." or inside.startswith(".."):
        return None
    return inside.replace(os.sep, "/")


def changes(project: str, before: Snapshot, state_root: str | None = None) -> list[str]:
    """The files (relative) changed, added or deleted since ``before``; a file whose measure
    differs is read again, and counts as changed only when its content or mode does. A
    changed ignore file outside the tree counts as changed too (it may hide a new file)."""
    found = listing(project, before.kind, before.global_excludes)
    if found is None:
        raise Unlisted(
            f"more than {WALK_LIMIT} files outside git: remove what was added, or `git init`"
        )
    _, names = found
    skipped = _state_inside(project, state_root)
    changed: list[str] = []
    seen: set[str] = set()
    for name in names:
        if skipped is not None and (name == skipped or name.startswith(skipped + "/")):
            continue
        seen.add(name)
        path = os.path.join(project, name)
        old = before.entries.get(name)
        try:
            info = os.lstat(path)
        except OSError:
            if old is not None:
                changed.append(name)  # still tracked, gone from the disk: deleted
            continue
        if old is None:
            changed.append(name)
            continue
        now = _measure(info)
        if now == old[:MEASURED]:
            continue
        if now[MODE] != old[MODE]:
            changed.append(name)  # its mode
            continue
        new = digest(path, info)
        if new is None or new != old[DIGEST]:
            changed.append(name)
    changed.extend(name for name in before.entries if name not in seen)  # deleted, unlisted
    added = (
        [p for p in _hook_files(before.hooks) if p not in before.outside] if before.hooks else []
    )
    for path in [*before.outside, *added]:
        if path in added or _file_digest(path) != before.outside[path]:
            inside = os.path.relpath(path, project)
            changed.append(path if inside.startswith("..") else inside)
    return changed


# --- storage --------------------------------------------------------------------------------


def scope_of(values: dict[str, str]) -> str:
    """The bound variables as one string (the feature), part of a snapshot's key."""
    return ";".join(f"{name}={value}" for name, value in sorted(values.items()))


def _key(*parts: str) -> str:
    import hashlib

    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:40]


def _folder(state_root: str | None, create: bool = True) -> Folder:
    from plangate.state_root import StateRoot

    return StateRoot(state_root).folder(FOLDER, create=create)


def save(
    project: str,
    workflow: str,
    scope: str,
    phase: str,
    snapshot: Snapshot,
    state_root: str | None = None,
    *,
    latest: bool = True,
) -> None:
    """Keep ``snapshot`` as ``phase``'s; with ``latest`` it becomes the phase begun last."""
    folder = _folder(state_root)
    document = {
        "version": VERSION,
        "project": project,
        "workflow": workflow,
        "scope": scope,
        "phase": phase,
        "kind": snapshot.kind,
        "entries": snapshot.entries,
        "outside": snapshot.outside,
        "hooks": snapshot.hooks,
    }
    data = jsonio.dumps(document).encode()
    folder.replace(_key(project, workflow, scope, phase) + ".json", data)
    if latest:
        mark_latest(project, workflow, scope, phase, state_root)


def mark_latest(
    project: str, workflow: str, scope: str, phase: str, state_root: str | None = None
) -> None:
    """Note ``phase`` as the phase begun last in the project for ``workflow``."""
    pointer = jsonio.dumps({"scope": scope, "phase": phase}).encode()
    _folder(state_root).replace(_key(project, workflow) + ".latest", pointer)


def _read(path: str) -> dict[str, object] | None:
    try:
        document = jsonio.loads(files.read_nofollow(path, READ_LIMIT).decode("utf-8"))
    except (OSError, ValueError):
        return None
    return document if isinstance(document, dict) else None


def load(
    project: str, workflow: str, scope: str, phase: str, state_root: str | None = None
) -> Snapshot | None:
    try:
        folder = _folder(state_root, create=False)
    except OSError:
        return None
    document = _read(folder.file(_key(project, workflow, scope, phase) + ".json"))
    if document is None or document.get("version") != VERSION:
        return None
    if (document.get("project"), document.get("phase")) != (project, phase):
        return None
    kind = document.get("kind")
    entries = document.get("entries")
    outside = document.get("outside")
    hooks = document.get("hooks")
    if kind not in ("git", "walk") or not isinstance(entries, dict):
        return None
    if not isinstance(outside, dict) or not (hooks is None or isinstance(hooks, str)):
        return None
    return Snapshot(str(kind), entries, outside, hooks)


def latest(project: str, workflow: str, state_root: str | None = None) -> tuple[str, str] | None:
    """(scope, phase) of the phase begun last in the project for ``workflow``."""
    try:
        folder = _folder(state_root, create=False)
    except OSError:
        return None
    document = _read(folder.file(_key(project, workflow) + ".latest"))
    if document is None:
        return None
    scope, phase = document.get("scope"), document.get("phase")
    return (scope, phase) if isinstance(scope, str) and isinstance(phase, str) else None


def forget(
    project: str, workflow: str, scope: str, phase: str, state_root: str | None = None
) -> None:
    """Remove ``phase``'s snapshot, and the pointer to the phase begun last (a workflow reset
    by a person starts over)."""
    try:
        folder = _folder(state_root, create=False)
    except OSError:
        return
    for name in (
        _key(project, workflow, scope, phase) + ".json",
        _key(project, workflow) + ".latest",
    ):
        try:  # noqa: SIM105 - contextlib would cost the hook path an import
            folder.remove(name)
        except OSError:
            pass
