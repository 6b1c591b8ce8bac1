"""/autoplan end to end: the installed skill, our commands and the guard in real sessions.

`plangate setup` installs the skill in a fresh HOME; the real Claude Code CLI runs
`/autoplan plan.md`; the stand-in plays the model through scope, every applicable phase
(each with its reviewer subagent), publication and the Final Approval Gate. Every
phase entry passes the real guard.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest

from plangate.harness.autoplan import (
    AutoplanProject,
    Player,
    Step,
    decisions,
)
from plangate.harness.claude import ClaudeEnv
from plangate.harness.standin import StandIn, text
from testkit.recorded import tool_calls, tool_results

pytestmark = pytest.mark.e2e

MakeEnv = Callable[[StandIn], ClaudeEnv]
CEO_ONLY_END = "PLANGATE_RESULT: skill=autoplan status=reviewed"


def report(number: str) -> str:
    return (
        f"Phase {number} complete\n\nThe reviewer's findings are merged and every decision is "
        "recorded with its reason in the review record."
    )


def phase(autoplan: AutoplanProject, name: str, number: str) -> list[Step]:
    return [
        autoplan.read_driver(name),
        autoplan.checkpoint(name),
        autoplan.dispatch(name),
        autoplan.prepare_close(name),
        autoplan.read_close(name),
        autoplan.publish(name, report(number)),
    ]


@pytest.fixture
def autoplan(make_env: MakeEnv) -> Iterator[tuple[AutoplanProject, Player]]:
    player = Player([])
    with StandIn(player) as model:
        project = AutoplanProject(make_env(model))
        project.setup()
        yield project, player


def test_full_pipeline_through_the_final_approval_gate(
    autoplan: tuple[AutoplanProject, Player],
) -> None:
    project, player = autoplan
    player.steps = [
        project.init(),
        *phase(project, "ceo", "1"),
        *phase(project, "design", "2"),  # the plan has a user interface: Design applies
        *phase(project, "eng", "3"),  # not developer-facing: no DX phase
        project.read_driver("tasks"),
        project.bash(project.plangate, "gate", "render", str(project.restore)),
        "The plan is reviewed. Final Approval Gate: approve, or tell me what to change.",
    ]
    result = project.run("/autoplan plan.md", player)
    assert result.ok, result.describe()
    assert result.journal_path is not None
    # The skill the model was given is the installed one, with this installation's paths.
    first = player.requests[0]
    skill_text = json.dumps(first.body)
    assert "Phase 0: scope" in skill_text
    assert project.plangate in skill_text and "{{PLANGATE}}" not in skill_text

    results = tool_results(result.journal_path)
    calls = tool_calls(result.journal_path)
    failed = [(name, results[i][1][:200]) for i, name, _ in calls if results.get(i, (False,))[0]]
    assert failed == []
    init = json.loads(results[calls[0][0]][1])
    assert init["scope"]["design"] is True and init["scope"]["dx"] is False
    reviewers = [i for i, name, _ in calls if name == "Agent"]
    assert len(reviewers) == 3

    gate = json.loads((project.restore.parent / "gate.json").read_text())
    assert gate["status"] == "awaiting-approval"
    assert [p["phase"] for p in gate["phases"]] == ["ceo", "design", "eng"]
    logged = decisions(project.state_root)
    guarded = [(d["decision"], d["code"]) for d in logged]
    # ceo, design and eng each: driver Read and reviewer dispatch; then the tasks entry.
    assert guarded == [("allow", None)] * 7
    # The hooks went on from the journal index an earlier hook run saved (the suite sets its
    # size threshold to 0, tests/conftest.py).
    assert (project.state_root / "journal-index" / f"{result.journal_path.stem}.index").is_file()
    assert "plangate/tmp" in (project.project / ".git" / "info" / "exclude").read_text()


def test_ceo_only_runs_the_ceo_phase_and_ends_with_the_result_line(
    autoplan: tuple[AutoplanProject, Player],
) -> None:
    project, player = autoplan
    player.steps = [
        project.init(),
        *phase(project, "ceo", "1"),
        [text(f"CEO review done; findings are in the plan.\n{CEO_ONLY_END}")],
    ]
    result = project.run("/autoplan plan.md --ceo-only", player)
    assert result.ok, result.describe()
    assert result.result_text is not None
    assert result.result_text.splitlines()[-1] == CEO_ONLY_END
    assert "--ceo-only" in json.dumps(player.requests[0].body)
    logged = [(d["decision"], d["code"]) for d in decisions(project.state_root)]
    assert logged == [("allow", None), ("allow", None)]


def test_setup_twice_is_byte_identical_and_uninstall_restores(
    autoplan: tuple[AutoplanProject, Player],
) -> None:
    project, _ = autoplan
    settings = project.env.home / ".claude" / "settings.json"
    # Start again from a settings file of the user's own, with another tool's hook.
    project.setup("--uninstall")
    original = (
        json.dumps(
            {
                "model": "opus",
                "hooks": {
                    "PreToolUse": [
                        {
                            "matcher": "Bash",
                            "hooks": [{"type": "command", "command": "/usr/local/bin/other-tool"}],
                        }
                    ]
                },
            },
            indent=4,
        )
        + "\n"
    )
    settings.write_text(original)
    project.setup()
    once = settings.read_bytes()
    assert b"plangate.hooks.pre_tool_use" in once and b"other-tool" in once
    second = project.setup()
    assert settings.read_bytes() == once
    assert "unchanged" in second
    project.setup("--uninstall")
    assert settings.read_text() == original
    assert not (project.env.home / ".claude" / "skills" / "autoplan").exists()
