"""Bounded reading: record and retained-data limits, unfinished lines, malformed lines, and
bytes that change or grow between and during reads (seed 000, gstack-design B.2, B.3, B.7)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from plangate.journal import ERROR, READY, AssistantText, ToolResult, Verdict, read_journal
from plangate.journal import reader as reader_module
from plangate.journal.codes import (
    IDENTITY,
    MALFORMED,
    OVERSIZED_INVOCATION,
    RECORD_MAX_BYTES,
    RETAINED_MAX_BYTES,
    REWRITTEN,
    TOO_LARGE,
)
from plangate.journal.records import Record
from plangate.journal.scan import CHUNK_BYTES
from testkit.journals import Journal, dumps, use_id, write_lines

MiB = 1024 * 1024


def session(journal: Journal, tmp_path: Path, *, trailing: bytes = b"") -> Path:
    journal.session()
    return journal.write(tmp_path / f"{journal.session_id}.jsonl", trailing=trailing)


def summary(verdict: Verdict) -> list[dict[str, object]]:
    """Events without their physical line index (blank lines shift it)."""
    events = []
    for event in verdict.events:
        data = event.as_dict()
        data.pop("record")
        events.append(data)
    return events


# too_large


def test_a_record_over_a_lowered_record_max_is_too_large(journal: Journal, tmp_path: Path) -> None:
    journal.session()
    big = journal.text("x" * 5000)
    path = journal.write(tmp_path / "j.jsonl")
    size = len(dumps(big))
    verdict = read_journal(str(path), record_max=size - 1)
    assert (verdict.status, verdict.reason) == (ERROR, TOO_LARGE)
    assert verdict.record_bytes == size
    assert verdict.events == []


def test_a_record_exactly_at_record_max_is_read(journal: Journal, tmp_path: Path) -> None:
    journal.session()
    big = journal.text("x" * 5000)
    path = journal.write(tmp_path / "j.jsonl")
    verdict = read_journal(str(path), record_max=len(dumps(big)), full=True)
    assert (verdict.status, verdict.reason) == (READY, None)
    assert verdict.record_bytes is None
    event = verdict.events[-2]
    assert isinstance(event, AssistantText) and event.text == "x" * 5000


def test_a_record_spanning_several_chunks_reports_its_exact_size(
    journal: Journal, tmp_path: Path
) -> None:
    journal.session()
    big = journal.text("y" * (2 * CHUNK_BYTES + CHUNK_BYTES // 2))
    journal.text("after")
    path = journal.write(tmp_path / "j.jsonl")
    size = len(dumps(big))
    limited = read_journal(str(path), record_max=CHUNK_BYTES + CHUNK_BYTES // 2)
    assert (limited.status, limited.reason, limited.record_bytes) == (ERROR, TOO_LARGE, size)
    whole = read_journal(str(path), full=True)
    assert (whole.status, whole.reason) == (READY, None)
    texts = [e.text for e in whole.events if isinstance(e, AssistantText)]
    assert texts[-2:] == ["y" * (2 * CHUNK_BYTES + CHUNK_BYTES // 2), "after"]


def _line_of(journal: Journal, size: int) -> bytes:
    """A complete prompt record whose line is exactly ``size`` bytes long."""
    probe = dumps(journal.prompt("", uuid="0" * 8 + "-0000-4000-8000-" + "0" * 12))
    journal.records.pop()
    text = "z" * (size - len(probe))
    line = probe.replace(b'"content":""', b'"content":"' + text.encode() + b'"')
    assert len(line) == size
    return line


@pytest.mark.slow
def test_the_default_record_limit_is_32_mib_and_cannot_be_raised(
    journal: Journal, tmp_path: Path
) -> None:
    assert 32 * MiB == RECORD_MAX_BYTES
    journal.session()
    head = journal.to_bytes()
    exact = tmp_path / "exact.jsonl"
    exact.write_bytes(head + _line_of(journal, 32 * MiB) + b"\n")
    verdict = read_journal(str(exact))
    assert (verdict.status, verdict.reason) == (READY, None)
    over = tmp_path / "over.jsonl"
    over.write_bytes(head + _line_of(journal, 32 * MiB + 1) + b"\n")
    for record_max in (RECORD_MAX_BYTES, 2 * RECORD_MAX_BYTES):
        verdict = read_journal(str(over), record_max=record_max)
        assert (verdict.status, verdict.reason) == (ERROR, TOO_LARGE)
        assert verdict.record_bytes == 32 * MiB + 1


# unfinished last line


def test_an_unfinished_last_line_is_ignored(journal: Journal, tmp_path: Path) -> None:
    journal.session()
    whole = journal.write(tmp_path / "whole.jsonl")
    pending = journal.text("still being written")
    journal.records.pop()
    cut = journal.write(tmp_path / "cut.jsonl", trailing=dumps(pending)[:-7])
    complete, unfinished = read_journal(str(whole)), read_journal(str(cut))
    assert complete.complete is True
    assert unfinished.complete is False
    assert (unfinished.status, unfinished.reason) == (READY, None)
    assert unfinished.records == complete.records
    assert summary(unfinished) == summary(complete)


@pytest.mark.parametrize(
    "tail",
    [b"\xff\xfe\xfd", b"{not json", b"[1, 2", b'{"type":"user"}', '{"text":"h\u00e9'.encode()[:-1]],
    ids=["not-utf8", "not-json", "array", "object-without-newline", "cut-inside-a-character"],
)
def test_an_unfinished_last_line_is_never_parsed(
    tail: bytes, journal: Journal, tmp_path: Path
) -> None:
    path = session(journal, tmp_path, trailing=tail)
    verdict = read_journal(str(path))
    assert (verdict.status, verdict.reason, verdict.complete) == (READY, None, False)


def test_an_unfinished_last_line_over_the_limit_is_too_large(
    journal: Journal, tmp_path: Path
) -> None:
    """The reader follows gstack (B.2): a trailing partial longer than the bound can never
    become readable, so it is ``too_large``. (Issue 2 only says the unfinished last line is
    ignored; that holds for partial lines within the bound, tested above.)"""
    partial = b'{"type":"user","message":{"content":"' + b"p" * 3000
    path = session(journal, tmp_path, trailing=partial)
    verdict = read_journal(str(path), record_max=2000)
    assert (verdict.status, verdict.reason) == (ERROR, TOO_LARGE)
    assert verdict.record_bytes == len(partial)
    within = read_journal(str(path), record_max=len(partial))
    assert (within.status, within.reason, within.complete) == (READY, None, False)


# retained-data budget (pass two)


def test_reloading_more_than_a_lowered_retained_max_is_oversized_invocation(
    journal: Journal, tmp_path: Path
) -> None:
    path = session(journal, tmp_path)
    everything = read_journal(str(path), full=True)
    assert everything.status == READY
    assert 32 * MiB == RETAINED_MAX_BYTES
    total = everything.retained_bytes
    assert total > 0
    over = read_journal(str(path), full=True, retained_max=total - 1)
    assert (over.status, over.reason) == (ERROR, OVERSIZED_INVOCATION)
    assert over.events == []
    at = read_journal(str(path), full=True, retained_max=total)
    assert (at.status, at.reason, at.retained_bytes) == (READY, None, total)
    raised = read_journal(str(path), full=True, retained_max=10 * RETAINED_MAX_BYTES)
    assert raised.retained_bytes == total


def test_an_index_only_read_reloads_nothing(journal: Journal, tmp_path: Path) -> None:
    path = session(journal, tmp_path)
    verdict = read_journal(str(path), retained_max=1)
    assert (verdict.status, verdict.reason, verdict.retained_bytes) == (READY, None, 0)


def test_select_reloads_only_what_it_picks(journal: Journal, tmp_path: Path) -> None:
    path = session(journal, tmp_path)
    picked: list[int] = []

    def results_only(records: list[Record]) -> list[Record]:
        chosen = [r for r in records if any(isinstance(e, ToolResult) for e in r.events)]
        picked[:] = [r.length for r in chosen]
        return chosen

    verdict = read_journal(str(path), select=results_only)
    assert (verdict.status, verdict.reason) == (READY, None)
    assert len(picked) == 2
    assert verdict.retained_bytes == sum(picked)
    results = [e for e in verdict.events if isinstance(e, ToolResult)]
    assert [r.text for r in results] == ["1\thello notes\n2\tline two\n", "hi\n/home/user/project"]
    texts = [e.text for e in verdict.events if isinstance(e, AssistantText)]
    assert texts == [None]
    enough = read_journal(str(path), select=results_only, retained_max=sum(picked))
    assert (enough.status, enough.reason) == (READY, None)
    tight = read_journal(str(path), select=results_only, retained_max=sum(picked) - 1)
    assert (tight.status, tight.reason) == (ERROR, OVERSIZED_INVOCATION)


# malformed


@pytest.mark.parametrize(
    "line",
    [
        b"{this is not json}",
        b"\xff\xfe{}",
        '{"type":"user","text":"caf\u00e9"}'.encode("latin-1"),
        b"[1, 2, 3]",
        b'"a string"',
        b"42",
        b"null",
        b"true",
        b'{"a": NaN}',
        b"{} {}",
        b'{"a": 1',
    ],
    ids=[
        "not-json",
        "not-utf8",
        "latin1",
        "array",
        "string",
        "number",
        "null",
        "bool",
        "nan",
        "two-values",
        "cut-object",
    ],
)
def test_a_complete_bad_line_is_malformed(line: bytes, journal: Journal, tmp_path: Path) -> None:
    journal.session()
    lines: list[bytes] = journal.lines()
    lines.insert(5, line)
    path = write_lines(tmp_path / "j.jsonl", lines)
    verdict = read_journal(str(path))
    assert (verdict.status, verdict.reason) == (ERROR, MALFORMED)
    assert verdict.events == []


def test_blank_lines_are_skipped(journal: Journal, tmp_path: Path) -> None:
    plain = session(journal, tmp_path)
    lines: list[bytes] = []
    for line in journal.lines():
        lines.extend([b"", b"   ", line, b"\t", b"\r"])
    spaced = write_lines(tmp_path / "spaced.jsonl", lines)
    expected, verdict = read_journal(str(plain), full=True), read_journal(str(spaced), full=True)
    assert (verdict.status, verdict.reason) == (READY, None)
    assert verdict.records == expected.records
    assert summary(verdict) == summary(expected)


# bytes that change between and during reads


def _replace_first(path: Path, old: bytes, new: bytes) -> None:
    assert len(old) == len(new)
    data = path.read_bytes()
    assert old in data
    with open(path, "r+b") as handle:
        handle.seek(data.index(old))
        handle.write(new)


def test_a_changed_byte_inside_the_prior_prefix_is_rewritten(
    journal: Journal, tmp_path: Path
) -> None:
    path = session(journal, tmp_path)
    first = read_journal(str(path))
    assert first.status == READY and first.prefix is not None
    assert first.prefix.size == path.stat().st_size
    _replace_first(path, b"hello notes", b"jello notes")
    verdict = read_journal(str(path), prior=first.prefix)
    assert (verdict.status, verdict.reason) == (ERROR, REWRITTEN)
    fresh = read_journal(str(path))  # a new hook run has no prior: rewrites go unseen
    assert fresh.status == READY


def test_a_rewrite_is_found_even_after_appends(journal: Journal, tmp_path: Path) -> None:
    path = session(journal, tmp_path)
    first = read_journal(str(path))
    count = len(journal.records)
    journal.prompt("one more")
    journal.text("sure")
    journal.append_new(path, count)
    _replace_first(path, b"hello notes", b"hellO notes")
    verdict = read_journal(str(path), prior=first.prefix)
    assert (verdict.status, verdict.reason) == (ERROR, REWRITTEN)


@pytest.mark.parametrize("where", ["start", "first-chunk-end", "last-prior-byte"])
def test_a_rewrite_is_found_in_a_multi_chunk_prefix(
    where: str, journal: Journal, tmp_path: Path
) -> None:
    journal.session()
    for _ in range(2 * CHUNK_BYTES // 100_000 + 1):
        journal.prompt("padding " * 12_500)
        journal.text("ok")
    path = journal.write(tmp_path / "j.jsonl")
    first = read_journal(str(path))
    assert first.status == READY and first.prefix is not None
    assert first.prefix.size > 2 * CHUNK_BYTES
    count = len(journal.records)
    journal.prompt("appended")
    journal.append_new(path, count)
    offset = {
        "start": 2,
        "first-chunk-end": CHUNK_BYTES - 1,
        "last-prior-byte": first.prefix.size - 2,
    }[where]
    data = path.read_bytes()
    with open(path, "r+b") as handle:
        handle.seek(offset)
        handle.write(bytes([data[offset] ^ 0x01]))
    verdict = read_journal(str(path), prior=first.prefix)
    assert (verdict.status, verdict.reason) == (ERROR, REWRITTEN)


def test_a_change_after_the_prior_prefix_is_not_a_rewrite(journal: Journal, tmp_path: Path) -> None:
    path = session(journal, tmp_path)
    first = read_journal(str(path))
    count = len(journal.records)
    journal.prompt("appended words")
    journal.append_new(path, count)
    _replace_first(path, b"appended words", b"Appended words")
    verdict = read_journal(str(path), prior=first.prefix)
    assert (verdict.status, verdict.reason) == (READY, None)


@pytest.mark.parametrize("size", ["one-byte-less", "empty"])
def test_a_journal_shorter_than_the_prior_prefix_is_identity(
    size: str, journal: Journal, tmp_path: Path
) -> None:
    path = session(journal, tmp_path)
    first = read_journal(str(path))
    assert first.prefix is not None
    os.truncate(path, first.prefix.size - 1 if size == "one-byte-less" else 0)
    verdict = read_journal(str(path), prior=first.prefix)
    assert (verdict.status, verdict.reason) == (ERROR, IDENTITY)


def test_appends_between_two_reads_are_fine(journal: Journal, tmp_path: Path) -> None:
    path = session(journal, tmp_path)
    first = read_journal(str(path), full=True)
    same = read_journal(str(path), prior=first.prefix, full=True)
    assert (same.status, same.reason) == (READY, None)
    assert same.prefix is not None and first.prefix is not None
    assert (same.prefix.size, same.prefix.digest) == (first.prefix.size, first.prefix.digest)
    count = len(journal.records)
    journal.prompt("And now?")
    journal.turn_attachments()
    use = journal.tool_use("Bash", {"command": "ls"})
    journal.bash_result(use_id(use), "notes.txt")
    journal.text("One file.")
    journal.append_new(path, count)
    second = read_journal(str(path), prior=first.prefix, full=True)
    assert (second.status, second.reason) == (READY, None)
    assert second.prefix is not None and second.prefix.size == path.stat().st_size
    assert [e.as_dict() for e in second.events[: len(first.events)]] == [
        e.as_dict() for e in first.events
    ]
    assert [e.kind for e in second.events[len(first.events) :]] == [
        "human_turn",
        "tool_use",
        "tool_result",
        "assistant_text",
        "end_turn",
    ]


def test_a_record_changed_between_the_two_passes_is_rewritten(
    journal: Journal, tmp_path: Path
) -> None:
    """Pass two rereads a selected record; a different uuid or broken JSON is ``rewritten``."""
    path = session(journal, tmp_path)
    outcomes = {}
    for damage in ("uuid", "json", "truncate"):
        path.write_bytes(journal.to_bytes())

        def select(records: list[Record], damage: str = damage) -> list[Record]:
            target = next(r for r in records if any(isinstance(e, ToolResult) for e in r.events))
            with open(path, "r+b") as handle:
                if damage == "truncate":
                    handle.truncate(target.offset + 5)
                    return [target]
                handle.seek(target.offset)
                line = handle.read(target.length)
                if damage == "uuid":
                    assert target.uuid is not None
                    at = line.index(target.uuid.encode())
                    flipped = b"f" if line[at : at + 1] != b"f" else b"e"
                    handle.seek(target.offset + at)
                    handle.write(flipped)
                else:
                    handle.seek(target.offset)
                    handle.write(b"#")
            return [target]

        verdict = read_journal(str(path), select=select)
        outcomes[damage] = (verdict.status, verdict.reason)
    assert outcomes == {
        "uuid": (ERROR, REWRITTEN),
        "json": (ERROR, REWRITTEN),
        "truncate": (ERROR, REWRITTEN),
    }


def test_a_concurrent_appender_never_fails_a_read(journal: Journal, tmp_path: Path) -> None:
    path = session(journal, tmp_path)
    first = read_journal(str(path))
    assert first.status == READY
    stop = threading.Event()
    written: list[int] = []
    errors: list[BaseException] = []

    def append() -> None:
        try:
            with open(path, "ab", buffering=0) as handle:
                n = 0
                while not stop.is_set():
                    n += 1
                    line = dumps(journal.text(f"note {n}")) + b"\n"
                    half = len(line) // 2
                    handle.write(line[:half])  # readers see an unfinished line here
                    time.sleep(0.001)
                    handle.write(line[half:])
                    written.append(n)
                    time.sleep(0.002)
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    thread = threading.Thread(target=append, daemon=True)
    thread.start()
    verdicts = []
    deadline = time.monotonic() + 1.0
    try:
        while time.monotonic() < deadline:
            verdicts.append(read_journal(str(path), prior=first.prefix))
            verdicts.append(read_journal(str(path), prior=first.prefix, full=True))
    finally:
        stop.set()
        thread.join(5)
    assert not errors
    assert len(written) > 20 and len(verdicts) > 20
    assert {(v.status, v.reason) for v in verdicts} == {(READY, None)}
    final = read_journal(str(path), prior=first.prefix, full=True)
    texts = [e.text for e in final.events if isinstance(e, AssistantText)]
    assert texts[-len(written) :] == [f"note {n}" for n in written]


def test_line_separators_inside_strings_do_not_split_records(
    journal: Journal, tmp_path: Path
) -> None:
    """Only ``\n`` ends a record; Claude Code writes U+2028 and friends raw (UTF-8)."""
    journal.prompt("Hello")
    odd = "a\u2028b\u2029c\x85d\x0be\x0cf\rg"
    journal.text(odd)
    path = journal.write(tmp_path / "j.jsonl")
    assert "\u2028".encode() in path.read_bytes()
    verdict = read_journal(str(path), full=True)
    assert (verdict.status, verdict.reason, verdict.records) == (READY, None, 2)
    assert [e.text for e in verdict.events if isinstance(e, AssistantText)] == [odd]


def _during_the_scan(monkeypatch: pytest.MonkeyPatch, action: object) -> None:
    """Run ``action`` right after pass one read the bytes, before the file is checked again."""
    real_scan = reader_module.scan  # type: ignore[attr-defined]

    def scan_then_act(*args: object, **kwargs: object) -> object:
        found = real_scan(*args, **kwargs)  # type: ignore[arg-type]
        action()  # type: ignore[operator]
        return found

    monkeypatch.setattr(reader_module, "scan", scan_then_act)


def test_a_journal_replaced_while_it_is_read_is_identity(
    journal: Journal, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = session(journal, tmp_path)
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(path.read_bytes())
    _during_the_scan(monkeypatch, lambda: os.replace(copy, path))
    verdict = read_journal(str(path))
    assert (verdict.status, verdict.reason) == (ERROR, IDENTITY)


def test_a_journal_that_shrinks_while_it_is_read_is_identity(
    journal: Journal, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = session(journal, tmp_path)
    _during_the_scan(monkeypatch, lambda: os.truncate(path, 10))
    verdict = read_journal(str(path))
    assert (verdict.status, verdict.reason) == (ERROR, IDENTITY)


def test_a_journal_that_grows_while_it_is_read_is_fine(
    journal: Journal, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = session(journal, tmp_path)
    count = len(journal.records)
    journal.prompt("late")
    _during_the_scan(monkeypatch, lambda: journal.append_new(path, count))
    verdict = read_journal(str(path))
    assert (verdict.status, verdict.reason) == (READY, None)
    assert verdict.prefix is not None and verdict.prefix.size < path.stat().st_size
    assert [e.kind for e in verdict.events][-1] == "end_turn"


def test_a_shape_refusal_keeps_its_prefix_for_the_second_read(
    journal: Journal, tmp_path: Path
) -> None:
    """The hook reads an unrecognized shape twice and needs the first read's prefix (B.11)."""
    journal.attachment("environment", parent=None, snapshot={})
    journal.session()
    path = journal.write(tmp_path / "j.jsonl")
    first = read_journal(str(path))
    assert first.reason == "unrecognized_shape:preamble:attachment:environment"
    assert first.prefix is not None and first.prefix.size == path.stat().st_size
    second = read_journal(str(path), prior=first.prefix)
    assert (second.reason, second.root_shape) == (first.reason, first.root_shape)
