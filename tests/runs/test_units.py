"""The pure parts (attempts, the evidence gate, the planner's judgement) and the small
side-effecting ones (checks, the sandbox, the store) on their own."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from plangate.agents.base import PlanOutcome
from plangate.plan.model import Check, Criterion, Plan, Step
from plangate.runs import attempts, checks, evidence, planner, sandbox
from plangate.runs.model import CheckRecord, Failure
from plangate.runs.store import Store, database_url, sqlalchemy_url
from tests.runs.conftest import make_repo, plan_text, step

CHECK = Failure("check", "check `x` failed (exit 1)", "boom")
GATE = Failure("gate", "AC2 has no evidence")
ESCALATION = Failure("escalation", "step 2 cannot be done as written: too big")
REVIEW = Failure("review", "the review sent the change back: no")


# -- attempts -----------------------------------------------------------------------------


def test_a_failing_round_spends_one_attempt_whatever_failed() -> None:
    decision = attempts.decide([CHECK, GATE], 0, 3, has_plan=True)
    assert (decision.action, decision.attempts_used) == ("replan", 1)


def test_three_attempts_mean_at_most_two_replans() -> None:
    actions = [attempts.decide([CHECK], used, 3, has_plan=True).action for used in range(3)]
    assert actions == ["replan", "replan", "wait"]


@pytest.mark.parametrize(
    ("found", "reason"),
    [
        ([CHECK], attempts.REASON_CHECK),
        ([CHECK, GATE], attempts.REASON_CHECK),
        ([GATE], attempts.REASON_GATE),
        ([ESCALATION], attempts.REASON_ESCALATION),
        ([REVIEW], attempts.REASON_REVIEW),
    ],
)
def test_out_of_attempts_reasons(found: list[Failure], reason: str) -> None:
    decision = attempts.decide(found, 2, 3, has_plan=True)
    assert (decision.action, decision.reason, decision.detail) == (
        "wait",
        reason,
        "out of attempts",
    )


def test_send_backs_and_planless_failures_go_back_to_the_agent() -> None:
    assert attempts.decide([REVIEW], 0, 3, has_plan=True).action == "retry"
    assert attempts.decide([CHECK], 0, 3, has_plan=False).action == "retry"
    assert attempts.decide([GATE], 0, 3, has_plan=False).action == "retry"
    waits = attempts.decide([ESCALATION], 0, 3, has_plan=False)
    assert (waits.action, waits.reason) == ("wait", attempts.REASON_AGENT)


def test_version_lines() -> None:
    assert attempts.plan_changed_line(2, "check") == "Plan changed to version 2: A check failed."
    assert attempts.plan_changed_line(3, "gate") == (
        "Plan changed to version 3: The evidence gate failed."
    )
    assert attempts.plan_changed_line(2, "escalation") == (
        "Plan changed to version 2: The agent escalated."
    )
    assert attempts.why_line("check", [CHECK, GATE]) == (
        "A check failed. check `x` failed (exit 1); AC2 has no evidence"
    )


# -- checks -------------------------------------------------------------------------------


def test_a_check_that_times_out_is_killed_with_its_process_group(tmp_path: Path) -> None:
    marker = tmp_path / "child-alive"
    command = f"(sleep 2; touch {marker}) & echo started; sleep 300"
    started = time.monotonic()
    record = checks.run_check(Check(command, timeout_seconds=1), tmp_path)
    # Not a speed check: left alone the command runs 300 s, so returning within half of
    # that (generous for a loaded machine) proves it was killed at its 1 s timeout.
    assert time.monotonic() - started < 150
    assert record.timed_out and not record.passed and record.exit_code is None
    assert record.output.startswith("started\n")
    assert checks.summary(record) == f"check `{command}` timed out after 1s"
    time.sleep(2.2)
    assert not marker.exists()


def test_the_tail_keeps_the_end(tmp_path: Path) -> None:
    record = checks.run_check(Check("seq 1 100; exit 3"), tmp_path)
    assert record.exit_code == 3
    assert record.output.splitlines()[0] == "1"
    assert record.tail.splitlines() == [str(n) for n in range(61, 101)]
    assert checks.failure(record) == Failure(
        "check", "check `seq 1 100; exit 3` failed (exit 3)", record.tail
    )
    long = checks.tail("x" * 10_000 + "\nend")
    assert long == "end"
    assert len(checks.tail("\n".join("y" * 200 for _ in range(40))).encode()) <= 4096


# -- the evidence gate ----------------------------------------------------------------------


def _record(command: str, passed: bool, name: str | None = None) -> CheckRecord:
    return CheckRecord("t1/a0", 0, name, command, 0 if passed else 1, False, 0.1, "", "")


def test_each_kind_of_evidence() -> None:
    plan = Plan(
        "P",
        "G",
        (Step(1, "A", ("a.py",), ("AC1",), ""), Step(2, "B", ("b.py",), ("AC2",), "")),
        (Check("pytest -k AC3"),),
        (
            Criterion("AC1", "a"),
            Criterion("AC2", "b"),
            Criterion("AC3", "c"),
            Criterion("AC4", "d"),
        ),
    )
    found = evidence.gate(
        plan,
        plan.steps,
        ["a.py"],
        [_record("pytest -k AC3", True)],
        {"AC4": ["report.txt", "../../etc/passwd"]},
        lambda path: path == "report.txt",
    )
    assert [f.summary.split(" ")[0] for f in found] == ["AC2"]
    # A failing check is no evidence; a check named after the criterion is.
    assert (
        evidence.evidence_for(
            plan.criteria[2], (), [], [_record("pytest -k AC3", False)], {}, lambda _: True
        )
        is None
    )
    assert (
        evidence.evidence_for(
            plan.criteria[1], (), [], [_record("make", True, name="AC2")], {}, lambda _: True
        )
        == "check AC2 (`make`) passed"
    )
    # An id is matched as a word: AC1 is not evidence for AC10's sibling AC1.
    assert (
        evidence.evidence_for(
            Criterion("AC1", "x"), (), [], [_record("pytest -k AC10", True)], {}, lambda _: True
        )
        is None
    )
    # An artifact outside the sandbox does not count even if it exists.
    assert (
        evidence.evidence_for(Criterion("AC9", "x"), (), [], [], {"AC9": ["../x"]}, lambda _: True)
        is None
    )
    assert evidence.gate(None, (), [], [], {}, lambda _: False) == []


# -- the planner's judgement -----------------------------------------------------------------


PREVIOUS = Plan(
    "P",
    "G",
    (Step(1, "A", ("a.py",), ("AC1",), "x"),),
    (Check("true"),),
    (Criterion("AC1", "a"),),
)


def test_judgement() -> None:
    from plangate.plan.render import render_plan

    good = Plan(
        "P",
        "G",
        (*PREVIOUS.steps, Step(2, "B", ("a.py",), ("AC1",), "y")),
        PREVIOUS.checks,
        PREVIOUS.criteria,
    )
    accepted = planner.judge(PlanOutcome(render_plan(good), None, ""), PREVIOUS, [1], ["a.py"], [])
    assert accepted.kind == "accepted" and accepted.plan == good
    changed = planner.judge(PlanOutcome(render_plan(good), None, ""), PREVIOUS, [1], [], ["a.py"])
    assert changed.kind == "refused" and changed.refusal is not None
    assert changed.refusal.code == "changed_sandbox"
    person = planner.judge(PlanOutcome(None, "pick a database", ""), PREVIOUS, [1], [], [])
    assert (person.kind, person.detail) == ("needs_person", "a person must decide: pick a database")
    nothing = planner.judge(PlanOutcome(None, None, "hmm"), PREVIOUS, [1], [], [])
    assert (nothing.kind, nothing.detail) == (
        "no_version",
        "the planner wrote no usable new version",
    )
    garbled = planner.judge(PlanOutcome("## Steps\n", None, ""), PREVIOUS, [1], [], [])
    assert garbled.kind == "no_version"
    same = planner.judge(PlanOutcome(render_plan(PREVIOUS), None, ""), PREVIOUS, [1], [], [])
    assert same.kind == "refused" and same.detail == (
        "new version refused: it adds no step after step 1"
    )


# -- the sandbox ------------------------------------------------------------------------------


def test_sandbox_commits_once_per_key_and_restores_after_planning(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n", ".gitignore": "build/\n"})
    head = sandbox.repo_head(repo)
    tree = tmp_path / "tree"
    sandbox.create(head.toplevel, tree, "plangate/run-x", head.commit)
    sandbox.create(head.toplevel, tree, "plangate/run-x", head.commit)  # again: reused
    (tree / "a.txt").write_text("b\n")
    first = sandbox.commit(tree, "t1/a0/v1/s1", "Step 1: A", "did it")
    assert sandbox.commit(tree, "t1/a0/v1/s1", "Step 1: A") == first
    assert sandbox.find_commit(tree, "t1/a0/v1/s") is None
    assert sandbox.changed_files(tree, head.commit) == ["a.txt"]
    assert "+b" in sandbox.diff(tree, head.commit)
    assert sandbox.diff(tree, head.commit, limit=10).endswith("read the files in the sandbox]\n")

    (tree / "build").mkdir()
    (tree / "build" / "out.o").write_text("x")
    before = sandbox.snapshot(tree)
    (tree / "a.txt").write_text("planner was here\n")
    (tree / "new.txt").write_text("n\n")
    time.sleep(0.01)
    (tree / "build" / "out.o").write_text("xy")
    changes = sandbox.changes_between(before, sandbox.snapshot(tree))
    assert changes == ["a.txt", "build/out.o", "new.txt"]
    sandbox.restore(tree, before)
    assert (tree / "a.txt").read_text() == "b\n"
    assert not (tree / "new.txt").exists()
    assert sandbox.dirty_files(tree) == []


def test_repo_head_refuses_what_is_not_a_repository(tmp_path: Path) -> None:
    from plangate.errors import UsageError

    with pytest.raises(UsageError, match="not inside a git repository"):
        sandbox.repo_head(tmp_path)
    (tmp_path / "empty").mkdir()
    os.system(f"git init -q {tmp_path / 'empty'}")
    with pytest.raises(UsageError, match="has no commit yet"):
        sandbox.repo_head(tmp_path / "empty")


# -- the store ------------------------------------------------------------------------------


def test_database_urls(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from plangate.errors import ConfigError
    from plangate.runs.engine import system_database_url

    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(tmp_path))
    monkeypatch.delenv("PLANGATE_DATABASE_URL", raising=False)
    assert database_url() == f"sqlite:///{tmp_path}/runs.db"
    assert system_database_url(database_url()) == f"sqlite:///{tmp_path}/runs-dbos.db"
    monkeypatch.setenv("PLANGATE_DATABASE_URL", "postgresql://u:p@h:5432/d")
    assert database_url() == "postgresql://u:p@h:5432/d"
    assert sqlalchemy_url(database_url()) == "postgresql+psycopg://u:p@h:5432/d"
    assert system_database_url(database_url()) == "postgresql://u:p@h:5432/d"
    monkeypatch.setenv("PLANGATE_DATABASE_URL", "mysql://u:secret@h/d")
    with pytest.raises(ConfigError, match="'h/d' is not a PostgreSQL or SQLite URL"):
        database_url()


def test_store_writes_are_keyed(tmp_path: Path) -> None:
    from plangate.runs.model import RunRecord

    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    try:
        record = RunRecord(
            "r1",
            "t",
            "t",
            "/repo",
            "abc",
            "b",
            "/wt",
            "scripted:x",
            None,
            None,
            True,
            3,
            False,
            (),
            "queued",
            1,
            0,
            1,
        )
        with store.transaction() as conn:
            store.insert_run(conn, record)
            one = store.add_version(
                conn,
                "r1",
                "initial",
                accepted=True,
                trigger="initial",
                why="w",
                refusal=None,
                attempts_used=0,
                plan_text=plan_text([step(1)]),
            )
            again = store.add_version(
                conn,
                "r1",
                "initial",
                accepted=True,
                trigger="initial",
                why="other",
                refusal=None,
                attempts_used=0,
                plan_text="",
            )
            refused = store.add_version(
                conn,
                "r1",
                "t1/a1",
                accepted=False,
                trigger="check",
                why="w",
                refusal="no",
                attempts_used=1,
                plan_text="x",
                failure_items=[CHECK],
            )
            two = store.add_version(
                conn,
                "r1",
                "t1/a2",
                accepted=True,
                trigger="gate",
                why="w",
                refusal=None,
                attempts_used=2,
                plan_text="y",
                failure_items=[GATE],
            )
            for _ in range(2):
                store.add_event(conn, "r1", "k", 1, "start", "once")
                store.add_failures(conn, "r1", 1, 1, [CHECK, GATE])
        assert (one.number, again.number, again.why) == (1, 1, "w")
        assert (refused.number, refused.seq, two.number, two.seq) == (None, 2, 2, 3)
        assert store.versions("r1")[1].failures == (CHECK,)
        assert [e.text for e in store.events("r1")] == ["once"]
        assert [f for _, _, f in store.failures("r1")] == [CHECK, GATE]
        assert store.claim_turn("r1", 2, "hi") is False  # queued: not waiting
    finally:
        store.close()


# -- hosts and heartbeats --------------------------------------------------------------


def test_the_host_and_the_heartbeat_period_come_from_one_place_each() -> None:
    import socket

    from plangate.errors import ConfigError
    from plangate.runs.executors import handover_seconds, heartbeat_seconds, stale_seconds
    from plangate.runs.host import host_name

    assert host_name({"PLANGATE_WORKER_HOST": " host-b "}) == "host-b"
    assert host_name({"PLANGATE_WORKER_HOST": ""}) == socket.gethostname()
    assert (heartbeat_seconds({}), stale_seconds({}), handover_seconds({})) == (5.0, 30.0, 40.0)
    short = {"PLANGATE_HEARTBEAT_SECONDS": "0.5"}
    assert (heartbeat_seconds(short), stale_seconds(short), handover_seconds(short)) == (
        0.5,
        3.0,
        4.0,
    )
    for bad in ("0", "soon", "-1", "601", "nan"):
        with pytest.raises(ConfigError, match="PLANGATE_HEARTBEAT_SECONDS"):
            heartbeat_seconds({"PLANGATE_HEARTBEAT_SECONDS": bad})


def test_another_hosts_executor_is_gone_only_after_its_heartbeat_is_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plangate.runs.executors import dead_executors
    from plangate.runs.store import Store

    monkeypatch.setenv("PLANGATE_WORKER_HOST", "host-a")
    monkeypatch.delenv("PLANGATE_HEARTBEAT_SECONDS", raising=False)
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    try:
        store.heartbeat("b-1", "host-b", 1, "worker", 1000.0)
        assert dead_executors(store, ["b-1"], clock=lambda: 1029.0) == []
        assert dead_executors(store, ["b-1"], clock=lambda: 1031.0) == ["b-1"]
        store.heartbeat("b-1", "host-b", 1, "worker", 1030.0)  # a beat refreshes it
        assert dead_executors(store, ["b-1"], clock=lambda: 1031.0) == []
        assert dead_executors(store, ["nobody"], clock=lambda: 1031.0) == ["nobody"]
    finally:
        store.close()


def test_a_missing_plan_is_named_before_a_repository_without_a_commit(tmp_path: Path) -> None:
    """Issue 34: `plangate run nosuch.md` in a repository with no commit once said only "no
    commit yet", hiding the missing file; the file comes first."""
    repo = tmp_path / "empty"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    done = subprocess.run(
        [sys.executable, "-m", "plangate", "run", "nosuch.md", "--repo", str(repo)],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "cannot read the plan nosuch.md" in done.stderr
    assert "no commit yet" not in done.stderr
