"""The journal index (:mod:`plangate.journal.index`): a read that goes on from the index an
earlier hook run saved gives exactly the verdict a full read gives, and whenever it cannot
prove that, it reads in full.

Real journals grow line by line here: the corpus's 2.x main sessions are copied into the
hook layout and appended to in steps, and after every step the indexed read is compared
with a fresh full read of the same bytes.
"""

from __future__ import annotations

import json
import marshal
import os
import shutil
import stat
import tempfile
import time
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from plangate import tuning
from plangate.journal import READY, frames, read_journal
from plangate.journal import index as journal_index
from plangate.journal import reader as reader_module
from plangate.journal.codes import COMPETING_ROOT, REWRITTEN
from plangate.journal.index import TAIL_BYTES
from plangate.journal.reader import Verdict
from plangate.journal.records import Record
from testkit.journals import Journal, journal_path
from tests import corpus
from tests.corpus import CORPUS

from .conftest import PROJECT

MAIN_2X = sorted(
    path
    for path in CORPUS.rglob("*.jsonl")
    if "subagents" not in path.parts
    and not path.name.startswith("agent-")
    and path.name != "subagent-transcript.jsonl"
    and path.parent.name != "claude-code-viewer"
    and "claude_agent" not in path.name
)


def fingerprint(verdict: Verdict) -> dict[str, Any]:
    return {
        "status": verdict.status,
        "reason": verdict.reason,
        "version": verdict.claude_code_version,
        "records": verdict.records,
        "lines": verdict.lines,
        "owned": verdict.owned,
        "owner": verdict.owner,
        "genesis": verdict.genesis,
        "root_shape": verdict.root_shape,
        "complete": verdict.complete,
        "prefix": (verdict.prefix.size, verdict.prefix.digest) if verdict.prefix else None,
        "stray": verdict.stray_tool_uses,
        "dropped": verdict.dropped,
        "event_count": verdict.event_count,
        "events": [event.as_dict() for event in verdict.events],
        "handed_over": sorted(verdict.handed_over),
    }


def last_records(ordered: list[Record]) -> Iterable[Record]:
    return ordered[-5:]


class Growing:
    """A journal in the hook layout that grows, read with and without the index."""

    def __init__(self, config: Path, cwd: str, session: str, index_dir: Path) -> None:
        self.path = journal_path(config, cwd, session)
        self.path.write_bytes(b"")
        self.config = str(config)
        self.cwd = cwd
        self.session = session
        self.index_dir = str(index_dir)

    def append(self, data: bytes) -> None:
        with self.path.open("ab") as handle:
            handle.write(data)

    def read(self, *, indexed: bool, **options: Any) -> Verdict:
        return read_journal(
            str(self.path),
            session_id=self.session,
            owners=[self.cwd],
            config_dir=self.config,
            index_dir=self.index_dir if indexed else None,
            **options,
        )

    def compare(self, **options: Any) -> Verdict:
        indexed = self.read(indexed=True, **options)
        assert fingerprint(indexed) == fingerprint(self.read(indexed=False, **options))
        return indexed


def first_turn(journal: Journal, config_dir: Path, tmp_path: Path) -> Growing:
    """A journal with a prompt and one Bash call, read once (which saves the index)."""
    growing = Growing(config_dir, PROJECT, journal.session_id, tmp_path / "index")
    journal.prompt("Start.")
    bash(journal, "ls", "a\nb")
    growing.append(journal.to_bytes())
    growing.compare()
    return growing


def bash(journal: Journal, command: str, output: str) -> str:
    use = journal.tool_use("Bash", {"command": command})
    tool_use_id = use["message"]["content"][0]["id"]
    journal.bash_result(tool_use_id, output)
    return str(tool_use_id)


def read(journal: Journal, file_path: str, lines: list[str]) -> None:
    use = journal.tool_use("Read", {"file_path": file_path})
    journal.read_result(use["message"]["content"][0]["id"], file_path, lines)


def corpus_root(path: Path) -> tuple[str, str]:
    for line in path.read_bytes().splitlines():
        record = json.loads(line) if line.strip() else None
        if isinstance(record, dict) and record.get("cwd") and record.get("sessionId"):
            return str(record["cwd"]), str(record["sessionId"])
    raise AssertionError(f"{path} has no record with a folder and session")


@corpus.needed
@pytest.mark.parametrize(
    "path", corpus.each(MAIN_2X), ids=lambda p: p.relative_to(CORPUS).as_posix()
)
@pytest.mark.parametrize("select", [None, last_records], ids=["light", "selected"])
def test_growing_real_journals_read_the_same_with_the_index(
    path: Path, select: Any, config_dir: Path, tmp_path: Path, started_scans: list[int]
) -> None:
    cwd, session = corpus_root(path)
    growing = Growing(config_dir, cwd, session, tmp_path / "index")
    lines = path.read_bytes().splitlines(keepends=True)
    steps = sorted({len(lines) * k // 6 for k in range(1, 7)})
    done = 0
    ready = 0
    for step in steps:
        growing.append(b"".join(lines[done:step]))
        done = step
        verdict = growing.compare(select=select)
        ready += verdict.status == READY
    assert ready >= 2
    # After the first ready read, reads went on from the index rather than from byte 0.
    assert any(start > 0 for start in started_scans)


def test_an_unfinished_last_line_is_read_again_once_finished(
    journal: Journal, config_dir: Path, tmp_path: Path, started_scans: list[int]
) -> None:
    growing = first_turn(journal, config_dir, tmp_path)
    read(journal, "/home/user/project/x.py", ["print(1)"])
    data = journal.to_bytes()[len(growing.path.read_bytes()) :]
    growing.append(data[:-20])
    growing.compare()
    growing.append(data[-20:])
    verdict = growing.compare(select=last_records)
    assert verdict.ready and len(verdict.tool_uses()) == 2
    assert started_scans[-2] > 0  # the indexed read went on from the index


def test_a_queued_prompt_read_from_the_index_is_the_one_a_full_read_gives(
    journal: Journal, config_dir: Path, tmp_path: Path, started_scans: list[int]
) -> None:
    growing = first_turn(journal, config_dir, tmp_path)
    journal.queued_prompt("approve the spec")
    journal.queued_prompt("and approve the plan " + "p" * 5000)  # its text is not indexed
    journal.text("Noted.")
    growing.append(journal.to_bytes()[len(growing.path.read_bytes()) :])
    verdict = growing.compare()
    growing.compare(select=last_records)
    assert started_scans[-2] > 0  # the indexed read went on from the index
    queued = [event for event in verdict.events if event.kind == "queued_prompt"]
    assert [getattr(event, "text", None) for event in queued] == ["approve the spec", None]


@pytest.mark.parametrize(
    "change",
    ["duplicate_uuid", "second_root", "compact_boundary", "orphan"],
)
def test_appends_the_index_cannot_place_are_read_in_full(
    change: str, journal: Journal, config_dir: Path, tmp_path: Path, started_scans: list[int]
) -> None:
    growing = first_turn(journal, config_dir, tmp_path)
    records = [json.loads(line) for line in growing.path.read_bytes().splitlines()]
    last = records[-1]
    extra = dict(last)
    if change == "duplicate_uuid":
        extra["parentUuid"] = last["uuid"]
    elif change == "second_root":
        extra.update(uuid="ffffffff-0000-4000-8000-000000000001", parentUuid=None)
        extra["message"] = {"role": "user", "content": "Another start."}
        extra.pop("toolUseResult", None)
    elif change == "compact_boundary":
        extra = {
            **{k: last[k] for k in ("cwd", "sessionId", "version", "timestamp", "isSidechain")},
            "type": "system",
            "subtype": "compact_boundary",
            "uuid": "ffffffff-0000-4000-8000-000000000002",
            "parentUuid": None,
            "logicalParentUuid": last["uuid"],
            "content": "Conversation compacted",
        }
    else:
        extra.update(
            uuid="ffffffff-0000-4000-8000-000000000003",
            parentUuid="ffffffff-0000-4000-8000-00000000dead",
        )
    started_scans.clear()
    growing.append(json.dumps(extra).encode() + b"\n")
    verdict = growing.compare()
    # The indexed read went on from the index, could not place the append, read in full.
    assert started_scans[0] > 0 and started_scans[1:] == [0, 0]
    if change == "duplicate_uuid":
        assert verdict.reason == COMPETING_ROOT
    if change == "second_root":
        # A new null-parent prompt is a new conversation (an Esc or rewind on the first
        # prompt): the earlier one is dropped, not a competing root.
        assert verdict.reason is None and set(verdict.dropped) == {"abandoned_root"}


def test_another_file_a_changed_tail_or_a_damaged_index_is_not_trusted(
    journal: Journal, config_dir: Path, tmp_path: Path, started_scans: list[int]
) -> None:
    growing = first_turn(journal, config_dir, tmp_path)
    saved = Path(journal_index.index_file(growing.index_dir, journal.session_id))

    # The same bytes in a new file (another inode).
    replacement = growing.path.with_suffix(".new")
    shutil.copyfile(growing.path, replacement)
    os.replace(replacement, growing.path)
    started_scans.clear()
    growing.compare()
    assert started_scans == [0, 0]

    # A byte in the covered tail changed, then the journal grew.
    data = bytearray(growing.path.read_bytes())
    data[-10] = ord("X") if data[-10] != ord("X") else ord("Y")
    with growing.path.open("r+b") as handle:
        handle.write(bytes(data))
    bash(journal, "pwd", "/home/user/project")
    growing.append(journal.to_bytes()[len(data) :])
    started_scans.clear()
    growing.compare()
    assert started_scans == [0, 0]

    # A damaged index file.
    body = bytearray(saved.read_bytes())
    body[len(body) // 2] ^= 0xFF
    saved.write_bytes(bytes(body))
    started_scans.clear()
    growing.compare()
    assert started_scans == [0, 0]


def test_a_rewrite_within_one_hook_run_is_still_caught(
    journal: Journal, config_dir: Path, tmp_path: Path
) -> None:
    growing = Growing(config_dir, PROJECT, journal.session_id, tmp_path / "index")
    journal.prompt("Start the review.")
    bash(journal, "ls", "a\nb")
    growing.append(journal.to_bytes())
    growing.read(indexed=True)
    bash(journal, "pwd", "/home/user/project")
    growing.append(journal.to_bytes()[growing.path.stat().st_size :])
    first = growing.read(indexed=True)  # goes on from the index
    data = growing.path.read_bytes()
    at = data.index(b"Start the review")
    with growing.path.open("r+b") as handle:
        handle.seek(at)
        handle.write(b"X")
    again = growing.read(indexed=True, prior=first.prefix)
    assert again.reason == REWRITTEN


def test_the_index_is_private_and_holds_no_texts(
    journal: Journal, config_dir: Path, tmp_path: Path
) -> None:
    growing = Growing(config_dir, PROJECT, journal.session_id, tmp_path / "index")
    journal.prompt("Start.")
    journal.text("A private paragraph of the model.", stop_reason=None)
    read(journal, "/home/user/project/x.py", ["secret = 42"])
    growing.append(journal.to_bytes())
    assert growing.read(indexed=True).ready
    saved = Path(journal_index.index_file(growing.index_dir, journal.session_id))
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert stat.S_IMODE(saved.parent.stat().st_mode) == 0o700
    data = saved.read_bytes()
    assert b"private paragraph" not in data and b"secret = 42" not in data
    assert not [name for name in os.listdir(saved.parent) if name.endswith(".tmp")]


def test_small_journals_are_read_in_full_without_an_index_by_default(
    journal: Journal,
    config_dir: Path,
    tmp_path: Path,
    started_scans: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(tuning.ENV)
    assert reader_module.index_min_bytes() == reader_module.INDEX_MIN_BYTES
    growing = Growing(config_dir, PROJECT, journal.session_id, tmp_path / "index")
    journal.prompt("Start.")
    bash(journal, "ls", "a\nb")
    growing.append(journal.to_bytes())
    for _ in range(2):
        assert growing.read(indexed=True).ready
    assert started_scans == [0, 0]
    assert not (tmp_path / "index").exists()
    monkeypatch.setenv(tuning.ENV, tuning.joined(index_min_bytes=growing.path.stat().st_size))
    growing.read(indexed=True)
    assert (tmp_path / "index").is_dir()


def test_indexes_of_sessions_long_over_are_removed_when_a_new_one_starts(
    journal: Journal, config_dir: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "index"
    folder.mkdir()
    old = folder / "0ld-session.index"
    old_events = folder / "0ld-session.events"
    leftover = folder / ".0ld-session.123.tmp"
    recent = folder / "recent-session.index"
    unrelated = folder / "notes.txt"
    for path in (old, old_events, leftover, recent, unrelated):
        path.write_bytes(b"x")
    month_ago = time.time() - 30 * 24 * 3600
    for path in (old, old_events, leftover, unrelated):
        os.utime(path, (month_ago, month_ago))
    growing = Growing(config_dir, PROJECT, journal.session_id, folder)
    journal.prompt("Start.")
    bash(journal, "ls", "a\nb")
    growing.append(journal.to_bytes())
    assert growing.read(indexed=True).ready
    assert sorted(path.name for path in folder.iterdir()) == sorted(
        [recent.name, unrelated.name, f"{journal.session_id}.index"]
        + [f"{journal.session_id}.events"]
    )


def test_a_damaged_or_missing_events_file_means_a_full_read(
    journal: Journal, config_dir: Path, tmp_path: Path, started_scans: list[int]
) -> None:
    growing = first_turn(journal, config_dir, tmp_path)
    events = Path(journal_index.events_file(growing.index_dir, journal.session_id))
    assert events.stat().st_size > 0
    data = bytearray(events.read_bytes())
    data[len(data) // 2] ^= 0xFF
    events.write_bytes(bytes(data))
    bash(journal, "pwd", "/home/user/project")
    growing.append(journal.to_bytes()[growing.path.stat().st_size :])
    started_scans.clear()
    growing.compare()
    assert len(started_scans) == 3 and started_scans[0] > 0  # went on from the index,
    assert started_scans[1:] == [0, 0]  # found its events damaged and read in full
    events.unlink()
    bash(journal, "ls", "x")
    growing.append(journal.to_bytes()[growing.path.stat().st_size :])
    started_scans.clear()
    growing.compare()
    assert started_scans[1:] == [0, 0]  # the index could not be used without its events


def appended_frame(index_file: Path, before: bytes, inode: int) -> bytes:
    """The frame a read appended to ``index_file``, which held ``before`` at ``inode``: the
    same file, every byte it had kept, then one delta frame (never a snapshot)."""
    after = index_file.read_bytes()
    assert index_file.stat().st_ino == inode  # appended in place, not a new file renamed over
    assert after.startswith(before) and len(after) > len(before)
    frame = after[len(before) :]
    body = frame[8:]
    assert int.from_bytes(frame[:4], "big") == len(body)  # exactly one frame
    assert int.from_bytes(frame[4:8], "big") == zlib.crc32(body)
    assert marshal.loads(body)[0] == frames.DELTA
    return frame


def test_each_read_that_appends_adds_a_frame_not_the_whole_index(
    journal: Journal, tmp_path: Path
) -> None:
    """A read that goes on from the index appends one delta frame and keeps every byte the
    file had; the frame holds what the read added and nothing of what the index held.

    The frame's size cannot tell it from a rewrite. A delta for a Bash call (two records) is
    about as long as a small index's whole snapshot, whose longest value is the journal's
    path. So "the file grew by less than it held" passed or failed with the length of
    pytest's temporary folder, which names the user and counts the runs (issue 34's
    ``AssertionError: (0, 674, 674)``: under ``/tmp/pytest-of-root/pytest-5`` the snapshot is
    674 bytes and the first delta 674; under ``pytest-55`` the snapshot is 675). And a rewrite
    (a new snapshot renamed over the old) grows a small index by less than a delta does, so
    that check could not see the rewrite it was named for. So the same journal is indexed
    under a short folder and a long one: each read appends one frame in place, and the two
    files gain the same bytes."""
    twin = Journal(cwd=PROJECT)  # the same seed: the same records, byte for byte
    long_root = tmp_path / ("a-long-folder-" * 8)
    long_config = long_root / "claude"
    long_config.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="pg-") as folder:
        short_root = Path(os.path.realpath(folder))
        short_config = short_root / "claude"
        short_config.mkdir()
        grown = [
            first_turn(journal, short_config, short_root),
            first_turn(twin, long_config, long_root),
        ]
        files = [
            Path(journal_index.index_file(growing.index_dir, journal.session_id))
            for growing in grown
        ]
        assert len(files[1].read_bytes()) > len(files[0].read_bytes()) + 100
        for round_ in range(3):
            added = []
            for writer, growing, index_file in zip((journal, twin), grown, files, strict=True):
                before, inode = index_file.read_bytes(), index_file.stat().st_ino
                bash(writer, f"echo {round_}", str(round_))
                growing.append(writer.to_bytes()[growing.path.stat().st_size :])
                growing.compare()
                added.append(appended_frame(index_file, before, inode))
                assert str(growing.path).encode() not in added[-1]
            assert added[0] == added[1], round_


@pytest.mark.parametrize("name", ["events", "index"])
def test_a_symlink_planted_for_an_index_file_leaves_its_target_unchanged(
    journal: Journal, config_dir: Path, tmp_path: Path, name: str
) -> None:
    """The agent can write in the state root: a link in place of ``<session>.events`` (opened
    to append, or to start anew) or of ``<session>.index`` (appended to) is never written
    through. The save fails, and the next read only reads in full."""
    growing = first_turn(journal, config_dir, tmp_path)
    if name == "events":
        planted = Path(journal_index.events_file(growing.index_dir, journal.session_id))
    else:
        planted = Path(journal_index.index_file(growing.index_dir, journal.session_id))
    # The target holds what the file held: a read through the link finds a usable index.
    target = tmp_path / "outside.bin"
    target.write_bytes(planted.read_bytes())
    before = target.read_bytes()
    planted.unlink()
    planted.symlink_to(target)
    for command in ("pwd", "ls x"):
        bash(journal, command, "out")
        growing.append(journal.to_bytes()[growing.path.stat().st_size :])
        assert growing.compare().ready
    assert target.read_bytes() == before


@pytest.mark.parametrize("planted", ["folder", "root"])
def test_a_symlinked_index_folder_or_state_root_is_never_written_in(
    journal: Journal, config_dir: Path, tmp_path: Path, planted: str
) -> None:
    """A link in place of ``journal-index/`` (or of the folder above it, the state root) is
    refused before any write: nothing lands in its target, and reads stay right (in full)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    state = tmp_path / "state"
    index_dir = state / "journal-index"
    if planted == "folder":
        state.mkdir()
        index_dir.symlink_to(outside)
    else:
        state.symlink_to(outside)
    growing = Growing(config_dir, PROJECT, journal.session_id, index_dir)
    journal.prompt("Start.")
    for command in ("ls", "pwd"):
        bash(journal, command, "out")
        growing.append(journal.to_bytes()[growing.path.stat().st_size :])
        assert growing.compare().ready
    assert list(outside.iterdir()) == []
    assert (state if planted == "root" else index_dir).is_symlink()


def test_a_later_read_of_one_hook_run_goes_on_from_the_index_and_still_sees_a_rewrite(
    journal: Journal, config_dir: Path, tmp_path: Path, started_scans: list[int]
) -> None:
    """A read with ``prior`` (the guard's read loop) goes on from the index as the first
    read did, and digests the bytes the index covers again: a byte changed far before the
    index's tail check (64 KiB) is still ``rewritten``."""
    growing = Growing(config_dir, PROJECT, journal.session_id, tmp_path / "index")
    journal.prompt("Start the review.")
    for number in range(60):
        bash(journal, f"echo {number}", "x" * 2000)
    growing.append(journal.to_bytes())
    assert growing.path.stat().st_size > 2 * TAIL_BYTES
    first = growing.read(indexed=True)  # a full read, which saves the index
    assert first.prefix is not None
    started_scans.clear()
    again = growing.read(indexed=True, prior=first.prefix)
    assert started_scans and started_scans[0] > 0, "went on from the index"
    assert fingerprint(again) == fingerprint(growing.read(indexed=False, prior=first.prefix))
    bash(journal, "pwd", "/home/user/project")
    growing.append(journal.to_bytes()[growing.path.stat().st_size :])
    started_scans.clear()
    grown = growing.read(indexed=True, prior=first.prefix)
    assert started_scans[0] > 0 and fingerprint(grown) == fingerprint(
        growing.read(indexed=False, prior=first.prefix)
    )
    data = growing.path.read_bytes()
    at = data.index(b"Start the review")
    assert len(data) - at > 2 * TAIL_BYTES
    with growing.path.open("r+b") as handle:
        handle.seek(at)
        handle.write(b"X")
    assert growing.read(indexed=True, prior=first.prefix).reason == REWRITTEN
    assert growing.read(indexed=True, prior=grown.prefix).reason == REWRITTEN
