"""Real journals written by other people's Claude Code (``../shared/corpus/public-transcripts``).

Every file is read without raising and gets a verdict; every main session of a 2.x version
is ``ready``; every subagent journal is refused as ``agent`` or ``sidechain``. The tests are
parametrized by file, so ``pytest -v`` prints the verdict table.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from pathlib import Path, PurePosixPath

import pytest

from plangate.journal import ERROR, MISSING, READY, read_journal
from plangate.journal.codes import AGENT, FOREIGN_CWD, SIDECHAIN
from testkit.journals import journal_path
from tests import corpus
from tests.corpus import CORPUS

pytestmark = corpus.needed
corpus.skip_module_without_corpus()

FILES = corpus.files()

# Subagent journals whose name does not say so: every record is a sidechain with an agentId
# (checked by test_named_subagent_exceptions_are_subagents).
SUBAGENT_BY_CONTENT = frozenset({"agtrace/claude_agent.jsonl"})


def rel(path: Path) -> str:
    return path.relative_to(CORPUS).as_posix()


def is_subagent(path: Path) -> bool:
    name = PurePosixPath(rel(path))
    return (
        "subagents" in name.parts
        or name.name.startswith("agent-")
        or name.name == "subagent-transcript.jsonl"
        or str(name) in SUBAGENT_BY_CONTENT
    )


def raw_records(path: Path) -> list[dict[str, object]]:
    records = []
    for line in path.read_bytes().splitlines():
        if line.strip():
            value = json.loads(line)
            if isinstance(value, dict):
                records.append(value)
    return records


def versions(path: Path) -> set[str]:
    return {str(r["version"]) for r in raw_records(path) if isinstance(r.get("version"), str)}


def root_record(path: Path) -> dict[str, object]:
    """The first user record with a null parent (or the first user record)."""
    users = [r for r in raw_records(path) if r.get("type") == "user"]
    return next((r for r in users if r.get("parentUuid") is None), users[0])


MAIN = [p for p in FILES if not is_subagent(p)]
MAIN_2X = [p for p in MAIN if any(v.startswith("2.") for v in versions(p))]
SUBAGENTS = [p for p in FILES if is_subagent(p)]


def test_the_corpus_holds_every_file_its_manifest_lists() -> None:
    listed = []
    for line in (CORPUS / "MANIFEST.md").read_text(encoding="utf-8").splitlines():
        cell = line.split("|")[1].strip() if line.startswith("|") else ""
        if cell.endswith(".jsonl"):
            listed.append(cell)
    assert listed, "the MANIFEST lists no journal"
    assert sorted(listed) == sorted(rel(p) for p in FILES)
    assert MAIN_2X and SUBAGENTS


@pytest.mark.parametrize("name", sorted(SUBAGENT_BY_CONTENT))
def test_named_subagent_exceptions_are_subagents(name: str) -> None:
    records = raw_records(CORPUS / name)
    assert records
    assert all(r.get("isSidechain") is True and r.get("agentId") for r in records)


@pytest.mark.parametrize("path", FILES, ids=rel)
@pytest.mark.parametrize("full", [False, True], ids=["index", "full"])
def test_every_file_gets_a_verdict(path: Path, full: bool) -> None:
    verdict = read_journal(str(path), full=full)
    assert verdict.status in (READY, MISSING, ERROR)
    assert (verdict.reason is None) == (verdict.status != ERROR)
    assert verdict.exists
    # Some published fixtures lack the final newline: their last line counts as unfinished.
    assert verdict.complete == path.read_bytes().endswith(b"\n")


@pytest.mark.parametrize("path", MAIN_2X, ids=rel)
def test_main_sessions_of_2x_are_ready(path: Path) -> None:
    verdict = read_journal(str(path), full=True)
    assert (verdict.status, verdict.reason) == (READY, None), verdict.detail
    assert verdict.claude_code_version in versions(path)
    assert verdict.owned > 0
    assert verdict.events
    orders = [event.order for event in verdict.events]
    assert orders == sorted(set(orders))
    assert verdict.root_shape[-1] == "user"


@pytest.mark.parametrize("path", SUBAGENTS, ids=rel)
def test_subagent_journals_are_refused(path: Path) -> None:
    verdict = read_journal(str(path))
    assert verdict.status == ERROR
    assert verdict.reason in (AGENT, SIDECHAIN)
    assert verdict.events == []


@pytest.mark.parametrize("path", MAIN_2X, ids=rel)
def test_main_sessions_are_ready_in_the_hook_layout(path: Path, config_dir: Path) -> None:
    """As a hook reads them: in ``<config>/projects/<slug>/<session>.jsonl``, owner given."""
    root = root_record(path)
    cwd, session = str(root["cwd"]), str(root["sessionId"])
    target = journal_path(config_dir, cwd, session)
    shutil.copyfile(path, target)
    verdict = read_journal(
        str(target), session_id=session, owners=[cwd], config_dir=str(config_dir)
    )
    assert (verdict.status, verdict.reason) == (READY, None), verdict.detail
    assert verdict.owner == cwd
    elsewhere = read_journal(
        str(target), session_id=session, owners=["/nowhere/else"], config_dir=str(config_dir)
    )
    assert (elsewhere.status, elsewhere.reason) == (ERROR, FOREIGN_CWD)


def _fingerprint(path: Path) -> tuple[int, int, int, str]:
    info = os.stat(path)
    return (
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
        hashlib.sha256(path.read_bytes()).hexdigest(),
    )


@pytest.mark.parametrize("path", FILES, ids=rel)
def test_the_reader_never_writes_to_a_journal(
    path: Path, config_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read-only copies (0444) read the same; no open asks for write access; nothing changes."""
    root = root_record(path)
    session = str(root["sessionId"])
    target = journal_path(config_dir, str(root["cwd"]), session)
    shutil.copyfile(path, target)
    os.chmod(target, 0o444)
    before = _fingerprint(target)
    opened: list[int] = []
    real_open = os.open

    def spy(file: object, flags: int, *args: object, **kwargs: object) -> int:
        if os.fspath(file) == str(target):  # type: ignore[call-overload]
            opened.append(flags)
        return real_open(file, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", spy)
    plain = read_journal(str(path), full=True)
    copy = read_journal(str(target), full=True)
    hook = read_journal(str(target), session_id=session, config_dir=str(config_dir), full=True)
    monkeypatch.undo()
    assert _fingerprint(target) == before
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o444
    assert opened, "the reader did not open the journal through os.open"
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
    assert all(flags & write_flags == 0 for flags in opened)
    assert (copy.status, copy.reason, copy.records) == (plain.status, plain.reason, plain.records)
    assert [e.as_dict() for e in copy.events] == [e.as_dict() for e in plain.events]
    assert hook.status in (READY, ERROR)


@pytest.mark.parametrize("path", FILES, ids=rel)
def test_every_file_reads_the_same_with_the_compiled_parser(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ``fast`` extra (msgspec, plangate.journal.fast) gives the same verdict and events."""
    from plangate import tuning
    from plangate.journal.fast import MODULE, fast_parser

    monkeypatch.setenv(tuning.ENV, tuning.joined(fast_min_bytes=0))
    assert fast_parser(0) is not None, f"{MODULE} (the fast extra) is not installed"
    fast = read_journal(str(path), full=True)
    monkeypatch.setenv(tuning.ENV, tuning.joined(fast_min_bytes=path.stat().st_size + 1))
    plain = read_journal(str(path), full=True)
    assert (fast.status, fast.reason, fast.records) == (plain.status, plain.reason, plain.records)
    assert [e.as_dict() for e in fast.events] == [e.as_dict() for e in plain.events]
