"""The world the guard reads, behind one small interface (as httpx's transport is for a client).

A decision reads four things besides its payload: the session journal, the artifacts of the
invocation (the restore point, checkpoints, close packets, the active plan), the skill
folders of the installation, and the clock it waits on. :class:`World` is all of them; its
own methods are the operating system's, and :data:`OS` is the world every hook run uses.
A test hands :func:`plangate.guard.evaluate.evaluate` (or sets :data:`DEFAULT` to) a subclass
with an injected clock, to decide in-process without sleeping. Standard library and plangate
only (hook path).

Every look at the file system a phase decision makes is one of these methods, path
resolution included (:meth:`World.real_path`, :meth:`World.is_file`, :meth:`World.exists`,
:meth:`World.lstat`, and :meth:`World.same_file` / :meth:`World.canonical_path` built on
them). Pure string work on paths (``calls.resolve``: ``~``, the cwd, ``normpath``) is not a
read and stays in the callers. What the guard *writes* is not the world: the decision log
(:mod:`plangate.decisions.log`), the journal index the reader saves, and the pre-index markers
(:mod:`plangate.guard.preindex`) are the guard's own state, written where they always were.
"""

from __future__ import annotations

import os
import time

from plangate import skill_names
from plangate.autoplan import layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from plangate.journal.verdict import Verdict


class World:
    """The operating system's world: the real files and the monotonic clock."""

    def read_journal(self, path: str, **options: Any) -> Verdict:
        """:func:`plangate.journal.reader.read_journal` of ``path``."""
        from plangate.journal.reader import read_journal

        return read_journal(path, **options)

    def open_journal(self, path: str) -> int:
        """A read-only descriptor of the journal, to reload records (the caller closes it)."""
        return os.open(path, os.O_RDONLY | os.O_CLOEXEC)

    def read_file(self, path: str, limit: int) -> bytes:
        """At most ``limit`` bytes of a file (the active plan, a phase file); OSError."""
        with open(path, "rb") as handle:
            return handle.read(limit)

    def read_artifact(self, path: str) -> bytes:
        """An immutable artifact's bytes (:func:`plangate.autoplan.layout.immutable_read`)."""
        return layout.immutable_read(path)

    def read_verified(self, path: str, sha256: str, size: int) -> bytes:
        """An immutable artifact with its recorded hash and size."""
        return layout.read_verified(path, sha256, size)

    def stat(self, path: str) -> os.stat_result:
        return os.stat(path)

    def lstat(self, path: str) -> os.stat_result:
        return os.lstat(path)

    def real_path(self, path: str) -> str:
        """``path`` with every link resolved (:func:`os.path.realpath`)."""
        return os.path.realpath(path)

    def is_file(self, path: str) -> bool:
        """Whether ``path`` (links followed) is a regular file."""
        return os.path.isfile(path)

    def exists(self, path: str) -> bool:
        return os.path.exists(path)

    def real_file(self, path: str) -> str | None:
        """The real path of ``path`` when it is a regular file, else None."""
        real = self.real_path(path)
        return real if self.is_file(real) else None

    def same_file(self, first: str, second: str) -> bool:
        """Whether absolute ``first`` is the regular file ``second`` names (by real path)."""
        if not os.path.isabs(first):
            return False
        try:
            return self.real_path(first) == self.real_path(second) and self.is_file(first)
        except (OSError, ValueError):
            return False

    def canonical_path(self, path: str) -> str:
        """:func:`plangate.autoplan.layout.canonical_path`, resolved in this world."""
        return layout.canonical_path(path, exists=self.exists, real_path=self.real_path)

    def project_owners(self, project_dir: str) -> list[str]:
        """The folders whose sessions' journals are the project's
        (:func:`plangate.journal.owners.project_owners`: it and its linked worktrees)."""
        from plangate.journal.owners import project_owners

        return project_owners(project_dir)

    def skill_dirs(self, project_dir: str) -> list[str]:
        """The /autoplan skill folders this installation answers for."""
        return skill_names.skill_dirs(layout.SKILL_NAME, project_dir)

    def clock(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


OS = World()
DEFAULT: World = OS
"""The world :func:`plangate.guard.evaluate.evaluate` uses when it is given none."""
