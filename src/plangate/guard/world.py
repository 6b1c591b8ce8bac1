"""The guard's world: the agent-neutral read seam (:class:`plangate.journal.world.World`: the
session's history, files, the clock) and what only /autoplan's rules read besides.

A phase decision reads the session journal, the artifacts of the invocation (the restore
point, checkpoints, close packets, the active plan), the skill folders of the installation,
and the clock it waits on. The first and the last are every workflow's
(:mod:`plangate.journal.world`); this subclass adds /autoplan's own: its skill folders, its
immutable artifacts, and paths resolved the way its layout names them. :data:`OS` is the
world every hook run uses. A test hands :func:`plangate.guard.evaluate.evaluate` (or sets
:data:`DEFAULT` to) a subclass with an injected clock, to decide in-process without
sleeping. Standard library and plangate only (hook path).

Every look at the file system a phase decision makes is one of these methods, path
resolution included (:meth:`World.real_path`, :meth:`World.is_file`, :meth:`World.exists`,
:meth:`World.lstat`, and :meth:`World.same_file` / :meth:`World.canonical_path` built on
them). What the guard *writes* is not the world: the decision log
(:mod:`plangate.decisions.log`), the journal index the reader saves, and the pre-index markers
(:mod:`plangate.guard.preindex`) are the guard's own state, written where they always were.
"""

from __future__ import annotations

from plangate import skill_names
from plangate.autoplan import layout
from plangate.journal import world


class World(world.World):
    """The operating system's world, with /autoplan's skill folders and artifacts."""

    def read_artifact(self, path: str) -> bytes:
        """An immutable artifact's bytes (:func:`plangate.autoplan.layout.immutable_read`)."""
        return layout.immutable_read(path)

    def read_verified(self, path: str, sha256: str, size: int) -> bytes:
        """An immutable artifact with its recorded hash and size."""
        return layout.read_verified(path, sha256, size)

    def canonical_path(self, path: str) -> str:
        """:func:`plangate.autoplan.layout.canonical_path`, resolved in this world."""
        return layout.canonical_path(path, exists=self.exists, real_path=self.real_path)

    def skill_dirs(self, project_dir: str) -> list[str]:
        """The /autoplan skill folders this installation answers for."""
        return skill_names.skill_dirs(layout.SKILL_NAME, project_dir)


OS = World()
DEFAULT: World = OS
"""The world :func:`plangate.guard.evaluate.evaluate` uses when it is given none."""
