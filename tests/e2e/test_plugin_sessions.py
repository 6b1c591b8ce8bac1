"""plangate as a Claude Code plugin, in real sessions.

``plangate setup --plugin`` builds the plugin in a fresh HOME's state root and installs it
with the real ``claude plugin marketplace add`` and ``claude plugin install``; no skill is
copied into ``~/.claude/skills`` and no hook is written to a settings file, so every hook
that fires is the plugin's, and every skill the session loads is ``plangate:<skill>``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from plugin_install import design_before_the_ceo_report, install_plugin, typed_commands

from plangate.gates import markers as mk
from plangate.harness.autoplan import AutoplanProject, Player, decisions
from plangate.harness.claude import ClaudeEnv, ClaudeResult
from plangate.harness.standin import StandIn, tool_use
from testkit.recorded import tool_calls, tool_results

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

MakeEnv = Callable[[StandIn], ClaudeEnv]
MakeProject = Callable[..., tuple[AutoplanProject, StandIn]]
RANKED_HEREDOC = """cat >> {plan} <<'EOF'

## Top risks

1. Payment retries can double-charge when the provider times out.
2. The orders schema change has no way back.
EOF"""


@pytest.fixture
def plugin_project(make_env: MakeEnv, claude_bin: Path) -> Iterator[MakeProject]:
    made: list[StandIn] = []

    def make(player: Any, *setup_args: str) -> tuple[AutoplanProject, StandIn]:
        model = StandIn(player)
        model.__enter__()
        made.append(model)
        project = AutoplanProject(make_env(model))
        install_plugin(project, claude_bin, *setup_args)
        return project, model

    yield make
    for model in made:
        model.__exit__(None, None, None)


def _ok(result: ClaudeResult) -> Path:
    assert result.ok, result.describe()
    assert result.journal_path is not None
    return result.journal_path


def test_the_plugin_guard_denies_an_early_phase_entry(plugin_project: MakeProject) -> None:
    player = Player([])
    autoplan, _ = plugin_project(player)
    player.steps = design_before_the_ceo_report(autoplan, "Phase 2 started.")
    journal = _ok(autoplan.run("/autoplan plan.md", player))
    assert typed_commands(journal) == ["/plangate:autoplan"]  # the plugin's skill loaded
    results = tool_results(journal)
    entries = [
        results[call_id]
        for call_id, tool, tool_input in tool_calls(journal)
        if tool == "Read" and str(tool_input.get("file_path", "")).endswith("design-phase.md")
    ]
    assert len(entries) == 2, entries
    (denied, denial), (refused_again, _) = entries
    assert denied and "(code publication_missing, Claude Code 2.1.332)" in denial
    assert not refused_again
    logged = [(d["decision"], d["code"]) for d in decisions(autoplan.state_root)]
    assert logged == [("allow", None), ("allow", None), ("deny", "publication_missing")] + [
        ("allow", None)
    ]


def test_a_read_of_another_plugins_phase_file_is_foreign(
    plugin_project: MakeProject, tmp_path: Path
) -> None:
    """A phase file of a folder named like plangate's skill but not plangate's is refused."""
    player = Player([])
    autoplan, _ = plugin_project(player)
    other = tmp_path / "other-plugin" / "skills" / "autoplan" / "sections"
    other.mkdir(parents=True)
    (other / "ceo-phase.md").write_text("# not plangate's\n", encoding="utf-8")
    player.steps = [
        autoplan.init(),
        tool_use("Read", file_path=str(other / "ceo-phase.md")),
        "Stopping here.",
    ]
    _ok(autoplan.run("/plangate:autoplan plan.md", player))
    logged = [(d["decision"], d["code"]) for d in decisions(autoplan.state_root)]
    assert logged == [("deny", "foreign_install")]


def test_the_plugin_ceo_review_gate_blocks_then_releases(plugin_project: MakeProject) -> None:
    player = Player([])
    autoplan, model = plugin_project(player, "--ceo-review-gate")
    plan = autoplan.plan
    player.steps = [
        tool_use("Write", file_path=str(plan), content="# Plan\n\nA review without risks.\n"),
        "The review is written.",  # blocked: no ranked top risks
        tool_use("Bash", command=RANKED_HEREDOC.format(plan=plan), description="Add risks"),
        "The top risks are ranked in plan.md.",
    ]
    result = autoplan.run("/plangate:plan-ceo-review plan.md", player, timeout=120)
    journal = _ok(result)
    assert result.result_text == "The top risks are ranked in plan.md."
    assert typed_commands(journal) == ["/plangate:plan-ceo-review"]
    assert result.session_id is not None
    record_path = autoplan.state_root / "skill-gates" / result.session_id / "record.json"
    record = json.loads(record_path.read_text(encoding="utf-8"))
    gate = record["gates"]["ceo_review_gate"]
    (run,) = gate["runs"].values()
    assert run["blocked"] == 1 and run["fired_at"] and run["released_at"]
    assert run["via"] == "command" and run["file"] == str(plan)
    events = [mk.parse(line)[1] for line in record["markers"]]  # type: ignore[index]
    assert events[-3:] == ["fired", "blocked", "released"]
    blocked = next(line for line in record["markers"] if " blocked " in line)
    assert model.saw(blocked), "the block reason must reach the model"


def test_the_gate_holds_a_skill_tool_load_by_the_plugin_name(plugin_project: MakeProject) -> None:
    player = Player([])
    autoplan, _ = plugin_project(player, "--ceo-review-gate")
    plan = autoplan.plan
    player.steps = [
        tool_use("Skill", skill="plangate:plan-ceo-review", args="plan.md"),
        tool_use("Write", file_path=str(plan), content="# Plan\n\nA review without risks.\n"),
        "The review is written.",  # blocked
        tool_use("Bash", command=RANKED_HEREDOC.format(plan=plan), description="Add risks"),
        "The top risks are ranked in plan.md.",
    ]
    tools = ["Skill", "Read", "Bash", "Write"]
    result = autoplan.run("Give plan.md a CEO review.", player, allowed_tools=tools, timeout=120)
    _ok(result)
    assert result.result_text == "The top risks are ranked in plan.md."
    assert result.session_id is not None
    record_path = autoplan.state_root / "skill-gates" / result.session_id / "record.json"
    record = json.loads(record_path.read_text(encoding="utf-8"))
    (run,) = record["gates"]["ceo_review_gate"]["runs"].values()
    assert run["via"] == "skill" and run["blocked"] == 1 and run["released_at"]
