"""plangate installed as a Claude Code plugin in a test's fresh HOME, as the only registration.

Shared by the ``claude -p`` plugin sessions and the terminal-UI ones.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from plangate.harness.autoplan import AutoplanProject, Step
from testkit import recorded


def claude_json(project: AutoplanProject, claude_bin: Path, *args: str) -> Any:
    """``claude ARGS`` in the project's environment; its JSON output (it must succeed)."""
    done = subprocess.run(
        [str(claude_bin), *args],
        env=project.environ(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def install_plugin(project: AutoplanProject, claude_bin: Path, *setup_args: str) -> Path:
    """``plangate setup --plugin`` through the real ``claude plugin`` commands; checks that
    the plugin is the only registration (no skills folder, no settings hooks) and that Claude
    Code runs it from the folder plangate built. Points ``project.skill`` at the plugin's
    autoplan skill; returns the plugin folder."""
    done = subprocess.run(
        [project.plangate, "setup", "--plugin", *setup_args],
        env={**project.environ(), "PLANGATE_CLAUDE_BIN": str(claude_bin)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ran `claude plugin install plangate@plangate --json`" in done.stdout
    plugin = project.state_root / "claude-plugin" / "plangate"
    project.skill = plugin / "skills" / "autoplan"
    assert not (project.env.home / ".claude" / "skills").exists()
    user_settings = json.loads((project.env.home / ".claude" / "settings.json").read_text())
    assert "hooks" not in user_settings
    assert user_settings["enabledPlugins"] == {"plangate@plangate": True}
    listed = claude_json(project, claude_bin, "plugin", "list", "--json")
    (ours,) = [entry for entry in listed if entry["id"] == "plangate@plangate"]
    assert ours["enabled"] and ours["readFromFolder"] == str(plugin)
    return plugin


def typed_commands(journal: Path) -> list[str]:
    """The slash commands the journal records as typed, in order (names only)."""
    return [name for name, _args in recorded.typed_commands(journal)]


def design_before_the_ceo_report(project: AutoplanProject, done: str) -> list[Step]:
    """The model's script: Phase 1 up to its close packet, then the Design driver Read before
    the CEO report is published (the guard must deny it), the publication, the same Read
    again (allowed), and ``done``."""
    return [
        project.init(),
        project.read_driver("ceo"),
        project.checkpoint("ceo"),
        project.dispatch("ceo"),
        project.prepare_close("ceo"),
        project.read_close("ceo"),
        project.read_driver("design"),  # denied: Phase 1's report is not published
        project.publish("ceo"),
        project.read_driver("design"),
        done,
    ]
