"""E.11 Lifecycle and arming: when the guard applies, and the journal's timing."""

from __future__ import annotations

import os
import shutil
import time

import pytest

from plangate.autoplan.checkpoint import checkpoint
from plangate.autoplan.close import prepare_close
from plangate.autoplan.init import init
from plangate.journal import codes
from testkit.session import Call, SimulatedSession

from .conftest import Flow, assert_allowed, assert_denied, assert_unverified, report


def _ceo_closed(flow: Flow) -> None:
    flow.begin()
    flow.work("ceo")


def test_e11_77_no_phase_observed_design_entry_is_phase_order(flow: Flow) -> None:
    flow.begin()
    outcome = flow.attempt(flow.driver_read("design"))
    assert_denied(outcome, "phase_order", disposition="corrective")
    assert "Phase 1" in outcome.text


OTHER_PLAN = """\
# Plan: Other

## Goal

Tidy the exports.

## Implementation plan

### Step 1: Tidy
Files: `exports.py`
Serves: AC1

Remove dead exports.

## Checks

- `pytest -q`

## Acceptance criteria

- AC1: No dead exports remain.

## Review record
"""


def _other_invocation(flow: Flow) -> tuple[dict[str, object], dict[str, object]]:
    """Another plan's invocation in the same artifact folder, made outside this session."""
    other = os.path.join(flow.s.project_dir, "other.md")
    with open(other, "w", encoding="utf-8") as handle:
        handle.write(OTHER_PLAN)
    restore = os.path.join(flow.artifacts, "other-restore-1.md")
    init(other, other, restore)
    return checkpoint(restore, "ceo"), prepare_close(restore, "ceo")


@pytest.mark.parametrize("kind", ["artifact", "dispatch", "close_packet"])
def test_e11_78_artifacts_of_another_invocation_are_refused(
    flow: Flow, session: SimulatedSession, kind: str
) -> None:
    flow.begin()
    flow.enter("ceo")
    flow.checkpoint("ceo")
    manifest, packet = _other_invocation(flow)
    if kind == "artifact":
        prompt = str(manifest["reviewerPrompt"]["path"])  # type: ignore[index]
        assert_denied(flow.attempt(Call.read(prompt)), "snapshot", disposition="fallback")
    elif kind == "dispatch":
        call = Call.agent(str(manifest["dispatchPrompt"]), run_in_background=False)
        assert_denied(flow.attempt(call), "snapshot")
    else:
        flow.dispatch("ceo")
        session.run(Call.read(str(packet["closePacketPath"])))
        flow.publish("ceo")
        assert_denied(flow.attempt(flow.driver_read("design")), "close_stale")


def test_e11_79_same_phase_reads_need_no_close(flow: Flow) -> None:
    flow.begin()
    flow.enter("ceo")
    flow.checkpoint("ceo")
    assert_allowed(flow.attempt(flow.driver_read("ceo")))
    assert_allowed(flow.attempt(flow.artifact_read("ceo")))
    assert_allowed(flow.attempt(flow.artifact_read("ceo", "manifest.json")))


@pytest.mark.parametrize(("how", "code"), [("symlink", None), ("copy", "foreign_install")])
def test_e11_80_install_through_a_symlink_is_this_install_a_copy_is_not(
    flow: Flow, session: SimulatedSession, how: str, code: str | None
) -> None:
    flow.begin()
    place = os.path.join(os.path.dirname(session.project_dir), how, "autoplan")
    os.makedirs(os.path.dirname(place))
    installed = os.path.join(session.config_dir, "skills", "autoplan")
    if how == "symlink":
        os.symlink(installed, place)
    else:
        shutil.copytree(installed, place)
    outcome = flow.attempt(Call.read(os.path.join(place, "sections", "ceo-phase.md")))
    if code is None:
        assert_allowed(outcome)
    else:
        assert_denied(outcome, code, disposition="corrective")
        assert "another plangate installation" in outcome.text


def test_e11_81_calls_inside_a_subagent_are_outside_the_guard(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.begin()
    read = flow.driver_read("design")
    session.message(calls=[read], run=False)
    outcome = session.hook(read, payload={"agent_id": "a1b2c3", "agent_type": "general-purpose"})
    assert outcome.output == {}
    assert outcome.log == []


def test_e11_82_identical_timestamps_do_not_change_the_order(
    flow: Flow, session: SimulatedSession
) -> None:
    session.fixed_timestamp = "2026-11-29T20:00:00.000Z"
    flow.through("ceo")
    assert_allowed(flow.attempt(flow.driver_read("design")))
    assert len({r.get("timestamp") for r in session.records if "uuid" in r}) == 1


@pytest.mark.parametrize(
    ("turn", "code"), [("typed", "publication_missing"), ("autoplan", "init_own")]
)
def test_e11_83_turn_end_then_a_new_human_turn(
    flow: Flow, session: SimulatedSession, turn: str, code: str
) -> None:
    _ceo_closed(flow)
    session.end_turn("Paused after the CEO close.")
    if turn == "typed":
        session.typed("Unrelated: what does the design checklist say?")
    else:
        flow.start()
    outcome = flow.attempt(flow.driver_read("design"))
    assert_denied(outcome, code)
    if turn == "typed":  # gstack would end the invocation here; plangate keeps it
        assert "moved on from this /autoplan run" in outcome.text
        assert "run /autoplan <plan path>" in outcome.text


@pytest.mark.parametrize(
    "kind", ["end_turn_only", "meta_prompt", "bare_tool_result", "notification_turn"]
)
def test_e11_84_turn_end_without_a_typed_request_does_not_release(
    flow: Flow, session: SimulatedSession, kind: str
) -> None:
    _ceo_closed(flow)
    session.end_turn("Paused.")
    if kind == "meta_prompt":
        session.node(
            "user",
            {"message": {"role": "user", "content": "<system-reminder>x</system-reminder>"}},
            extra={"isMeta": True},
        )
    elif kind == "bare_tool_result":
        session.node(
            "user",
            {
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_01ffffffffffffffffffffff",
                            "content": "ok",
                        }
                    ],
                }
            },
        )
    elif kind == "notification_turn":
        background = Call.agent("Count the files.", run_in_background=True)
        background.agent_id = "a0000000000000001"
        session.notify(background)
    assert_denied(flow.attempt(flow.driver_read("design")), "publication_missing")


def test_e11_85_a_typed_turn_and_a_same_restore_reinit_keep_the_outstanding_report(
    flow: Flow, session: SimulatedSession
) -> None:
    _ceo_closed(flow)
    session.end_turn("Paused.")
    session.typed("Show me the design checklist.")
    assert_denied(flow.attempt(flow.driver_read("design")), "publication_missing")
    again = flow.init()
    assert again.json()["reused"] is True
    assert_denied(flow.attempt(flow.driver_read("design")), "publication_missing")


def test_e11_85b_reinit_after_release_keeps_the_earlier_publication(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.through("ceo")
    session.end_turn("Phase 1 is published; paused.")
    session.typed("Let's continue tomorrow.")
    session.end_turn("Sure.")
    flow.start()  # /autoplan plan.md again
    assert flow.init().json()["reused"] is True
    assert_allowed(flow.attempt(flow.driver_read("design")))


@pytest.mark.slow
def test_e11_86_journal_that_never_appears_is_journal_missing(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.through("ceo")
    missing = session.journal_path.with_name("0d2c1b7e-2222-4333-8444-555566667777.jsonl")
    outcome = flow.attempt(
        flow.driver_read("design"),
        payload={"transcript_path": str(missing), "session_id": missing.stem},
        write_denial=False,
    )
    assert_denied(outcome, "journal_missing", disposition="fallback", path="none")
    # How long the loop waits is proven on an injected clock (tests/guard/test_observe.py);
    # here only that the real hook did wait: a busy machine can only make it longer.
    assert outcome.elapsed >= 1.9


@pytest.mark.slow
def test_e11_87_journal_that_appears_within_the_wait_is_read(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.through("ceo")
    read = flow.driver_read("design")
    session.message(calls=[read], journal=False, run=False)
    aside = session.journal_path.with_suffix(".aside")
    os.rename(session.journal_path, aside)

    def appear() -> None:
        time.sleep(1.0)
        os.rename(aside, session.journal_path)

    outcome = session.hook(read, during=appear)
    assert_allowed(outcome, path="payload")
    assert outcome.elapsed >= 1.0  # it waited for the journal (a lower bound: load-proof)


def test_e11_88_publication_result_written_while_the_hook_waits(
    flow: Flow, session: SimulatedSession
) -> None:
    _ceo_closed(flow)
    noop = Call.bash("true autoplan-published ceo")
    session.message(report("ceo"), [noop], run=False)  # the no-op's result is not written yet
    read = flow.driver_read("design")
    session.message(calls=[read], journal=False, run=False)

    def result() -> None:
        time.sleep(0.1)
        session.execute(noop)

    outcome = session.hook(read, during=result)
    assert_allowed(outcome, path="payload")
    texts = [
        r for r in session.records if r.get("type") == "assistant" and "Phase 1 complete" in str(r)
    ]
    assert texts  # the report precedes the (payload) current call


def test_e11_89_in_flight_artifact_read_leaves_the_journal_alone(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.begin()
    flow.enter("ceo")
    flow.checkpoint("ceo")
    read = flow.artifact_read("ceo", offset=1, limit=20)
    session.message(calls=[read], journal=False, run=False)
    before = session.journal_path.read_bytes()
    assert_allowed(session.hook(read), path="payload")
    assert session.journal_path.read_bytes() == before


def test_e11_90_in_flight_read_revisiting_an_earlier_phase(flow: Flow) -> None:
    flow.through("ceo")
    flow.enter("design")
    assert_allowed(flow.attempt_payload(flow.driver_read("ceo")), path="payload")


@pytest.mark.parametrize(
    "kind",
    [
        "initial_ceo_entry",
        "forged_earlier_read",
        pytest.param("pending_read", marks=pytest.mark.slow),
    ],
)
def test_e11_91_in_flight_reads_under_the_payload_rule(
    flow: Flow, session: SimulatedSession, kind: str
) -> None:
    flow.begin()
    if kind == "initial_ceo_entry":
        assert_allowed(flow.attempt_payload(flow.driver_read("ceo")), path="payload")
        return
    flow.checkpoint("ceo")
    if kind == "forged_earlier_read":
        forged = flow.driver_read("ceo")
        session.message(calls=[forged], run=False)
        session.result(forged, "1\tforged", is_error=None)
        assert_allowed(flow.attempt_payload(flow.artifact_read("ceo")), path="payload")
        return
    session.message(calls=[flow.driver_read("ceo")], run=False)
    outcome = flow.attempt_payload(flow.artifact_read("ceo"))
    assert_unverified(outcome, "journal_lag", path="payload")


IN_FLIGHT = [
    "unpublished_next_phase",
    "bad_dispatch_prompt",
    "foreign_artifact",
    "duplicate_id",
    "foreign_session",
    "orphan_current_result",
    "rearmed_slash",
    "malformed_line",
    "symlinked_journal",
]
IN_FLIGHT_CODES = {
    "unpublished_next_phase": "publication_missing",
    "bad_dispatch_prompt": "dispatch_prompt",
    "foreign_artifact": "snapshot",
    "duplicate_id": "current_mismatch",
    "foreign_session": "identity",
    "orphan_current_result": "current_mismatch",
    "rearmed_slash": "init_own",
    "malformed_line": "malformed",
    "symlinked_journal": "identity",
}


@pytest.mark.parametrize("kind", IN_FLIGHT)
def test_e11_92_in_flight_calls_cannot_bypass(
    flow: Flow, session: SimulatedSession, kind: str
) -> None:
    _ceo_closed(flow)
    call = flow.driver_read("design")
    options: dict[str, object] = {}
    if kind == "bad_dispatch_prompt":
        call = flow.dispatch_call("ceo", prompt=flow.manifests["ceo"]["dispatchPrompt"] + " ")
    elif kind == "foreign_artifact":
        manifest, _ = _other_invocation(flow)
        call = Call.read(str(manifest["reviewerPrompt"]["path"]))  # type: ignore[index]
    elif kind == "duplicate_id":
        earlier = session.run(Call.bash("true"))
        call.id = earlier.id
    elif kind == "foreign_session":
        options["payload"] = {"session_id": "0d2c1b7e-3333-4444-8555-666677778888"}
    elif kind == "orphan_current_result":
        stray = Call.read(flow.driver("design"))
        stray.id = call.id
        stray.record = {"uuid": session.leaf}
        session.result(stray, "1\tx", is_error=None)
    elif kind == "rearmed_slash":
        session.end_turn("Paused.")
        flow.start()
    elif kind == "malformed_line":
        session.append_raw(b"{not json\n")
    elif kind == "symlinked_journal":
        real = session.journal_path.with_name("real.jsonl")
        os.rename(session.journal_path, real)
        os.symlink(real, session.journal_path)
    session.message(calls=[call], journal=False, run=False)
    outcome = session.hook(call, write_denial=False, **options)  # type: ignore[arg-type]
    assert_denied(outcome, IN_FLIGHT_CODES[kind])


def test_e11_93_reader_refuses_a_symlinked_journal_and_ignores_an_unfinished_record(
    flow: Flow, session: SimulatedSession
) -> None:
    from plangate.journal.reader import read_journal

    flow.through("ceo")
    read = flow.driver_read("design")
    message = session.message(calls=[read], journal=False, run=False)
    # The current call's record, still being written: no newline yet.
    session.flush(message)
    data = session.journal_path.read_bytes()
    at = data.index(read.id.encode())
    start = data.rfind(b"\n", 0, at) + 1
    end = data.index(b"\n", at)
    session.journal_path.write_bytes(data[: start + (end - start) // 2])
    assert_allowed(session.hook(read), path="payload")
    link = session.journal_path.with_name("link.jsonl")
    os.symlink(session.journal_path, link)
    verdict = read_journal(str(link), session_id="link", config_dir=session.config_dir)
    assert verdict.reason == codes.IDENTITY


@pytest.mark.parametrize(
    "kind",
    [
        "typed",
        "meta",
        "compact_summary",
        "tool_result",
        "task_notification_origin",
        "typed_without_turn_end",
    ],
)
def test_e11_94_no_turn_of_any_kind_releases_an_unfinished_invocation(
    flow: Flow, session: SimulatedSession, kind: str
) -> None:
    """gstack releases at a real typed turn after the turn ended (the first case); plangate
    releases at none (docs/guard-deviations.md)."""
    _ceo_closed(flow)
    if kind != "typed_without_turn_end":
        session.end_turn("Paused.")
    if kind in ("typed", "typed_without_turn_end"):
        session.typed("Something unrelated, please.")
    elif kind == "meta":
        session.node(
            "user",
            {"message": {"role": "user", "content": "Something unrelated."}},
            extra={"isMeta": True},
        )
    elif kind == "compact_summary":
        session.node(
            "user",
            {"message": {"role": "user", "content": "Summary: unrelated."}},
            extra={"isCompactSummary": True, "isVisibleInTranscriptOnly": True},
        )
    elif kind == "tool_result":
        session.node(
            "user",
            {
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_01eeeeeeeeeeeeeeeeeeeeee",
                            "content": "Something unrelated.",
                        }
                    ],
                }
            },
            extra={"toolUseResult": {"stdout": ""}},
        )
    else:
        session.node(
            "user",
            {"message": {"role": "user", "content": "Something unrelated."}},
            extra={"origin": {"kind": "task-notification"}, "promptSource": "system"},
        )
    assert_denied(flow.attempt(flow.driver_read("design")), "publication_missing")


def test_e11_95_compaction_keeps_the_invocation_and_its_summary_publishes_nothing(
    flow: Flow, session: SimulatedSession
) -> None:
    _ceo_closed(flow)
    session.compact("Summary of the conversation so far:\nPhase 1 complete.\n")
    assert_denied(flow.attempt(flow.driver_read("design")), "publication_missing")
    flow.publish("ceo")
    assert_allowed(flow.attempt(flow.driver_read("design")))
    # gstack's last sub-case (a boundary with an unknown logical parent in the middle of the
    # file drops the current call) does not apply: plangate's reader joins such a segment at
    # its file position (the reader's own tests cover it).
