"""layout: names, formats, canonical paths and the immutable read."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from plangate import jsonio
from plangate.autoplan import layout


def _immutable(path: Path, data: bytes = b"hello\n") -> str:
    path.write_bytes(data)
    path.chmod(0o444)
    return str(path)


# --- immutable_read ---------------------------------------------------------------------


def test_immutable_read_returns_the_bytes(tmp_path: Path) -> None:
    path = _immutable(tmp_path / "a.md", b"one\ntwo\n")
    assert layout.immutable_read(path) == b"one\ntwo\n"


def test_immutable_read_refuses_a_symlink(tmp_path: Path) -> None:
    target = _immutable(tmp_path / "a.md")
    link = tmp_path / "link.md"
    link.symlink_to(target)
    with pytest.raises(layout.ArtifactError) as caught:
        layout.immutable_read(str(link))
    assert caught.value.cause == "alias"
    assert caught.value.path == str(link)


def test_immutable_read_refuses_a_symlinked_folder(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    _immutable(real / "a.md")
    (tmp_path / "alias").symlink_to(real)
    with pytest.raises(layout.ArtifactError) as caught:
        layout.immutable_read(str(tmp_path / "alias" / "a.md"))
    assert caught.value.cause == "alias"


def test_immutable_read_refuses_a_non_canonical_spelling(tmp_path: Path) -> None:
    _immutable(tmp_path / "a.md")
    with pytest.raises(layout.ArtifactError) as caught:
        layout.immutable_read(str(tmp_path) + "/./a.md")
    assert caught.value.cause == "alias"


@pytest.mark.parametrize("mode", [0o644, 0o400 | 0o200, 0o444 | 0o020, 0o444 | 0o002])
def test_immutable_read_refuses_any_write_bit(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "a.md"
    path.write_bytes(b"x")
    path.chmod(mode)
    with pytest.raises(layout.ArtifactError) as caught:
        layout.immutable_read(str(path))
    assert caught.value.cause == "writable"


def test_immutable_read_refuses_a_file_changed_during_the_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _immutable(tmp_path / "a.md", b"x" * 10)
    real_read = os.read

    def read_then_touch(descriptor: int, size: int) -> bytes:
        data = real_read(descriptor, size)
        if data:
            os.utime(path, ns=(1, 1))  # the mtime changes while the file is being read
        return data

    monkeypatch.setattr(os, "read", read_then_touch)
    with pytest.raises(layout.ArtifactError) as caught:
        layout.immutable_read(path)
    assert caught.value.cause == "changed"


def test_immutable_read_refuses_a_file_replaced_during_the_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _immutable(tmp_path / "a.md", b"first")
    other = _immutable(tmp_path / "b.md", b"other")
    real_read = os.read

    def read_then_swap(descriptor: int, size: int) -> bytes:
        data = real_read(descriptor, size)
        if data:
            os.replace(other, path)  # same size, another inode
        return data

    monkeypatch.setattr(os, "read", read_then_swap)
    with pytest.raises(layout.ArtifactError) as caught:
        layout.immutable_read(path)
    assert caught.value.cause == "changed"


def test_immutable_read_refuses_too_large_missing_and_folders(tmp_path: Path) -> None:
    path = _immutable(tmp_path / "a.md", b"12345")
    with pytest.raises(layout.ArtifactError) as caught:
        layout.immutable_read(path, limit=4)
    assert caught.value.cause == "too_large"
    assert layout.immutable_read(path, limit=5) == b"12345"
    with pytest.raises(layout.ArtifactError) as caught:
        layout.immutable_read(str(tmp_path / "missing.md"))
    assert caught.value.cause == "missing"
    with pytest.raises(layout.ArtifactError) as caught:
        layout.immutable_read(str(tmp_path))
    assert caught.value.cause == "not_regular"
    assert layout.MAX_ARTIFACT_BYTES == 32 * 1024 * 1024


def test_read_verified_checks_hash_and_size(tmp_path: Path) -> None:
    path = _immutable(tmp_path / "a.md", b"abc")
    digest = hashlib.sha256(b"abc").hexdigest()
    assert layout.read_verified(path, digest, 3) == b"abc"
    for sha, size in ((digest, 4), ("0" * 64, 3)):
        with pytest.raises(layout.ArtifactError) as caught:
            layout.read_verified(path, sha, size)
        assert caught.value.cause == "mismatch"


def test_sha256_hex() -> None:
    for data in (b"", b"abc", bytes(range(256)) * 100):
        assert layout.sha256_hex(data) == hashlib.sha256(data).hexdigest()


# --- paths ------------------------------------------------------------------------------


def test_canonical_path_resolves_the_deepest_existing_ancestor(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "sub").mkdir(parents=True)
    (tmp_path / "alias").symlink_to(real)
    base = os.path.realpath(tmp_path)
    assert layout.canonical_path(str(tmp_path / "alias" / "sub" / "x.md")) == os.path.join(
        base, "real", "sub", "x.md"
    )
    assert layout.canonical_path(str(tmp_path / "alias" / "new" / "deeper" / "x.md")) == (
        os.path.join(base, "real", "new", "deeper", "x.md")
    )
    (real / "file.md").write_text("x")
    (real / "link.md").symlink_to(real / "file.md")
    assert layout.canonical_path(str(tmp_path / "alias" / "link.md")) == os.path.join(
        base, "real", "file.md"
    )


def test_folder_names_round_trip() -> None:
    token = layout.new_token()
    assert len(token) == 6 and set(token) <= set(layout.TOKEN_ALPHABET)
    for phase in layout.REVIEW_PHASES:
        assert layout.parse_folder_name(layout.checkpoint_folder_name(phase, token)) == (
            phase,
            "checkpoint",
        )
        assert layout.parse_folder_name(layout.close_folder_name(phase, token)) == (
            phase,
            "close",
        )
    for name in ("autoplan-tasks-abc123", "autoplan-ceo-ABC123", "autoplan-ceo-abc12", "x"):
        assert layout.parse_folder_name(name) is None
    assert layout.checkpoint_folder_name("dx", "k3x9q2") == "autoplan-dx-k3x9q2"
    assert layout.close_folder_name("eng", "k3x9q2") == "autoplan-eng-close-k3x9q2"


def test_artifact_paths() -> None:
    assert layout.ARTIFACT_DIR == ".plangate/tmp/autoplan"
    assert layout.artifact_dir("/r") == "/r/.plangate/tmp/autoplan"
    assert layout.init_record_path("/r/a-restore-1.md") == "/r/a-restore-1.init.json"


def test_phases() -> None:
    assert layout.PHASE_NUMBERS == {
        "ceo": "1",
        "design": "2",
        "dx": "2.5",
        "eng": "3",
        "tasks": "4",
    }
    assert layout.next_phase("ceo", False, False) == "eng"
    assert layout.next_phase("ceo", True, True) == "design"
    assert layout.next_phase("ceo", False, True) == "dx"
    assert layout.next_phase("design", True, False) == "eng"
    assert layout.next_phase("design", True, True) == "dx"
    assert layout.next_phase("eng", True, True) == "tasks"
    assert layout.next_phase("tasks", True, True) == ""


# --- text formats -----------------------------------------------------------------------


def test_restore_header_round_trips() -> None:
    path = "/r/.plangate/tmp/autoplan/plan-restore-1.md"
    header = layout.restore_header(path)
    assert header == (
        '<!-- plangate autoplan restore point: "/r/.plangate/tmp/autoplan/plan-restore-1.md" -->'
    )
    for ending in (b"\n", b"\r\n"):
        data = header.encode() + ending + b"# Plan\n"
        assert layout.has_restore_header(data, path)
        assert layout.restore_header_path(data) == path
        assert layout.strip_restore_header(data) == b"# Plan\n"
    assert not layout.has_restore_header(header.encode(), path)  # no line ending
    assert not layout.has_restore_header(header.encode() + b" \n", path)
    assert not layout.has_restore_header(b"\n" + header.encode() + b"\n", path)
    assert not layout.has_restore_header(header.encode() + b"\n", path + "x")
    assert layout.strip_restore_header(b"# Plan\n") == b"# Plan\n"


def test_restore_header_never_holds_a_comment_end() -> None:
    path = '/r/a--b/"q"\\/caf\u00e9-->.md'
    header = layout.restore_header(path)
    assert header.count("--") == 2  # the comment's own <!-- and -->
    assert "caf\u00e9" in header
    assert layout.restore_header_path(header.encode() + b"\n") == path
    quoted = header[len(layout.RESTORE_HEADER_PREFIX) : -len(layout.RESTORE_HEADER_SUFFIX)]
    assert jsonio.loads(quoted) == path


def test_dispatch_prompt_and_reviewer_line() -> None:
    sha = "ab" * 32
    prompt = layout.dispatch_prompt("dx", "/r/x/reviewer-prompt.md", 61, sha)
    assert prompt == (
        "You are the independent DX reviewer for this phase.\n"
        'Read file: "/r/x/reviewer-prompt.md"\n'
        f"It has 61 lines (sha256 {sha}). Read all of it, then begin your answer with: "
        f"INPUT: dx {sha[:12]}"
    )
    assert layout.reviewer_phase(prompt) == "dx"
    assert layout.reviewer_phase("You are the independent DX reviewer for this phase.") is None
    assert layout.reviewer_line("eng") == "You are the independent ENG reviewer for this phase."


def test_line_count_and_read_ranges() -> None:
    assert layout.line_count(b"") == 1
    assert layout.line_count(b"a\n") == 2
    assert layout.line_count(b"a\nb") == 2
    assert layout.read_ranges(600) == [{"offset": 1, "limit": 600}]
    assert layout.read_ranges(601) == [{"offset": 1, "limit": 600}, {"offset": 601, "limit": 600}]
    assert [r["offset"] for r in layout.read_ranges(1700)] == [1, 601, 1201]


def test_close_binding_parses_only_the_second_line() -> None:
    data = b'# Current phase close packet\nBinding: {"phase":"ceo"}\nrest\n'
    assert layout.close_binding(data) == {"phase": "ceo"}
    assert layout.close_binding(b'Binding: {"phase":"ceo"}\n') is None
    assert layout.close_binding(b"# Current phase close packet\nBinding: [1]\n") is None


def test_layout_is_cheap_to_import() -> None:
    script = (
        "import sys\nbefore = set(sys.modules)\nimport plangate.autoplan.layout\n"
        "print(' '.join(sorted(set(sys.modules) - before)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    loaded = set(result.stdout.split())
    heavy = {"re", "json", "typing", "dataclasses", "enum", "subprocess", "hashlib", "_hashlib"}
    assert loaded & heavy == set()
    foreign = {
        name
        for name in loaded
        if name.split(".")[0] not in sys.stdlib_module_names and name.split(".")[0] != "plangate"
    }
    assert foreign == set()
