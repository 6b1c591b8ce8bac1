"""The journal index file's frames: a snapshot, then appended deltas (plangate.journal.frames)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plangate.journal import frames


def key(values: list[Any]) -> object:
    return values[0]


def start(path: Path) -> list[Any]:
    values: list[Any] = [1, "\nid-a\n", b"\x01", [1], {"uses": "\nx\n", "count": 1}, "same"]
    assert frames.write(str(path), values, None, 0, key) == 1
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
    assert frames.write(str(path), second, first, 1, key) == 2
    assert path.stat().st_size - size < 200  # the additions, not the whole values
    assert frames.read(str(path), key) == (second, 2)
    third = grown(second, 3)
    third[5] = "changed"
    frames.write(str(path), third, second, 2, key)
    assert frames.read(str(path), key) == (third, 3)


def test_a_delta_from_other_values_is_skipped(tmp_path: Path) -> None:
    """Two hook runs that saved from the same values: the second delta names values the
    file no longer holds, and is skipped; a later delta from the first one's applies."""
    path = tmp_path / "s.index"
    first = start(path)
    ours, theirs = grown(first, 2), grown(first, 2)
    theirs[5] = "theirs"
    frames.write(str(path), ours, first, 1, key)
    frames.write(str(path), theirs, first, 2, key)
    assert frames.read(str(path), key) == (ours, 3)
    later = grown(ours, 3)
    frames.write(str(path), later, ours, 3, key)
    assert frames.read(str(path), key) == (later, 4)


def test_a_damaged_or_cut_frame_ends_the_file(tmp_path: Path) -> None:
    path = tmp_path / "s.index"
    first = start(path)
    second = grown(first, 2)
    frames.write(str(path), second, first, 1, key)
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
        count = frames.write(str(path), later, values, count, key)
        values = later
        assert frames.read(str(path), key) == (values, count)
    assert count < frames.FRAMES_MAX
