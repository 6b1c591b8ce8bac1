"""The header decoder (plangate.journal.headers) reads what pass one reads, and nothing else.

Its table of keys is checked two ways on every line of every corpus journal and on the
synthetic lines of the benchmark generator: decoding a line through it gives the standard
library's value with the keys the table leaves out removed; and a record and its light events
built from that projection equal those built from the whole line, so no key pass one reads
is missing from the table. Its UTF-8 check agrees with Python's decoder on random byte
strings cut into tiny pieces.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from plangate.journal import codes, headers
from plangate.journal.building import INPUT_KEEP_BYTES, EventBuilder
from plangate.journal.records import Record
from plangate.journal.scan import ScanRefusal, parse_line
from testkit.journals import Journal, use_id
from tests import corpus
from tests.corpus import CORPUS
from tests.journal.conftest import PROJECT

FILES = corpus.each(corpus.files())


def _lines(path: Path) -> list[bytes]:
    return [line for line in path.read_bytes().split(b"\n") if line.strip(b" \t\r")]


def _whole(line: bytes) -> object:
    try:
        return json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def _rel(path: Path) -> str:
    return path.relative_to(CORPUS).as_posix()


def _record_state(record: Record) -> dict[str, object]:
    return {name: getattr(record, name) for name in Record.__slots__ if hasattr(record, name)}


def _light(raw: dict[str, object], record: Record, keep_bytes: int) -> list[dict[str, object]]:
    events, slots = EventBuilder(full=False, input_keep_bytes=keep_bytes).build(raw, record, 0)
    return [event.as_dict() for event in events] + [{"slots": slots}]


@corpus.needed
@pytest.mark.parametrize("path", FILES, ids=_rel)
def test_decoding_through_the_table_is_the_projection_of_the_whole_line(path: Path) -> None:
    for keep_max, table in ((0, headers.LINE), (10**9, headers.KEPT_LINE)):
        decode = headers.header_decoder(msgspec, keep_max=keep_max, plain_max=0)
        decoded = 0
        for line in _lines(path):
            whole = _whole(line)
            try:
                value = decode(line, False)
            except Exception:  # the standard library then judges the line (parse_line)
                continue
            decoded += 1
            assert isinstance(whole, dict), line[:120]
            assert value == headers.project(whole, table), line[:120]
        assert decoded, "no line of the journal went through the header decoder"


@corpus.needed
@pytest.mark.parametrize("path", FILES, ids=_rel)
def test_pass_one_reads_no_key_the_table_leaves_out(path: Path) -> None:
    for number, line in enumerate(_lines(path)):
        whole = _whole(line)
        if not isinstance(whole, dict):
            continue
        projected = headers.project(whole, headers.LINE)
        assert isinstance(projected, dict)
        full_record = Record(number, 0, len(line), whole)
        header_record = Record(number, 0, len(line), projected)
        assert _record_state(header_record) == _record_state(full_record), line[:120]
        # Long lines keep no tool input (the table reads only that it is an object).
        assert _light(projected, header_record, 0) == _light(whole, full_record, 0), line[:120]
        # Short ones are read with their inputs, which the index keeps.
        kept = headers.project(whole, headers.KEPT_LINE)
        assert isinstance(kept, dict)
        keep = len(line)
        kept_record = Record(number, 0, len(line), kept)
        assert _light(kept, kept_record, keep) == _light(whole, full_record, keep), line[:120]


def test_the_benchmark_journals_lines_read_the_same(tmp_path: Path) -> None:
    """The synthetic journal has every record shape the benchmarks time (long tool results,
    file reads, diffs, attachments), in lines far over the whole-decode limit."""
    from benchmarks.corpus import Corpus
    from benchmarks.generated import GeneratedJournal

    journal = GeneratedJournal(str(tmp_path), 1)
    journal.ensure(Corpus, regenerate=True)
    lines = _lines(Path(journal.path))
    decode = headers.header_decoder(msgspec, plain_max=0)
    long_lines = [line for line in lines if len(line) > INPUT_KEEP_BYTES]
    assert len(long_lines) > 20
    for number, line in enumerate(lines):
        whole = _whole(line)
        assert isinstance(whole, dict)
        value = decode(line, False)
        short = len(line) <= INPUT_KEEP_BYTES
        expected = headers.project(whole, headers.KEPT_LINE if short else headers.LINE)
        assert value == expected
        assert isinstance(value, dict)
        record = Record(number, 0, len(line), value)
        whole_record = Record(number, 0, len(line), whole)
        assert _record_state(record) == _record_state(whole_record)
        keep = INPUT_KEEP_BYTES
        assert _light(value, record, keep) == _light(whole, whole_record, keep)


def _tour() -> list[dict[str, object]]:
    """One record of every shape the tests' journal writer knows, the rare ones included
    (a background launch's receipt, a queued notification, hook records of both eras, a
    compact boundary, interrupted and local-command turns, a subagent record)."""
    journal = Journal(cwd=PROJECT)
    journal.session_start_hook()
    journal.session_start_progress()
    journal.slash_command("autoplan", "plan.md")
    journal.typed_prompt("Review the plan.")
    journal.local_command_stdout("ok")
    journal.meta("<system-reminder>x</system-reminder>")
    launch = journal.tool_use("Agent", {"prompt": "BG", "run_in_background": True})
    journal.async_launch_result(use_id(launch))
    journal.tool_result(use_id(launch), "launched", tool_use_result={"isAsync": True})
    journal.tool_result(use_id(launch), "launched", tool_use_result={"status": "async_launched"})
    read = journal.tool_use("Read", {"file_path": f"{PROJECT}/notes.txt"})
    journal.read_result(use_id(read), f"{PROJECT}/notes.txt", ["one", "two"], start_line=3)
    journal.dedup_read_result(use_id(read), f"{PROJECT}/notes.txt")
    bash = journal.tool_use("Bash", {"command": "plangate gate status"})
    journal.bash_result(use_id(bash), '{"ok": true}', cwd_reset=PROJECT)
    journal.tool_result(use_id(bash), [{"type": "text", "text": " {x"}], is_error=True)
    journal.text("Done.")
    journal.task_notification(use_id(launch), status="completed")
    journal.user_text("[Request interrupted by user]")
    journal.user_text("A summary.", isCompactSummary=True)
    journal.user_text("Shown only.", isVisibleInTranscriptOnly=True)
    journal.user_text("A skill's body.", sourceToolUseID="toolu_skill")
    journal.user_text("From a hook.", origin={"kind": "hook"}, promptSource="typed")
    journal.compact()
    journal.system("stop_hook_summary", hookCount=0)
    journal.turn_attachments()
    journal.subagent("inner work")
    return [dict(record) for record in journal.records]


def test_every_shape_the_journal_writer_knows_reads_the_same_padded_long() -> None:
    decode = headers.header_decoder(msgspec, plain_max=0)
    queued: dict[str, object] = {
        "type": "attachment",
        "uuid": "q1",
        "parentUuid": None,
        "sessionId": "s",
        "attachment": {
            "type": "queued_command",
            "prompt": "<task-notification>\n<tool-use-id>toolu_1</tool-use-id>\n"
            "</task-notification>",
        },
    }
    for number, record in enumerate([*_tour(), queued]):
        record["padding"] = {"text": "z" * (INPUT_KEEP_BYTES + 1)}  # a skipped key, long
        line = json.dumps(record).encode()
        value = decode(line, False)
        assert value == headers.project(json.loads(line), headers.LINE)
        assert isinstance(value, dict)
        record_from_header = Record(number, 0, len(line), value)
        record_from_whole = Record(number, 0, len(line), record)
        assert _record_state(record_from_header) == _record_state(record_from_whole), record
        assert _light(value, record_from_header, 0) == _light(record, record_from_whole, 0)


@pytest.mark.parametrize("length", [INPUT_KEEP_BYTES + 100, 200], ids=["long", "short"])
def test_a_damaged_byte_in_a_skipped_value_is_malformed(length: int) -> None:
    """msgspec skips the values the table does not name without checking their UTF-8: the
    decoder checks the line first, and parse_line's verdict is the standard library's."""
    fast = headers.header_decoder(msgspec, plain_max=0)
    table = headers.LINE if length > INPUT_KEEP_BYTES else headers.KEPT_LINE
    filler = "x" * length
    good = json.dumps({"type": "user", "toolUseResult": {"stdout": filler + "é"}}).encode()
    assert parse_line(good, 0, fast) == headers.project(json.loads(good), table)
    for damage in (b"\xff", b"\xed\xa0\x80", b"\xc0\xaf", b"\xc3"):
        line = good.replace(b"\\u00e9", damage)
        assert damage in line
        with pytest.raises(UnicodeDecodeError):
            fast(line, False)
        with pytest.raises(ScanRefusal) as refused:
            parse_line(line, 6, fast)
        assert (refused.value.reason, refused.value.detail) == (
            codes.MALFORMED,
            "line 7 is not UTF-8",
        )


def test_values_msgspec_refuses_go_to_the_standard_library() -> None:
    """A value msgspec does not read (NaN, a lone surrogate, a number out of its range)
    makes the decoder raise, so parse_line's outcome is the standard library's alone. (A
    number out of range in a skipped value is read by both.)"""
    fast = headers.header_decoder(msgspec)
    filler = "y" * (INPUT_KEEP_BYTES + 10)
    outcomes = set()
    for key, value in (("extra", "NaN"), ("extra", '"\\ud800"'), ("cwd", "1e999")):
        line = f'{{"type":"user","{key}":{value},"pad":"{filler}"}}'.encode()
        with pytest.raises(msgspec.MsgspecError):
            fast(line, False)
        assert _outcome(line, fast) == _outcome(line, None)
        outcomes.add(_outcome(line, None)[0])
    assert outcomes == {"value", "refused"}  # the standard library reads some, not all


def _outcome(
    line: bytes, fast: Callable[[bytes | memoryview, bool], object] | None
) -> tuple[str, object]:
    try:
        return "value", parse_line(line, 0, fast)
    except ScanRefusal as refusal:
        return "refused", (refusal.reason, refusal.detail)


def test_the_utf8_check_agrees_with_pythons_decoder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(headers, "UTF8_PIECE", 4)
    pieces = [
        b"a",
        b"\xc3\xa9",
        b"\xe2\x82\xac",
        b"\xf0\x9f\x98\x80",
        b"\xff",
        b"\x80",
        b"\xc3",
        b"\xe2\x82",
        b"\xed\xa0\x80",
        b"\xc0\xaf",
        b"\xf4\x90\x80\x80",
    ]
    rnd = random.Random(16)
    outcomes = {True: 0, False: 0}
    for _ in range(20_000):
        data = b"".join(rnd.choice(pieces) for _ in range(rnd.randrange(1, 14)))
        try:
            data.decode("utf-8")
            valid = True
        except UnicodeDecodeError:
            valid = False
        try:
            headers.check_utf8(data)
            checked = True
        except UnicodeDecodeError:
            checked = False
        assert checked == valid, data
        outcomes[valid] += 1
    assert min(outcomes.values()) > 500  # both kinds were tried


@pytest.mark.parametrize("path", FILES, ids=_rel)
def test_short_lines_are_decoded_whole_as_the_standard_library_decodes_them(path: Path) -> None:
    """Under :data:`~plangate.journal.headers.PLAIN_MAX_BYTES` the decoder gives the whole
    line's dict (or raises, and the standard library judges the line); longer lines still go
    through the table."""
    decode = headers.header_decoder(msgspec)
    short = long = 0
    for line in _lines(path):
        whole = _whole(line)
        try:
            value = decode(line, False)
        except Exception:
            continue
        if len(line) < headers.PLAIN_MAX_BYTES:
            short += 1
            assert value == whole, line[:120]
        else:
            long += 1
            table = headers.KEPT_LINE if len(line) <= INPUT_KEEP_BYTES else headers.LINE
            assert value == headers.project(whole, table), line[:120]
    assert short + long, "no line of the journal went through the decoder"


@pytest.mark.parametrize("damage", [b"\xff", b"\xed\xa0\x80", b"\xc0\xaf", b"\xc3"])
def test_a_damaged_byte_in_a_short_line_is_malformed(damage: bytes) -> None:
    fast = headers.header_decoder(msgspec)
    good = json.dumps({"type": "user", "extra": "é"}, ensure_ascii=False).encode()
    assert len(good) < headers.PLAIN_MAX_BYTES
    line = good.replace("é".encode(), damage)
    with pytest.raises(ScanRefusal) as refused:
        parse_line(line, 2, fast)
    assert (refused.value.reason, refused.value.detail) == (codes.MALFORMED, "line 3 is not UTF-8")
