"""E.9 Publication text and close coverage."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from plangate.autoplan import layout
from testkit.session import Call, SimulatedSession

from .conftest import Flow, MakeSession, assert_allowed, assert_denied, plan_with_scope, report

IMPLEMENTATION_LINE = "A search box and a results list."
REVIEW_RECORD = "## Review record\n"


@pytest.mark.parametrize(
    ("scope", "done", "phase", "target"),
    [
        ("design, dx", [], "ceo", "design"),
        ("design, dx", ["ceo"], "design", "dx"),
        ("design", ["ceo"], "design", "eng"),
        ("design, dx", ["ceo", "design"], "dx", "eng"),
        ("design, dx", ["ceo", "design", "dx"], "eng", "tasks"),
    ],
    ids=["ceo-design", "design-dx", "design-eng", "dx-eng", "eng-tasks"],
)
def test_e09_60_each_transition_needs_the_published_report(
    make_session: MakeSession, scope: str, done: list[str], phase: str, target: str
) -> None:
    session = make_session()
    flow = Flow(session, plan_with_scope(scope))
    flow.through(*done)
    flow.work(phase)
    outcome = flow.attempt(flow.driver_read(target))
    assert_denied(outcome, "publication_missing", disposition="corrective")
    assert f"`true autoplan-published {phase}`" in outcome.text
    flow.publish(phase)
    assert_allowed(flow.attempt(flow.driver_read(target)))


def test_e09_61_report_without_its_declaration_line_is_missing(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.begin()
    flow.work("ceo")
    omitted = report("ceo").replace("Phase 1 complete\n", "The CEO review is finished.\n")
    flow.publish("ceo", omitted)
    assert_denied(flow.attempt(flow.driver_read("design")), "publication_missing")
    flow.publish("ceo")  # the counterfactual: the same report with its declaration
    assert_allowed(flow.attempt(flow.driver_read("design")))


NOT_DECLARATIONS = {
    "wrong_number": "Phase 2 complete.",
    "future": "Phase 1 will be complete.",
    "conditional": "Phase 1 complete if the reviewer succeeds.",
    "quoted": "> Phase 1 complete.",
    "fenced": "```\nPhase 1 complete\n```",
    "indented": "Status:\n\n    Phase 1 complete",
    "example": "Example:\nPhase 1 complete",
    "negated": "Phase 1 is not complete.",
    "withdrawn_recap": "Phase 1 complete with every finding applied.\n"
    "Correction: this phase is withdrawn.",
}


@pytest.mark.parametrize(
    "kind",
    [
        *[k for k in NOT_DECLARATIONS if k != "withdrawn_recap"],
        pytest.param("withdrawn_recap"),
    ],
)
def test_e09_62_text_that_is_not_a_current_declaration_does_not_publish(
    flow: Flow, session: SimulatedSession, kind: str
) -> None:
    flow.begin()
    flow.work("ceo")
    flow.publish("ceo", NOT_DECLARATIONS[kind])
    assert_denied(flow.attempt(flow.driver_read("design")), "publication_missing")


def _typed_begin(flow: Flow) -> None:
    flow.s.typed("Please review plan.md with the autoplan skill.")


def _variant(flow: Flow, session: SimulatedSession, kind: str) -> Call:
    """Set up one rejected close/publication; returns the design entry to attempt."""
    design = flow.driver_read("design")
    if kind in ("missing_init", "forged_init_command", "failed_init"):
        _typed_begin(flow)
        if kind == "forged_init_command":
            fake = json.dumps(
                {
                    "sourcePlan": flow.plan,
                    "activePlan": flow.plan,
                    "restorePath": flow.restore,
                    "originalSha256": "0" * 64,
                    "originalBytes": 10,
                    "reused": False,
                }
            )
            session.run(Call.bash(f"printf '%s' '{fake}'"))
        elif kind == "failed_init":
            missing = os.path.join(session.project_dir, "missing.md")
            failed = flow.bash(flow.command("autoplan", "init", missing, missing, flow.restore))
            assert failed.is_error
        return design
    flow.begin()
    if kind == "no_close":
        flow.enter("ceo")
        flow.checkpoint("ceo")
        flow.dispatch("ceo")
        flow.publish("ceo")
        return design
    if kind == "report_before_close":
        flow.enter("ceo")
        flow.checkpoint("ceo")
        flow.dispatch("ceo")
        flow.prepare_close("ceo")
        flow.publish("ceo")
        flow.read_close("ceo")
        return design
    flow.enter("ceo")
    flow.checkpoint("ceo")
    flow.dispatch("ceo")
    flow.prepare_close("ceo")
    packet = flow.close_path("ceo")
    if kind == "partial_close":
        session.run(Call.read(packet, offset=1, limit=5))
    elif kind == "error_close":
        read = Call.read(packet)
        session.message(calls=[read], run=False)
        session.error_result(read, "EIO: i/o error, read")
    elif kind == "missing_ack":
        session.message(calls=[Call.read(packet)], run=False)
    elif kind == "aliased_packet":
        alias = os.path.join(os.path.dirname(flow.artifacts), "alias")
        os.symlink(flow.artifacts, alias)
        folder = os.path.basename(os.path.dirname(packet))
        session.run(Call.read(os.path.join(alias, folder, layout.CLOSE_PACKET)))
    else:
        flow.read_close("ceo")
    if kind == "report_after_current":
        session.message(calls=[design], run=False)
        flow.publish("ceo")
        return design
    if kind == "foreign_session_report":
        flow.publish("ceo")
        lines = session.journal_path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            if "Phase 1 complete" in line and '"assistant"' in line:
                record = json.loads(line)
                record["sessionId"] = "0d2c1b7e-0000-4000-8000-000000000000"
                lines[number] = json.dumps(record, separators=(",", ":"))
        session.journal_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return design
    if kind == "parallel_pending_entry":
        flow.publish("ceo")
        session.message(calls=[flow.artifact_read("ceo")], run=False)
        return design
    flow.publish("ceo")
    if kind == "duplicate_use":
        lines = session.journal_path.read_text(encoding="utf-8").splitlines()
        use = next(line for line in lines if '"tool_use"' in line and "close-packet.md" in line)
        copy = json.loads(use)
        copy["uuid"] = "77777777-6666-4555-8444-333333333333"
        copy["parentUuid"] = session.leaf
        session.append(copy)
    elif kind == "changed_plan":
        text = Path(flow.plan).read_text(encoding="utf-8")
        with open(flow.plan, "w", encoding="utf-8") as handle:
            handle.write(text.replace(IMPLEMENTATION_LINE, "A search box."))
    elif kind == "packet_writable":
        os.chmod(packet, 0o644)
    elif kind == "wrong_init_result":
        lines = session.journal_path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            if '"tool_result"' in line and "originalBytes" in line:
                record = json.loads(line)
                block = record["message"]["content"][0]
                value = json.loads(block["content"])
                value["originalBytes"] += 1
                block["content"] = json.dumps(value, separators=(",", ":"))
                lines[number] = json.dumps(record, separators=(",", ":"))
        session.journal_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    elif kind == "wrong_restore_bytes":
        os.chmod(flow.restore, 0o644)
        with open(flow.restore, "a", encoding="utf-8") as handle:
            handle.write("tampered\n")
        os.chmod(flow.restore, 0o444)
    return design


REJECTIONS = {
    "no_close": "close_required",
    "partial_close": "close_incomplete",
    "error_close": "close_incomplete",
    "missing_ack": "close_incomplete",
    # The next entry hangs from the foreign report: the chain up from the current call passes
    # through another session's record, which Claude Code could not tell apart.
    "foreign_session_report": "competing_root",
    "duplicate_use": "tool_identity",
    "report_before_close": "publication_missing",
    "report_after_current": "publication_missing",
    "changed_plan": "close_stale",
    "packet_writable": "close_stale",
    "aliased_packet": "close_required",
    "wrong_init_result": "init_mismatch",
    "failed_init": "init_failed",
    "missing_init": "init_required",
    "forged_init_command": "init_required",
    "wrong_restore_bytes": "init_mismatch",
    "parallel_pending_entry": "entry_pending",
}


@pytest.mark.parametrize("kind", list(REJECTIONS))
def test_e09_63_rejected_closes_and_publications(
    flow: Flow, session: SimulatedSession, kind: str
) -> None:
    design = _variant(flow, session, kind)
    if not design.journaled:
        session.message(calls=[design], run=False)
    outcome = session.hook(design)
    assert_denied(outcome, REJECTIONS[kind])


def test_e09_64_split_close_ranges_cover_the_packet(flow: Flow, session: SimulatedSession) -> None:
    flow.begin()
    flow.enter("ceo")
    flow.checkpoint("ceo")
    flow.dispatch("ceo")
    packet = flow.prepare_close("ceo")
    flow.read_close("ceo", ranges=[(1, 10), (11, packet["lines"])])
    flow.publish("ceo")
    assert_allowed(flow.attempt(flow.driver_read("design")))


def test_e09_65_a_later_incomplete_close_supersedes_a_complete_one(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.begin()
    flow.work("ceo")
    flow.prepare_close("ceo")
    flow.read_close("ceo", ranges=[(1, 10)])
    flow.publish("ceo")
    assert_denied(flow.attempt(flow.driver_read("design")), "close_incomplete")


@pytest.mark.parametrize("real_close", [False, True])
def test_e09_66_a_foreign_close_packet_outside_the_store_does_not_count(
    flow: Flow, session: SimulatedSession, real_close: bool
) -> None:
    flow.begin()
    flow.enter("ceo")
    flow.checkpoint("ceo")
    flow.dispatch("ceo")
    flow.prepare_close("ceo")
    if real_close:
        flow.read_close("ceo")
    foreign = os.path.join(session.project_dir, "notes", "autoplan-ceo-close-abcdef")
    os.makedirs(foreign)
    copy = os.path.join(foreign, layout.CLOSE_PACKET)
    with open(flow.close_path("ceo"), "rb") as source, open(copy, "wb") as target:
        target.write(source.read())
    os.chmod(copy, 0o444)
    session.run(Call.read(copy))
    flow.publish("ceo")
    outcome = flow.attempt(flow.driver_read("design"))
    if real_close:
        assert_allowed(outcome)
    else:
        assert_denied(outcome, "close_required")
        assert "Detail: 1." in outcome.text


def test_e09_67_a_malformed_later_packet_invalidates_the_publication(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.through("ceo")
    folder = os.path.join(flow.artifacts, "autoplan-ceo-close-zzzzzz")
    os.makedirs(folder)
    packet = os.path.join(folder, layout.CLOSE_PACKET)
    with open(packet, "w", encoding="utf-8") as handle:
        handle.write("# Not a close packet\n")
    os.chmod(packet, 0o444)
    session.run(Call.read(packet))
    assert_denied(flow.attempt(flow.driver_read("design")), "close_stale")


def _published_then(flow: Flow) -> None:
    flow.begin()
    flow.work("ceo")
    flow.publish("ceo")


@pytest.mark.parametrize(
    ("how", "code"), [("success", "close_edits"), ("pending", "mutation_pending"), ("failed", None)]
)
def test_e09_68_post_close_edit_of_the_implementation(
    flow: Flow, session: SimulatedSession, how: str, code: str | None
) -> None:
    _published_then(flow)
    old = IMPLEMENTATION_LINE if how != "failed" else "a line that is not in the plan"
    edit = Call.edit(flow.plan, old, "A search box, filters and a results list.")
    if how == "pending":
        session.message(calls=[edit], run=False)
    else:
        session.run(edit)
        assert edit.is_error is (how == "failed")
    outcome = flow.attempt(flow.driver_read("design"))
    if code is None:
        assert_allowed(outcome)
    else:
        assert_denied(outcome, code)


def test_e09_69_report_only_edits_after_the_close_are_allowed(
    flow: Flow, session: SimulatedSession
) -> None:
    _published_then(flow)
    session.run(
        Call.edit(
            flow.plan,
            REVIEW_RECORD,
            REVIEW_RECORD + "\n### Phase 1 CEO\n- Rebuild the index on start.\n",
        )
    )
    session.run(
        Call.edit(
            flow.plan,
            "- Rebuild the index on start.\n",
            "- Rebuild the index on start (finding 1).\n",
        )
    )
    assert_allowed(flow.attempt(flow.driver_read("design")))


@pytest.mark.parametrize(
    ("how", "code"),
    [
        ("implementation_edit", "close_edits"),
        ("replace_all_edit", "close_edits"),
        ("write", "close_edits"),
        ("bash_rewrite", "close_stale"),
        ("pending_write", "mutation_pending"),
    ],
)
def test_e09_70_post_close_changes_to_the_implementation_are_denied(
    flow: Flow, session: SimulatedSession, how: str, code: str
) -> None:
    _published_then(flow)
    text = Path(flow.plan).read_text(encoding="utf-8")
    changed = text.replace(IMPLEMENTATION_LINE, "A search box.")
    if how == "implementation_edit":
        session.run(Call.edit(flow.plan, IMPLEMENTATION_LINE, "A search box."))
    elif how == "replace_all_edit":
        session.run(Call.edit(flow.plan, "results list", "result grid", replace_all=True))
    elif how == "write":
        session.run(Call.write(flow.plan, changed))
    elif how == "bash_rewrite":
        session.run(Call.bash(f"sed -i 's/results list/result grid/' {flow.plan}"))
    else:
        session.message(calls=[Call.write(flow.plan, changed)], run=False)
    assert_denied(flow.attempt(flow.driver_read("design")), code)


def test_e09_71_report_only_edit_still_needs_the_publication(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.begin()
    flow.work("ceo")
    session.run(
        Call.edit(
            flow.plan,
            REVIEW_RECORD,
            REVIEW_RECORD + "\n### Phase 1 CEO\n- Rebuild the index on start.\n",
        )
    )
    assert_denied(flow.attempt(flow.driver_read("design")), "publication_missing")
