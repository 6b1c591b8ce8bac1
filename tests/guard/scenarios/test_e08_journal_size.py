"""E.8 Journal size and identity: bounded reads, rewrites, copies and truncation.

Not applicable, so without a test: E.8.45 (a whole-file size limit; superseded by item 58,
the reader reads record by record) and E.8.46 (batch readers; plangate has none).
"""

from __future__ import annotations

import json
import os
import shutil
import time

import pytest

from plangate.guard.fold import GuardTracker
from plangate.guard.state import Installation
from plangate.journal import codes
from plangate.journal.events import AssistantText, ToolResult
from plangate.journal.reader import read_journal
from plangate.journal.scan import Prefix
from testkit.session import Call, SimulatedSession

from .conftest import Flow, MakeSession, assert_allowed, assert_denied, assert_unverified

MiB = 1024 * 1024


def _read(session: SimulatedSession, **options):  # type: ignore[no-untyped-def]
    return read_journal(
        str(session.journal_path),
        session_id=session.session_id,
        owners=[session.project_dir],
        config_dir=session.config_dir,
        **options,
    )


def _window(session: SimulatedSession) -> GuardTracker:
    """The guard's fold for this session, whose selection is the invocation's window."""
    return GuardTracker(Installation(session.plangate, [], session.cwd), str(session.journal_path))


def _padding_history(session: SimulatedSession, records: int, size: int) -> None:
    """An earlier, unrelated conversation of big assistant messages."""
    session.typed("Summarise the design notes, please.")
    for n in range(records):
        session.say(f"Part {n}: " + "lorem ipsum " * (size // 12), end_turn=n == records - 1)


@pytest.mark.slow
def test_e08_47_callers_cannot_raise_the_record_bound(session: SimulatedSession) -> None:
    session.typed("hello")
    session.say("x" * (codes.RECORD_MAX_BYTES + 16))
    verdict = _read(
        session, record_max=4 * codes.RECORD_MAX_BYTES, retained_max=4 * codes.RETAINED_MAX_BYTES
    )
    assert verdict.reason == codes.TOO_LARGE
    assert verdict.record_bytes is not None and verdict.record_bytes > codes.RECORD_MAX_BYTES


def test_e08_48_a_copy_of_the_journal_under_another_name_is_identity(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.through("ceo")
    copy = session.journal_path.with_name("0d2c1b7e-1111-4222-8333-444455556666.jsonl")
    shutil.copyfile(session.journal_path, copy)
    outcome = flow.attempt(flow.driver_read("design"), payload={"transcript_path": str(copy)})
    assert_denied(outcome, "identity", disposition="fallback")
    assert "Fallback:" in outcome.text


@pytest.mark.parametrize("published", [True, False])
def test_e08_49_long_session_decides_from_the_invocation(
    flow: Flow, session: SimulatedSession, published: bool
) -> None:
    _padding_history(session, records=40, size=100_000)
    flow.begin()
    flow.work("ceo")
    if published:
        flow.publish("ceo")
    assert session.journal_path.stat().st_size > 3 * MiB
    outcome = flow.attempt(flow.driver_read("design"))
    if published:
        assert_allowed(outcome, path="journal")
    else:
        assert_denied(outcome, "publication_missing", path="journal")


def test_e08_50_the_index_holds_no_content_and_reloads_only_the_invocation(
    flow: Flow, session: SimulatedSession
) -> None:
    _padding_history(session, records=40, size=100_000)
    flow.begin()
    flow.work("ceo")
    verdict = _read(session, select=_window(session).select)
    assert verdict.ready
    size = session.journal_path.stat().st_size
    assert verdict.retained_bytes < size / 20
    padding = [e for e in verdict.events if isinstance(e, AssistantText) and e.text is None]
    assert len(padding) >= 40
    assert not any(
        "lorem" in (e.text or "") for e in verdict.events if isinstance(e, AssistantText)
    )
    close = [
        e
        for e in verdict.events
        if isinstance(e, ToolResult)
        and e.file is not None
        and e.file.file_path.endswith("close-packet.md")
    ]
    assert close and close[0].text is not None
    assert close[0].file is not None and close[0].file.num_lines


@pytest.mark.slow
def test_e08_51_invocation_over_the_retained_bound_is_oversized_invocation(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.begin()
    flow.work("ceo")
    half = codes.RETAINED_MAX_BYTES // 2 + MiB
    session.say("Notes: " + "n" * half, end_turn=False)
    session.say("More notes: " + "m" * half, end_turn=False)
    # The reader alone, with a lowered bound, gives the same verdict on a small invocation.
    assert (
        _read(session, select=_window(session).select, retained_max=4096).reason
        == codes.OVERSIZED_INVOCATION
    )
    outcome = flow.attempt(flow.driver_read("design"))
    assert_denied(outcome, "oversized_invocation", disposition="fallback")
    assert outcome.entry is not None and outcome.entry["decision"] == "deny"


@pytest.mark.parametrize("published", [True, False])
def test_e08_52_run_started_by_a_typed_request_and_the_skill_tool_binds(
    flow: Flow, session: SimulatedSession, published: bool
) -> None:
    session.typed("Please review plan.md with the autoplan skill.")
    skill = Call("Skill", {"skill": "autoplan", "args": "plan.md"})
    session.message(calls=[skill], run=False)
    session.result(
        skill,
        "Launching skill: autoplan",
        tool_use_result={"success": True, "commandName": "autoplan"},
    )
    flow.init()
    flow.work("ceo")
    if published:
        flow.publish("ceo")
    outcome = flow.attempt(flow.driver_read("design"))
    if published:
        assert_allowed(outcome)
    else:
        assert_denied(outcome, "publication_missing")


def test_e08_53_dedup_reply_in_a_second_run_cites_the_first_runs_read(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.begin()
    flow.enter("ceo")
    session.end_turn("Paused.")
    flow.start()
    flow.init()
    cached = session.run(Call.read(flow.driver("ceo"), dedup=True))
    assert cached.text is not None and cached.text.startswith("Wasted call")
    assert_denied(flow.attempt(flow.driver_read("design")), "close_required")


def test_e08_53b_dedup_reply_citing_a_forged_body_establishes_nothing(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.begin()
    forged = Call.read(flow.driver("ceo"))
    session.message(calls=[forged], run=False)
    session.result(
        forged,
        "1\tnot the phase file",
        is_error=None,
        tool_use_result={
            "type": "text",
            "file": {
                "filePath": flow.driver("ceo"),
                "content": "not the phase file",
                "numLines": 1,
                "startLine": 1,
                "totalLines": 1,
            },
        },
    )
    session.end_turn("Paused.")
    flow.start()
    flow.init()
    cached = Call.read(flow.driver("ceo"))
    session.message(calls=[cached], run=False)
    session.result(
        cached,
        session_dedup_text(),
        is_error=None,
        tool_use_result={"type": "text", "file": {"filePath": flow.driver("ceo")}},
    )
    assert_denied(flow.attempt(flow.driver_read("design")), "phase_order")


def session_dedup_text() -> str:
    from testkit.session import DEDUP_REPLY

    return DEDUP_REPLY


def test_e08_54_a_concurrent_appender_never_fails_the_read(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.through("ceo")

    def append() -> None:
        for _ in range(15):
            session.metadata("atis-latch", atis="")
            time.sleep(0.02)

    outcome = flow.attempt_payload(flow.driver_read("design"), during=append)
    assert_allowed(outcome, path="payload")


def _lagging(flow: Flow, session: SimulatedSession) -> Call:
    """The published CEO phase, then a Bash whose result Claude Code has not written yet:
    the next hook keeps reading the journal until it catches up."""
    flow.through("ceo")
    session.message(calls=[Call.bash("true")], run=False)
    read = flow.driver_read("design")
    session.message(calls=[read], journal=False, run=False)
    return read


@pytest.mark.slow
@pytest.mark.real_hook  # bytes flipped while the hook process reads
def test_e08_55_prefix_changed_between_reads_is_rewritten(
    flow: Flow, session: SimulatedSession
) -> None:
    read = _lagging(flow, session)

    def flip() -> None:
        # Toggle one byte of the first line every 150 ms: whichever read comes first, a
        # later read of the same hook run sees different bytes in the prefix it already read.
        data = session.journal_path.read_bytes()
        at = data.index(b'"operation":"enqueue"') + len('"operation":"enqueu')
        for byte in (b"f", b"e", b"f", b"e", b"f", b"e"):
            time.sleep(0.12)
            with open(session.journal_path, "r+b") as handle:
                handle.seek(at)
                handle.write(byte)

    outcome = session.hook(read, during=flip)
    assert_unverified(outcome, "rewritten")
    assert "Phase-report enforcement was skipped" in (outcome.system_message or "")
    # No time bound: `rewritten` is only given when a later read saw the change (a loop that
    # ran out its wait would say `journal_lag`), so the code alone proves it.


@pytest.mark.slow
def test_e08_56_journal_truncated_between_reads_is_identity(
    flow: Flow, session: SimulatedSession
) -> None:
    read = _lagging(flow, session)

    def truncate() -> None:
        # Shrink the journal three times: whichever read comes first, a later one finds the
        # file shorter than the bytes it already read.
        for _ in range(3):
            time.sleep(0.3)
            size = session.journal_path.stat().st_size
            os.truncate(session.journal_path, size - 10)

    outcome = session.hook(read, during=truncate, write_denial=False)
    assert_denied(outcome, "identity", disposition="fallback")
    assert "Fallback:" in outcome.text


def test_e08_57_reader_prefix_checks(flow: Flow, session: SimulatedSession) -> None:
    flow.through("ceo")
    first = _read(session)
    assert first.ready and first.prefix is not None
    session.say("More text after the first read.")
    appended = _read(session, prior=first.prefix)
    assert appended.ready
    wrong = _read(session, prior=Prefix(first.prefix.size, "00000000"))
    assert wrong.reason == codes.REWRITTEN
    larger = _read(session, prior=Prefix(session.journal_path.stat().st_size + 1, "0"))
    assert larger.reason == codes.IDENTITY


@pytest.mark.slow
def test_e08_58_one_record_over_the_bound_is_too_large_and_an_unfinished_one_is_ignored(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.through("ceo")
    # An unfinished (still being written) huge record at the end is not read at all.
    unfinished = b'{"type":"assistant","message":{"content":"' + b"u" * (2 * MiB)
    read = flow.driver_read("design")
    session.message(calls=[read], journal=False, run=False)
    session.append_raw(unfinished)  # nothing else is written after it
    assert_allowed(session.hook(read), path="payload")
    # Once a complete record is over the bound, the call runs unverified.
    session.append_raw(b"u" * (codes.RECORD_MAX_BYTES) + b'"}}\n')
    verdict = _read(session)
    assert verdict.reason == codes.TOO_LARGE
    assert verdict.record_bytes is not None and verdict.record_bytes > codes.RECORD_MAX_BYTES
    outcome = session.hook(read)
    assert_unverified(outcome, "too_large", path="none")
    assert "32 MiB" in (outcome.system_message or "")
    assert "true autoplan-published" in (outcome.additional_context or "")


def test_e08_59_long_padded_session_is_verified_and_a_sidechain_padding_breaks_it(
    make_session: MakeSession,
) -> None:
    session = make_session("long")
    flow = Flow(session)
    _padding_history(session, records=30, size=200_000)
    flow.through("ceo")
    outcome = flow.attempt_payload(flow.driver_read("design"))
    assert_allowed(outcome, path="payload")
    assert outcome.approved  # the owned-read approval for the skill's own file
    # The same session with one padding record turned into a sidechain record: the chain up
    # from the newest record passes through a record that is not part of the conversation.
    lines = session.journal_path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines):
        record = json.loads(line)
        if record.get("type") == "assistant" and "Part 3:" in line:
            record["isSidechain"] = True
            lines[number] = json.dumps(record, separators=(",", ":"))
            break
    session.journal_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    outcome = session.hook(flow.driver_read("design"), write_denial=False)
    assert_denied(outcome, "sidechain")


@pytest.mark.real_hook  # the deadline is the hook process's real alarm
def test_a_decision_past_the_guard_deadline_is_an_unverified_guard_timeout(
    flow: Flow, session: SimulatedSession
) -> None:
    """Issue 14: a journal too slow to read (here a sparse 256 GiB tail with no line break)
    once kept the guard busy past Claude Code's timeout, which kills a hook silently. The
    guard gives up by itself at its deadline and says so. The deadline asked for (0.3 s) is
    below the floor, so the guard keeps its 3 s: the variable is no off switch."""
    flow.through("ceo")
    read = flow.driver_read("design")
    session.message(calls=[read], journal=False, run=False)
    size = session.journal_path.stat().st_size
    os.truncate(session.journal_path, size + 256 * 1024**3)
    try:
        outcome = session.hook(read, env={"PLANGATE_GUARD_DEADLINE_MS": "300"})
    finally:
        os.truncate(session.journal_path, size)  # the fixture's own checks read the journal
    assert_unverified(outcome, "guard_timeout", path="none")
    # Generous on purpose (a busy machine starts a hook slowly): what matters is that the hook
    # answered well before the 25 s Claude Code kills it at, not how fast.
    assert outcome.elapsed < 20, outcome.elapsed
    assert "3 s deadline" in (outcome.system_message or "")
    assert outcome.elapsed >= 2.9  # the floor, not the 0.3 s asked for
    assert [d["code"] for d in outcome.log] == ["guard_timeout"]
