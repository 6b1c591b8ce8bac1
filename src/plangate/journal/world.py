"""The world a hook reads, behind one small interface (as httpx's transport is for a client):
the first step of every decision (:doc:`docs/engine.md`, *read*).

A decision reads, besides its payload, the session's history (Claude Code's journal or
Codex's rollout), files it names, and the clock it waits on. :class:`World` is all of them
that no workflow owns: its methods are the operating system's, and :data:`OS` is the world
every hook run uses. The guard (:mod:`plangate.guard.world`: /autoplan's skill folders and
immutable artifacts), the workflow contracts (:mod:`plangate.contracts.evaluate`) and the
skill gates (:mod:`plangate.gates.transcript`) all read, wait and take the time through one;
a test hands them a subclass with an injected clock (:class:`testkit.clock.ClockWorld`), to
decide in-process without sleeping. Standard library and plangate only (hook path).

Pure string work on paths (``~``, the cwd, ``normpath``) is not a read and stays in the
callers. What a hook *writes* is not the world: the decision log, the journal index the
reader saves and the state root's records are written through their own modules.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from plangate.journal.verdict import Verdict


class World:
    """The operating system's world: the real files and the monotonic clock."""

    def read_journal(self, path: str, **options: Any) -> Verdict:
        """:func:`plangate.journal.reader.read_journal` of ``path`` (Claude Code's journal)."""
        from plangate.journal.reader import read_journal

        return read_journal(path, **options)

    def read_rollout(self, path: str, session_id: str | None = None) -> Verdict:
        """:func:`plangate.journal.codex.read_rollout` of ``path`` (Codex CLI's history)."""
        from plangate.journal.codex import read_rollout

        return read_rollout(path, session_id=session_id)

    def open_journal(self, path: str) -> int:
        """A read-only descriptor of a session's history, to reload records or read a
        subagent's transcript (the caller closes it). Non-blocking: a FIFO named like a
        journal is never waited on (a regular file reads as without it)."""
        return os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)

    def read_file(self, path: str, limit: int) -> bytes:
        """At most ``limit`` bytes of a file (the active plan, a phase file); OSError."""
        with open(path, "rb") as handle:
            return handle.read(limit)

    def first_line(self, path: str, limit: int) -> bytes:
        """A file's first line (at most ``limit`` bytes, its newline kept): a Codex rollout's
        ``session_meta``; OSError."""
        with open(path, "rb") as handle:
            return handle.readline(limit)

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

    def lexists(self, path: str) -> bool:
        """Whether ``path`` names anything, a dangling link included."""
        return os.path.lexists(path)

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

    def project_owners(self, project_dir: str) -> list[str]:
        """The folders whose sessions' journals are the project's
        (:func:`plangate.journal.owners.project_owners`: it and its linked worktrees)."""
        from plangate.journal.owners import project_owners

        return project_owners(project_dir)

    def clock(self) -> float:
        """Monotonic seconds: what every wait (:class:`plangate.journal.settle.Settle`) and
        deadline is measured on."""
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


OS = World()
"""The world every hook run uses: the contracts and the skill gates unless given another."""
