"""A plan's approval (plangate.runs.approval): real /autoplan artifacts written by the real
commands (init, checkpoint, prepare-close, gate render) in a git repository, read back; the
run's row keeps it, on SQLite and PostgreSQL; --require-approval refuses before anything
is written."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from plangate.autoplan import layout
from plangate.autoplan.checkpoint import checkpoint
from plangate.autoplan.close import prepare_close
from plangate.autoplan.gate import gate_render
from plangate.autoplan.init import init
from plangate.runs import creation, schema
from plangate.runs.approval import Approval, UnapprovedPlanError, read_approval, require
from plangate.runs.creation import RunOptions
from plangate.runs.plan_delta import compare_plans
from plangate.runs.review_record import read_review_record
from plangate.runs.store import Store
from testkit.postgres import PostgresUnavailable, throwaway_postgres
from tests.runs.conftest import make_repo

REVIEW_RECORD = """\
### Phase 1 CEO
| id | finding | source | severity | decision | change to the plan | reason |
|---|---|---|---|---|---|---|
| CEO-1 | No proof it is right | both | High | accepted | Added check AC1 | Else not done |
| CEO-2 | Name the constant or not | voice | Low | taste | Kept `VALUE` | Either reads fine |

Top risks:
1. The value is read at import time.
2. Other modules copy it.

### Phase 3: Eng
Decision: keep one step.
Reason: the change is one line.

| id | finding | source | severity | decision | change to the plan | reason |
|---|---|---|---|---|---|---|
| ENG-1 | Should the value come from config | eng | Medium | deferred | none | needs the owner |

### Phase 4 Tasks
Steps: 2.

Open questions for the user:
1. Should VALUE be configurable later?
"""

PLAN = f"""# Plan: Set the value

## Goal

Make `app.VALUE` equal 2.

## Implementation plan

### Step 1: Set VALUE
Files: `app.py`
Serves: AC1

Change `VALUE` in `app.py`.

### Step 2: Document VALUE
Files: `README.md`
Serves: AC1

Say what `VALUE` is for.

## Checks

- `python3 -c "import app; assert app.VALUE == 2"`

## Acceptance criteria

- AC1: `app.VALUE` is 2.

## Review record

{REVIEW_RECORD}"""


@pytest.fixture
def reviewers(tmp_path: Path) -> str:
    folder = tmp_path / "reviewers"
    folder.mkdir()
    for phase in layout.REVIEW_PHASES:
        (folder / f"{phase}.md").write_text(f"# {phase} reviewer\n\nReview it.\n")
    return str(folder)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return Path(os.path.realpath(make_repo(tmp_path / "repo", {"app.py": "VALUE = 1\n"})))


def review(repo: Path, reviewers: str, text: str = PLAN) -> tuple[Path, dict[str, object]]:
    """``/autoplan``'s commands on ``repo/plan.md``, up to a rendered gate."""
    plan = repo / "plan.md"
    plan.write_text(text, encoding="utf-8")
    restore = str(repo / ".plangate" / "tmp" / "autoplan" / "plan-restore-1.md")
    init(str(plan), str(plan), restore)
    for phase in ("ceo", "eng"):
        checkpoint(restore, phase, reviewers_dir=reviewers)
        prepare_close(restore, phase)
    return plan, gate_render(restore)


def test_a_plan_rendered_at_its_gate_is_approved_with_its_review(
    repo: Path, reviewers: str
) -> None:
    plan, gate = review(repo, reviewers)
    gate_file = repo / ".plangate" / "tmp" / "autoplan" / "gate.json"
    approval = read_approval(str(plan))
    assert approval.state == "approved" and approval.approved
    assert approval.plan_path == str(plan)
    assert approval.plan_sha256 == hashlib.sha256(plan.read_bytes()).hexdigest()
    assert approval.gate_path == str(gate_file)
    assert approval.gate_sha256 == hashlib.sha256(gate_file.read_bytes()).hexdigest()
    assert approval.approved_sha256 == approval.plan_sha256
    assert approval.phases == ("ceo", "eng")
    assert approval.change is None
    assert approval.line().startswith(f"Approval: approved by the Final Approval Gate {gate_file}")
    # The review record, per phase.
    phases = approval.review.phases
    assert [p.title for p in phases] == ["Phase 1 CEO", "Phase 3 Eng", "Phase 4 Tasks"]
    assert [(d.id, d.severity, d.decision) for d in phases[0].decisions] == [
        ("CEO-1", "high", "accepted"),
        ("CEO-2", "low", "taste"),
    ]
    assert phases[0].top_risks == (
        "The value is read at import time.",
        "Other modules copy it.",
    )
    assert [(d.change, d.reason, d.decision) for d in phases[1].decisions] == [
        ("keep one step.", "the change is one line.", ""),
        ("none", "needs the owner", "deferred"),
    ]
    assert phases[1].top_risks == ()
    assert [d.id for d in approval.review.taste] == ["CEO-2"]
    assert approval.review.open_questions == (
        "Should VALUE be configurable later?",
        "ENG-1: Should the value come from config (deferred)",
    )
    # The gate kept the approved bytes, immutable.
    copy = gate["approvedCopy"]
    assert isinstance(copy, dict)
    assert Path(str(copy["path"])).read_bytes() == plan.read_bytes()
    assert os.stat(str(copy["path"])).st_mode & 0o222 == 0
    assert approval.approved_text is not None and "### Step 2: Document VALUE" in (
        approval.approved_text
    )


def test_the_gate_rendered_again_for_the_same_bytes_keeps_one_copy(
    repo: Path, reviewers: str
) -> None:
    plan, first = review(repo, reviewers)
    again = gate_render(str(first["restorePath"]))
    assert again["approvedCopy"] == first["approvedCopy"]
    folder = repo / ".plangate" / "tmp" / "autoplan"
    assert len([n for n in os.listdir(folder) if n.startswith("approved-")]) == 1
    assert read_approval(str(plan)).approved


def test_an_edit_after_approval_is_changed_and_says_what_changed(
    repo: Path, reviewers: str
) -> None:
    plan, _ = review(repo, reviewers)
    text = plan.read_text()
    edited = text.replace("Say what `VALUE` is for.", "Say what `VALUE` is for, twice.")
    edited = edited.replace(
        "## Checks",
        "### Step 3: Log VALUE\nFiles: `app.py`\nServes: AC1\n\nPrint it.\n\n## Checks",
    )
    plan.write_text(edited)
    approval = read_approval(str(plan))
    assert approval.state == "changed" and not approval.approved
    assert approval.change is not None
    assert (approval.change.kept, approval.change.edited, approval.change.added) == (
        (1,),
        (2,),
        (3,),
    )
    assert approval.reason == "edited after its approval: step 2 edited; step 3 added"
    assert approval.plan_sha256 != approval.approved_sha256
    # The review shown is the approved plan's.
    assert [d.id for d in approval.review.taste] == ["CEO-2"]
    with pytest.raises(UnapprovedPlanError) as caught:
        require(approval)
    assert f"`/autoplan {plan}`" in caught.value.remedy
    assert "without --require-approval" in caught.value.remedy
    assert "changed: edited after its approval: step 2 edited" in caught.value.message


def test_a_gate_without_an_approved_copy_still_says_the_bytes_changed(
    repo: Path, reviewers: str
) -> None:
    plan, _ = review(repo, reviewers)
    gate_file = repo / ".plangate" / "tmp" / "autoplan" / "gate.json"
    gate = json.loads(gate_file.read_text())
    del gate["approvedCopy"]  # as an older plangate wrote it
    gate_file.write_text(json.dumps(gate))
    assert read_approval(str(plan)).approved
    plan.write_text(plan.read_text().replace("Make `app.VALUE`", "Make `app.VALUE` really"))
    approval = read_approval(str(plan))
    assert approval.state == "changed" and approval.change is None
    assert "no approved copy is kept to say what changed" in approval.reason


def test_a_plan_without_a_gate_is_unreviewed(repo: Path, reviewers: str) -> None:
    plain = repo / "other.md"
    plain.write_text(PLAN)
    approval = read_approval(str(plain))
    assert approval.state == "unreviewed"
    assert approval.reason == "no Final Approval Gate names this plan"
    assert approval.gate_path is None
    # A review started (init) but never rendered its gate.
    plan = repo / "plan.md"
    plan.write_text(PLAN)
    restore = str(repo / ".plangate" / "tmp" / "autoplan" / "plan-restore-1.md")
    init(str(plan), str(plan), restore)
    started = read_approval(str(plan))
    assert started.state == "unreviewed"
    assert f"restore point {restore}, never rendered one" in started.reason
    # Another plan's gate does not approve this one.
    review_other = repo / "sub"
    review_other.mkdir()
    assert read_approval(str(plain)).state == "unreviewed"


def test_a_gate_whose_close_packet_changed_is_unverified(repo: Path, reviewers: str) -> None:
    plan, gate = review(repo, reviewers)
    phases = gate["phases"]
    assert isinstance(phases, list)
    packet = phases[0]["closePacket"]
    os.chmod(packet, 0o644)
    approval = read_approval(str(plan))
    assert approval.state == "unverified"
    assert approval.reason == f"the close packet of phase ceo is writable: {packet}"


def test_a_gate_that_cannot_be_read_is_unverified_not_unreviewed(
    repo: Path, reviewers: str
) -> None:
    plan, _ = review(repo, reviewers)
    gate_file = repo / ".plangate" / "tmp" / "autoplan" / "gate.json"
    gate_file.write_text('{"approvedPlan": {"path": ')  # cut short
    approval = read_approval(str(plan))
    assert approval.state == "unverified"
    assert approval.reason == (
        f"the gate {gate_file} is not valid JSON; run `/autoplan {plan}` again to render a new one"
    )
    with pytest.raises(UnapprovedPlanError):
        require(approval)


def test_the_approval_round_trips_through_json(repo: Path, reviewers: str) -> None:
    plan, _ = review(repo, reviewers)
    approved = read_approval(str(plan))
    assert Approval.loads(approved.dumps()) == approved
    plan.write_text(plan.read_text().replace("## Checks", "### Step 3: More\n\nMore.\n\n## Checks"))
    changed = read_approval(str(plan))
    assert Approval.loads(changed.dumps()) == changed
    data = changed.as_json()
    assert data["change"]["added"] == [3] and data["approved"] is False


def test_compare_plans_and_review_record_conventions() -> None:
    from plangate.plan import parse_plan

    base = parse_plan(PLAN)
    same = compare_plans(base, base)
    assert same.unchanged and same.kept == (1, 2)
    fewer = parse_plan(PLAN.replace("### Step 2: Document VALUE", "### Step 4: Document VALUE"))
    delta = compare_plans(base, fewer)
    assert (delta.removed, delta.added) == ((2,), (4,))
    assert delta.describe() == "step 4 added; step 2 removed"
    goal = parse_plan(PLAN.replace("equal 2.", "equal two."))
    assert compare_plans(base, goal).describe() == "the goal changed"
    # Lists under #### headings, fenced text ignored, "none" is no question.
    record = read_review_record(
        "### Phase 2 Design\n#### Top risks\n- Too dense.\n```\n### Phase 9 Fake\n```\n"
        "Open questions: none\n"
    )
    assert [(p.title, p.top_risks, p.open_questions) for p in record.phases] == [
        ("Phase 2 Design", ("Too dense.",), ())
    ]


# --- the run keeps it ---------------------------------------------------------------------


def test_a_run_keeps_its_approval_and_require_approval_refuses_before_writing(
    repo: Path, reviewers: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(tmp_path / "state"))
    plan, _ = review(repo, reviewers)
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    try:
        options = RunOptions(plan_path=str(plan), repo=str(repo), require_approval=True)
        run = creation.create(store, options)
        kept = store.approval(run.id)
        assert kept is not None and Approval.loads(kept).approved
        assert store.events(run.id)[0].text == (
            f"Plan approved by the Final Approval Gate {repo}/.plangate/tmp/autoplan/gate.json."
        )
        plan.write_text(plan.read_text().replace("twice", "").replace("is for.", "is for!"))
        with pytest.raises(UnapprovedPlanError):
            creation.create(store, options)
        assert [r.id for r in store.runs()] == [run.id]  # nothing was written
        # Without the requirement (the config default is off), it runs, marked.
        loose = creation.create(store, RunOptions(plan_path=str(plan), repo=str(repo)))
        marked = store.approval(loose.id)
        assert marked is not None and Approval.loads(marked).state == "changed"
        assert store.events(loose.id)[0].text == (
            "Plan not approved (changed): edited after its approval: step 2 edited."
        )
        # The config setting turns the requirement on.
        (tmp_path / "state").mkdir(exist_ok=True)
        (tmp_path / "state" / "config.json").write_text('{"require_approval": true}')
        with pytest.raises(UnapprovedPlanError):
            creation.create(store, RunOptions(plan_path=str(plan), repo=str(repo)))
        assert len(store.runs()) == 2
    finally:
        store.close()


def _older_runs_table(engine: sa.Engine) -> None:
    """The tables as a plangate without the ``approval`` column made them."""
    schema.metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(sa.text("ALTER TABLE runs DROP COLUMN approval"))
        names = {c["name"] for c in sa.inspect(conn).get_columns("runs")}
    assert "approval" not in names


def _keeps_approval_after_upgrade(url: str, repo: Path, plan: Path) -> None:
    store = Store(url)
    try:
        run = creation.create(store, RunOptions(plan_path=str(plan), repo=str(repo)))
        kept = store.approval(run.id)
        assert kept is not None and Approval.loads(kept).approved
        assert store.run(run.id) is not None
    finally:
        store.close()


def test_an_older_sqlite_database_gets_the_approval_column(
    repo: Path, reviewers: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(tmp_path / "state"))
    plan, _ = review(repo, reviewers)
    path = tmp_path / "old.db"
    engine = sa.create_engine(f"sqlite:///{path}")
    _older_runs_table(engine)
    engine.dispose()
    _keeps_approval_after_upgrade(f"sqlite:///{path}", repo, plan)
    with sqlite3.connect(path) as conn:
        assert "approval" in {row[1] for row in conn.execute("PRAGMA table_info(runs)")}


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    try:
        with throwaway_postgres("plangate-approval-pg-") as url:
            yield url
    except PostgresUnavailable as why:
        pytest.skip(str(why))


@pytest.mark.slow
def test_an_older_postgres_database_gets_the_approval_column(
    repo: Path, reviewers: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, postgres_url: str
) -> None:
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(tmp_path / "state"))
    plan, _ = review(repo, reviewers)
    engine = sa.create_engine(schema.sqlalchemy_url(postgres_url))
    _older_runs_table(engine)
    engine.dispose()
    _keeps_approval_after_upgrade(postgres_url, repo, plan)
    engine = sa.create_engine(schema.sqlalchemy_url(postgres_url))
    try:
        names = {c["name"] for c in sa.inspect(engine).get_columns("runs")}
    finally:
        engine.dispose()
    assert "approval" in names


def test_show_says_which_version_was_approved_and_what_later_ones_changed(
    repo: Path, reviewers: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from plangate.commands.show import show_command
    from plangate.plan import parse_plan, render_plan

    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(tmp_path / "state"))
    monkeypatch.delenv("PLANGATE_DATABASE_URL", raising=False)
    plan, _ = review(repo, reviewers)
    store = Store()
    try:
        run = creation.create(store, RunOptions(plan_path=str(plan), repo=str(repo)))
        v1 = store.versions(run.id)[0].plan_text
        step3 = "### Step 3: Fix VALUE\nFiles: `app.py`\nServes: AC1\n\nSet it to 2.\n\n"
        v2 = render_plan(parse_plan(v1.replace("## Checks", step3 + "## Checks")))
        with store.transaction() as conn:
            store.add_version(
                conn,
                run.id,
                "t1/a1",
                accepted=True,
                trigger="check",
                why="A check failed.",
                refusal=None,
                attempts_used=1,
                plan_text=v2,
            )
    finally:
        store.close()
    out = io.StringIO()
    assert show_command(run.id, out=out) == 0
    text = out.getvalue()
    gate = repo / ".plangate" / "tmp" / "autoplan" / "gate.json"
    assert f"Approval: approved by the Final Approval Gate {gate}" in text
    assert "Approved version: 1\n" in text
    assert "Reviewed in: Phase 1 CEO, Phase 3 Eng, Phase 4 Tasks\n" in text
    assert "  1. Should VALUE be configurable later?\n" in text
    assert "  CEO-2: Kept `VALUE` (Either reads fine)\n" in text
    assert "  version 1: The plan the run started with.\n    the approved plan\n" in text
    assert (
        "  version 2: A check failed.\n"
        "    relative to the approved plan: kept steps 1, 2; step 3 added\n"
    ) in text
    out = io.StringIO()
    assert show_command(run.id, as_json=True, out=out) == 0
    data = json.loads(out.getvalue())["approval"]
    assert (data["state"], data["approved_version"]) == ("approved", 1)
    assert [(v["number"], v["approved"]) for v in data["versions"]] == [(1, True), (2, False)]
    assert data["versions"][1]["relative_to_approved"]["added"] == [3]
    assert [t["id"] for t in data["taste"]] == ["CEO-2"]


def test_runs_marks_a_run_whose_plan_is_not_approved(
    repo: Path, reviewers: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from plangate.commands.runs import runs_command

    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(tmp_path / "state"))
    monkeypatch.delenv("PLANGATE_DATABASE_URL", raising=False)
    plan, _ = review(repo, reviewers)
    store = Store()
    try:
        approved = creation.create(store, RunOptions(plan_path=str(plan), repo=str(repo)))
        plan.write_text(plan.read_text().replace("is for.", "is for, briefly."))
        changed = creation.create(store, RunOptions(plan_path=str(plan), repo=str(repo)))
        task = creation.create(store, RunOptions(task="do it", repo=str(repo)))
    finally:
        store.close()
    out = io.StringIO()
    assert runs_command(out=out) == 0
    lines = out.getvalue().splitlines()
    marks = [line.strip() for line in lines if "not approved" in line]
    assert marks == ["plan not approved (changed)"]
    assert lines[lines.index(next(x for x in lines if x.startswith(changed.id))) + 1].strip() == (
        "plan not approved (changed)"
    )
    out = io.StringIO()
    assert runs_command(as_json=True, out=out) == 0
    states = {row["id"]: row["approval"] for row in json.loads(out.getvalue())}
    assert states == {approved.id: "approved", changed.id: "changed", task.id: None}
