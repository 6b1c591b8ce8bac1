"""plangate's config file: the settings table, validation, atomic writes, switch resolution."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from plangate import config
from plangate.errors import ConfigError, StateError, UsageError

GATE_ENV = ("PLANGATE_CEO_REVIEW_GATE", "PLANGATE_AUTOPLAN_GATE")


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(tmp_path / "state"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / ".claude"))
    for name in GATE_ENV:
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "state"


# -- the table -------------------------------------------------------------------------------


def test_table_has_the_required_settings() -> None:
    rows = {row.name: row for row in config.SETTINGS}
    assert rows["ceo_review_gate"].kind == config.SWITCH
    assert rows["ceo_review_gate"].default is False
    assert rows["ceo_review_gate"].env == "PLANGATE_CEO_REVIEW_GATE"
    assert rows["autoplan_gate"].kind == config.SWITCH
    assert rows["autoplan_gate"].default is False
    assert rows["autoplan_gate"].env == "PLANGATE_AUTOPLAN_GATE"
    assert rows["run_attempts"].kind == config.INTEGER
    assert rows["run_attempts"].default == 3
    assert all(row.help for row in config.SETTINGS)
    assert config.GATE_SWITCHES == ("ceo_review_gate", "autoplan_gate")


def test_run_attempts_help_names_everything_that_spends_an_attempt() -> None:
    """Seed 004: a failed check, a failed evidence gate, an escalation and a review send-back
    each spend one (``plangate/runs/attempts.py``)."""
    text = config.setting("run_attempts").help
    for spender in ("check", "evidence-gate", "send-back", "escalation"):
        assert spender in text, spender


def test_defaults_without_a_file(state: Path) -> None:
    assert config.get("ceo_review_gate") is False
    assert config.get("autoplan_gate") is False
    assert config.get("run_attempts") == 3
    assert not state.exists()  # reading never creates anything


# -- set and get -----------------------------------------------------------------------------


def test_set_then_get(state: Path) -> None:
    assert config.set("ceo_review_gate", "on") is True
    assert config.set("run_attempts", "5") is True
    assert config.get("ceo_review_gate") is True
    assert config.get("run_attempts") == 5
    text = (state / "config.json").read_text()
    assert text == '{\n  "ceo_review_gate": true,\n  "run_attempts": 5\n}\n'
    assert json.loads(text) == {"ceo_review_gate": True, "run_attempts": 5}


def test_set_same_value_does_not_write(state: Path) -> None:
    config.set("autoplan_gate", True)
    path = state / "config.json"
    before = path.stat().st_mtime_ns
    os.utime(path, ns=(before - 10_000_000, before - 10_000_000))
    assert config.set("autoplan_gate", "ON") is False
    assert path.stat().st_mtime_ns == before - 10_000_000


def test_file_and_folder_modes(state: Path) -> None:
    os.umask(0o022)
    config.set("ceo_review_gate", "off")
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert stat.S_IMODE((state / "config.json").stat().st_mode) == 0o600


def test_atomic_write_leaves_no_temporary_or_lock_file(state: Path) -> None:
    for value in ("on", "off", "on"):
        config.set("ceo_review_gate", value)
    config.set("run_attempts", "7")
    assert sorted(os.listdir(state)) == ["config.json"]


def test_failed_write_leaves_the_old_file_and_no_temporary(
    state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config.set("run_attempts", "4")
    original = (state / "config.json").read_bytes()

    def broken_replace(source: str, target: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(StateError) as caught:
        config.set("run_attempts", "6")
    assert "cannot write ~/state/config.json: No space left on device" in str(caught.value)
    assert (state / "config.json").read_bytes() == original
    assert sorted(os.listdir(state)) == ["config.json"]


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("ceo_review_gate", "yes", "ceo_review_gate must be on or off, not 'yes'"),
        ("autoplan_gate", "", "autoplan_gate must be on or off, not ''"),
        ("run_attempts", "0", "run_attempts must be a whole number from 1 to 20, not '0'"),
        ("run_attempts", "21", "run_attempts must be a whole number from 1 to 20, not '21'"),
        ("run_attempts", "2.5", "run_attempts must be a whole number from 1 to 20, not '2.5'"),
        ("run_attempts", "three", "run_attempts must be a whole number from 1 to 20, not 'three'"),
        ("run_attempts", "٣", "run_attempts must be a whole number from 1 to 20, not '٣'"),
    ],
)
def test_set_rejects_invalid_values(state: Path, key: str, value: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        config.set(key, value)
    assert caught.value.message == message
    assert caught.value.remedy.startswith(f"run `plangate config set {key} ")
    assert not (state / "config.json").exists()


def test_set_rejects_wrong_python_types(state: Path) -> None:
    with pytest.raises(UsageError) as caught:
        config.set("run_attempts", True)
    assert caught.value.message == "run_attempts must be a whole number from 1 to 20, not True"
    with pytest.raises(UsageError):
        config.set("ceo_review_gate", 1)


def test_unknown_setting(state: Path) -> None:
    with pytest.raises(UsageError) as caught:
        config.set("ceo_gate", "on")
    assert caught.value.message == "unknown setting 'ceo_gate'"
    assert caught.value.remedy == (
        "the settings are ceo_review_gate, autoplan_gate, workflow_contracts, run_attempts, "
        "require_approval; "
        "see `plangate config list`"
    )
    with pytest.raises(UsageError):
        config.get("nope")


# -- the file as found -----------------------------------------------------------------------


def test_unknown_keys_are_kept_and_warned_about(state: Path) -> None:
    state.mkdir()
    path = state / "config.json"
    path.write_text('{"zeta": [1, {"a": "b"}], "run_attempts": 2, "alpha": null}')
    loaded = config.load()
    assert loaded.unknown_keys() == ["zeta", "alpha"]
    assert loaded.warnings() == [
        "warning: unknown key 'zeta' in ~/state/config.json is kept and ignored "
        "(remove it if it is a typo)",
        "warning: unknown key 'alpha' in ~/state/config.json is kept and ignored "
        "(remove it if it is a typo)",
    ]
    config.set("ceo_review_gate", "on")
    assert json.loads(path.read_text()) == {
        "zeta": [1, {"a": "b"}],
        "run_attempts": 2,
        "alpha": None,
        "ceo_review_gate": True,
    }
    assert list(json.loads(path.read_text())) == [
        "zeta",
        "run_attempts",
        "alpha",
        "ceo_review_gate",
    ]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b'{"ceo_review_gate": tru', "is not valid JSON"),
        (b"[1, 2]", "does not hold a JSON object"),
        (b"", "is not valid JSON"),
        (b'{"a": NaN}', "is not valid JSON"),
        (b'{"a": "\xff"}', "is not UTF-8 text"),
    ],
)
def test_corrupt_file_is_a_config_error_naming_path_and_remedy(
    state: Path, content: bytes, problem: str
) -> None:
    state.mkdir()
    (state / "config.json").write_bytes(content)
    with pytest.raises(ConfigError) as caught:
        config.get("ceo_review_gate")
    assert caught.value.message.startswith(f"~/state/config.json {problem}")
    assert caught.value.remedy == (
        "fix or delete ~/state/config.json (without it plangate uses the defaults), "
        "then run the command again"
    )
    # set refuses too, and leaves the file as it was
    with pytest.raises(ConfigError):
        config.set("ceo_review_gate", "on")
    assert (state / "config.json").read_bytes() == content


def test_invalid_stored_value_names_key_and_fix(state: Path) -> None:
    state.mkdir()
    (state / "config.json").write_text('{"run_attempts": "many", "ceo_review_gate": "on"}')
    with pytest.raises(ConfigError) as caught:
        config.get("run_attempts")
    assert caught.value.message == (
        '~/state/config.json: run_attempts is "many", which is not a whole number from 1 to 20'
    )
    assert caught.value.remedy == "run `plangate config set run_attempts 3` or fix the file"
    # one bad value does not hide the others, and set repairs it
    assert config.get("ceo_review_gate") is True
    config.set("run_attempts", "4")
    assert config.get("run_attempts") == 4


def test_hand_written_on_off_strings_are_read(state: Path) -> None:
    state.mkdir()
    (state / "config.json").write_text('{"ceo_review_gate": "On", "autoplan_gate": "off"}')
    assert config.get("ceo_review_gate") is True
    assert config.get("autoplan_gate") is False


# -- switch resolution -----------------------------------------------------------------------


def test_switch_precedence_flag_env_config_default(state: Path) -> None:
    name = "ceo_review_gate"
    env_name = "PLANGATE_CEO_REVIEW_GATE"
    assert config.gate_switch(name, {}) == (False, "default")
    config.set(name, "on")
    assert config.gate_switch(name, {}) == (True, "config")
    assert config.gate_switch(name, {env_name: "off"}) == (False, "env")
    assert config.gate_switch(name, {env_name: "ON "}) == (True, "env")
    assert config.gate_switch(name, {env_name: "off"}, explicit=True) == (True, "flag")
    assert config.gate_switch(name, {env_name: "on"}, explicit=False) == (False, "flag")
    # an empty variable counts as unset
    assert config.gate_switch(name, {env_name: ""}) == (True, "config")
    # the other gate is independent
    assert config.gate_switch("autoplan_gate", {env_name: "on"}) == (False, "default")


def test_switch_reads_os_environ_by_default(state: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANGATE_AUTOPLAN_GATE", "on")
    assert config.gate_switch("autoplan_gate") == (True, "env")


def test_invalid_environment_value(state: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        config.gate_switch("autoplan_gate", {"PLANGATE_AUTOPLAN_GATE": "yes"})
    assert (
        caught.value.message == "PLANGATE_AUTOPLAN_GATE='yes' in the environment is not on or off"
    )
    assert caught.value.remedy == "set PLANGATE_AUTOPLAN_GATE to on or off, or unset it"


def test_gate_switch_only_for_switches(state: Path) -> None:
    with pytest.raises(ValueError, match="not a gate switch"):
        config.gate_switch("run_attempts", {})


def test_resolve_integer_has_no_environment(state: Path) -> None:
    assert config.resolve("run_attempts", {}) == (3, "default")
    config.set("run_attempts", "9")
    assert config.resolve("run_attempts", {}) == (9, "config")


# -- the hook path ---------------------------------------------------------------------------


def test_reading_a_switch_imports_nothing_heavy(state: Path) -> None:
    config.set("ceo_review_gate", "on")
    script = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "from plangate import config\n"
        "value = config.gate_switch('ceo_review_gate')\n"
        "assert value == (True, 'config'), value\n"
        "sys.stdout.write(repr(sorted(set(sys.modules) - before)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    loaded: list[str] = eval(result.stdout)  # noqa: S307 - our own probe's repr of a list
    heavy = {"re", "json", "typing", "dataclasses", "enum", "argparse", "subprocess", "asyncio"}
    assert sorted(set(loaded) & heavy) == []
    foreign = [
        name
        for name in loaded
        if name.split(".")[0] not in sys.stdlib_module_names and name.split(".")[0] != "plangate"
    ]
    assert foreign == []


# -- the lock --------------------------------------------------------------------------------


def test_lock_times_out_with_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    lock_path = str(tmp_path / "thing.plangate-lock")
    with config.FileLock(lock_path, message="m", remedy="r"):
        started = time.monotonic()
        with (
            pytest.raises(ConfigError) as caught,
            config.FileLock(lock_path, message="busy", remedy="wait", timeout=0.3),
        ):
            pass
        # A real lock wait (flock has no clock to inject): it waited its 0.3 s, and the upper
        # bound is only there to catch a wait that never ends, 16 times the timeout.
        assert 0.25 <= time.monotonic() - started < 5
    assert caught.value.message == "busy (lock ~/thing.plangate-lock held for over 0.3 s)"
    assert caught.value.remedy == "wait"
    assert not os.path.exists(lock_path)


def test_lock_serialises_concurrent_writers(state: Path) -> None:
    # Threads hold flock on separate descriptors, so they exclude each other like processes.
    lock_path = str(state.parent / "counter.plangate-lock")
    counter = state.parent / "counter"
    counter.write_text("0")

    def bump() -> None:
        for _ in range(20):
            with config.FileLock(lock_path, message="m", remedy="r"):
                value = int(counter.read_text())
                time.sleep(0.0005)
                counter.write_text(str(value + 1))

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counter.read_text() == "80"
    assert not os.path.exists(lock_path)


def test_concurrent_config_writers_lose_nothing(state: Path) -> None:
    script = "import sys\nfrom plangate import config\nconfig.set(sys.argv[1], sys.argv[2])\n"
    pairs = [("ceo_review_gate", "on"), ("autoplan_gate", "on"), ("run_attempts", "7")]
    processes = [
        subprocess.Popen([sys.executable, "-c", script, key, value], env=os.environ.copy())
        for key, value in pairs
    ]
    assert [process.wait(timeout=60) for process in processes] == [0, 0, 0]
    assert json.loads((state / "config.json").read_text()) == {
        "ceo_review_gate": True,
        "autoplan_gate": True,
        "run_attempts": 7,
    }
    assert sorted(os.listdir(state)) == ["config.json"]
