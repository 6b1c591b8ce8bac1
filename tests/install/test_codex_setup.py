"""``plangate setup --codex``: the hooks in Codex's hooks.json, their trust in config.toml, both
taken out byte for byte, and doctor's Codex lines. The real binary's view of the same files
is in tests/e2e/test_codex_setup.py."""

from __future__ import annotations

import io
import json
import sys
import tomllib
from pathlib import Path

import pytest

from plangate import hook_registry
from plangate.errors import ConfigError, UsageError
from plangate.hooks import contract_pre_tool_use, protect
from plangate.install import codex_hooks
from plangate.install.check import OK, PROBLEM, WARN
from plangate.install.setup import setup

PY = "/opt/py/bin/python3"

#: A person's config.toml: comments, their own tables, no newline at the end.
THEIRS = (
    '# my Codex\nmodel = "gpt-5.5"\n\n[features]\nplugins = false  # keep off\n'
    '\n[projects."/home/me/app"]\ntrust_level = "trusted"'
)
#: Another tool's hooks, in the layout that tool wrote.
OTHER_HOOKS = (
    '{"hooks": {"PreToolUse": [{"matcher": "^Bash$", "hooks": '
    '[{"type": "command", "command": "other-tool check"}]}]}}\n'
)


def _setup(home: Path, *, uninstall: bool = False, python: str = PY, **flags: object) -> str:
    out = io.StringIO()
    setup(
        project=bool(flags.pop("project", False)),
        uninstall=uninstall,
        ceo_review_gate=None,
        autoplan_gate=None,
        out=out,
        python=python,
        environ={"CODEX_HOME": str(home)},
        codex=True,
        **flags,  # type: ignore[arg-type]
    )
    return out.getvalue()


def _command(module: str) -> str:
    return hook_registry.hook_command(hook_registry.HOOK_MODULE_PREFIX + module, PY)


def test_with_the_contracts_off_the_protection_hook_is_registered_alone(tmp_path: Path) -> None:
    block = codex_hooks.hook_block(PY, contracts=False)
    assert block == {
        "PreToolUse": [
            {
                "matcher": codex_hooks.TOOL_MATCHER,
                "hooks": [{"type": "command", "command": _command("protect"), "timeout": 25}],
            }
        ]
    }


def test_setup_registers_and_trusts_then_uninstall_restores_both_files(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    home.mkdir()
    (home / "config.toml").write_text(THEIRS)
    (home / "hooks.json").write_text(OTHER_HOOKS)
    printed = _setup(home)

    hooks = json.loads((home / "hooks.json").read_text())["hooks"]
    assert hooks["PreToolUse"][0]["hooks"][0]["command"] == "other-tool check"
    assert hooks["PreToolUse"][1] == {
        "matcher": codex_hooks.TOOL_MATCHER,
        "hooks": [{"type": "command", "command": _command("contract_pre_tool_use"), "timeout": 25}],
    }
    assert hooks["Stop"] == [
        {"hooks": [{"type": "command", "command": _command("contract_stop"), "timeout": 25}]}
    ]
    assert hooks["UserPromptSubmit"] == [
        {"hooks": [{"type": "command", "command": _command("prompt_expansion"), "timeout": 25}]}
    ]
    text = (home / "config.toml").read_text()
    assert text.startswith(THEIRS + "\n" + codex_hooks.BEGIN)
    state = tomllib.loads(text)["hooks"]["state"]
    path = str(home / "hooks.json")
    # the key counts the other tool's group: plangate's PreToolUse group is the second
    assert sorted(state) == [
        f"{path}:pre_tool_use:1:0",
        f"{path}:stop:0:0",
        f"{path}:user_prompt_submit:0:0",
    ]
    for key, entry in state.items():
        assert f"trusted {key} = {entry['trusted_hash']}" in printed  # the person sees it
    assert tomllib.loads(text)["features"] == {"plugins": False}

    assert _setup(home) == printed  # again: the same files, the same lines
    assert (home / "config.toml").read_text() == text

    _setup(home, uninstall=True)
    assert (home / "config.toml").read_bytes() == THEIRS.encode()
    assert (home / "hooks.json").read_bytes() == OTHER_HOOKS.encode()


def test_uninstall_deletes_files_setup_created(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    _setup(home)
    assert sorted(p.name for p in home.iterdir() if not p.name.endswith("lock")) == [
        "config.toml",
        "hooks.json",
    ]
    printed = _setup(home, uninstall=True)
    assert "deleted" in printed
    assert not (home / "hooks.json").exists() and not (home / "config.toml").exists()


def test_a_config_ending_in_a_newline_gets_none_added(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    home.mkdir()
    original = THEIRS + "\n"
    (home / "config.toml").write_text(original)
    _setup(home)
    assert (home / "config.toml").read_text().startswith(original + codex_hooks.BEGIN + "\n")
    (home / "config.toml").write_text((home / "config.toml").read_text() + "[tui]\nx = 1\n")
    _setup(home, uninstall=True)  # what the person added after the block stays
    assert (home / "config.toml").read_text() == original + "[tui]\nx = 1\n"


def test_the_hash_is_codexs() -> None:
    # As Codex 0.171.0's app-server (hooks/list, currentHash) gave it for this handler.
    handler = {"type": "command", "command": "echo hi"}
    group = {"matcher": "^Bash$", "hooks": [handler]}
    digest = codex_hooks.trusted_hash("PreToolUse", group, handler)
    assert digest == CODEX_HASH_ECHO


CODEX_HASH_ECHO = "sha256:a21682d1d8bd642be06966a9f238a743ce8c0dc6568e86c606cb5874ced76cd3"


def test_a_table_of_the_persons_own_for_our_key_refuses(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    _setup(home)
    _setup(home, uninstall=True)
    _setup(home)
    text = (home / "config.toml").read_text()
    own, _ = codex_hooks.split_block(text)
    key = f"{home / 'hooks.json'}:stop:0:0"
    (home / "config.toml").write_text(
        own + f'[hooks.state.{json.dumps(key)}]\ntrusted_hash = "sha256:1"\n'
    )
    with pytest.raises(ConfigError, match="already trusts"):
        _setup(home)


def test_codex_takes_no_claude_flags(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--codex takes no --project"):
        _setup(tmp_path / "codex", project=True)
    with pytest.raises(UsageError, match="--codex takes no --plugin"):
        _setup(tmp_path / "codex", plugin=True)
    assert not (tmp_path / "codex").exists()


def test_doctor_names_an_edited_hook_untrusted(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    environ = {"CODEX_HOME": str(home)}
    assert codex_hooks.checks(environ, str(tmp_path), codex_found=False) == []
    home.mkdir()
    [missing] = codex_hooks.checks(environ, str(tmp_path), codex_found=False)
    assert missing.status == WARN and "setup --codex" in missing.remedy

    _setup(home, python=sys.executable)
    [fine] = codex_hooks.checks(environ, str(tmp_path), codex_found=False)
    assert fine.status == OK, fine.detail
    assert "each trusted with its current hash" in fine.detail
    hooks = home / "hooks.json"
    hooks.write_text(hooks.read_text().replace('"timeout": 25', '"timeout": 30'))
    [edited] = codex_hooks.checks(environ, str(tmp_path), codex_found=False)
    assert edited.status == PROBLEM
    assert "edited since it was trusted" in edited.detail
    assert edited.remedy == "untrusted: run `plangate setup --codex` again"

    _setup(home, uninstall=True)
    [gone] = codex_hooks.checks(environ, str(tmp_path), codex_found=False)
    assert gone.status == WARN


def test_doctor_names_a_missing_interpreter(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    _setup(home, python=str(tmp_path / "gone" / "python3"))
    [broken] = codex_hooks.checks({"CODEX_HOME": str(home)}, str(tmp_path), codex_found=True)
    assert broken.status == PROBLEM and "does not exist" in broken.detail


def test_doctor_notes_project_hooks_needing_trust(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    home.mkdir()
    project = tmp_path / "app"
    (project / ".codex").mkdir(parents=True)
    group = {"hooks": [{"type": "command", "command": _command("contract_stop")}]}
    (project / ".codex" / "hooks.json").write_text(json.dumps({"hooks": {"Stop": [group]}}))
    lines = codex_hooks.checks({"CODEX_HOME": str(home)}, str(project), codex_found=False)
    [note] = [line for line in lines if line.name == "codex project"]
    assert note.status == WARN
    assert "trusted project" in note.detail and ":stop:0:0" in note.detail


CODEX_PAYLOAD = {
    "session_id": "01a24721-9f02-7000-8000-000000000001",
    "turn_id": "01a24721-9f1d-7000-8000-000000000002",
    "transcript_path": "/home/me/.codex/sessions/2026/12/05/rollout-2026-12-05T16-55-15-x.jsonl",
    "hook_event_name": "PreToolUse",
    "model": "gpt-5.5",
    "permission_mode": "bypassPermissions",
    "tool_use_id": "call_0_0",
}


@pytest.mark.parametrize(
    ("tool", "command"),
    [
        ("Bash", "echo hi > out.txt"),
        ("apply_patch", "*** Begin Patch\n*** Add File: a.txt\n+hello\n*** End Patch"),
    ],
)
def test_a_codex_call_allowed_gets_an_empty_answer(tmp_path: Path, tool: str, command: str) -> None:
    # Codex rejects {"permissionDecision": "allow"} (the hook fails and the call runs): an
    # allow must be {}.
    payload = {
        **CODEX_PAYLOAD,
        "cwd": str(tmp_path),
        "tool_name": tool,
        "tool_input": {"command": command},
    }
    assert contract_pre_tool_use.decide(payload) == {}
    assert protect.decide(payload) == {}  # registered instead with the contracts switched off


def test_a_codex_call_refused_is_a_deny_with_a_reason(tmp_path: Path) -> None:
    payload = {
        **CODEX_PAYLOAD,
        "cwd": str(tmp_path),
        "tool_name": "Bash",
        "tool_input": {"command": "plangate approve demo design --yes"},
    }
    output = contract_pre_tool_use.decide(payload)
    specific = output["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny"
    assert "protected_command" in specific["permissionDecisionReason"]
