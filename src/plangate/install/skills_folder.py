"""Claude Code's skills folder as ``plangate setup`` keeps it: plangate's skill folders
(each with :data:`~plangate.install.skill_bundle.SKILL_MARKER`) installed, updated or removed,
and any other folder never touched."""

from __future__ import annotations

import contextlib
import os
import shutil
from typing import TextIO

from plangate.config import display_path
from plangate.errors import ConfigError
from plangate.install import skill_bundle
from plangate.install.skill_bundle import is_ours


def installed_skills(skills_dir: str) -> list[str]:
    """The skill folders in ``skills_dir`` that plangate installed."""
    try:
        names = sorted(os.listdir(skills_dir))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [n for n in names if not n.startswith(".") and is_ours(os.path.join(skills_dir, n))]


def check_ours_or_absent(folder: str) -> None:
    if os.path.lexists(folder) and not is_ours(folder):
        raise ConfigError(
            f"{display_path(folder)} exists and was not installed by plangate; "
            "plangate never touches another skill",
            "move it away, then run plangate setup again",
        )


def sync_skills(skills: list[tuple[str, str]], skills_dir: str, python: str, out: TextIO) -> None:
    """Makes ``skills_dir`` hold exactly plangate's ``skills`` (name, source folder) as this
    installation renders them; one line each."""
    wanted = {name for name, _ in skills}
    for name, source in skills:
        target = os.path.join(skills_dir, name)
        check_ours_or_absent(target)  # again, under the lock
        expected = skill_bundle.expected(source, target, python)
        if is_ours(target) and skill_bundle.tree(target) == expected:
            print(f"unchanged skill {name} in {display_path(target)}", file=out)
            continue
        verb = "updated" if is_ours(target) else "installed"
        skill_bundle.replace_folder(expected, target)
        print(f"{verb} skill {name} in {display_path(target)}", file=out)
    for name in installed_skills(skills_dir):
        if name not in wanted:
            target = os.path.join(skills_dir, name)
            shutil.rmtree(target)
            print(f"removed skill {name} from {display_path(target)} (no longer bundled)", file=out)


def remove_skills(skills_dir: str, out: TextIO) -> None:
    """Removes every skill folder of plangate's, then the folder when that leaves it empty."""
    for name in installed_skills(skills_dir):
        target = os.path.join(skills_dir, name)
        shutil.rmtree(target)
        print(f"removed skill {name} from {display_path(target)}", file=out)
    with contextlib.suppress(OSError):
        os.rmdir(skills_dir)  # only when empty: the folder setup made for them
