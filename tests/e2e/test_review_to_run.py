"""From review to run, end to end with the real Claude Code CLI (the stand-in plays the model):
``/autoplan plan.md`` through every applicable phase to the Final Approval Gate, then
``plangate run plan.md --require-approval`` carries the approved plan out (a check fails,
version 2 is written and passes); ``plangate show`` and the viewer report the approval and
the versions. An edit after approval is refused by ``--require-approval``
(docs/review-to-run.md).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from plangate.commands.run import EXIT_DONE, EXIT_UNAPPROVED
from plangate.harness.autoplan import AutoplanProject, Player, Step, decisions
from plangate.harness.claude import ClaudeEnv
from plangate.harness.run_player import RunPlayer, Turn
from plangate.harness.standin import ModelRequest, Reply, StandIn, text, tool_use
from plangate.plan import parse_plan, render_plan
from plangate.runs.approval import read_approval
from plangate.runs.store import Store
from testkit.git import git
from tests.web import serve

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(420)]

COMMAND_TIMEOUT = 180

TEST_APP = "import app\n\n\ndef test_value_is_two():\n    assert app.VALUE == 2, app.VALUE\n"
CHECK = f"{sys.executable} -B -m pytest -q -p no:cacheprovider test_app.py"

PLAN = f"""# Plan: Make the value test pass

## Goal

`test_app.py` fails: `app.VALUE` is 1 and must be 2.

Scope: none

## Implementation plan

### Step 1: Set VALUE
Files: `app.py`
Serves: AC1

Change `VALUE` in `app.py`.

## Checks

- AC1: `{CHECK}` (timeout 120s)

## Acceptance criteria

- AC1: `test_app.py` passes: `app.VALUE` is 2.

## Review record
"""

RECORD = """
### Phase 1 CEO
| id | finding | source | severity | decision | change to the plan | reason |
|---|---|---|---|---|---|---|
| CEO-1 | The fix bends the test | both | High | accepted | AC1 runs the test | it is the spec |

Top risks:
1. Other code relies on the old value.

### Phase 3 Eng
| id | finding | source | severity | decision | change to the plan | reason |
|---|---|---|---|---|---|---|
| ENG-1 | One step or two | reviewer | Low | taste | kept one step | one line changes |
| ENG-2 | Make VALUE configurable | reviewer | Medium | deferred | none | the owner decides |

Top risks:
1. The test imports app at module level.

### Phase 4 Tasks
Steps: 1.

Open questions for the user:
1. Should VALUE come from configuration later?
"""

STEP_2 = """### Step 2: Fix VALUE
Files: `app.py`
Serves: AC1

Set `VALUE = 2` in `app.py`; the failing test says what it is now.

"""


def edit(old: str, new: str) -> Turn:
    return [tool_use("Edit", file_path="app.py", old_string=old, new_string=new)]


class Switch:
    """The model: the /autoplan player first, then the run's player."""

    def __init__(self, player: Player | RunPlayer) -> None:
        self.player = player

    def respond(self, request: ModelRequest) -> Reply:
        return self.player.respond(request)


@dataclass
class Bench:
    root: Path
    repo: Path
    state: Path
    model: StandIn
    switch: Switch
    review: AutoplanProject
    run_env: dict[str, str]

    @property
    def plan(self) -> Path:
        return self.review.plan

    def plangate(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "plangate", *args],
            cwd=self.root,
            env=self.run_env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
        )

    def autoplan(self) -> dict[str, Any]:
        """``/autoplan plan.md`` in the real CLI, every phase to the gate; the gate."""
        project = self.review
        player = Player(
            [
                project.init(),
                *phase(project, "ceo", "1"),
                *phase(project, "eng", "3"),  # Scope: none: no Design, no DX
                project.read_driver("tasks"),
                tool_use("Read", file_path=str(self.plan)),
                tool_use(
                    "Edit",
                    file_path=str(self.plan),
                    old_string="## Review record\n",
                    new_string="## Review record\n" + RECORD,
                ),
                project.bash(project.plangate, "gate", "render", str(project.restore)),
                "Final Approval Gate: 1 step, check AC1. Approve the plan, or tell me what "
                "to change.",
            ]
        )
        self.switch.player = player
        result = project.run("/autoplan plan.md", player)
        assert result.ok, result.describe()
        assert player.steps == [], "the session ended before the gate"
        guarded = [(d["decision"], d["code"]) for d in decisions(project.state_root)]
        # ceo and eng: driver Read and reviewer dispatch each; then the tasks entry.
        assert guarded == [("allow", None)] * 5
        gate: dict[str, Any] = json.loads((project.restore.parent / "gate.json").read_text())
        return gate


def report(number: str) -> str:
    return (
        f"Phase {number} complete\n\nThe reviewer's findings are merged; every decision is "
        "recorded with its reason in the review record."
    )


def phase(project: AutoplanProject, name: str, number: str) -> list[Step]:
    return [
        project.read_driver(name),
        project.checkpoint(name),
        project.dispatch(name),
        project.prepare_close(name),
        project.read_close(name),
        project.publish(name, report(number)),
    ]


@pytest.fixture
def bench(tmp_path: Path, claude_bin: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Bench]:
    state = tmp_path / "state"
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(state))
    monkeypatch.delenv("PLANGATE_DATABASE_URL", raising=False)
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "app.py").write_text("VALUE = 1\n")
    (repo / "test_app.py").write_text(TEST_APP)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")
    switch = Switch(Player([]))
    with StandIn(switch) as model:
        review_env = ClaudeEnv.create(tmp_path / "cc", model, project_dir=repo, binary=claude_bin)
        project = AutoplanProject(review_env)
        project.plan.write_text(PLAN, encoding="utf-8")  # the test fails before the plan runs
        project.setup()
        run_cc = ClaudeEnv.create(tmp_path / "cc-run", model, project_dir=repo, binary=claude_bin)
        run_env = run_cc.environ(
            {"PLANGATE_STATE_ROOT": str(state), "PLANGATE_CLAUDE_BIN": str(claude_bin)}
        )
        run_env.pop("PLANGATE_DATABASE_URL", None)
        yield Bench(tmp_path, repo, state, model, switch, project, run_env)
        assert model.errors == []


def test_the_approved_plan_is_carried_out_and_shown_with_its_review(bench: Bench) -> None:
    failing = subprocess.run(
        CHECK.split(), cwd=bench.repo, capture_output=True, text=True, timeout=120
    )
    assert failing.returncode == 1, failing.stdout  # the repository's test fails at first

    gate = bench.autoplan()
    approved = bench.plan.read_bytes()
    assert gate["approvedPlan"]["sha256"] == hashlib.sha256(approved).hexdigest()
    assert [p["phase"] for p in gate["phases"]] == ["ceo", "eng"]
    approval = read_approval(str(bench.plan))
    assert approval.state == "approved", approval.reason
    assert [d.id for d in approval.review.taste] == ["ENG-1"]

    # The run: version 1 is the approved plan; its check fails; the planner writes version 2.
    v1 = render_plan(parse_plan(approved.decode()))
    v2 = v1.replace("## Checks", STEP_2 + "## Checks")
    player = RunPlayer(
        {
            "v1 s1": [[edit("VALUE = 1", "VALUE = 3"), [text("Set VALUE to 3.")]]],
            "plan v2": [[[text(f"Version 2.\n\n```plan\n{v2}```\n")]]],
            "v2 s2": [[edit("VALUE = 3", "VALUE = 2"), [text("Set VALUE to 2.")]]],
        }
    )
    bench.switch.player = player
    started = time.monotonic()
    ran = bench.plangate("run", str(bench.plan), "--repo", str(bench.repo), "--require-approval")
    seconds = time.monotonic() - started
    assert ran.returncode == EXIT_DONE, ran.stdout + ran.stderr
    assert player.keys == ["v1 s1", "plan v2", "v2 s2"] and player.unexpected == []
    run_id = ran.stdout.splitlines()[0].split()[1].rstrip(":")
    assert f"Plan approved by the Final Approval Gate {gate['gatePath']}." in ran.stdout
    assert "Plan changed to version 2: A check failed." in ran.stdout
    print(f"plangate run took {seconds:.1f}s")

    shown = bench.plangate("show", run_id, "--json")
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert (data["state"], data["version"]) == ("done", 2)
    record = data["approval"]
    assert (record["state"], record["approved"], record["approved_version"]) == (
        "approved",
        True,
        1,
    )
    assert record["gate"]["path"] == gate["gatePath"]
    gate_bytes = Path(gate["gatePath"]).read_bytes()
    assert record["gate"]["sha256"] == hashlib.sha256(gate_bytes).hexdigest()
    assert record["plan"]["sha256"] == gate["approvedPlan"]["sha256"]
    assert record["gate"]["phases"] == ["ceo", "eng"]
    assert [p["title"] for p in record["review"]] == ["Phase 1 CEO", "Phase 3 Eng", "Phase 4 Tasks"]
    assert record["open_questions"] == [
        "Should VALUE come from configuration later?",
        "ENG-2: Make VALUE configurable (deferred)",
    ]
    assert [t["id"] for t in record["taste"]] == ["ENG-1"]
    notes = {v["number"]: v for v in record["versions"]}
    assert notes[1]["approved"] is True and notes[1]["relative_to_approved"] is None
    assert notes[2]["approved"] is False
    assert notes[2]["relative_to_approved"]["kept"] == [1]
    assert notes[2]["relative_to_approved"]["added"] == [2]

    listed = bench.plangate("runs", "--json")
    assert [(r["id"], r["approval"]) for r in json.loads(listed.stdout)] == [(run_id, "approved")]

    text_out = bench.plangate("show", run_id)
    assert text_out.returncode == 0, text_out.stderr
    assert f"Approval: approved by the Final Approval Gate {gate['gatePath']}" in text_out.stdout
    assert "Approved version: 1\n" in text_out.stdout
    assert "    relative to the approved plan: kept steps 1; step 2 added\n" in text_out.stdout
    assert "  1. Should VALUE come from configuration later?\n" in text_out.stdout
    assert "  ENG-1: kept one step (one line changes)\n" in text_out.stdout

    # The viewer, over real HTTP: the approval in the header, the review in the Plan panel.
    server = serve.start(bench.root / "viewer", f"sqlite:///{bench.state / 'runs.db'}")
    try:
        status, page = serve.get(server, f"/runs/{run_id}")
        _, version_1 = serve.get(server, f"/runs/{run_id}/versions/1")
        twin = serve.get_json(server, f"/runs/{run_id}.json")
    finally:
        serve.stop(server)
    assert status == 200
    header = page.split('id="run-badges"', 1)[1].split("</div>", 1)[0]
    assert 'class="badge approval-badge approval-approved"' in header
    assert ">Plan approved</span>" in header
    panel = page.split('id="plan-review"', 1)[1]
    assert "Approved by its Final Approval Gate; version 1 is the approved plan." in panel
    assert "Version 2: relative to the approved plan, steps kept: 1; step 2 added." in panel
    assert "<li>Should VALUE come from configuration later?</li>" in panel
    assert '<span class="crit-id">ENG-1</span> kept one step' in panel
    # The review record is collapsed: a <details> without `open`, decisions and risks in it.
    details = panel.split('<details class="review-record" id="review-record">', 1)[1]
    details = details.split("</details>", 1)[0]
    assert "<summary>Review record: Phase 1 CEO, Phase 3 Eng, Phase 4 Tasks</summary>" in details
    assert "<td>CEO-1</td><td>high</td><td>accepted</td>" in details
    assert "<li>The test imports app at module level.</li>" in details
    assert " open" not in page.split('id="review-record"', 1)[0].rsplit("<details", 1)[1]
    assert "Version 1: the approved plan." in version_1
    assert twin["approval"]["state"] == "approved" and twin["approval"]["approved_version"] == 1

    # The change is on the run's branch and the test passes there.
    worktree = Path(data["worktree"])
    assert (worktree / "app.py").read_text() == "VALUE = 2\n"
    assert [c["passed"] for c in data["checks"]] == [False, True]


def test_an_edit_after_approval_is_refused_by_require_approval(bench: Bench) -> None:
    bench.autoplan()
    assert read_approval(str(bench.plan)).approved
    bench.plan.write_text(
        bench.plan.read_text().replace("Change `VALUE` in `app.py`.", "Change `VALUE` to 5.")
    )
    player = RunPlayer({})
    bench.switch.player = player
    refused = bench.plangate(
        "run", str(bench.plan), "--repo", str(bench.repo), "--require-approval"
    )
    assert refused.returncode == EXIT_UNAPPROVED, refused.stdout + refused.stderr
    assert refused.stdout == ""
    lines = refused.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(
        f"plangate: --require-approval: the plan {bench.plan} is not approved (changed: edited "
        "after its approval: step 1 edited)"
    )
    assert f"`/autoplan {bench.plan}`" in lines[0] and "without --require-approval" in lines[0]
    # Nothing was written: no run, no worktree, no agent session.
    with contextlib.closing(Store()) as store:
        assert store.runs() == []
    assert not (bench.state / "runs").exists() or list((bench.state / "runs").iterdir()) == []
    assert player.sessions == []
