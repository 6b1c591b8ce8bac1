"""The run's sandbox: a git worktree of the repository on a branch of its own.

Every side effect here is idempotent, because a DBOS step can run again after a crash: a
step's commit carries a ``Plangate-Key:`` trailer and is looked up before it is made, and
creating the worktree reuses one that exists.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from plangate.errors import GitError as GitError  # the sandbox's error, re-exported
from plangate.errors import UsageError
from plangate.processes import Completed, run_bounded
from plangate.state_root import StateRoot

KEY_TRAILER = "Plangate-Key"
DIFF_LIMIT = 200_000  # characters of diff given to the planner and the reviewer
GIT_TIMEOUT_SECONDS = 300  # one git command; a hung one (a lock, a filter) ends the stage
_IDENTITY = ("-c", "user.name=plangate run", "-c", "user.email=plangate@localhost")
COMMIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "plangate run",
    "GIT_AUTHOR_EMAIL": "plangate@localhost",
    "GIT_COMMITTER_NAME": "plangate run",
    "GIT_COMMITTER_EMAIL": "plangate@localhost",
}
_QUIET = ("-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null")
_REMEDY = "look at the run's worktree with git, or start a new run"


def _env() -> dict[str, str]:
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in {"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"}
    }
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["LC_ALL"] = "C"
    # One identity for step commits on every worker: these variables would beat _IDENTITY.
    env.update(COMMIT_IDENTITY)
    return env


def _run_git(cwd: Path | str, args: tuple[str, ...], input: str | None = None) -> Completed:
    try:
        done = run_bounded(
            ["git", *args], cwd=cwd, env=_env(), input=input, timeout=GIT_TIMEOUT_SECONDS
        )
    except FileNotFoundError:
        if not Path(cwd).is_dir():  # the folder is missing, not git
            raise GitError(
                f"the folder {cwd} does not exist on this host",
                "every worker must see a run's repository and worktree at the same paths "
                "(docs/runs-design.md, Workers on several machines)",
            ) from None
        raise GitError("git is not installed", "install git and run again") from None
    except OSError as error:
        raise GitError(f"cannot run git in {cwd}: {error}", _REMEDY) from error
    if done.timed_out:
        raise GitError(
            f"git {' '.join(args)} did not finish within {GIT_TIMEOUT_SECONDS}s in {cwd}", _REMEDY
        )
    return done


def git(cwd: Path | str, *args: str, check: bool = True) -> str:
    """Run git in ``cwd``; its standard output. :class:`GitError` when it fails and ``check``."""
    done = _run_git(cwd, args)
    if check and done.returncode != 0:
        message = (done.stderr or done.stdout).strip().splitlines()
        raise GitError(
            f"git {' '.join(args)} failed in {cwd}: {message[-1] if message else done.returncode}",
            _REMEDY,
        )
    return done.stdout


@dataclass(frozen=True, slots=True)
class RepoHead:
    toplevel: str
    commit: str


def repo_head(repo: Path | str) -> RepoHead:
    """The repository's top folder and its HEAD commit; :class:`UsageError` if there is none."""
    if not Path(repo).is_dir():
        raise UsageError(f"{repo} is not a folder", "pass --repo with a git repository's folder")
    top = git(repo, "rev-parse", "--show-toplevel", check=False).strip()
    if not top:
        raise UsageError(
            f"{repo} is not inside a git repository",
            "pass --repo with a git repository's folder, or run `git init` there",
        )
    head = git(top, "rev-parse", "--verify", "-q", "HEAD^{commit}", check=False).strip()
    if not head:
        raise UsageError(
            f"the repository {top} has no commit yet",
            "commit something first: the run's worktree starts from HEAD",
        )
    return RepoHead(top, head)


def create(repo: str, worktree: Path, branch: str, base: str) -> None:
    """Create the worktree at ``worktree`` on ``branch`` from ``base``; reuse one that exists."""
    if (worktree / ".git").exists():
        return
    StateRoot().place(str(worktree.parent))  # in the state root: checked from the root down
    git(repo, "worktree", "prune")
    exists = git(repo, "rev-parse", "--verify", "-q", f"refs/heads/{branch}", check=False)
    if exists.strip():
        git(repo, "worktree", "add", "-f", str(worktree), branch)
    else:
        git(repo, "worktree", "add", "-b", branch, str(worktree), base)


def head(worktree: Path) -> str:
    return git(worktree, "rev-parse", "HEAD").strip()


def reset(worktree: Path, to: str = "HEAD") -> None:
    """Put the worktree back to ``to``: tracked files restored, untracked files removed
    (ignored files stay)."""
    git(worktree, "reset", "-q", "--hard", to)
    git(worktree, "clean", "-q", "-f", "-d")


def _status_paths(text: str) -> list[str]:
    paths = []
    for entry in text.split("\0"):
        if len(entry) > 3:
            paths.append(entry[3:])
    return paths


def dirty_files(worktree: Path) -> list[str]:
    """Files changed in the worktree since HEAD (modified, added, deleted, untracked)."""
    out = git(worktree, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
    return sorted(set(_status_paths(out)))


def find_commit(worktree: Path, key: str) -> str | None:
    """The commit on the worktree's branch whose ``Plangate-Key`` trailer is ``key``."""
    out = git(
        worktree,
        "log",
        "--format=%H",
        "-F",
        f"--grep={KEY_TRAILER}: {key}",
        "HEAD",
    )
    for line in out.splitlines():
        sha = line.strip()
        if not sha:
            continue
        body = git(worktree, "log", "-1", "--format=%B", sha)
        if f"\n{KEY_TRAILER}: {key}\n" in f"\n{body}\n":
            return sha
    return None


def commit(worktree: Path, key: str, subject: str, body: str = "") -> str:
    """Commit everything in the worktree as one step (an empty commit if nothing changed)."""
    found = find_commit(worktree, key)
    if found is not None:
        return found
    git(worktree, "add", "-A")
    message = subject.strip() or "plangate step"
    if body.strip():
        message += "\n\n" + body.strip()
    message += f"\n\n{KEY_TRAILER}: {key}\n"
    _commit(worktree, message)
    return head(worktree)


def _commit(worktree: Path, message: str) -> None:
    args = (*_IDENTITY, *_QUIET, "commit", "-q", "--no-verify", "--allow-empty", "-F", "-")
    done = _run_git(worktree, args, input=message)
    if done.returncode != 0:
        raise GitError(
            f"git commit failed in {worktree}: {(done.stderr or done.stdout).strip()}", _REMEDY
        )


def commit_files(worktree: Path, sha: str) -> list[str]:
    """The files one commit changed."""
    out = git(worktree, "show", "--no-renames", "--format=", "--name-only", "-z", sha)
    return sorted({path for path in out.split("\0") if path})


def changed_files(worktree: Path, base: str) -> list[str]:
    """Files the run has changed: committed since ``base``."""
    out = git(worktree, "diff", "--no-renames", "--name-only", "-z", base, "HEAD")
    return sorted({path for path in out.split("\0") if path})


def diff(worktree: Path, base: str, limit: int = DIFF_LIMIT) -> str:
    """The change since ``base``, cut at ``limit`` characters with a note saying so."""
    text = git(worktree, "diff", "--no-renames", "--no-color", base, "HEAD")
    if len(text) <= limit:
        return text
    note = f"[diff cut short at {limit} of {len(text)} characters; read the files in the sandbox]"
    return f"{text[:limit]}\n{note}\n"


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What the worktree looks like: HEAD, and every changed or untracked file with its
    content hash, every ignored one with its size and modification time."""

    head: str
    files: tuple[tuple[str, str], ...]


SNAPSHOT_FILE_LIMIT = 50_000  # files looked at inside ignored folders (build output, caches)


HASH_LIMIT = 16 * 1024 * 1024  # bytes hashed of one file; a bigger one is marked by size/time


def file_mark(path: Path) -> str:
    """A file's mode and content hash (its size and time when it is bigger than
    :data:`HASH_LIMIT`), ``dir`` for a folder, a link's target, or ``missing``."""
    try:
        stat = path.lstat()
    except OSError:
        return "missing"
    if path.is_symlink():
        return f"link {os.readlink(path)}"
    if path.is_dir():
        return "dir"
    if stat.st_size > HASH_LIMIT:
        return f"big {stat.st_size} {stat.st_mtime_ns}"
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    except OSError:
        return f"unreadable {stat.st_size} {stat.st_mtime_ns}"
    return f"{stat.st_mode & 0o777:o} {digest.hexdigest()}"


def _mark(path: Path, status: str) -> str:
    """An entry of :func:`snapshot`: ignored files (build output, caches: many, big) by size
    and time, every other one by :func:`file_mark` (its content)."""
    if status != "!!":
        return f"{status} {file_mark(path)}"
    try:
        stat = path.lstat()
    except OSError:
        return f"{status} missing"
    return f"{status} {stat.st_size} {stat.st_mtime_ns}"


def snapshot(worktree: Path) -> Snapshot:
    """HEAD, and every changed, untracked or ignored file with its size and time (files in
    an ignored folder one by one, up to :data:`SNAPSHOT_FILE_LIMIT`)."""
    out = git(
        worktree,
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        "--ignored=matching",
        "--no-renames",
    )
    files: list[tuple[str, str]] = []
    budget = SNAPSHOT_FILE_LIMIT
    for entry in out.split("\0"):
        if len(entry) <= 3:
            continue
        status, path = entry[:2], entry[3:]
        if path.endswith("/") and budget > 0:
            files.append((path, _mark(worktree / path, status)))
            for folder, _dirs, names in os.walk(worktree / path):
                for name in names:
                    if budget <= 0:
                        break
                    budget -= 1
                    full = Path(folder) / name
                    files.append((full.relative_to(worktree).as_posix(), _mark(full, status)))
            continue
        files.append((path, _mark(worktree / path, status)))
    return Snapshot(head(worktree), tuple(sorted(files)))


def changes_between(before: Snapshot, after: Snapshot) -> list[str]:
    """The paths that differ between two snapshots (``HEAD`` if the commit moved)."""
    changed = ["HEAD"] if before.head != after.head else []
    old = dict(before.files)
    new = dict(after.files)
    changed += sorted(path for path in old.keys() | new.keys() if old.get(path) != new.get(path))
    return changed


def restore(worktree: Path, before: Snapshot) -> None:
    """Bring the worktree back to ``before`` as far as git can: HEAD and tracked files, and
    no file that was not there."""
    git(worktree, "reset", "-q", "--hard", before.head)
    known = {path for path, _ in before.files}
    after = snapshot(worktree)
    for path, _ in after.files:
        if path not in known:
            target = worktree / path
            if target.is_file() or target.is_symlink():
                target.unlink()
    git(worktree, "clean", "-q", "-f", "-d")
