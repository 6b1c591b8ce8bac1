"""Which Reads are /autoplan's own files, approved without a permission card.

Claude Code clears a skill's tool grant when a new turn starts (a background reviewer's
report starts one), after which a Read outside the working folder shows a card. The guard
approves exactly two kinds of file: a Markdown file of this installation's /autoplan skill
(reached by its real path), and an immutable artifact of a checkpoint or close folder in
``<repo>/.plangate/tmp/autoplan/`` when the session's project is that repository or inside it.
Every look at the file system is ``world``'s (:mod:`plangate.guard.world`).
"""

from __future__ import annotations

import os
import stat

from plangate.autoplan import layout
from plangate.guard.world import OS, World

ARTIFACT_NAMES = frozenset((*layout.CHECKPOINT_FILES, layout.CLOSE_PACKET))


def owned_by_autoplan(path: str, project_dir: str, world: World = OS) -> bool:
    return _skill_file(path, project_dir, world) or _artifact(path, project_dir, world)


def _skill_file(path: str, project_dir: str, world: World) -> bool:
    if not path.endswith(".md"):
        return False
    real = world.real_path(path)
    for skill_dir in world.skill_dirs(project_dir):
        root = world.real_path(skill_dir)
        if os.path.commonpath([real, root]) == root and world.is_file(real):
            relative = os.path.relpath(real, root)
            return relative.count(os.sep) <= 1
    return False


def _artifact(path: str, project_dir: str, world: World) -> bool:
    folder, name = os.path.split(path)
    if name not in ARTIFACT_NAMES or layout.parse_folder_name(os.path.basename(folder)) is None:
        return False
    artifact_dir = os.path.dirname(folder)
    repo = artifact_dir
    for part in reversed(layout.ARTIFACT_PARTS):
        if os.path.basename(repo) != part:
            return False
        repo = os.path.dirname(repo)
    if world.real_path(path) != path:
        return False
    try:
        info = world.lstat(path)
    except OSError:
        return False
    if not stat.S_ISREG(info.st_mode) or stat.S_IMODE(info.st_mode) != layout.IMMUTABLE_MODE:
        return False
    project = world.real_path(project_dir)
    return project == repo or project.startswith(repo + os.sep)
