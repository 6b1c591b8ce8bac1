"""Which steps a new version keeps, which it re-attempts, and a step that changes nothing:
real runs (real git worktree, real checks, real DBOS on SQLite), only the model scripted.

The rule (``docs/runs-design.md``, "Steps kept, re-attempted, or with no changes"): a step
that escalated was not carried out, so it is not part of the kept prefix; a new version that
keeps it word for word re-attempts it. A step that changes no file is "no changes", not
done: its criteria still need evidence, or the round fails.
"""

from __future__ import annotations

from plangate.plan.model import Check, Criterion
from plangate.runs.attempts import DETAIL_OUT_OF_ATTEMPTS, REASON_GATE
from tests.runs.conftest import Harness, plan_text, step

CHECK_HELLO = Check("grep -qx hello hello.txt", name="AC1")
AC2 = Criterion("AC2", "There is a goodbye.")
CRITERIA = (Criterion("AC1", "It greets."), AC2)


def test_an_escalated_step_kept_by_the_new_version_is_re_attempted(harness: Harness) -> None:
    v1 = plan_text([step(1, ["hello.txt"])], [CHECK_HELLO], CRITERIA[:1])
    v2 = plan_text(
        [step(1, ["hello.txt"]), step(2, ["bye.txt"], serves=["AC2"], title="Say goodbye")],
        [CHECK_HELLO],
        CRITERIA,
    )
    outcome = harness.run(
        v1,
        {
            "steps": [
                {"step": 1, "version": 1, "status": "escalate", "escalation": "needs a name"},
                {"step": 1, "version": 2, "write": {"hello.txt": "hello\n"}, "message": "Hi."},
                {"step": 2, "write": {"bye.txt": "bye\n"}, "message": "Bye."},
            ],
            "plans": [{"version": 2, "plan_text": v2}],
        },
    )
    assert outcome.state == "done"
    # Step 1 escalated under version 1, so it was not carried out: version 2 re-attempts it.
    assert [line for line in outcome.log() if line.startswith("step")] == [
        "step v1 s1 t1 a0",
        "step v2 s1 t1 a1",
        "step v2 s2 t1 a1",
    ]
    steps = harness.engine.store.steps(outcome.run_id)
    assert [(s.version, s.step, s.status) for s in steps] == [
        (1, 1, "escalated"),
        (2, 1, "done"),
        (2, 2, "done"),
    ]
    events = harness.events(outcome)
    note = "(re-attempted under version 2: it escalated under version 1) done (commit "
    assert any(text.startswith(f"Step 1: Change 1 {note}") for text in events), events


def test_a_step_with_no_changes_still_needs_evidence(harness: Harness) -> None:
    # Step 2 names hello.txt, which step 1 changed; step 2 itself changes nothing, so it is
    # no evidence for AC2 (before, the run-wide change of hello.txt counted for it).
    plan = plan_text(
        [step(1, ["hello.txt"]), step(2, ["hello.txt"], serves=["AC2"], title="Say goodbye")],
        [CHECK_HELLO],
        CRITERIA,
    )
    outcome = harness.run(
        plan,
        {
            "steps": [
                {"step": 1, "write": {"hello.txt": "hello\n"}, "message": "Hi."},
                {"step": 2, "message": "Nothing to change: hello.txt already says it."},
            ]
        },
        attempts=1,
    )
    assert outcome.state == "waiting"
    assert outcome.record.waiting.reason == REASON_GATE
    assert outcome.record.waiting.detail == DETAIL_OUT_OF_ATTEMPTS
    (failure,) = [f for _, _, f in harness.engine.store.failures(outcome.run_id)]
    assert failure.kind == "gate"
    assert failure.summary.startswith("AC2 has no evidence")
    assert failure.summary.endswith("(step 2 serving it changed no file)")
    events = harness.events(outcome)
    assert any(t.startswith("Step 2: Say goodbye: no changes (commit ") for t in events), events
    assert not any(t.startswith("Step 2: Say goodbye done") for t in events)


def test_a_step_with_no_changes_passes_on_other_evidence(harness: Harness) -> None:
    # The same step with no changes, but a passing check names its criterion: it passes.
    check_bye = Check("test -s hello.txt", name="AC2 greeting kept")
    plan = plan_text(
        [step(1, ["hello.txt"]), step(2, ["hello.txt"], serves=["AC2"], title="Say goodbye")],
        [CHECK_HELLO, check_bye],
        CRITERIA,
    )
    outcome = harness.run(
        plan,
        {
            "steps": [
                {"step": 1, "write": {"hello.txt": "hello\n"}},
                {"step": 2, "message": "Nothing to change."},
            ]
        },
        attempts=1,
    )
    assert outcome.state == "done"


def test_the_evidence_gate_alone_triggers_a_re_plan_with_its_items(harness: Harness) -> None:
    # Seed 004: the checks pass, but AC2 has no evidence (step 2 changed no file and no
    # check names AC2), so the gate alone fails the round; the run re-plans, and the
    # planner's request carries the gate's failing item, not a check's.
    v1 = plan_text(
        [step(1, ["hello.txt"]), step(2, ["bye.txt"], serves=["AC2"], title="Say goodbye")],
        [CHECK_HELLO],
        CRITERIA,
    )
    v2 = plan_text(
        [
            step(1, ["hello.txt"]),
            step(2, ["bye.txt"], serves=["AC2"], title="Say goodbye"),
            step(3, ["bye.txt"], serves=["AC2"], title="Write the goodbye"),
        ],
        [CHECK_HELLO],
        CRITERIA,
    )
    outcome = harness.run(
        v1,
        {
            "steps": [
                {"step": 1, "write": {"hello.txt": "hello\n"}},
                {"step": 2, "message": "Nothing to change."},
                {"step": 3, "write": {"bye.txt": "bye\n"}},
            ],
            "plans": [{"version": 2, "plan_text": v2}],
        },
    )
    assert outcome.state == "done"
    checks = harness.engine.store.checks(outcome.run_id)
    assert checks and all(check.passed for check in checks)  # no check ever failed
    failures = [f for _, _, f in harness.engine.store.failures(outcome.run_id)]
    assert [f.kind for f in failures] == ["gate"]
    assert failures[0].summary.startswith("AC2 has no evidence")
    versions = harness.engine.store.versions(outcome.run_id)
    assert [(v.number, v.trigger) for v in versions] == [(1, "initial"), (2, "gate")]
    (request,) = outcome.requests("plan")
    assert [(kind, summary) for kind, summary, _tail in request["failures"]] == [
        ("gate", failures[0].summary)
    ]
    assert [line for line in outcome.log() if line.startswith(("step", "plan"))] == [
        "step v1 s1 t1 a0",
        "step v1 s2 t1 a0",
        "plan v2 t1 a1",
        "step v2 s3 t1 a1",
    ]
