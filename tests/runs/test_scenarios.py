"""Every rule of seed 004, as a run: real git worktree, real checks, real DBOS on SQLite;
only the model is scripted."""

from __future__ import annotations

from plangate.plan.model import Check, Criterion
from plangate.runs.attempts import (
    DETAIL_OUT_OF_ATTEMPTS,
    REASON_CHECK,
    REASON_ERROR,
    REASON_ESCALATION,
    REASON_GATE,
)
from testkit.git import git
from tests.runs.conftest import Harness, plan_text, step

CHECK_HELLO = Check("grep -qx hello hello.txt", name="AC1")
V1 = plan_text([step(1, ["hello.txt"])], [CHECK_HELLO])
V2 = plan_text(
    [step(1, ["hello.txt"]), step(2, ["hello.txt"], title="Fix the greeting")], [CHECK_HELLO]
)


def test_check_fails_then_version_2_passes(harness: Harness) -> None:
    outcome = harness.run(
        V1,
        {
            "steps": [
                {"step": 1, "write": {"hello.txt": "helo\n"}, "message": "Wrote helo."},
                {"step": 2, "write": {"hello.txt": "hello\n"}, "message": "Fixed."},
            ],
            "plans": [{"version": 2, "plan_text": V2}],
        },
    )
    assert outcome.state == "done"
    run = outcome.record
    assert (run.version, run.attempts_used) == (2, 1)
    versions = harness.engine.store.versions(outcome.run_id)
    assert [(v.number, v.trigger, v.accepted) for v in versions] == [
        (1, "initial", True),
        (2, "check", True),
    ]
    assert versions[1].why.startswith("A check failed. check AC1 (`grep -qx hello hello.txt`)")
    events = harness.events(outcome)
    assert "Plan changed to version 2: A check failed." in events
    # The round's check failed while its evidence was there: the gate's line says both.
    assert (
        "Evidence gate passed: every criterion has its evidence, but the failed check above "
        "still fails this round." in events
    )
    assert events.count("Evidence gate passed.") == 1  # version 2's round, its check passing
    # Step 1 ran once; the agent carried on from step 2, the first step version 2 adds.
    assert [line for line in outcome.log() if line.startswith("step")] == [
        "step v1 s1 t1 a0",
        "step v2 s2 t1 a1",
    ]
    # The fresh planner got the previous version, the failure with its tail, the change.
    (request,) = outcome.requests("plan")
    assert request["previous_plan"] == V1
    assert request["failures"][0][0] == "check"
    assert "failed (exit 1)" in request["failures"][0][1]
    assert request["changed_files"] == ["hello.txt"]
    assert "+helo" in request["diff"]
    assert set(request) == {
        "kind",
        "run_id",
        "workdir",
        "previous_plan",
        "task",
        "failures",
        "changed_files",
        "diff",
        "version",
        "turn",
        "attempt",
    }
    # One commit per step, on the run's branch, in its own worktree.
    subjects = git(outcome.folder / "repo", "log", "--format=%s", run.branch).splitlines()
    assert subjects == ["Step 2: Fix the greeting", "Step 1: Change 1", "initial"]
    assert harness.engine.store.checks(outcome.run_id)[0].output == ""


AC2 = Criterion("AC2", "There is a goodbye.")


def test_check_and_gate_failing_together_spend_one_attempt(harness: Harness) -> None:
    v1 = plan_text(
        [step(1, ["hello.txt"]), step(2, ["bye.txt"], serves=["AC2"])],
        [CHECK_HELLO],
        [Criterion("AC1", "It greets."), AC2],
    )
    v2 = plan_text(
        [
            step(1, ["hello.txt"]),
            step(2, ["bye.txt"], serves=["AC2"]),
            step(3, ["hello.txt", "bye.txt"], serves=["AC1", "AC2"]),
        ],
        [CHECK_HELLO],
        [Criterion("AC1", "It greets."), AC2],
    )
    outcome = harness.run(
        v1,
        {
            "steps": [
                {"step": 1, "write": {"hello.txt": "helo\n"}},
                {"step": 2, "message": "Nothing to do."},
                {"step": 3, "write": {"hello.txt": "hello\n", "bye.txt": "bye\n"}},
            ],
            "plans": [{"version": 2, "plan_text": v2}],
        },
    )
    assert outcome.state == "done"
    assert outcome.record.attempts_used == 1
    failures = harness.engine.store.failures(outcome.run_id)
    assert [(attempt, f.kind) for _, attempt, f in failures] == [(1, "check"), (1, "gate")]
    assert failures[1][2].summary.startswith("AC2 has no evidence")
    versions = harness.engine.store.versions(outcome.run_id)
    assert versions[1].trigger == "check"
    assert "Attempt 2 of 3 spent." not in harness.events(outcome)


def test_refused_version_waits_on_you(harness: Harness) -> None:
    rewritten = plan_text(
        [step(1, ["hello.txt"], title="Write hello properly"), step(2, ["hello.txt"])],
        [CHECK_HELLO],
    )
    outcome = harness.run(
        V1,
        {
            "steps": [{"step": 1, "write": {"hello.txt": "helo\n"}, "message": "Wrote helo."}],
            "plans": [{"version": 2, "plan_text": rewritten}],
        },
    )
    assert outcome.state == "waiting"
    waiting = outcome.record.waiting
    assert waiting.reason == REASON_CHECK
    assert waiting.detail == (
        "new version refused: it rewrites step 1, which was already carried out"
    )
    assert waiting.last_message == "Wrote helo."
    versions = harness.engine.store.versions(outcome.run_id)
    assert [(v.number, v.accepted) for v in versions] == [(1, True), (None, False)]
    assert versions[1].plan_text == rewritten
    assert outcome.record.version == 1
    assert any(
        text.startswith("No new plan: new version refused") for text in harness.events(outcome)
    )


def test_escalation_for_a_file_the_plan_does_not_name(harness: Harness) -> None:
    v1 = plan_text([step(1, ["hello.txt"]), step(2, ["bye.txt"])], [CHECK_HELLO])
    v2 = plan_text(
        [step(1, ["hello.txt"]), step(3, ["bye.txt", "notes.txt"], title="Bye, with notes")],
        [CHECK_HELLO],
    )
    outcome = harness.run(
        v1,
        {
            "steps": [
                {"step": 1, "write": {"hello.txt": "hello\n"}},
                # Step 2 needs notes.txt too, which the plan does not name.
                {"step": 2, "write": {"bye.txt": "bye\n", "notes.txt": "why\n"}},
                {"step": 3, "write": {"bye.txt": "bye\n", "notes.txt": "why\n"}},
            ],
            "plans": [{"version": 2, "plan_text": v2}],
        },
    )
    assert outcome.state == "done"
    store = harness.engine.store
    ((_, attempt, failure),) = store.failures(outcome.run_id)
    assert (attempt, failure.kind) == (1, "escalation")
    assert failure.summary == "step 2 needs `notes.txt`, which the plan does not name"
    assert "Plan changed to version 2: The agent escalated." in harness.events(outcome)
    # Step 2 was not committed (its edits were put back); version 2 dropped it, which is
    # allowed because it was never carried out, and step 3 carried the change.
    steps = [(s.step, s.status, s.changed_files) for s in store.steps(outcome.run_id)]
    assert steps == [
        (1, "done", ("hello.txt",)),
        (2, "escalated", ()),
        (3, "done", ("bye.txt", "notes.txt")),
    ]
    assert store.versions(outcome.run_id)[1].trigger == "escalation"


def test_agent_escalation_replans_and_carries_on(harness: Harness) -> None:
    v1 = plan_text([step(1, ["hello.txt"]), step(2, ["hello.txt"], title="Too big")], [CHECK_HELLO])
    v2 = plan_text([step(1, ["hello.txt"]), step(3, ["hello.txt"], title="Smaller")], [CHECK_HELLO])
    outcome = harness.run(
        v1,
        {
            "steps": [
                {"step": 1, "write": {"hello.txt": "hel"}},
                {"step": 2, "status": "escalate", "escalation": "too large for one context"},
                {"step": 3, "append": {"hello.txt": "lo\n"}},
            ],
            "plans": [{"version": 2, "plan_text": v2}],
        },
    )
    assert outcome.state == "done"
    (request,) = outcome.requests("plan")
    assert request["failures"] == [
        ["escalation", "step 2 cannot be done as written: too large for one context", ""]
    ]
    assert [line for line in outcome.log() if line.startswith("step")] == [
        "step v1 s1 t1 a0",
        "step v1 s2 t1 a0",
        "step v2 s3 t1 a1",
    ]


def test_out_of_attempts_failing_check(harness: Harness) -> None:
    outcome = harness.run(
        V1, {"steps": [{"step": 1, "write": {"hello.txt": "helo\n"}}]}, attempts=1
    )
    assert outcome.state == "waiting"
    assert (outcome.record.waiting.reason, outcome.record.waiting.detail) == (
        REASON_CHECK,
        DETAIL_OUT_OF_ATTEMPTS,
    )
    assert outcome.requests("plan") == []


def test_out_of_attempts_failing_gate(harness: Harness) -> None:
    plan = plan_text([step(1, ["hello.txt"])], [Check("true")])
    outcome = harness.run(plan, {"steps": [{"step": 1, "message": "Nothing changed."}]}, attempts=1)
    assert outcome.state == "waiting"
    assert (outcome.record.waiting.reason, outcome.record.waiting.detail) == (
        REASON_GATE,
        DETAIL_OUT_OF_ATTEMPTS,
    )


def test_out_of_attempts_escalation(harness: Harness) -> None:
    outcome = harness.run(
        V1,
        {"steps": [{"step": 1, "status": "escalate", "escalation": "needs a schema change"}]},
        attempts=1,
    )
    assert outcome.state == "waiting"
    assert (outcome.record.waiting.reason, outcome.record.waiting.detail) == (
        REASON_ESCALATION,
        DETAIL_OUT_OF_ATTEMPTS,
    )


def test_three_attempts_replan_at_most_twice(harness: Harness) -> None:
    v2 = plan_text([step(1, ["hello.txt"]), step(2, ["hello.txt"])], [CHECK_HELLO])
    v3 = plan_text(
        [step(1, ["hello.txt"]), step(2, ["hello.txt"]), step(3, ["hello.txt"])], [CHECK_HELLO]
    )
    outcome = harness.run(
        V1,
        {
            "steps": [{"write": {"hello.txt": "helo\n"}}],
            "plans": [{"version": 2, "plan_text": v2}, {"version": 3, "plan_text": v3}],
        },
    )
    assert outcome.state == "waiting"
    assert outcome.record.waiting.detail == DETAIL_OUT_OF_ATTEMPTS
    assert outcome.record.attempts_used == 3
    assert len(outcome.requests("plan")) == 2
    assert [v.number for v in harness.engine.store.versions(outcome.run_id)] == [1, 2, 3]


def test_review_send_back_spends_an_attempt(harness: Harness) -> None:
    outcome = harness.run(
        V1,
        {
            "steps": [
                {"step": 1, "write": {"hello.txt": "hello\n"}},
                {"step": None, "append": {"hello.txt": "# reviewed\n"}, "message": "Added it."},
            ],
            "reviews": [
                {"attempt": 0, "approved": False, "reason": "say why in a comment"},
                {"attempt": 1, "approved": True},
            ],
        },
        review=True,
        checks=["test -s hello.txt"],
    )
    assert outcome.state == "done"
    assert outcome.record.attempts_used == 1
    assert [line for line in outcome.log() if not line.startswith("review")] == [
        "step v1 s1 t1 a0",
        "step v1 sNone t1 a1",
    ]
    fix = outcome.requests("step")[1]
    assert fix["feedback"] == [
        ["review", "the review sent the change back: say why in a comment", ""]
    ]
    # A send-back is not a re-plan trigger.
    assert outcome.requests("plan") == []
    assert [v.number for v in harness.engine.store.versions(outcome.run_id)] == [1]
    assert "The review sent the change back: say why in a comment." in harness.events(outcome)


def test_reply_continues(harness: Harness) -> None:
    outcome = harness.run(
        V1,
        {
            "steps": [
                {"step": 1, "write": {"hello.txt": "helo\n"}, "message": "Wrote helo."},
                {"step": None, "turn": 2, "write": {"hello.txt": "hello\n"}, "message": "Fixed."},
            ]
        },
        attempts=1,
    )
    assert outcome.state == "waiting"
    after = harness.reply(outcome, "It is hello with two l's.")
    assert after.state == "done"
    assert (after.record.turn, after.record.attempts_used) == (2, 0)
    turn2 = [r for r in after.requests("step") if r["turn"] == 2]
    assert len(turn2) == 1
    assert turn2[0]["reply"] == "It is hello with two l's."
    assert turn2[0]["feedback"][0][0] == "check"
    events = harness.events(after)
    assert "You: It is hello with two l's." in events
    assert events[-1].startswith("Done")


def test_reply_after_an_escalation_carries_on_with_that_step(harness: Harness) -> None:
    v1 = plan_text([step(1, ["hello.txt"]), step(2, ["hello.txt"])], [CHECK_HELLO])
    outcome = harness.run(
        v1,
        {
            "steps": [
                {"step": 1, "write": {"hello.txt": "hel"}},
                {"step": 2, "turn": 1, "status": "escalate", "escalation": "which spelling?"},
                {"step": 2, "turn": 2, "append": {"hello.txt": "lo\n"}},
            ],
            "plans": [{"needs_person": "the spelling is a product decision"}],
        },
    )
    assert outcome.state == "waiting"
    assert outcome.record.waiting.reason == REASON_ESCALATION
    assert outcome.record.waiting.detail == (
        "a person must decide: the spelling is a product decision"
    )
    after = harness.reply(outcome, "Spell it hello.")
    assert after.state == "done"
    assert [line for line in after.log() if line.startswith("step")][-1] == "step v1 s2 t2 a0"


def test_a_run_without_a_plan_never_replans(harness: Harness) -> None:
    outcome = harness.run(
        None,
        {
            "steps": [
                {"attempt": 0, "write": {"hello.txt": "helo\n"}},
                {"attempt": 1, "write": {"hello.txt": "hello\n"}},
            ]
        },
        task="Write hello to hello.txt",
        checks=["grep -qx hello hello.txt"],
    )
    assert outcome.state == "done"
    assert outcome.record.attempts_used == 1
    assert outcome.requests("plan") == []
    assert harness.engine.store.versions(outcome.run_id) == []
    second = outcome.requests("step")[1]
    assert second["step"] is None and second["task"] == "Write hello to hello.txt"
    assert second["feedback"][0][1] == "check `grep -qx hello hello.txt` failed (exit 1)"


def test_a_run_without_a_plan_runs_out_of_attempts(harness: Harness) -> None:
    outcome = harness.run(
        None,
        {"steps": [{"write": {"hello.txt": "helo\n"}}]},
        task="Write hello",
        checks=["grep -qx hello hello.txt"],
        attempts=2,
    )
    assert outcome.state == "waiting"
    assert (outcome.record.waiting.reason, outcome.record.waiting.detail) == (
        REASON_CHECK,
        DETAIL_OUT_OF_ATTEMPTS,
    )
    assert outcome.requests("plan") == []


def test_a_planner_that_edits_the_sandbox_is_refused(harness: Harness) -> None:
    outcome = harness.run(
        V1,
        {
            "steps": [{"step": 1, "write": {"hello.txt": "helo\n"}}],
            "plans": [
                {"plan_text": V2, "write": {"hello.txt": "hello\n", "scratch/notes.md": "x"}}
            ],
        },
    )
    assert outcome.state == "waiting"
    assert outcome.record.waiting.reason == REASON_CHECK
    assert outcome.record.waiting.detail == (
        "new version refused: the planner changed the sandbox (`hello.txt`, "
        "`scratch/notes.md`); planning is read-only"
    )
    worktree = harness.engine.store.run(outcome.run_id).worktree
    assert git(outcome.folder / "repo", "-C", worktree, "status", "--porcelain") == ""
    assert (outcome.folder / "repo" / worktree / "hello.txt").read_text() == "helo\n"
    versions = harness.engine.store.versions(outcome.run_id)
    assert [(v.number, v.accepted) for v in versions] == [(1, True), (None, False)]


def test_a_planner_with_no_usable_version_waits(harness: Harness) -> None:
    outcome = harness.run(
        V1,
        {
            "steps": [{"step": 1, "write": {"hello.txt": "helo\n"}}],
            "plans": [{"plan_text": "Step 2: fix it, I guess"}],
        },
    )
    assert outcome.state == "waiting"
    assert outcome.record.waiting.detail.startswith(
        "the planner wrote no usable new version: <new version>:1: "
    )


def test_cited_artifact_is_evidence(harness: Harness) -> None:
    plan = plan_text(
        [step(1, ["hello.txt"]), step(2, [], serves=["AC2"], title="Measure")],
        [CHECK_HELLO],
        [Criterion("AC1", "It greets."), AC2],
    )
    outcome = harness.run(
        plan,
        {
            "steps": [
                {"step": 1, "write": {"hello.txt": "hello\n"}},
                {"step": 2, "evidence": {"AC2": ["README.md"]}},
            ]
        },
    )
    assert outcome.state == "done"


def test_an_agent_error_waits_and_a_reply_retries(harness: Harness) -> None:
    outcome = harness.run(
        V1,
        {
            "steps": [
                {"step": 1, "turn": 1, "error": "claude exited with status 1"},
                {"step": 1, "turn": 2, "write": {"hello.txt": "hello\n"}},
            ]
        },
    )
    assert outcome.state == "waiting"
    assert outcome.record.waiting.reason == REASON_ERROR
    assert outcome.record.waiting.detail == "claude exited with status 1 (the script says so)"
    after = harness.reply(outcome, "Try again.")
    assert after.state == "done"
