"""``plangate config get|set|list``."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from plangate.commands.config import config_get, config_list, config_set
from plangate.errors import ConfigError, UsageError
from plangate.install.setup import setup


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(tmp_path / "state"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / ".claude"))
    for name in ("PLANGATE_CEO_REVIEW_GATE", "PLANGATE_AUTOPLAN_GATE"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "state"


def call(
    function: object, *args: str, environ: dict[str, str] | None = None
) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = function(*args, out, err=err, environ=environ if environ is not None else {})  # type: ignore[operator]
    return code, out.getvalue(), err.getvalue()


def test_get_defaults(state: Path) -> None:
    assert call(config_get, "ceo_review_gate") == (0, "off\n", "")
    assert call(config_get, "autoplan_gate") == (0, "off\n", "")
    assert call(config_get, "run_attempts") == (0, "3\n", "")


def test_set_then_get(state: Path) -> None:
    assert call(config_set, "ceo_review_gate", "on")[:2] == (
        0,
        "set ceo_review_gate on in ~/state/config.json\n",
    )
    assert call(config_set, "ceo_review_gate", "ON")[:2] == (
        0,
        "unchanged ceo_review_gate on in ~/state/config.json\n",
    )
    assert call(config_set, "run_attempts", "5") == (
        0,
        "set run_attempts 5 in ~/state/config.json\n",
        "",
    )
    assert call(config_get, "ceo_review_gate") == (0, "on\n", "")
    assert call(config_get, "run_attempts") == (0, "5\n", "")
    assert json.loads((state / "config.json").read_text()) == {
        "ceo_review_gate": True,
        "run_attempts": 5,
    }


@pytest.mark.parametrize(
    ("key", "value", "message", "remedy"),
    [
        (
            "ceo_review_gate",
            "maybe",
            "ceo_review_gate must be on or off, not 'maybe'",
            "run `plangate config set ceo_review_gate on`",
        ),
        (
            "run_attempts",
            "0",
            "run_attempts must be a whole number from 1 to 20, not '0'",
            "run `plangate config set run_attempts 3`",
        ),
        (
            "run_attempts",
            "x",
            "run_attempts must be a whole number from 1 to 20, not 'x'",
            "run `plangate config set run_attempts 3`",
        ),
        (
            "attempts",
            "3",
            "unknown setting 'attempts'",
            "the settings are ceo_review_gate, autoplan_gate, workflow_contracts, run_attempts, "
            "require_approval; see `plangate config list`",
        ),
    ],
)
def test_set_validation_errors(
    state: Path, key: str, value: str, message: str, remedy: str
) -> None:
    with pytest.raises(UsageError) as caught:
        call(config_set, key, value)
    assert caught.value.message == message
    assert caught.value.remedy == remedy
    assert str(caught.value) == f"{message} ({remedy})"
    assert not state.exists()


def test_get_unknown_key(state: Path) -> None:
    with pytest.raises(UsageError) as caught:
        call(config_get, "nope")
    assert caught.value.message == "unknown setting 'nope'"


def test_get_reports_the_environment(state: Path) -> None:
    call(config_set, "autoplan_gate", "off")
    code, out, err = call(config_get, "autoplan_gate", environ={"PLANGATE_AUTOPLAN_GATE": "on"})
    assert (code, out) == (0, "on\n")
    assert err == "note: on comes from PLANGATE_AUTOPLAN_GATE in the environment\n"


def test_set_warns_when_the_environment_overrides(state: Path) -> None:
    _, _, err = call(config_set, "autoplan_gate", "off", environ={"PLANGATE_AUTOPLAN_GATE": "on"})
    assert err == "note: PLANGATE_AUTOPLAN_GATE=on in this environment overrides the saved value\n"


def test_set_gate_on_hints_at_setup_until_registered(state: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "no-skills"
    _, _, err = call(config_set, "ceo_review_gate", "on")
    assert err == (
        "note: ceo_review_gate's hooks (Stop, SubagentStop) are not registered in "
        "~/.claude/settings.json; run `plangate setup` to register them\n"
    )
    setup(
        project=False,
        uninstall=False,
        ceo_review_gate=None,
        autoplan_gate=None,
        out=io.StringIO(),
        skills_source=str(bundle),
        environ={},
    )
    assert call(config_set, "ceo_review_gate", "on")[2] == ""
    assert call(config_set, "ceo_review_gate", "off")[2] == ""


def test_unknown_keys_warned_and_kept(state: Path) -> None:
    state.mkdir()
    (state / "config.json").write_text('{"colour": "blue"}')
    warning = (
        "warning: unknown key 'colour' in ~/state/config.json is kept and ignored "
        "(remove it if it is a typo)\n"
    )
    assert call(config_get, "run_attempts") == (0, "3\n", warning)
    code, _, err = call(config_set, "run_attempts", "4")
    assert (code, err) == (0, warning)
    assert json.loads((state / "config.json").read_text()) == {"colour": "blue", "run_attempts": 4}


def test_list(state: Path) -> None:
    call(config_set, "run_attempts", "4")
    code, out, err = call(config_list, environ={"PLANGATE_CEO_REVIEW_GATE": "on"})
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "VALUE", "SOURCE", "HELP"]
    assert lines[1].startswith("ceo_review_gate     on     env PLANGATE_CEO_REVIEW_GATE  hold ")
    assert lines[2].startswith("autoplan_gate       off    default                       hold ")
    assert lines[3].startswith("workflow_contracts  on     default                       register ")
    assert lines[4].startswith("run_attempts        4      config                        attempts ")
    assert lines[5].startswith("require_approval    off    default                       plangate ")
    assert len(lines) == 6


def test_list_with_an_invalid_value(state: Path) -> None:
    state.mkdir()
    (state / "config.json").write_text('{"run_attempts": 0}')
    code, out, err = call(config_list)
    assert code == 1
    assert "run_attempts        ?      invalid" in out
    assert err == (
        "plangate: ~/state/config.json: run_attempts is 0, which is not a whole number from 1 "
        "to 20 (run `plangate config set run_attempts 3` or fix the file)\n"
    )


def test_corrupt_config_file(state: Path) -> None:
    state.mkdir()
    (state / "config.json").write_text("{oops")
    for function, args in ((config_get, ("run_attempts",)), (config_list, ())):
        with pytest.raises(ConfigError) as caught:
            call(function, *args)
        assert caught.value.message.startswith("~/state/config.json is not valid JSON")
        assert "fix or delete ~/state/config.json" in caught.value.remedy


def test_a_setting_named_as_its_flag_is_that_setting(state: Path) -> None:
    env = {**os.environ, "PLANGATE_STATE_ROOT": str(state)}
    cli = [sys.executable, "-m", "plangate", "config"]
    done = subprocess.run(
        [*cli, "set", "require-approval", "on"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("set require_approval on in ")
    got = subprocess.run([*cli, "get", "require-approval"], env=env, capture_output=True, text=True)
    assert (got.returncode, got.stdout) == (0, "on\n")
    assert json.loads((state / "config.json").read_text()) == {"require_approval": True}
    unknown = subprocess.run([*cli, "get", "no-such"], env=env, capture_output=True, text=True)
    assert unknown.returncode == 2 and "unknown setting 'no-such'" in unknown.stderr
