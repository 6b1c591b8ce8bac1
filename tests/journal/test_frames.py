"""The journal index file's frames: a snapshot, then appended deltas (plangate.journal.frames)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plangate.journal import frames
from plangate.state_root import StateRoot


def key(values: list[Any]) -> object:
    return values[0]


def write(path: Path, values: list[Any], saved: list[Any] | None, count: int, key: Any) -> int:
    """:func:`frames.write` of the file ``path``, in its folder as the state root checks it."""
    folder = StateRoot(str(path.parent)).folder()
    return frames.write(folder, path.name, values, saved, count, key)


def start(path: Path) -> list[Any]:
    values: list[Any] = [1, "\nid-a\n", b"\x01", [1], {"uses": "\nx\n", "count": 1}, "same"]
    assert write(path, values, None, 0, key) == 1
    return values


def grown(values: list[Any], boundary: int) -> list[Any]:
    state = dict(values[4])
    state["uses"] += "y\n"
    state["count"] += 1
    return [boundary, values[1] + "id-b\n", values[2] + b"\x02", [*values[3], 2], state, "same"]


def test_a_save_appends_what_changed_and_a_read_applies_it(tmp_path: Path) -> None:
    path = tmp_path / "s.index"
    first = start(path)
    size = path.stat().st_size
    second = grown(first, 2)
    assert write(path, second, first, 1, key) == 2
    assert path.stat().st_size - size < 200  # the additions, not the whole values
    assert frames.read(str(path), key) == (second, 2)
    third = grown(second, 3)
    third[5] = "changed"
    write(path, third, second, 2, key)
    assert frames.read(str(path), key) == (third, 3)


def test_a_delta_from_other_values_is_skipped(tmp_path: Path) -> None:
    """Two hook runs that saved from the same values: the second delta names values the
    file no longer holds, and is skipped; a later delta from the first one's applies."""
    path = tmp_path / "s.index"
    first = start(path)
    ours, theirs = grown(first, 2), grown(first, 2)
    theirs[5] = "theirs"
    write(path, ours, first, 1, key)
    write(path, theirs, first, 2, key)
    assert frames.read(str(path), key) == (ours, 3)
    later = grown(ours, 3)
    write(path, later, ours, 3, key)
    assert frames.read(str(path), key) == (later, 4)


def test_a_damaged_or_cut_frame_ends_the_file(tmp_path: Path) -> None:
    path = tmp_path / "s.index"
    first = start(path)
    second = grown(first, 2)
    write(path, second, first, 1, key)
    data = path.read_bytes()
    path.write_bytes(data[:-3])  # a save cut short
    assert frames.read(str(path), key) == (first, 1)
    path.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # a flipped bit
    assert frames.read(str(path), key) == (first, 1)
    path.write_bytes(b"\x00\x00\x00\x05junk!")
    assert frames.read(str(path), key) is None


def test_after_the_most_frames_a_save_writes_a_snapshot(tmp_path: Path) -> None:
    path = tmp_path / "s.index"
    values = start(path)
    count = 1
    for boundary in range(2, frames.FRAMES_MAX + 3):
        later = grown(values, boundary)
        count = write(path, later, values, count, key)
        values = later
        assert frames.read(str(path), key) == (values, count)
    assert count < frames.FRAMES_MAX
