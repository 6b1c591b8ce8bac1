"""``plangate setup``: skills, switches and hook registration, on real files."""

from __future__ import annotations

import io
import json
import os
import random
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plangate import config, hook_registry
from plangate.commands.setup import flag_value
from plangate.errors import ConfigError, UsageError
from plangate.install import settings_file
from plangate.install.setup import setup
from plangate.install.skill_bundle import SKILL_MARKER, bundled_skills_dir

PY = "/opt/py/bin/python3"
ROOT = hook_registry.package_root()


def registered(module: str) -> str:
    """The command setup registers: no `site`, plangate's folder as the one argument."""
    entry = (
        "import gc; gc.disable(); import sys; sys.path.insert(0, sys.argv.pop(1)); "
        f"from {module} import main; from plangate.hook_io.runtime import run_process; "
    )
    return f'"{PY}" -S -c \'{entry}run_process(main)\' "{ROOT}"'


GUARD = registered("plangate.hooks.pre_tool_use")
#: The guard's handlers: one per ``if`` condition, so that other Reads start no process.
GUARD_HANDLERS = [
    {"type": "command", "command": GUARD, "if": condition, "timeout": 25}
    for condition in hook_registry.GUARD_CONDITIONS
]
#: The protected paths' hook, registered in place of the contracts' PreToolUse hook when
#: the contracts are switched off (as here): plangate's files are protected in every session.
PROTECT = registered("plangate.hooks.protect")
PRE_LABEL = "PreToolUse guard (Read|Agent), protection (Write|Edit|MultiEdit|NotebookEdit|Bash)"
PROTECT_GROUP = {
    "matcher": hook_registry.PROTECT_MATCHER,
    "hooks": [{"type": "command", "command": PROTECT, "timeout": 25}],
}
STOP = registered("plangate.hooks.stop")
SUBAGENT_STOP = registered("plangate.hooks.subagent_stop")
REFUSAL = "fix or move it, then run plangate setup again"
#: These tests are about the guard's and the gates' registrations: the workflow contract
#: hooks (on by default) are switched off here; tests/contracts/test_registration.py covers
#: setup with them.
GATES_ONLY = {"PLANGATE_WORKFLOW_CONTRACTS": "off"}
KEPT_CONFIG = (
    "kept ~/state/config.json (plangate's own settings; delete it yourself if you want it gone)"
)


@dataclass
class Env:
    home: Path
    claude: Path
    state: Path
    bundle: Path
    project: Path

    @property
    def settings(self) -> Path:
        return self.claude / "settings.json"

    @property
    def backup(self) -> Path:
        return self.claude / "settings.json.plangate-backup"

    @property
    def skills(self) -> Path:
        return self.claude / "skills"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(tmp_path / "state"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / ".claude"))
    for name in ("PLANGATE_CEO_REVIEW_GATE", "PLANGATE_AUTOPLAN_GATE"):
        monkeypatch.delenv(name, raising=False)
    bundle = tmp_path / "bundle"
    (bundle / "autoplan" / "sections").mkdir(parents=True)
    (bundle / "autoplan" / "SKILL.md").write_text("# autoplan\n")
    (bundle / "autoplan" / "sections" / "ceo-phase.md").write_text("# CEO phase\n")
    (bundle / "plan-ceo-review").mkdir()
    (bundle / "plan-ceo-review" / "SKILL.md").write_text("# plan-ceo-review\n")
    (bundle / "__pycache__").mkdir()  # not a skill
    (bundle / "README.md").write_text("not a skill either\n")
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return Env(tmp_path, tmp_path / ".claude", tmp_path / "state", bundle, project)


def run(
    env: Env,
    *,
    ceo: bool | None = None,
    autoplan: bool | None = None,
    uninstall: bool = False,
    project: bool = False,
    environ: dict[str, str] | None = None,
    skills_source: Path | None = None,
) -> tuple[list[str], list[str]]:
    out, err = io.StringIO(), io.StringIO()
    code = setup(
        project=project,
        uninstall=uninstall,
        ceo_review_gate=ceo,
        autoplan_gate=autoplan,
        out=out,
        err=err,
        skills_source=str(skills_source if skills_source is not None else env.bundle),
        python=PY,
        environ={**GATES_ONLY, **(environ or {})},
    )
    assert code == 0
    return out.getvalue().splitlines(), err.getvalue().splitlines()


def load(path: Path) -> Any:
    return json.loads(path.read_text())


def our_commands(data: dict[str, Any]) -> dict[str, list[str]]:
    """Per event, the distinct commands of plangate's handlers (the guard's ``if`` handlers
    share one command)."""
    found: dict[str, list[str]] = {}
    for event, groups in data.get("hooks", {}).items():
        for group in groups:
            for handler in group.get("hooks", []):
                commands = found.setdefault(event, [])
                if (
                    hook_registry.is_plangate_handler(handler)
                    and handler["command"] not in commands
                ):
                    commands.append(handler["command"])
    return {event: commands for event, commands in found.items() if commands}


OTHER_TOOLS = (
    "{\n"
    '    "model": "opus",\n'
    '    "permissions": {"allow": ["Bash(git *)"], "deny": []},\n'
    '    "hooks": {\n'
    '        "PreToolUse": [\n'
    '            {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint-bash",'
    ' "x-extra": 1}]}\n'
    "        ],\n"
    '        "Stop": [{"hooks": [{"type": "command", "command": "notify-done"}]}],\n'
    '        "Notification": [{"hooks": [{"type": "command", "command": "say hi"}]}]\n'
    "    },\n"
    '    "statusLine": {"type": "command", "command": "echo \u00e9t\u00e9"},\n'
    '    "zzz-unknown": [1, 2.5, null, true]\n'
    "}"
)


# -- the registry ----------------------------------------------------------------------------


def test_hook_settings_for_each_switch_combination() -> None:
    guard = {
        "matcher": "Read|Agent",
        "hooks": GUARD_HANDLERS,
    }
    stop = {"hooks": [{"type": "command", "command": STOP, "timeout": 25}]}
    subagent = {"hooks": [{"type": "command", "command": SUBAGENT_STOP, "timeout": 25}]}
    assert hook_registry.hook_settings(False, False, PY) == {"PreToolUse": [guard, PROTECT_GROUP]}
    assert hook_registry.hook_settings(True, False, PY) == {
        "PreToolUse": [guard, PROTECT_GROUP],
        "Stop": [stop],
        "SubagentStop": [subagent],
    }
    assert hook_registry.hook_settings(False, True, PY) == {
        "PreToolUse": [guard, PROTECT_GROUP],
        "Stop": [stop],
    }
    assert list(hook_registry.hook_settings(True, True, PY)) == [
        "PreToolUse",
        "Stop",
        "SubagentStop",
    ]


def test_hook_command_uses_this_python_by_default() -> None:
    block = hook_registry.hook_settings(False, False)
    command = block["PreToolUse"][0]["hooks"][0]["command"]  # type: ignore[index]
    assert command == hook_registry.hook_command("plangate.hooks.pre_tool_use", sys.executable)
    assert command.startswith(f'"{os.path.abspath(sys.executable)}" -S -c ')


def test_hook_timeout_outlives_the_longest_hook_deadline() -> None:
    from plangate.gates.timing import MAX_DEADLINE_MS
    from plangate.hooks.pre_tool_use import MAX_DEADLINE_MS as GUARD_MAX_DEADLINE_MS

    assert hook_registry.HOOK_TIMEOUT_S == 25 > max(MAX_DEADLINE_MS, GUARD_MAX_DEADLINE_MS) / 1000
    for spec in hook_registry.HOOKS:
        assert spec.timeout == hook_registry.HOOK_TIMEOUT_S


def test_guard_matcher_is_an_exact_name_list() -> None:
    # Claude Code reads letters, digits, _ - space , | as exact names, anything else as regex.
    matcher = hook_registry.BY_EVENT["PreToolUse"].matcher
    assert matcher == "Read|Agent"
    assert all(ch.isalnum() or ch == "|" for ch in matcher)


def test_command_quoting_survives_the_shell(tmp_path: Path) -> None:
    odd = str(tmp_path / 'dir with $HOME and "quotes" and `ticks` \\ back' / "python")
    command = hook_registry.hook_command("plangate.hooks.stop", odd)
    echoed = subprocess.run(
        ["sh", "-c", command.split(" -S -c ")[0].join(["printf %s ", ""])],
        capture_output=True,
        text=True,
        check=True,
    )
    assert echoed.stdout == odd
    assert hook_registry.is_plangate_command(command)


def test_recognises_only_plangate_handlers() -> None:
    assert hook_registry.is_plangate_handler({"type": "command", "command": GUARD})
    assert hook_registry.is_plangate_handler({"command": "/usr/bin/python3 -m plangate.hooks.stop"})
    assert not hook_registry.is_plangate_handler({"type": "command", "command": "plangate-lint"})
    assert not hook_registry.is_plangate_handler({"type": "http", "command": GUARD})
    assert not hook_registry.is_plangate_handler("-m plangate.hooks.stop")


# -- install ---------------------------------------------------------------------------------


def test_flag_value() -> None:
    assert flag_value("--ceo-review-gate", None) is None
    assert flag_value("--ceo-review-gate", "on") is True
    assert flag_value("--ceo-review-gate", "OFF") is False
    with pytest.raises(UsageError) as caught:
        flag_value("--autoplan-gate", "yes")
    assert caught.value.message == "--autoplan-gate takes on or off, not 'yes'"
    assert caught.value.remedy == (
        "write --autoplan-gate, --no-autoplan-gate or --autoplan-gate=on|off"
    )


def test_fresh_install(env: Env) -> None:
    out, err = run(env, ceo=True)
    assert out == [
        "saved ceo_review_gate on in ~/state/config.json",
        "autoplan_gate off (default)",
        "installed skill autoplan in ~/.claude/skills/autoplan",
        "installed skill plan-ceo-review in ~/.claude/skills/plan-ceo-review",
        f"registered {PRE_LABEL} in ~/.claude/settings.json",
        "registered Stop gate (ceo_review_gate) in ~/.claude/settings.json",
        "registered SubagentStop gate (ceo_review_gate) in ~/.claude/settings.json",
    ]
    assert err == []
    assert env.settings.read_text() == (
        json.dumps({"hooks": hook_registry.hook_settings(True, False, PY)}, indent=2) + "\n"
    )
    assert not env.backup.exists()  # there was nothing to back up
    assert sorted(os.listdir(env.claude)) == ["settings.json", "skills"]
    assert load(env.state / "config.json") == {"ceo_review_gate": True}


def test_second_run_is_byte_identical(env: Env) -> None:
    env.claude.mkdir()
    env.settings.write_text(OTHER_TOOLS)
    run(env, ceo=True, autoplan=True)
    first = env.settings.read_bytes()
    backup = env.backup.read_bytes()
    os.utime(env.settings, ns=(1, 1))
    out, _ = run(env)
    assert env.settings.read_bytes() == first
    assert env.settings.stat().st_mtime_ns == 1  # not even rewritten
    assert env.backup.read_bytes() == backup
    assert out == [
        "ceo_review_gate on (from ~/state/config.json)",
        "autoplan_gate on (from ~/state/config.json)",
        "unchanged skill autoplan in ~/.claude/skills/autoplan",
        "unchanged skill plan-ceo-review in ~/.claude/skills/plan-ceo-review",
        f"unchanged {PRE_LABEL} in ~/.claude/settings.json",
        "unchanged Stop gate (ceo_review_gate, autoplan_gate) in ~/.claude/settings.json",
        "unchanged SubagentStop gate (ceo_review_gate) in ~/.claude/settings.json",
    ]


def test_other_tools_hooks_and_unknown_keys_are_preserved(env: Env) -> None:
    env.claude.mkdir()
    env.settings.write_text(OTHER_TOOLS)
    original = json.loads(OTHER_TOOLS)
    run(env, ceo=True)
    data = load(env.settings)
    assert list(data) == list(original)  # key order kept
    assert {key: value for key, value in data.items() if key != "hooks"} == {
        key: value for key, value in original.items() if key != "hooks"
    }
    hooks = data["hooks"]
    assert list(hooks) == ["PreToolUse", "Stop", "Notification", "SubagentStop"]
    assert hooks["PreToolUse"][0] == original["hooks"]["PreToolUse"][0]
    assert hooks["Stop"][0] == original["hooks"]["Stop"][0]
    assert hooks["Notification"] == original["hooks"]["Notification"]
    assert our_commands(data) == {
        "PreToolUse": [GUARD, PROTECT],
        "Stop": [STOP],
        "SubagentStop": [SUBAGENT_STOP],
    }
    # non-ASCII text is written as it is, not escaped
    assert "\u00e9t\u00e9" in env.settings.read_text(encoding="utf-8")
    # removing ours gives back exactly the other tools' content
    stripped = settings_file.merge_hooks(data, {})
    assert stripped == original


def test_replaces_entries_of_an_older_installation_in_place(env: Env) -> None:
    env.claude.mkdir()
    old = {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Read|Task",
                    "hooks": [
                        {"type": "command", "command": "old-py -m plangate.hooks.pre_tool_use"}
                    ],
                },
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint-bash"}]},
                {
                    "matcher": "Write",
                    "hooks": [
                        {"type": "command", "command": "fmt"},
                        {"type": "command", "command": "old-py -m plangate.hooks.pre_tool_use"},
                    ],
                },
            ],
            "PostToolUse": [
                {"hooks": [{"type": "command", "command": "old-py -m plangate.hooks.post"}]}
            ],
            "Stop": [
                {
                    "hooks": [
                        {"type": "command", "command": "py -m plangate.hooks.stop", "timeout": 10}
                    ]
                }
            ],
        }
    }
    env.settings.write_text(json.dumps(old))
    out, _ = run(env, autoplan=True)
    data = load(env.settings)
    assert data["hooks"]["PreToolUse"] == [
        {"matcher": "Read|Agent", "hooks": GUARD_HANDLERS},
        PROTECT_GROUP,
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint-bash"}]},
        {"matcher": "Write", "hooks": [{"type": "command", "command": "fmt"}]},
    ]
    assert "PostToolUse" not in data["hooks"]
    assert data["hooks"]["Stop"] == [
        {"hooks": [{"type": "command", "command": STOP, "timeout": 25}]}
    ]
    # The file already held plangate's handlers: there is no file from before plangate to
    # back up (an older installation's backup, if any, is kept).
    assert out[-3:] == [
        f"updated {PRE_LABEL} in ~/.claude/settings.json",
        "updated Stop gate (autoplan_gate) in ~/.claude/settings.json",
        "removed PostToolUse hook from ~/.claude/settings.json",
    ]


def test_gate_switched_off_removes_its_hooks(env: Env) -> None:
    run(env, ceo=True)
    assert set(our_commands(load(env.settings))) == {"PreToolUse", "Stop", "SubagentStop"}
    out, _ = run(env, ceo=False, autoplan=True)
    assert our_commands(load(env.settings)) == {"PreToolUse": [GUARD, PROTECT], "Stop": [STOP]}
    assert "updated Stop gate (autoplan_gate) in ~/.claude/settings.json" not in out
    assert "unchanged Stop gate (autoplan_gate) in ~/.claude/settings.json" in out
    assert "removed SubagentStop gate from ~/.claude/settings.json" in out
    out, _ = run(env, autoplan=False)
    assert our_commands(load(env.settings)) == {"PreToolUse": [GUARD, PROTECT]}
    assert "removed Stop gate from ~/.claude/settings.json" in out
    assert "hooks" in load(env.settings)


def test_both_gates_share_one_stop_registration(env: Env) -> None:
    run(env, ceo=True, autoplan=True)
    assert our_commands(load(env.settings)) == {
        "PreToolUse": [GUARD, PROTECT],
        "Stop": [STOP],
        "SubagentStop": [SUBAGENT_STOP],
    }


def test_switch_precedence_in_setup(env: Env) -> None:
    # environment, not saved
    out, _ = run(env, environ={"PLANGATE_AUTOPLAN_GATE": "on"})
    assert "autoplan_gate on (from PLANGATE_AUTOPLAN_GATE in the environment, not saved)" in out
    assert our_commands(load(env.settings)) == {"PreToolUse": [GUARD, PROTECT], "Stop": [STOP]}
    assert not (env.state / "config.json").exists()
    # the flag beats the environment, is saved, and the conflict is pointed out
    out, err = run(env, autoplan=False, environ={"PLANGATE_AUTOPLAN_GATE": "on"})
    assert "saved autoplan_gate off in ~/state/config.json" in out
    assert err == [
        "note: PLANGATE_AUTOPLAN_GATE=on in this environment overrides the saved autoplan_gate "
        "wherever it is set"
    ]
    assert our_commands(load(env.settings)) == {"PreToolUse": [GUARD, PROTECT]}
    # config beats the default
    config.set("ceo_review_gate", "on")
    out, _ = run(env)
    assert "ceo_review_gate on (from ~/state/config.json)" in out
    assert "autoplan_gate off (from ~/state/config.json)" in out
    assert set(our_commands(load(env.settings))) == {"PreToolUse", "Stop", "SubagentStop"}
    # the environment beats config
    run(env, environ={"PLANGATE_CEO_REVIEW_GATE": "off"})
    assert our_commands(load(env.settings)) == {"PreToolUse": [GUARD, PROTECT]}
    assert config.get("ceo_review_gate") is True


def test_keeps_the_file_mode(env: Env) -> None:
    env.claude.mkdir()
    env.settings.write_text("{}\n")
    env.settings.chmod(0o640)
    run(env, ceo=True)
    assert stat.S_IMODE(env.settings.stat().st_mode) == 0o640
    assert stat.S_IMODE(env.backup.stat().st_mode) == 0o640


def test_symlinked_settings_stays_a_link(env: Env) -> None:
    dotfiles = env.home / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "claude-settings.json").write_text('{"model": "opus"}\n')
    env.claude.mkdir()
    env.settings.symlink_to(dotfiles / "claude-settings.json")
    run(env)
    assert env.settings.is_symlink()
    assert our_commands(load(dotfiles / "claude-settings.json")) == {"PreToolUse": [GUARD, PROTECT]}
    run(env, uninstall=True)
    assert env.settings.is_symlink()
    assert (dotfiles / "claude-settings.json").read_text() == '{"model": "opus"}\n'


def test_project_settings(env: Env) -> None:
    out, _ = run(env, project=True, ceo=True)
    project_settings = env.project / ".claude" / "settings.json"
    assert our_commands(load(project_settings)) == {
        "PreToolUse": [GUARD, PROTECT],
        "Stop": [STOP],
        "SubagentStop": [SUBAGENT_STOP],
    }
    assert not env.settings.exists()
    assert f"registered {PRE_LABEL} in ~/project/.claude/settings.json" in out
    assert (env.skills / "autoplan" / SKILL_MARKER).is_file()


def test_no_temporary_or_lock_files_left(env: Env) -> None:
    env.claude.mkdir()
    env.settings.write_text(OTHER_TOOLS)
    run(env, ceo=True)
    run(env, ceo=False)
    assert sorted(os.listdir(env.claude)) == [
        "settings.json",
        "settings.json.plangate-backup",
        "skills",
    ]
    assert sorted(os.listdir(env.skills)) == ["autoplan", "plan-ceo-review"]
    assert sorted(os.listdir(env.state)) == ["config.json"]


# -- refusal ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b'{"model": "opus",', "does not parse as JSON"),
        (b'["not", "an", "object"]', "does not hold a JSON object"),
        (b'{"a": 1, "a": 2}', "has the key 'a' twice in one object"),
        (b'{"hooks": []}', 'has a "hooks" entry that is not a JSON object'),
        (b'{"hooks": {"PreToolUse": {}}}', "has a \"hooks\" entry 'PreToolUse' that is not"),
        (b'{"x": NaN}', "does not parse as JSON"),
        (b'\xef\xbb\xbf{"model": "opus"}', "does not parse as JSON"),
        (b'{"model": "\xff"}', "is not UTF-8 text"),
    ],
)
def test_refuses_a_settings_file_it_cannot_parse(env: Env, content: bytes, problem: str) -> None:
    env.claude.mkdir()
    env.settings.write_bytes(content)
    os.utime(env.settings, ns=(5, 5))
    with pytest.raises(ConfigError) as caught:
        run(env, ceo=True)
    assert caught.value.message.startswith(f"~/.claude/settings.json {problem}")
    assert caught.value.remedy == REFUSAL
    assert env.settings.read_bytes() == content
    assert env.settings.stat().st_mtime_ns == 5
    assert sorted(os.listdir(env.claude)) == ["settings.json"]  # no backup, no skills
    assert not env.state.exists()  # the switch was not saved either
    # uninstall refuses too, except where nothing of plangate's can be in the odd part
    if b"PreToolUse" in content:
        run(env, uninstall=True)
    else:
        with pytest.raises(ConfigError):
            run(env, uninstall=True)
    assert env.settings.read_bytes() == content
    assert env.settings.stat().st_mtime_ns == 5


def test_refuses_to_touch_another_skill(env: Env) -> None:
    (env.skills / "autoplan").mkdir(parents=True)
    (env.skills / "autoplan" / "SKILL.md").write_text("someone else's\n")
    with pytest.raises(ConfigError) as caught:
        run(env, ceo=True)
    assert caught.value.message == (
        "~/.claude/skills/autoplan exists and was not installed by plangate; "
        "plangate never touches another skill"
    )
    assert caught.value.remedy == "move it away, then run plangate setup again"
    assert (env.skills / "autoplan" / "SKILL.md").read_text() == "someone else's\n"
    assert not env.settings.exists()
    assert not (env.skills / "plan-ceo-review").exists()
    assert not env.state.exists()


def test_lock_held_by_another_setup(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config, "LOCK_TIMEOUT_S", 0.3)
    env.claude.mkdir()
    lock = config.FileLock(str(env.settings) + ".plangate-lock", message="held", remedy="")
    with lock, pytest.raises(ConfigError) as caught:
        run(env)
    assert caught.value.message == (
        "another plangate setup is changing ~/.claude/settings.json "
        "(lock ~/.claude/settings.json.plangate-lock held for over 0.3 s)"
    )
    assert caught.value.remedy == "wait for it to finish, then run plangate setup again"
    assert not env.settings.exists()


# -- backup ----------------------------------------------------------------------------------


def test_backup_holds_the_file_from_before_plangate(env: Env) -> None:
    """Issue 14: the backup once held plangate's own hooks after a second setup."""
    env.claude.mkdir()
    env.settings.write_text(OTHER_TOOLS)
    out, _ = run(env)
    assert env.backup.read_text() == OTHER_TOOLS
    assert out[-1] == "backed up ~/.claude/settings.json to ~/.claude/settings.json.plangate-backup"
    out, _ = run(env)
    assert not any(line.startswith("backed up") for line in out)
    out, _ = run(env, ceo=True)  # a change, to a file that already holds plangate's hooks
    assert not any(line.startswith("backed up") for line in out)
    assert env.backup.read_text() == OTHER_TOOLS


def test_a_read_only_settings_file_is_refused(env: Env) -> None:
    env.claude.mkdir()
    env.settings.write_text(OTHER_TOOLS)
    env.settings.chmod(0o444)
    with pytest.raises(ConfigError, match="read-only") as raised:
        run(env)
    assert "chmod u+w" in raised.value.remedy
    assert env.settings.read_text() == OTHER_TOOLS and not env.backup.exists()


# -- uninstall -------------------------------------------------------------------------------


def test_uninstall_restores_the_original_bytes(env: Env) -> None:
    env.claude.mkdir()
    env.settings.write_text(OTHER_TOOLS)
    env.settings.chmod(0o600)
    run(env, ceo=True)
    run(env)
    run(env, autoplan=True)
    assert env.settings.read_text() != OTHER_TOOLS
    out, _ = run(env, uninstall=True)
    assert env.settings.read_text() == OTHER_TOOLS
    assert stat.S_IMODE(env.settings.stat().st_mode) == 0o600
    assert out == [
        # each registration in the words setup registered it with (issue 34)
        "removed PreToolUse guard (Read|Agent), protection (Write|Edit|MultiEdit|NotebookEdit"
        "|Bash) from ~/.claude/settings.json",
        "removed Stop gate from ~/.claude/settings.json",
        "removed SubagentStop gate from ~/.claude/settings.json",
        "restored ~/.claude/settings.json to its content from before plangate",
        "removed skill autoplan from ~/.claude/skills/autoplan",
        "removed skill plan-ceo-review from ~/.claude/skills/plan-ceo-review",
        KEPT_CONFIG,
    ]
    assert not env.backup.exists()
    out, _ = run(env, uninstall=True)
    assert env.settings.read_text() == OTHER_TOOLS
    assert out == [
        "no plangate hooks in ~/.claude/settings.json",
        "no plangate skills in ~/.claude/skills",
        KEPT_CONFIG,
    ]


def test_uninstall_without_a_backup_keeps_other_content(env: Env) -> None:
    env.claude.mkdir()
    env.settings.write_text(OTHER_TOOLS)
    run(env, ceo=True)
    env.backup.unlink()
    run(env, uninstall=True)
    assert load(env.settings) == json.loads(OTHER_TOOLS)


@pytest.mark.parametrize("original", ["{}", '{"hooks": {}}\n', '{\n  "hooks": {"Stop": []}\n}\n'])
def test_uninstall_restores_empty_hook_containers(env: Env, original: str) -> None:
    env.claude.mkdir()
    env.settings.write_text(original)
    run(env, ceo=True)
    run(env, uninstall=True)
    assert env.settings.read_text() == original


def test_uninstall_removes_a_file_plangate_created(env: Env) -> None:
    run(env, ceo=True)
    out, _ = run(env, uninstall=True)
    assert not env.settings.exists()
    assert "deleted ~/.claude/settings.json: nothing but plangate's hooks was in it" in out
    # a second cycle does not resurrect it from the backup
    run(env)
    run(env, uninstall=True)
    assert not env.settings.exists()


def test_uninstall_removes_only_our_skills(env: Env) -> None:
    (env.skills / "mine").mkdir(parents=True)
    (env.skills / "mine" / "SKILL.md").write_text("mine\n")
    run(env)
    run(env, uninstall=True)
    assert sorted(os.listdir(env.skills)) == ["mine"]


def test_uninstall_takes_no_switches(env: Env) -> None:
    with pytest.raises(UsageError) as caught:
        run(env, uninstall=True, ceo=False)
    assert caught.value.message == "--uninstall takes no gate switches"


def test_project_uninstall_keeps_skills_the_user_install_needs(env: Env) -> None:
    run(env)
    run(env, project=True)
    out, _ = run(env, project=True, uninstall=True)
    assert not (env.project / ".claude" / "settings.json").exists()
    assert (env.skills / "autoplan" / SKILL_MARKER).exists()
    assert any(line.startswith("kept the skills in ~/.claude/skills") for line in out)
    run(env, uninstall=True)
    assert not (env.skills / "autoplan").exists()


def test_uninstall_with_nothing_installed(env: Env) -> None:
    out, _ = run(env, uninstall=True)
    assert out == [
        "no plangate hooks in ~/.claude/settings.json",
        "no plangate skills in ~/.claude/skills",
    ]
    assert not env.claude.exists()


# -- skills ----------------------------------------------------------------------------------


def test_skills_are_copied_marked_and_updated(env: Env) -> None:
    (env.skills / "other").mkdir(parents=True)
    (env.skills / "other" / "SKILL.md").write_text("other\n")
    run(env)
    installed = env.skills / "autoplan"
    assert (installed / "SKILL.md").read_text() == "# autoplan\n"
    assert (installed / "sections" / "ceo-phase.md").read_text() == "# CEO phase\n"
    marker = json.loads((installed / SKILL_MARKER).read_text())
    assert marker["installed_by"] == "plangate"
    assert not (env.skills / "__pycache__").exists()
    assert not (env.skills / "README.md").exists()

    (env.bundle / "autoplan" / "sections" / "ceo-phase.md").write_text("# CEO phase v2\n")
    (installed / "stray.md").write_text("left by an older version\n")
    out, _ = run(env)
    assert "updated skill autoplan in ~/.claude/skills/autoplan" in out
    assert "unchanged skill plan-ceo-review in ~/.claude/skills/plan-ceo-review" in out
    assert (installed / "sections" / "ceo-phase.md").read_text() == "# CEO phase v2\n"
    assert not (installed / "stray.md").exists()
    assert (env.skills / "other" / "SKILL.md").read_text() == "other\n"
    assert sorted(os.listdir(env.skills)) == ["autoplan", "other", "plan-ceo-review"]

    # a skill no longer bundled is removed, if it is ours
    shutil.rmtree(env.bundle / "plan-ceo-review")
    out, _ = run(env)
    assert (
        "removed skill plan-ceo-review from ~/.claude/skills/plan-ceo-review (no longer bundled)"
        in out
    )
    assert sorted(os.listdir(env.skills)) == ["autoplan", "other"]


@pytest.mark.parametrize("kind", ["missing", "empty"])
def test_no_bundled_skills(env: Env, kind: str) -> None:
    source = env.home / "no-skills"
    if kind == "empty":
        source.mkdir()
    out, _ = run(env, skills_source=source)
    assert "no skills bundled with this plangate to install" in out
    assert our_commands(load(env.settings)) == {"PreToolUse": [GUARD, PROTECT]}
    assert not env.skills.exists()


def test_bundled_skills_install_by_default(env: Env) -> None:
    out = io.StringIO()
    setup(
        project=False,
        uninstall=False,
        ceo_review_gate=None,
        autoplan_gate=None,
        out=out,
        err=io.StringIO(),
        environ=GATES_ONLY,
    )
    bundled = sorted(
        name
        for name in os.listdir(bundled_skills_dir())
        if not name.startswith((".", "_"))
        and os.path.isdir(os.path.join(bundled_skills_dir(), name))
    )
    for name in bundled:
        assert (env.skills / name / SKILL_MARKER).is_file()
        assert (env.skills / name / "SKILL.md").is_file()


# -- concurrency -----------------------------------------------------------------------------

CONCURRENT = """
import io, os, sys, time
from plangate.install.setup import setup
go, ceo, source = sys.argv[1], sys.argv[2] == "on", sys.argv[3]
deadline = time.monotonic() + 30
while not os.path.exists(go) and time.monotonic() < deadline:
    time.sleep(0.001)
setup(project=False, uninstall=False, ceo_review_gate=ceo, autoplan_gate=None,
      out=io.StringIO(), skills_source=source)
"""


@pytest.mark.slow
def test_concurrent_setups_do_not_interleave(env: Env) -> None:
    env.claude.mkdir()
    env.settings.write_text(OTHER_TOOLS)
    for round_number in range(8):
        go = env.home / f"go-{round_number}"
        flags = ["on", "off"] if round_number % 2 else ["on", "on"]
        processes = [
            subprocess.Popen(
                [sys.executable, "-c", CONCURRENT, str(go), flag, str(env.bundle)],
                env={**os.environ, **GATES_ONLY},
                stderr=subprocess.PIPE,
            )
            for flag in flags
        ]
        go.touch()
        for process in processes:
            _, stderr = process.communicate(timeout=60)
            assert process.returncode == 0, stderr.decode()
        data = load(env.settings)  # valid JSON
        commands = our_commands(data)
        assert commands["PreToolUse"] == [
            hook_registry.hook_command("plangate.hooks.pre_tool_use", sys.executable),
            hook_registry.hook_command("plangate.hooks.protect", sys.executable),
        ]
        assert all(len(found) == 1 for event, found in commands.items() if event != "PreToolUse")
        assert set(commands) in ({"PreToolUse"}, {"PreToolUse", "Stop", "SubagentStop"})
        # whoever saved the switch last also wrote the settings last: the two agree
        assert config.get("ceo_review_gate") is ("Stop" in commands)
        assert settings_file.merge_hooks(data, {}) == json.loads(OTHER_TOOLS)
        assert sorted(os.listdir(env.claude)) == [
            "settings.json",
            "settings.json.plangate-backup",
            "skills",
        ]
        assert sorted(os.listdir(env.skills)) == ["autoplan", "plan-ceo-review"]


# -- the merge as a property -----------------------------------------------------------------

_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5))
_json = st.recursive(
    _leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
_handler = st.fixed_dictionaries(
    {"type": st.just("command"), "command": st.text(max_size=12).filter(lambda s: "-m" not in s)}
)
_group = st.one_of(
    st.fixed_dictionaries({"hooks": st.lists(_handler, max_size=3)}),
    st.fixed_dictionaries(
        {
            "matcher": st.sampled_from(["Bash", "Read", "*", ""]),
            "hooks": st.lists(_handler, max_size=3),
        }
    ),
)
_events = st.dictionaries(
    st.sampled_from(["PreToolUse", "Stop", "SubagentStop", "PostToolUse", "Notification"]),
    st.lists(_group, max_size=3),
    max_size=4,
)
_settings = st.builds(
    lambda other, hooks, with_hooks: {**other, **({"hooks": hooks} if with_hooks else {})},
    st.dictionaries(st.text(max_size=6).filter(lambda key: key != "hooks"), _json, max_size=4),
    _events,
    st.booleans(),
)


@given(_settings, st.booleans(), st.booleans(), st.booleans(), st.booleans())
def test_merge_properties(
    original: dict[str, Any], ceo: bool, autoplan: bool, ceo2: bool, autoplan2: bool
) -> None:
    block = hook_registry.hook_settings(ceo, autoplan, PY)
    merged = settings_file.merge_hooks(original, block)
    # idempotent, exactly one copy of ours, others untouched
    assert settings_file.merge_hooks(merged, block) == merged
    assert {
        event: [group for _, group in found]
        for event, found in settings_file.plangate_groups(merged).items()
    } == block
    assert list(merged)[: len(original)] == list(original)
    removed = settings_file.merge_hooks(merged, {})
    assert settings_file.normalized(removed) == settings_file.normalized(original)
    # switching gates converges to the same result as a fresh install
    other_block = hook_registry.hook_settings(ceo2, autoplan2, PY)
    assert settings_file.normalized(
        settings_file.merge_hooks(settings_file.merge_hooks(merged, other_block), {})
    ) == settings_file.normalized(original)
    # the rendered file reads back as the same data
    assert json.loads(settings_file.render(merged)) == merged


@pytest.mark.parametrize("spec", hook_registry.HOOKS, ids=lambda spec: spec.event)
def test_registered_commands_start_the_hooks(spec: hook_registry.HookSpec) -> None:
    """The command as registered, through a shell: plangate is found without `site`, and a
    payload that is not one gives the hook's one JSON line, never a traceback."""
    command = hook_registry.hook_command(spec.module)
    done = subprocess.run(["sh", "-c", command], input=b"{}", capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr
    lines = done.stdout.decode().splitlines()
    assert len(lines) == 1 and isinstance(json.loads(lines[0]), dict)


SETUP_STEPS: list[tuple[bool | None, bool | None]] = [
    (None, None),
    (True, None),
    (False, None),
    (None, True),
    (None, False),
    (True, True),
]
"""``plangate setup`` with (``--ceo-review-gate``, ``--autoplan-gate``)."""


@pytest.mark.parametrize("seed", range(12))
def test_uninstall_after_any_sequence_of_setups_gives_the_file_back(env: Env, seed: int) -> None:
    """Issue 14: setup, setup --ceo-review-gate, setup --uninstall gave the content back
    reformatted, and left a backup holding plangate's hooks."""
    env.claude.mkdir()
    env.settings.write_text(OTHER_TOOLS)
    steps = random.Random(seed).choices(SETUP_STEPS, k=1 + seed % 5)
    for ceo, autoplan in steps:
        run(env, ceo=ceo, autoplan=autoplan)
    run(env, uninstall=True)
    assert env.settings.read_text() == OTHER_TOOLS, steps
    assert sorted(p.name for p in env.claude.iterdir()) == ["settings.json"], steps


def test_uninstall_keeps_what_the_person_changed_since(env: Env) -> None:
    env.claude.mkdir()
    env.settings.write_text(OTHER_TOOLS)
    run(env, ceo=True)
    data = load(env.settings)
    data["model"] = "sonnet"
    env.settings.write_text(json.dumps(data))
    run(env, autoplan=True)
    run(env, uninstall=True)
    expected = json.loads(OTHER_TOOLS)
    expected["model"] = "sonnet"
    assert load(env.settings) == expected
    assert sorted(p.name for p in env.claude.iterdir()) == ["settings.json"]


def test_parallel_setups_then_uninstall_give_the_file_back(env: Env) -> None:
    env.claude.mkdir()
    env.settings.write_text(OTHER_TOOLS)
    flags = [[], ["--ceo-review-gate"], ["--autoplan-gate"], ["--ceo-review-gate=off"]] * 2
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "plangate", "setup", *extra],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for extra in flags
    ]
    for process in processes:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
    run(env, uninstall=True)
    assert env.settings.read_text() == OTHER_TOOLS
    assert sorted(p.name for p in env.claude.iterdir()) == ["settings.json"]


# -- temporary environments ------------------------------------------------------------------


def test_refuses_hooks_into_uvs_cache(env: Env) -> None:
    python = env.home / ".cache" / "uv" / "archive-v0" / "Xy12" / "bin" / "python"
    with pytest.raises(ConfigError) as refused:
        setup(
            project=False,
            uninstall=False,
            ceo_review_gate=None,
            autoplan_gate=None,
            out=io.StringIO(),
            skills_source=str(env.bundle),
            python=str(python),
            environ=GATES_ONLY,
        )
    assert f"plangate runs from uv's cache: its Python is {python}" in refused.value.message
    assert "`uv tool install <plangate folder>`" in refused.value.remedy
    assert not env.settings.exists() and not env.skills.exists()


def test_temporary_places(tmp_path: Path) -> None:
    from plangate.install.place import temporary_reason

    scratch = str(tmp_path / "scratch")
    config_dir = str(tmp_path / "home" / ".claude")
    environ = {"HOME": str(tmp_path / "home"), "UV_CACHE_DIR": str(tmp_path / "uvc")}

    def reason(path: str, where: str = config_dir) -> str | None:
        return temporary_reason(path, where, environ, temporary=[scratch])

    assert reason(f"{scratch}/target/bin/python") == "a temporary folder"
    assert reason(f"{scratch}/target/bin/python", f"{scratch}/home/.claude") is None  # both go
    assert reason(str(tmp_path / "uvc" / "anything" / "python")) == "uv's cache"
    assert reason("/opt/cache/uv/builds-v0/.tmpA/bin/python") == "uv's cache"
    assert reason("/root/.local/share/pipx/.cache/abc/bin/python") == (
        "pipx's cache of `pipx run` environments"
    )
    assert reason(str(tmp_path / "home" / ".local" / "share" / "uv" / "tools" / "p")) is None
    assert reason("/usr/bin/python3") is None


# -- the plugin --------------------------------------------------------------------------------


def plugin_run(env: Env, *, uninstall: bool = False, ceo: bool | None = None) -> list[str]:
    out = io.StringIO()
    assert (
        setup(
            project=False,
            uninstall=uninstall,
            ceo_review_gate=ceo,
            autoplan_gate=None,
            out=out,
            err=io.StringIO(),
            skills_source=str(env.bundle),
            python=PY,
            environ=GATES_ONLY,
            plugin=True,
        )
        == 0
    )
    return out.getvalue().splitlines()


@pytest.fixture
def no_claude(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PLANGATE_CLAUDE_BIN", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))


@pytest.fixture
def real_claude(monkeypatch: pytest.MonkeyPatch, env: Env) -> Path:
    from plangate.claude_cli import ClaudeNotFoundError, find_claude

    try:
        binary = find_claude()
    except ClaudeNotFoundError as error:
        pytest.fail(f"the Claude Code CLI is missing: {error}", pytrace=False)
    monkeypatch.setenv("PLANGATE_CLAUDE_BIN", str(binary))
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
    monkeypatch.setenv("DISABLE_AUTOUPDATER", "1")
    return binary


def test_plugin_without_the_cli_builds_the_folder_and_prints_the_commands(
    env: Env, no_claude: None
) -> None:
    lines = plugin_run(env, ceo=True)
    folder = env.state / "claude-plugin"
    assert lines[:2] == [
        "saved ceo_review_gate on in ~/state/config.json",
        "autoplan_gate off (default)",
    ]
    assert lines[2] == (
        "built plugin folder ~/state/claude-plugin (autoplan, plan-ceo-review; "
        "hooks: PreToolUse, Stop, SubagentStop)"
    )
    assert lines[4:] == [
        f"  claude plugin marketplace add {folder} --json",
        "  claude plugin install plangate@plangate --json",
    ]
    plugin = folder / "plangate"
    manifest = load(plugin / ".claude-plugin" / "plugin.json")
    assert manifest["name"] == "plangate" and manifest["version"] == plangate_version()
    market = load(folder / ".claude-plugin" / "marketplace.json")
    assert market["plugins"][0]["source"] == "./plangate"
    hooks = load(plugin / "hooks" / "hooks.json")["hooks"]
    assert hooks["PreToolUse"][0]["matcher"] == "Read|Agent"
    assert (
        hooks["Stop"][0]["hooks"][0]["command"] == '"${CLAUDE_PLUGIN_ROOT}/bin/plangate-hook" stop'
    )
    launcher = plugin / "bin" / "plangate-hook"
    assert launcher.stat().st_mode & 0o777 == 0o755
    assert f"  stop) exec {STOP} ;;" in launcher.read_text()
    assert (plugin / "skills" / "autoplan" / "sections" / "ceo-phase.md").read_text() == (
        "# CEO phase\n"
    )
    assert not env.skills.exists() and not env.settings.exists()  # nothing outside the plugin
    assert plugin_run(env)[2] == "unchanged plugin folder ~/state/claude-plugin"
    # Not installed yet (the commands were not run): the settings set-up is still allowed.
    run(env)
    with pytest.raises(ConfigError) as refused:
        plugin_run(env)
    assert "plangate is already set up through settings (~/.claude/settings.json)" in str(
        refused.value
    )
    assert "run `plangate setup --uninstall` first" in refused.value.remedy


def test_launcher_runs_the_hook(env: Env, no_claude: None, tmp_path: Path) -> None:
    """The launcher the plugin's hooks run starts the real hook module (here: an empty
    payload is refused with one JSON line, as the guard answers bad input)."""
    out = io.StringIO()
    setup(
        project=False,
        uninstall=False,
        ceo_review_gate=None,
        autoplan_gate=None,
        out=out,
        skills_source=str(env.bundle),
        python=sys.executable,
        environ=GATES_ONLY,
        plugin=True,
    )
    plugin = env.state / "claude-plugin" / "plangate"
    command = load(plugin / "hooks" / "hooks.json")["hooks"]["PreToolUse"][0]["hooks"][0]
    done = subprocess.run(
        ["/bin/sh", "-c", command["command"]],
        input="{}",
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": "/usr/bin:/bin", "CLAUDE_PLUGIN_ROOT": str(plugin)},
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\n") == 1 and done.stdout.startswith("{")
    bad = subprocess.run(
        [str(plugin / "bin" / "plangate-hook"), "nosuch"], capture_output=True, text=True
    )
    assert bad.returncode == 1 and "run plangate setup --plugin again" in bad.stderr


def test_plugin_takes_no_project(env: Env) -> None:
    with pytest.raises(UsageError):
        setup(
            project=True,
            uninstall=False,
            ceo_review_gate=None,
            autoplan_gate=None,
            out=io.StringIO(),
            python=PY,
            environ=GATES_ONLY,
            plugin=True,
        )


@pytest.mark.e2e
def test_plugin_through_the_real_cli_and_never_with_settings_hooks(
    env: Env, real_claude: Path
) -> None:
    lines = plugin_run(env)
    folder = env.state / "claude-plugin"
    assert f"ran `claude plugin marketplace add {folder} --json`: " in "\n".join(lines)
    assert "ran `claude plugin install plangate@plangate --json`: Successfully installed" in (
        "\n".join(lines)
    )
    listed = json.loads(
        subprocess.run(
            [str(real_claude), "plugin", "list", "--json"], capture_output=True, text=True
        ).stdout
    )
    assert [p["readFromFolder"] for p in listed if p["id"] == "plangate@plangate"] == [
        str(folder / "plangate")
    ]
    again = plugin_run(env)
    assert "is already installed" in "\n".join(again)
    with pytest.raises(ConfigError) as refused:
        run(env)
    assert "plangate is installed as a Claude Code plugin (plangate@plangate)" in str(refused.value)
    assert "plangate setup --plugin --uninstall" in refused.value.remedy
    assert not env.skills.exists()

    removed = plugin_run(env, uninstall=True)
    assert removed[-1] == "removed plugin folder ~/state/claude-plugin"
    assert not folder.exists()
    listed = json.loads(
        subprocess.run(
            [str(real_claude), "plugin", "list", "--json"], capture_output=True, text=True
        ).stdout
    )
    assert not [p for p in listed if p["id"] == "plangate@plangate"]
    assert plugin_run(env, uninstall=True)[:2] == [
        "nothing to undo for `claude plugin uninstall plangate@plangate --json`",
        "nothing to undo for `claude plugin marketplace remove plangate --json`",
    ]
    run(env)  # settings hooks are allowed again
    assert our_commands(load(env.settings))["PreToolUse"] == [GUARD, PROTECT]


def plangate_version() -> str:
    import plangate

    return plangate.__version__
