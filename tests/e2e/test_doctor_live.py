"""``plangate doctor --live`` with the real Claude Code CLI, as a user runs it after an upgrade.

A fresh HOME gets plangate as a user sets it up (settings hooks with both gates and the
workflow contracts on, or the plugin); ``plangate doctor --live`` then runs its sessions in a
throwaway HOME carrying that registration. It must pass, leave every file of the user's as it
was, catch a hook command whose interpreter is gone, which Claude Code skips without a word,
and say that what is not registered (a gate switched off, the contracts off) is not proven.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

CHECKS = ("live guard", "live ceo-review gate", "live autoplan gate", "live workflow contract")


class User:
    """A person's machine: a HOME with ``~/.claude`` and ``~/.plangate``, and a project."""

    def __init__(self, root: Path, claude_bin: Path) -> None:
        self.home = root / "home"
        self.project = root / "project"
        self.home.mkdir()
        self.project.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PLANGATE_", "CLAUDE"))}
        env.update(HOME=str(self.home), PLANGATE_CLAUDE_BIN=str(claude_bin))
        env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
        self.env = env

    def plangate(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "plangate", *args],
            cwd=self.project,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )

    def fingerprint(self) -> dict[str, str]:
        """Every file under HOME and the project, with a digest of its bytes."""
        found = {}
        for top in (self.home, self.project):
            for path in sorted(top.rglob("*")):
                if path.is_file() and not path.is_symlink():
                    found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
        return found


def _lines(output: str) -> dict[str, str]:
    """The live check lines by name: ``status name  detail``."""
    found = {}
    for line in output.splitlines():
        for name in CHECKS:
            if line[8:].startswith(name + " "):
                found[name] = line
    return found


def test_live_proves_the_settings_hooks_and_writes_nothing_of_the_users(
    tmp_path: Path, claude_bin: Path
) -> None:
    user = User(tmp_path, claude_bin)
    assert user.plangate("config", "set", "workflow_contracts", "on").returncode == 0
    setup = user.plangate("setup", "--ceo-review-gate", "--autoplan-gate")
    assert setup.returncode == 0, setup.stderr
    before = user.fingerprint()
    done = user.plangate("doctor", "--live")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = _lines(done.stdout)
    assert set(lines) == set(CHECKS), done.stdout
    for name, line in lines.items():
        assert line.startswith("ok "), line
        assert "(Claude Code 2.1.332)" in line and "settings hooks in " in line, name
    assert "publication_missing" in lines["live guard"]
    assert "contract_phase_order" in lines["live workflow contract"]
    assert done.stdout.rstrip().endswith("live: every check held")
    assert user.fingerprint() == before


def test_live_catches_a_hook_whose_interpreter_is_missing(tmp_path: Path, claude_bin: Path) -> None:
    user = User(tmp_path, claude_bin)
    assert user.plangate("config", "set", "workflow_contracts", "on").returncode == 0
    assert user.plangate("setup", "--ceo-review-gate").returncode == 0
    settings = user.home / ".claude" / "settings.json"
    data = json.loads(settings.read_text(encoding="utf-8"))
    for groups in data["hooks"].values():
        for group in groups:
            for handler in group["hooks"]:
                handler["command"] = handler["command"].replace(
                    json.dumps(sys.executable), '"/nonexistent/python3"'
                )
    assert "/nonexistent/python3" in json.dumps(data)
    settings.write_text(json.dumps(data, indent=2), encoding="utf-8")
    done = user.plangate("doctor", "--live")
    assert done.returncode == 1, done.stdout + done.stderr
    lines = _lines(done.stdout)
    assert lines["live guard"].startswith("problem ")
    assert "the guard decided nothing: its PreToolUse hook did not run" in lines["live guard"]
    assert "-> run `plangate setup` again" in lines["live guard"]
    assert "the gate never fired" in lines["live ceo-review gate"]
    assert lines["live autoplan gate"].startswith("skip ")  # its switch is off
    contract = lines["live workflow contract"]
    assert contract.startswith("problem ") and "its PreToolUse hook did not run" in contract
    assert "live: 3 problem(s)" in done.stdout


def test_live_proves_the_plugin(tmp_path: Path, claude_bin: Path) -> None:
    user = User(tmp_path, claude_bin)
    assert user.plangate("config", "set", "workflow_contracts", "off").returncode == 0
    setup = user.plangate("setup", "--plugin", "--ceo-review-gate")
    assert setup.returncode == 0, setup.stdout + setup.stderr
    before = user.fingerprint()
    done = user.plangate("doctor", "--live")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = _lines(done.stdout)
    plugin = user.home / ".plangate" / "claude-plugin" / "plangate"
    for name in ("live guard", "live ceo-review gate"):
        assert lines[name].startswith("ok ") and f"the plugin at {plugin}" in lines[name]
    assert lines["live autoplan gate"].startswith("skip ")
    contract = lines["live workflow contract"]
    assert contract.startswith("skip ")
    assert "not proven: the workflow contract hooks are not registered" in contract
    assert "plangate config set workflow_contracts on, then plangate setup --plugin" in contract
    assert user.fingerprint() == before


def test_live_and_json_together_is_bad_usage(tmp_path: Path, claude_bin: Path) -> None:
    done = User(tmp_path, claude_bin).plangate("doctor", "--live", "--json")
    assert done.returncode == 2
    assert "give --live or --json, not both" in done.stderr
