"""``plangate doctor`` reads every place Codex 0.171.0 reads hooks from (real files), names
plangate's hooks registered twice or where setup did not write them, and says when Codex's
sandbox lets the model's commands write the places that switch plangate off; ``setup
--codex`` refuses to register plangate a second time."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from plangate import hook_registry
from plangate.errors import ConfigError
from plangate.install import codex_hooks, codex_places, codex_sandbox
from plangate.install.check import OK, PROBLEM, WARN, Check
from plangate.install.setup import setup

PY = sys.executable


def _setup(home: Path) -> str:
    out = io.StringIO()
    setup(
        project=False,
        uninstall=False,
        ceo_review_gate=None,
        autoplan_gate=None,
        out=out,
        python=PY,
        environ={"CODEX_HOME": str(home)},
        codex=True,
    )
    return out.getvalue()


def _command(module: str) -> str:
    return hook_registry.hook_command(hook_registry.HOOK_MODULE_PREFIX + module, PY)


def toml_hook(event: str, module: str, matcher: str | None = None) -> str:
    """A ``[[hooks.<event>]]`` table registering a plangate hook, as a person writes it."""
    lines = [f"[[hooks.{event}]]"]
    if matcher is not None:
        lines.append(f"matcher = {json.dumps(matcher)}")
    lines += [
        f"[[hooks.{event}.hooks]]",
        'type = "command"',
        f"command = {json.dumps(_command(module))}",
        "timeout = 25",
    ]
    return "\n".join(lines) + "\n"


def _trust(home: Path, place: codex_places.Place) -> None:
    """Trust every plangate handler of ``place`` by hash in the user's config.toml."""
    tables = "".join(
        f"[hooks.state.{json.dumps(r.key)}]\ntrusted_hash = {json.dumps(r.digest)}\n"
        for r in codex_places.registrations(place)
    )
    config = home / "config.toml"
    config.write_text((config.read_text() if config.exists() else "") + tables)


def _lines(home: Path, cwd: Path, name: str, **environ: str) -> list[Check]:
    found = codex_hooks.checks({"CODEX_HOME": str(home), **environ}, str(cwd), codex_found=True)
    return [line for line in found if line.name == name]


def test_hooks_in_hooks_json_and_config_toml_are_named_twice(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    _setup(home)
    config = home / "config.toml"
    config.write_text(
        toml_hook("PreToolUse", "contract_pre_tool_use", "^Bash$") + config.read_text()
    )
    _trust(home, codex_places.Place(str(config), codex_places.USER))

    [twice] = _lines(home, tmp_path, "codex hooks twice")
    assert twice.status == PROBLEM
    assert "PreToolUse hook `contract_pre_tool_use` is registered 2 times" in twice.detail
    assert "hooks.json" in twice.detail and "config.toml [hooks]" in twice.detail
    assert "decided twice" in twice.detail and "counted twice" in twice.detail
    assert "remove plangate's hook from" in twice.remedy and "config.toml [hooks]" in twice.remedy
    [elsewhere] = _lines(home, tmp_path, "codex hooks elsewhere")
    assert elsewhere.status == WARN and "not by plangate setup" in elsewhere.detail
    assert "(trusted)" in elsewhere.detail
    [ours] = _lines(home, tmp_path, "codex hooks")
    assert ours.status == OK  # setup's own registration is still trusted


def test_an_untrusted_second_registration_is_to_be_removed_not_trusted(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    _setup(home)
    config = home / "config.toml"
    config.write_text(
        toml_hook("PreToolUse", "contract_pre_tool_use", "^Bash$") + config.read_text()
    )  # not trusted: Codex skips it, and trusting it would decide each call twice
    [elsewhere] = _lines(home, tmp_path, "codex hooks elsewhere")
    assert elsewhere.status == PROBLEM and "(never trusted)" in elsewhere.detail
    assert "registered in another place too" in elsewhere.detail
    assert "do not trust them" in elsewhere.remedy and "trust them in" not in elsewhere.remedy
    [twice] = _lines(home, tmp_path, "codex hooks twice")
    assert "remove plangate's hook from" in twice.remedy  # the two lines say the same


def test_twice_in_one_file_is_named(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    _setup(home)
    hooks = home / "hooks.json"
    data = json.loads(hooks.read_text())
    data["hooks"]["Stop"].append(data["hooks"]["Stop"][0])
    hooks.write_text(json.dumps(data))
    [twice] = _lines(home, tmp_path, "codex hooks twice")
    assert "Stop hook `contract_stop` is registered 2 times" in twice.detail
    assert "(stop:0:0)" in twice.detail and "(stop:1:0)" in twice.detail  # both groups


def test_a_hook_only_in_config_toml_is_reported_and_untrusted_is_a_problem(
    tmp_path: Path,
) -> None:
    home = tmp_path / "codex"
    home.mkdir()
    config = home / "config.toml"
    config.write_text(toml_hook("Stop", "contract_stop"))
    names = [
        line.name for line in codex_hooks.checks({"CODEX_HOME": str(home)}, str(tmp_path), True)
    ]
    assert names == ["codex hooks elsewhere"]  # not "no plangate hooks": Codex has them
    [untrusted] = _lines(home, tmp_path, "codex hooks elsewhere")
    assert untrusted.status == PROBLEM
    assert f"{config.resolve()}:stop:0:0 (never trusted)" in untrusted.detail
    assert (
        "skips the untrusted ones" in untrusted.detail and "Hooks need review" in untrusted.remedy
    )

    _trust(home, codex_places.Place(str(config), codex_places.USER))
    [trusted] = _lines(home, tmp_path, "codex hooks elsewhere")
    assert trusted.status == WARN and "(trusted)" in trusted.detail
    config.write_text(config.read_text().replace("timeout = 25", "timeout = 24"))
    [edited] = _lines(home, tmp_path, "codex hooks elsewhere")
    assert edited.status == PROBLEM and "(edited since trusted)" in edited.detail


def test_every_project_folder_down_to_the_working_one_is_read(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    home.mkdir()
    project = tmp_path / "app"
    (project / ".git").mkdir(parents=True)
    sub = project / "pkg" / "deep"
    sub.mkdir(parents=True)
    (tmp_path / ".codex").mkdir()  # above the project's root: Codex does not read it
    (tmp_path / ".codex" / "config.toml").write_text(toml_hook("Stop", "contract_stop"))
    (project / ".codex").mkdir()
    (project / ".codex" / "config.toml").write_text(toml_hook("Stop", "contract_stop"))
    (project / "pkg" / ".codex").mkdir()
    group = {"hooks": [{"type": "command", "command": _command("contract_stop")}]}
    (project / "pkg" / ".codex" / "hooks.json").write_text(json.dumps({"hooks": {"Stop": [group]}}))

    assert codex_places.project_folders(str(sub)) == [
        str(project.resolve()),
        str((project / "pkg").resolve()),
        str(sub.resolve()),
    ]
    found, unreadable = codex_places.all_registrations(str(home), str(sub))
    assert unreadable == []
    assert [r.key for r in found] == [
        f"{(project / '.codex' / 'config.toml').resolve()}:stop:0:0",
        f"{(project / 'pkg' / '.codex' / 'hooks.json').resolve()}:stop:0:0",
    ]
    [twice] = _lines(home, sub, "codex hooks twice")
    assert "registered 2 times" in twice.detail
    project_lines = _lines(home, sub, "codex project")
    assert len(project_lines) == 2 and all(line.status == WARN for line in project_lines)


def test_a_config_toml_that_is_not_toml_is_a_problem(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    _setup(home)
    project = tmp_path / "app"
    (project / ".codex").mkdir(parents=True)
    (project / ".codex" / "config.toml").write_text("[hooks\n")
    [broken] = [
        line
        for line in codex_hooks.checks({"CODEX_HOME": str(home)}, str(project), True)
        if line.status == PROBLEM
    ]
    assert "cannot be read as TOML" in broken.detail and "fix it" in broken.remedy


def test_setup_does_not_register_plangate_a_second_time(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    home.mkdir()
    config = home / "config.toml"
    text = 'model = "gpt-5.5"\n' + toml_hook("PreToolUse", "contract_pre_tool_use", "^Bash$")
    config.write_text(text)
    with pytest.raises(ConfigError, match="registers plangate's hooks in its") as refused:
        _setup(home)
    assert "run each twice" in str(refused.value)
    assert "Hooks need review" in refused.value.remedy
    assert config.read_text() == text
    assert not (home / "hooks.json").exists()


def test_setup_goes_on_beside_other_tools_toml_hooks(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    home.mkdir()
    theirs = '[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = "command"\ncommand = "echo done"\n'
    (home / "config.toml").write_text(theirs)
    _setup(home)
    assert (home / "config.toml").read_text().startswith(theirs)
    assert _lines(home, tmp_path, "codex hooks twice") == []


# -- the sandbox ------------------------------------------------------------------------------


def _sandbox(config: str, cwd: Path, home: Path, **environ: str) -> list[Check]:
    return codex_sandbox.checks({"CODEX_HOME": str(home), **environ}, str(home), config, str(cwd))


def test_full_access_is_named(tmp_path: Path) -> None:
    [line] = _sandbox('sandbox_mode = "danger-full-access"\n', tmp_path, tmp_path / "codex")
    assert line.status == WARN and "python3 -c" in line.detail
    assert 'sandbox_mode = "workspace-write"' in line.remedy
    assert "does not change it for you" in line.remedy


def test_the_state_root_in_a_writable_root_is_named(tmp_path: Path) -> None:
    state = tmp_path / "state"
    config = f'[sandbox_workspace_write]\nwritable_roots = ["{state}"]\n'
    [line] = _sandbox(config, tmp_path / "app", tmp_path / "codex", PLANGATE_STATE_ROOT=str(state))
    assert "plangate's state root" in line.detail and "writable root" in line.detail
    assert "out of writable_roots" in line.remedy


def test_a_session_in_home_can_write_the_state_root_but_not_dot_codex(tmp_path: Path) -> None:
    home = tmp_path / "me"
    codex = home / ".codex"
    [line] = _sandbox("", home, codex, PLANGATE_STATE_ROOT=str(home / ".plangate"))
    assert "plangate's state root" in line.detail  # .codex in a writable root stays read-only
    assert "this folder, where a Codex session" in line.detail
    assert "project folder" in line.remedy


def test_the_default_sandbox_and_read_only_say_nothing(tmp_path: Path) -> None:
    state = {"PLANGATE_STATE_ROOT": str(tmp_path / "state")}
    assert _sandbox("", tmp_path / "app", tmp_path / "codex", **state) == []
    assert _sandbox('sandbox_mode = "workspace-write"\n', tmp_path / "app", tmp_path / "c") == []
    assert _sandbox('sandbox_mode = "read-only"\n', tmp_path, tmp_path / "codex", **state) == []


def test_a_contract_hook_without_its_companions_is_named(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    _setup(home)
    assert _lines(home, tmp_path, "codex hooks missing") == []
    hooks = home / "hooks.json"
    data = json.loads(hooks.read_text())
    del data["hooks"]["UserPromptSubmit"], data["hooks"]["Stop"]
    hooks.write_text(json.dumps(data))
    missing = _lines(home, tmp_path, "codex hooks missing")
    assert [line.status for line in missing] == [PROBLEM, PROBLEM]
    said = " ".join(line.detail for line in missing)
    assert "UserPromptSubmit hook `prompt_expansion`" in said and "contract_drift" in said
    assert all("plangate setup --codex" in line.remedy for line in missing)
    _setup(home)  # the remedy, as printed
    assert _lines(home, tmp_path, "codex hooks missing") == []
