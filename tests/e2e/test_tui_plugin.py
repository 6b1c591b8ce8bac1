"""plangate installed as a Claude Code plugin, in the interactive terminal UI (tmux).

``plangate setup --plugin`` installs the plugin in a fresh HOME through the real ``claude
plugin`` commands (no ``~/.claude/skills``, no settings hooks), then the interactive CLI runs
in a private tmux server (:mod:`tui`) against the stand-in model. The skill is typed at the
prompt as a person would; the model enters the Design phase before the CEO report is
published, and the plugin's guard must refuse that entry (``publication_missing``) under the
namespaced skill ``plangate:autoplan``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from plugin_install import design_before_the_ceo_report, install_plugin, typed_commands
from tui import Tui, tmux_binary

from plangate.harness.autoplan import AutoplanProject, Player, decisions
from plangate.harness.claude import ClaudeEnv
from plangate.harness.standin import StandIn
from testkit.recorded import tool_calls, tool_results

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

MakeEnv = Callable[[StandIn], ClaudeEnv]
ARGS = ("--permission-mode", "default", "--allowedTools", "Read,Bash,Agent,Edit,Write")
DONE = "Phase 2 started."


@pytest.fixture
def plugin_tui(
    make_env: MakeEnv, claude_bin: Path
) -> Iterator[Callable[[Player], tuple[AutoplanProject, Tui]]]:
    """Makes a stand-in, a project with the plugin installed, and the CLI started in tmux;
    all ended afterwards, a failing test included."""
    tmux_binary()  # no tmux: fail here (never skip), before anything is started
    models: list[StandIn] = []
    tuis: list[Tui] = []

    def make(player: Player) -> tuple[AutoplanProject, Tui]:
        model = StandIn(player)
        models.append(model)
        model.start()
        project = AutoplanProject(make_env(model))
        install_plugin(project, claude_bin)
        tui = Tui(project.env, extra_env={"PLANGATE_STATE_ROOT": str(project.state_root)})
        tuis.append(tui)
        tui.start(*ARGS)
        return project, tui

    yield make
    for tui in tuis:
        tui.close()
    for model in models:
        model.stop()


def _design_reads(journal: Path) -> list[tuple[bool, str]]:
    """The results (is_error, text) of the Reads of the Design driver, in order."""
    results = tool_results(journal)
    return [
        results[call_id]
        for call_id, tool, tool_input in tool_calls(journal)
        if tool == "Read"
        and str(tool_input.get("file_path", "")).endswith("design-phase.md")
        and call_id in results
    ]


@pytest.mark.parametrize("typed", ["/autoplan plan.md", "/plangate:autoplan plan.md"])
def test_the_plugin_guard_denies_design_before_the_ceo_report_in_the_tui(
    plugin_tui: Callable[[Player], tuple[AutoplanProject, Tui]], typed: str
) -> None:
    """The skill typed at the interactive prompt (bare or namespaced); the model runs Phase 1
    up to its close packet, then Reads the Design driver before publishing: denied with
    ``publication_missing``; after the publication the same Read is allowed."""
    player = Player([])
    autoplan, tui = plugin_tui(player)
    player.steps = design_before_the_ceo_report(autoplan, DONE)
    tui.type(typed)
    tui.wait_for(DONE, 60)
    tui.wait_idle()
    assert not player.steps, f"steps the model never played: {player.steps}"

    # The CLI appends to its journal asynchronously: wait for both Reads' results.
    journal = tui.wait_journal(lambda _records: len(_design_reads(tui.journal())) == 2)
    assert typed_commands(journal) == ["/plangate:autoplan"], "the plugin's skill did not load"
    (denied, denial), (refused_again, _) = _design_reads(journal)
    assert denied and "(code publication_missing, Claude Code 2.1.332)" in denial, denial
    assert not refused_again
    logged = [(d["decision"], d["code"]) for d in decisions(autoplan.state_root)]
    assert logged == [
        ("allow", None),
        ("allow", None),
        ("deny", "publication_missing"),
        ("allow", None),
    ]
