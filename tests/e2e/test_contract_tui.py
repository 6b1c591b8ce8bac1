"""A rewind on a later prompt, in the real terminal UI (tmux), on cc-sdd 3.0.2: the person
approves the requirements, then rewinds that prompt and asks something else. The approval
is now on a dead branch of the journal, so the model's Skill call for the design phase is
refused (``contract_approval``); the live chain decides, not the file's bytes."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_contract_sessions import FEATURE, REQUIREMENTS, cc_sdd, spec_json
from tui import RESTORE, Tui, TuiPlayer, tmux_binary

from plangate.commands.settings import settings_object
from plangate.harness.claude import ClaudeEnv
from plangate.harness.standin import StandIn, tool_use

__all__ = ["cc_sdd"]  # the session fixture, shared with the -p tests
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]


@pytest.fixture
def tui(tmp_path: Path, claude_bin: Path, cc_sdd: Path) -> Iterator[tuple[Tui, TuiPlayer, Path]]:
    tmux_binary()
    player = TuiPlayer()
    with StandIn(player) as model:
        env = ClaudeEnv.create(tmp_path / "cc", model, binary=claude_bin)
        shutil.copytree(cc_sdd, env.project_dir, dirs_exist_ok=True)
        spec = env.project_dir / ".kiro" / "specs" / FEATURE
        spec.mkdir(parents=True)
        (spec / "spec.json").write_text(spec_json())
        state = tmp_path / "state"
        settings = env.write_settings(settings_object(False, False, contracts=True))
        terminal = Tui(env, extra_env={"PLANGATE_STATE_ROOT": str(state)})
        try:
            terminal.start(
                "--permission-mode",
                "default",
                "--allowedTools",
                "Read,Write,Edit,Bash,Skill",
                "--settings",
                str(settings),
            )
            yield terminal, player, state
        finally:
            terminal.close()


@pytest.mark.xfail(
    strict=False,
    reason="open (issue 25): in 1 of 3 full runs the rewound approval still counted "
    "(('entry', 'design', None)); the cause, the rewind keystroke or the contracts' fold, is "
    "not found yet",
)
def test_an_approval_rewound_away_does_not_count(tui: tuple[Tui, TuiPlayer, Path]) -> None:
    terminal, player, state = tui
    requirements = terminal.env.project_dir / ".kiro" / "specs" / FEATURE / "requirements.md"
    player.steps += [
        tool_use("Write", file_path=str(requirements), content=REQUIREMENTS),
        "Requirements written.",
    ]
    terminal.type(f"/kiro-spec-requirements {FEATURE}")
    terminal.wait_for("Requirements written.", 60)
    terminal.wait_idle()
    player.steps.append("Noted, thank you.")
    terminal.type("approve requirements")
    terminal.wait_for("Noted, thank you.", 30)
    terminal.wait_idle()
    terminal.rewind("approve requirements", RESTORE)
    terminal.clear_input()
    player.steps += [
        tool_use("Skill", skill="kiro-spec-design", args=FEATURE),
        "Waiting for your approval.",
    ]
    terminal.type("what does requirement 1 mean?")
    terminal.wait_for("Waiting for your approval.", 60)
    terminal.wait_idle()
    log = [
        json.loads(line)
        for line in (state / "analytics" / "autoplan-guard.jsonl").read_text().splitlines()
    ]
    entries = [(line.get("event"), line.get("phase"), line["code"]) for line in log]
    assert entries[-1] == ("entry", "design", "contract_approval"), entries
    assert not any(line.get("event") == "approval" for line in log)
