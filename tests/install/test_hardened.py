"""``plangate setup --hardened`` and ``plangate settings --hardened``: the sandbox settings
written, merged into the person's own, refused where they cannot hold, and taken back to the
byte by ``--uninstall``."""

from __future__ import annotations

import io
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from plangate import hook_registry
from plangate.commands.settings import settings as print_settings
from plangate.commands.setup import flag_value
from plangate.errors import ConfigError, UsageError
from plangate.install import hardened
from plangate.install.setup import setup

PY = "/opt/py/bin/python3"


@dataclass
class Home:
    root: Path
    tools: Path

    @property
    def claude(self) -> Path:
        return self.root / ".claude"

    @property
    def settings(self) -> Path:
        return self.claude / "settings.json"

    @property
    def state(self) -> Path:
        return self.root / "state"

    def environ(self, path: Path | None = None) -> dict[str, str]:
        return {"PATH": str(path if path is not None else self.tools)}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Home:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(tmp_path / "state"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / ".claude"))
    for name in ("PLANGATE_CEO_REVIEW_GATE", "PLANGATE_AUTOPLAN_GATE"):
        monkeypatch.delenv(name, raising=False)
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    tools = tmp_path / "tools"  # what the sandbox needs on PATH, as executables
    tools.mkdir()
    for name in ("bwrap", "socat"):
        (tools / name).write_text("#!/bin/sh\n")
        (tools / name).chmod(0o755)
    (tmp_path / "bundle").mkdir()
    return Home(tmp_path, tools)


def run(
    home: Home,
    hardened_mode: bool | None,
    *,
    uninstall: bool = False,
    environ: dict[str, str] | None = None,
    plugin: bool = False,
) -> list[str]:
    out = io.StringIO()
    code = setup(
        project=False,
        uninstall=uninstall,
        ceo_review_gate=None,
        autoplan_gate=None,
        out=out,
        err=io.StringIO(),
        skills_source=str(home.root / "bundle"),
        python=PY,
        environ=environ if environ is not None else home.environ(),
        plugin=plugin,
        hardened=hardened_mode,
    )
    assert code == 0
    return out.getvalue().splitlines()


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def expected_rules(home: Home) -> list[str]:
    root = hook_registry.package_root()
    return [
        f"Edit(/{home.state}/**)",
        f"Edit(/{root}/plangate/**)",
        f"Edit(/{home.claude}/settings.json)",
        f"Edit(/{home.claude}/settings.local.json)",
        "Edit(//**/.claude/settings*.json)",
        "Edit(//etc/claude-code/**)",
        f"Edit(/{home.claude}/skills/**/plangate.toml)",
        "Edit(//**/.claude/skills/**/plangate.toml)",
        "Edit(//**/.plangate/contracts/**)",
    ]


def test_hardened_mode_sets_the_sandbox_and_the_deny_rules(home: Home) -> None:
    out = run(home, True)
    data = load(home.settings)
    assert data["sandbox"] == {
        "enabled": True,
        "failIfUnavailable": True,
        "allowUnsandboxedCommands": False,
        "filesystem": {
            "denyWrite": [f"/{home.state}", f"/{hook_registry.package_root()}/plangate"]
        },
    }
    assert data["permissions"] == {"deny": expected_rules(home)}
    assert "hooks" in data  # the hooks are registered as ever
    assert any(line.startswith("set hardened mode in ~/.claude/settings.json") for line in out)
    assert any("outranks ~/.claude/settings.json" in line for line in out)


def test_a_venv_interpreter_gets_its_environment_protected(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    block = hardened.sandbox_settings("/s", "/c", "/p", str(venv / "bin" / "python"))
    assert block["sandbox"]["filesystem"]["denyWrite"] == ["//s", "//p/plangate", f"/{venv}"]
    assert f"Edit(/{venv}/**)" in block["permissions"]["deny"]
    system = hardened.sandbox_settings("/s", "/c", "/p", "/usr/bin/python3")
    assert system["sandbox"]["filesystem"]["denyWrite"] == ["//s", "//p/plangate"]


PERSONS = (
    "{\n"
    '    "model": "opus",\n'
    '    "sandbox": {"enabled": false, "excludedCommands": ["docker"],\n'
    '                "filesystem": {"denyWrite": ["~/secrets"]}},\n'
    '    "permissions": {"allow": ["Bash(git *)"], "deny": ["Bash(rm -rf *)"]}\n'
    "}"
)


def test_the_persons_own_sandbox_keys_are_kept(home: Home) -> None:
    home.claude.mkdir()
    home.settings.write_text(PERSONS, encoding="utf-8")
    run(home, True)
    data = load(home.settings)
    assert data["model"] == "opus"
    assert data["sandbox"]["excludedCommands"] == ["docker"]
    assert data["sandbox"]["enabled"] is True
    assert data["sandbox"]["filesystem"]["denyWrite"][0] == "~/secrets"
    assert data["permissions"]["allow"] == ["Bash(git *)"]
    assert data["permissions"]["deny"] == ["Bash(rm -rf *)", *expected_rules(home)]


@pytest.mark.parametrize(
    "original",
    [
        PERSONS,
        "{}",
        '{"sandbox": {}, "permissions": {"deny": []}}\n',
        '{"sandbox": {"enabled": true}}',
    ],
)
def test_uninstall_restores_every_byte_after_any_sequence(home: Home, original: str) -> None:
    home.claude.mkdir()
    home.settings.write_text(original, encoding="utf-8")
    home.settings.chmod(0o640)
    run(home, True)
    run(home, None)
    run(home, False)
    assert not hardened.holds_rules(load(home.settings), hardened_block(home))
    run(home, True)
    assert hardened.is_hardened(load(home.settings), hardened_block(home))
    out = run(home, None, uninstall=True)
    assert "took hardened mode out of ~/.claude/settings.json" in out
    assert home.settings.read_text(encoding="utf-8") == original
    assert stat.S_IMODE(home.settings.stat().st_mode) == 0o640


def hardened_block(home: Home, project: str | None = None) -> dict[str, Any]:
    return hardened.sandbox_settings(
        str(home.state), str(home.claude), hook_registry.package_root(), PY, project=project
    )


def test_project_setup_makes_its_contract_folder_read_only(home: Home) -> None:
    out = io.StringIO()
    setup(
        project=True,
        uninstall=False,
        ceo_review_gate=None,
        autoplan_gate=None,
        out=out,
        err=io.StringIO(),
        skills_source=str(home.root / "bundle"),
        python=PY,
        environ=home.environ(),
        hardened=True,
    )
    data = load(home.root / "project" / ".claude" / "settings.json")
    contracts = home.root / "project" / ".plangate" / "contracts"
    assert data["sandbox"]["filesystem"]["denyWrite"][-1] == f"/{contracts}"
    assert "set hardened mode in ~/project/.claude/settings.json" in out.getvalue()
    # created, so that the sandbox binds it read-only and .plangate/tmp stays writable
    assert contracts.is_dir() and not any(contracts.iterdir())
    assert "created ~/project/.plangate/contracts (empty)" in out.getvalue()
    user = hardened_block(home)  # user settings cannot name every project's folder
    assert not any(
        ".plangate/contracts" in path for path in user["sandbox"]["filesystem"]["denyWrite"]
    )


def test_uninstall_deletes_a_file_plangate_created_hardened(home: Home) -> None:
    run(home, True)
    run(home, None, uninstall=True)
    assert not home.settings.exists()


def test_off_takes_back_the_sandbox_and_keeps_the_hooks(home: Home) -> None:
    home.claude.mkdir()
    home.settings.write_text(PERSONS, encoding="utf-8")
    run(home, True)
    out = run(home, False)
    data = load(home.settings)
    assert data["sandbox"] == json.loads(PERSONS)["sandbox"]
    assert data["permissions"] == json.loads(PERSONS)["permissions"]
    assert "hooks" in data
    assert (
        "took hardened mode out of ~/.claude/settings.json (its keys as they were before plangate)"
        in out
    )


def test_setup_without_the_flag_keeps_hardened_mode(home: Home) -> None:
    run(home, True)
    before = home.settings.read_bytes()
    out = run(home, None)
    assert home.settings.read_bytes() == before
    assert any(line.startswith("unchanged hardened mode in") for line in out)


def test_setup_without_the_flag_adds_nothing(home: Home) -> None:
    out = run(home, None)
    assert "sandbox" not in load(home.settings)
    assert not any("hardened" in line for line in out)


def test_hardened_mode_needs_bubblewrap_and_socat(home: Home) -> None:
    home.claude.mkdir()
    home.settings.write_text(PERSONS, encoding="utf-8")
    empty = home.root / "empty"
    empty.mkdir()
    with pytest.raises(ConfigError) as caught:
        run(home, True, environ=home.environ(empty))
    assert "needs bubblewrap and socat on PATH" in caught.value.message
    assert "apt-get install -y bubblewrap socat" in caught.value.remedy
    assert home.settings.read_text(encoding="utf-8") == PERSONS  # nothing changed
    assert not (home.claude / "settings.json.plangate-backup").exists()
    assert not (home.state / "config.json").exists()


def test_only_socat_missing_is_named(home: Home) -> None:
    (home.tools / "socat").unlink()
    with pytest.raises(ConfigError) as caught:
        run(home, True)
    assert "needs socat on PATH" in caught.value.message


def test_no_tools_are_needed_off_linux(home: Home) -> None:
    assert hardened.missing_tools({"PATH": ""}, platform="darwin") == []
    assert hardened.missing_tools({"PATH": ""}, platform="linux") == ["bubblewrap", "socat"]
    with pytest.raises(ConfigError, match="does not run on Windows"):
        hardened.require_tools({}, platform="win32")


@pytest.mark.parametrize(
    ("sandbox", "named"),
    [
        ({"excludedCommands": ["docker", "python3:*"]}, "python3:*"),
        ({"allowNestedUserNamespaces": True}, "allowNestedUserNamespaces"),
        ({"enableWeakerNestedSandbox": True}, "enableWeakerNestedSandbox"),
        ({"filesystem": ["~/x"]}, '"sandbox.filesystem" is not a JSON object'),
    ],
)
def test_a_file_that_would_undo_it_is_refused(
    home: Home, sandbox: dict[str, object], named: str
) -> None:
    home.claude.mkdir()
    original = json.dumps({"sandbox": sandbox})
    home.settings.write_text(original, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        run(home, True)
    assert named in caught.value.message
    assert "plangate setup --hardened again" in caught.value.remedy
    assert home.settings.read_text(encoding="utf-8") == original


def test_a_deny_list_of_the_wrong_type_is_refused(home: Home) -> None:
    home.claude.mkdir()
    home.settings.write_text('{"permissions": {"deny": "Edit"}}', encoding="utf-8")
    with pytest.raises(ConfigError, match='"deny" entry that is not a JSON array'):
        run(home, True)


def test_uninstall_and_plugin_take_no_hardened_flag(home: Home) -> None:
    with pytest.raises(UsageError, match="--uninstall takes no --hardened"):
        run(home, True, uninstall=True)
    with pytest.raises(UsageError) as caught:
        run(home, True, plugin=True)
    assert "plangate settings --hardened" in caught.value.remedy


def test_the_flag_takes_on_or_off() -> None:
    assert flag_value("--hardened", "on") is True
    assert flag_value("--hardened", "OFF") is False
    assert flag_value("--hardened", None) is None
    with pytest.raises(UsageError, match="--hardened takes on or off"):
        flag_value("--hardened", "maybe")


@pytest.mark.parametrize(
    ("entry", "flagged"),
    [
        ("python3", True),
        ("python3:*", True),
        ("python3.12 *", True),
        ("/usr/bin/env *", True),
        ("bash -c", True),
        ("node", True),
        ("sh", True),
        ("perl:*", True),
        ("docker", False),
        ("docker compose:*", False),
        ("kubectl", False),
    ],
)
def test_interpreters_in_excluded_commands(entry: str, flagged: bool) -> None:
    found = hardened.excluded_interpreters({"sandbox": {"excludedCommands": [entry, 3, ""]}})
    assert found == ([entry] if flagged else [])


def test_settings_hardened_prints_the_sandbox_for_claude_settings(
    home: Home, capsys: pytest.CaptureFixture[str]
) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert print_settings(False, False, out, err=err, python=PY, hardened=True) == 0
    document = json.loads(out.getvalue())
    block = hardened_block(home, project=str(home.root / "project"))  # the working folder
    assert (home.root / "project" / ".plangate" / "contracts").is_dir()
    assert "plangate/contracts (empty): the sandbox keeps it read-only" in capsys.readouterr().err
    assert document["sandbox"] == block["sandbox"]
    assert document["permissions"] == block["permissions"]
    assert document["hooks"] == {"PreToolUse": document["hooks"]["PreToolUse"]}  # the guard
    out = io.StringIO()
    assert print_settings(True, False, out, err=err, python=PY) == 0
    assert "sandbox" not in json.loads(out.getvalue())


def test_the_rule_paths_are_absolute_in_claude_codes_syntax() -> None:
    assert hardened.absolute_rule_path("/a/b") == "//a/b"
    assert os.path.isabs(hardened.absolute_rule_path("rel")[1:])
