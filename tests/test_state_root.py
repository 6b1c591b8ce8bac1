"""The state root's owner (plangate.state_root): the places other writers reach through it.

The journal index, ``config.json`` and the folders SQLite and git write in are all reached
through :class:`~plangate.state_root.StateRoot` now: a link planted where a folder or a file
of theirs belongs is refused or replaced, never written through.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plangate import config
from plangate.errors import StateError
from plangate.journal import frames
from plangate.state_root import StateRoot, UnsafeFolder

PRECIOUS = b"the user's own file\n"


def _precious(tmp_path: Path) -> Path:
    target = tmp_path / "elsewhere" / "precious"
    target.parent.mkdir()
    target.write_bytes(PRECIOUS)
    return target


def test_a_place_in_the_root_is_checked_from_the_root_down(tmp_path: Path) -> None:
    root = tmp_path / "state"
    folder = StateRoot(str(root)).place(str(root / "runs" / "r1"))
    assert Path(folder).is_dir() and (root / "runs").stat().st_mode & 0o777 == 0o700
    os.symlink(tmp_path / "elsewhere", root / "worktrees")
    (tmp_path / "elsewhere").mkdir()
    with pytest.raises(UnsafeFolder):
        StateRoot(str(root)).place(str(root / "worktrees" / "w1"))
    assert not (tmp_path / "elsewhere" / "w1").exists()


def test_a_place_outside_the_root_is_the_persons_and_made_as_asked(tmp_path: Path) -> None:
    chosen = tmp_path / "my-databases" / "plangate"
    StateRoot(str(tmp_path / "state")).place(str(chosen))
    assert chosen.is_dir()
    assert not (tmp_path / "state").exists()  # nothing made in a root it does not use


def test_a_delta_frame_is_never_appended_through_a_planted_link(tmp_path: Path) -> None:
    folder = StateRoot(str(tmp_path / "state")).folder("journal-index")
    values = [1, "ids", {"count": 1}]
    assert frames.write(folder, "s.index", values, None, 0, lambda v: v[0]) == 1
    target = _precious(tmp_path)
    os.unlink(folder.file("s.index"))
    os.symlink(target, folder.file("s.index"))
    with pytest.raises(OSError):
        frames.write(folder, "s.index", [1, "ids2", {"count": 2}], values, 1, lambda v: v[0])
    assert target.read_bytes() == PRECIOUS


def test_a_delta_frame_alone_never_starts_a_file(tmp_path: Path) -> None:
    folder = StateRoot(str(tmp_path / "state")).folder("journal-index")
    with pytest.raises(FileNotFoundError):
        frames.write(folder, "gone.index", [1, "b"], [1, "a"], 1, lambda v: v[0])
    assert not os.path.lexists(folder.file("gone.index"))


def test_config_json_is_written_only_in_a_real_folder_of_the_persons(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    root = tmp_path / "state"
    os.symlink(elsewhere, root)
    with pytest.raises(StateError) as raised:
        config.set("ceo_review_gate", "on", path=str(root / "config.json"))
    assert "STATE_FOLDER_UNSAFE" in str(raised.value) or "symbolic link" in str(raised.value)
    assert os.listdir(elsewhere) == []


def test_config_json_replaces_a_planted_link_rather_than_writing_through_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "state"
    root.mkdir(mode=0o700)
    target = tmp_path / "elsewhere.json"
    target.write_bytes(b"{}\n")  # JSON, so the link's content is read and the write reached
    os.symlink(target, root / "config.json")
    assert config.set("ceo_review_gate", "on", path=str(root / "config.json")) is True
    assert target.read_bytes() == b"{}\n"
    assert not (root / "config.json").is_symlink()
    assert config.get("ceo_review_gate", path=str(root / "config.json")) is True
