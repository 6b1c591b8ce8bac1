"""The guard's decision log: content-free lines, trimming, and failures that change nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from plangate.decisions import log
from plangate.decisions.reasons import Decision
from plangate.state_root import StateRoot
from tests.conftest import Unprivileged

BASE_KEYS = {"schema", "ts", "decision", "disposition", "code", "path", "claude_code_version"}
NOW = 1_796_000_000.25


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="ascii").splitlines()]


def test_log_path_follows_the_state_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(tmp_path / "state"))
    assert log.log_path() == str(tmp_path / "state" / "analytics" / "autoplan-guard.jsonl")
    assert log.log_path("/x") == os.path.join("/x", "analytics", "autoplan-guard.jsonl")


def test_timestamp_is_iso_utc_with_milliseconds() -> None:
    assert log.utc_timestamp(0) == "1970-01-01T00:00:00.000Z"
    assert log.utc_timestamp(NOW) == "2026-11-30T00:53:20.250Z"
    assert log.utc_timestamp().endswith("Z")


def test_verified_allow_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(tmp_path))
    assert log.append_decision(Decision.allow("payload", "2.1.332"), now=NOW)
    [line] = _lines(tmp_path / "analytics" / "autoplan-guard.jsonl")
    assert line == {
        "schema": 1,
        "ts": "2026-11-30T00:53:20.250Z",
        "decision": "allow",
        "disposition": "allow",
        "code": None,
        "path": "payload",
        "claude_code_version": "2.1.332",
    }


def test_lines_carry_names_and_shapes_only_when_present(tmp_path: Path) -> None:
    decisions = [
        Decision.deny(
            "snapshot",
            detail="/home/someone/secret/plan.md",
            path="journal",
            claude_code_version="2.1.332",
        ),
        Decision.deny("agent_key", path="journal", unknown_keys=["model", "x" * 500]),
        Decision.unverified(
            "unrecognized_shape", detail="preamble:system", record_shapes=["system"]
        ),
        Decision.unverified("journal_lag"),
    ]
    for decision in decisions:
        assert log.append_decision(decision, state_root=str(tmp_path), now=NOW)
    path = tmp_path / "analytics" / "autoplan-guard.jsonl"
    snapshot, agent_key, shape, lag = _lines(path)
    assert set(snapshot) == BASE_KEYS
    assert snapshot["code"] == "snapshot"
    assert snapshot["disposition"] == "fallback"
    assert "secret" not in path.read_text()  # a detail is never logged
    assert set(agent_key) == BASE_KEYS | {"unknown_keys"}
    assert agent_key["unknown_keys"] == ["model", "x" * log.NAME_MAX]
    assert agent_key["claude_code_version"] is None
    assert set(shape) == BASE_KEYS | {"record_types"}
    assert shape["code"] == "unrecognized_shape:preamble:system"
    assert shape["record_types"] == ["system"]
    assert shape["decision"] == "allow" and shape["disposition"] == "unverified"
    assert set(lag) == BASE_KEYS
    assert lag["path"] == "none"


def test_a_state_root_that_is_a_file_changes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.write_text("not a folder")
    assert log.append_decision(Decision.allow(), state_root=str(root)) is False
    assert root.read_text() == "not a folder"


READ_ONLY_FOLDER = """
import os, stat
from plangate.decisions import log
from plangate.decisions.reasons import Decision
os.mkdir("analytics")
os.chmod("analytics", stat.S_IRUSR | stat.S_IXUSR)
print(log.append_decision(Decision.allow(), state_root=os.getcwd()), os.listdir("analytics"))
os.chmod("analytics", stat.S_IRWXU)
"""


def test_a_read_only_folder_changes_nothing(unprivileged: Unprivileged) -> None:
    # Root writes into read-only folders: the check runs as a user who is not root.
    result = unprivileged.run(READ_ONLY_FOLDER)
    assert result.stdout == "False []\n", result.stderr


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")
def test_a_state_root_on_a_read_only_file_system_changes_nothing() -> None:
    # Even root cannot create folders in /proc: the read-only case wherever tests run.
    assert log.append_decision(Decision.allow(), state_root="/proc/self/plangate") is False


def test_a_refused_open_changes_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def refuse(*args: object, **kwargs: object) -> int:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("plangate.decisions.log.os.open", refuse)
    assert log.append_decision(Decision.deny("cycle"), state_root=str(tmp_path)) is False


def _fill(path: Path, count: int, width: int = 300) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="ascii") as handle:
        for index in range(count):
            handle.write(json.dumps({"n": index, "pad": "p" * width}) + "\n")


def test_passing_256_kib_keeps_the_newest_1000_lines(tmp_path: Path) -> None:
    path = tmp_path / "analytics" / "autoplan-guard.jsonl"
    _fill(path, 1500)
    assert path.stat().st_size > log.ROTATE_BYTES
    assert log.append_decision(Decision.deny("cycle"), state_root=str(tmp_path), now=NOW)
    lines = path.read_text(encoding="ascii").splitlines()
    assert len(lines) == log.KEEP_LINES
    assert json.loads(lines[0])["n"] == 501
    assert json.loads(lines[-1])["code"] == "cycle"
    assert os.listdir(path.parent) == [path.name]  # no temp file left


def test_under_256_kib_nothing_is_trimmed(tmp_path: Path) -> None:
    path = tmp_path / "analytics" / "autoplan-guard.jsonl"
    _fill(path, 1200, width=10)
    assert path.stat().st_size < log.ROTATE_BYTES
    assert log.append_decision(Decision.deny("cycle"), state_root=str(tmp_path))
    assert len(path.read_text().splitlines()) == 1201


def test_trim_drops_empty_lines_and_a_cut_first_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"aaaa\n\n" + b"".join(b"line%d\n\n" % n for n in range(10)))
    monkeypatch.setattr(log, "TAIL_READ_BYTES", 40)
    assert log.trim(StateRoot(str(tmp_path)).folder(), "log.jsonl", keep=3)
    assert path.read_bytes() == b"line7\nline8\nline9\n"
    monkeypatch.setattr(log, "TAIL_READ_BYTES", 4096)
    assert log.trim(StateRoot(str(tmp_path)).folder(), "log.jsonl", keep=100)
    assert path.read_bytes() == b"line7\nline8\nline9\n"


def test_a_failed_trim_leaves_no_temp_and_changes_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "analytics" / "autoplan-guard.jsonl"
    _fill(path, 1500)

    def refuse(source: str, target: str) -> None:
        raise OSError(18, "rename refused")

    monkeypatch.setattr("plangate.decisions.log.os.replace", refuse)
    # The line is appended; the trim fails quietly and leaves no temporary file behind.
    assert log.append_decision(Decision.deny("cycle"), state_root=str(tmp_path))
    assert len(path.read_text().splitlines()) == 1501
    assert os.listdir(path.parent) == [path.name]
    assert log.trim(StateRoot(str(tmp_path)).folder(), "missing.jsonl") is False


WRITER = """
import sys
from plangate.decisions import log
from plangate.decisions.reasons import Decision
root, tag, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
keys = ["k" + tag * 20] * 4
for _ in range(count):
    log.append_decision(Decision.deny("agent_key", unknown_keys=keys), state_root=root)
"""


def test_concurrent_appends_never_interleave(tmp_path: Path) -> None:
    processes = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), tag, "150"])
        for tag in "abcd"
    ]
    for process in processes:
        assert process.wait(timeout=120) == 0
    path = tmp_path / "analytics" / "autoplan-guard.jsonl"
    assert path.stat().st_size < log.ROTATE_BYTES  # no trim: every line must be there
    lines = _lines(path)
    assert len(lines) == 600
    for line in lines:
        keys = line["unknown_keys"]
        assert isinstance(keys, list) and len(set(keys)) == 1
