"""The contract hooks' registrations: on by default in ``plangate setup`` (the
``workflow_contracts`` switch turns them off), one matcher group each beside the guard's and
the gates' (never replacing them), the Read and Agent entries with the ``if`` conditions of
the contracts known at setup; uninstall restores the settings byte for byte; doctor names a
contract whose entries a registration misses."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from plangate import hook_registry
from plangate.commands.settings import settings
from plangate.install import checks
from plangate.install.check import OK, PROBLEM, WARN
from plangate.install.plugin import build
from plangate.install.registrations import registrations
from plangate.install.setup import setup

PY = "/opt/py/bin/python3"
USER_SETTINGS = (
    '{\n  "model": "opus",\n'
    '  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}\n}\n'
)
NOTES = """\
[workflow]
name = "notes"
skills = ["notes"]

[[phase]]
name = "draft"
entry = ["notes"]

[[phase.artifact]]
path = "notes/draft.md"

[[phase]]
name = "review"
reads = [".claude/skills/notes/phases/review.md"]
"""


def _modules(block: dict[str, list[dict[str, object]]]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for event, groups in block.items():
        for group in groups:
            handlers = group["hooks"]
            assert isinstance(handlers, list)
            command = str(handlers[0]["command"])
            module = command.split(" from ", 1)[1].split(" import", 1)[0]
            found.setdefault(event, []).append(module.rsplit(".", 1)[1])
    return found


def test_the_registry_adds_them_beside_the_guard_and_gates() -> None:
    assert _modules(hook_registry.hook_settings(False, True)) == {
        "PreToolUse": ["pre_tool_use", "protect"],  # the protection, on its own
        "Stop": ["stop"],
    }
    block = hook_registry.hook_settings(False, True, workflow_contracts=True)
    assert _modules(block) == {
        "PreToolUse": ["pre_tool_use", "contract_pre_tool_use"],
        "Stop": ["stop", "contract_stop"],
        "UserPromptExpansion": ["prompt_expansion"],
        "SubagentStop": ["contract_subagent_stop"],
    }
    assert block["PreToolUse"][1]["matcher"] == hook_registry.CONTRACT_MATCHER
    assert all(g["hooks"][0]["timeout"] == 25 for groups in block.values() for g in groups)  # type: ignore[index]


def test_plangate_settings_contracts_alone() -> None:
    out = io.StringIO()
    assert settings(False, False, out, contracts=True) == 0
    document = json.loads(out.getvalue())
    assert set(document["hooks"]) == {"PreToolUse", "UserPromptExpansion", "Stop", "SubagentStop"}
    assert document["env"] == {}


class World:
    def __init__(self, root: Path) -> None:
        self.claude = root / ".claude"
        self.state = root / "state"
        self.project = root / "project"
        self.bundle = root / "bundle"
        self.project.mkdir()
        self.bundle.mkdir()
        self.err = ""

    @property
    def settings(self) -> Path:
        return self.claude / "settings.json"

    def setup(self, uninstall: bool = False, environ: dict[str, str] | None = None) -> list[str]:
        out, err = io.StringIO(), io.StringIO()
        code = setup(
            project=False,
            uninstall=uninstall,
            ceo_review_gate=None,
            autoplan_gate=None,
            out=out,
            err=err,
            cwd=str(self.project),
            skills_source=str(self.bundle),
            python=PY,
            environ=environ or {},
        )
        assert code == 0  # README: 0 installed (a broken contract is named, not refused)
        self.err = err.getvalue()
        return out.getvalue().splitlines()

    def contract(self, folder: Path, name: str = "notes") -> None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.toml").write_text(NOTES.replace('"notes"', f'"{name}"', 1))


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / ".claude"))
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(tmp_path / "state"))
    made = World(tmp_path)
    made.claude.mkdir()
    made.settings.write_text(USER_SETTINGS)
    return made


def test_setup_registers_them_by_default_and_uninstall_restores_the_bytes(world: World) -> None:
    world.contract(world.project / ".plangate" / "contracts")
    out = world.setup()
    assert (
        "registered PreToolUse guard (Read|Agent), contracts "
        f"({hook_registry.CONTRACT_MATCHER}), contract entries (Read|Agent) in "
        "~/.claude/settings.json" in out
    )
    assert (
        "registered UserPromptExpansion contracts (workflow_contracts) in ~/.claude/settings.json"
        in out
    )
    data = json.loads(world.settings.read_text())
    assert data["model"] == "opus"
    guard, contracts, entries = data["hooks"]["PreToolUse"]
    assert (guard["matcher"], contracts["matcher"], entries["matcher"]) == (
        "Read|Agent",
        hook_registry.CONTRACT_MATCHER,
        "Read|Agent",
    )
    assert [handler["if"] for handler in entries["hooks"]] == [
        "Read(**/.claude/skills/notes/phases/review.md)"
    ]
    assert "contract_pre_tool_use" in entries["hooks"][0]["command"]
    assert set(data["hooks"]) == {"PreToolUse", "Stop", "SubagentStop", "UserPromptExpansion"}
    written = world.settings.read_bytes()
    again = world.setup()
    assert world.settings.read_bytes() == written
    assert all(not line.startswith(("registered", "updated")) for line in again)
    world.setup(uninstall=True)
    assert world.settings.read_text() == USER_SETTINGS  # byte for byte


def test_the_switch_turns_them_off(world: World) -> None:
    world.setup(environ={"PLANGATE_WORKFLOW_CONTRACTS": "off"})
    data = json.loads(world.settings.read_text())
    assert set(data["hooks"]) == {"PreToolUse", "Stop"}  # the guard, and the user's own Stop
    groups = data["hooks"]["PreToolUse"]
    # the guard, and the protected paths alone (never without them: issue 32)
    assert [group["matcher"] for group in groups] == ["Read|Agent", hook_registry.PROTECT_MATCHER]
    assert "plangate.hooks.protect " in groups[1]["hooks"][0]["command"]
    out = world.setup()
    assert any(line.startswith("updated PreToolUse") for line in out)
    assert "UserPromptExpansion" in json.loads(world.settings.read_text())["hooks"]


def test_no_entry_condition_no_entries_registration(world: World) -> None:
    world.setup()  # only the library's cc-sdd: no Read or Agent entries
    groups = json.loads(world.settings.read_text())["hooks"]["PreToolUse"]
    assert [group["matcher"] for group in groups] == ["Read|Agent", hook_registry.CONTRACT_MATCHER]
    assert checks.check_entries(registrations(str(world.project)), str(world.project)).status == (
        OK
    )


def test_doctor_names_a_contract_added_after_setup(world: World) -> None:
    world.setup()
    world.contract(world.state / "contracts", "later")
    found = registrations(str(world.project))
    check = checks.check_entries(found, str(world.project))
    assert check.status == WARN
    assert "phase entries of later are not registered" in check.detail
    assert "run `plangate setup` again" in check.remedy
    world.setup()
    check = checks.check_entries(registrations(str(world.project)), str(world.project))
    assert check.status == OK
    assert "Read(**/.claude/skills/notes/phases/review.md)" in check.detail
    assert checks.check_filter(registrations(str(world.project))).status == OK


def test_the_plugin_registers_the_entries_through_its_launcher() -> None:
    switches = {hook_registry.WORKFLOW_CONTRACTS: True}
    hooks = build.hooks_json(switches, ("Read(**/phases/*.md)",))["hooks"]
    assert isinstance(hooks, dict)
    *_, entries = hooks["PreToolUse"]
    assert entries["hooks"] == [
        {
            "type": "command",
            "command": '"${CLAUDE_PLUGIN_ROOT}/bin/plangate-hook" contract_pre_tool_use',
            "if": "Read(**/phases/*.md)",
            "timeout": 25,
        }
    ]
    assert len(build.hooks_json(switches)["hooks"]["PreToolUse"]) == 2  # type: ignore[index]
    launcher = build.launcher_text(PY)
    assert launcher.count("  contract_pre_tool_use) exec ") == 1


def _entry_conditions(world: World) -> list[str]:
    groups = json.loads(world.settings.read_text())["hooks"]["PreToolUse"]
    found = [g for g in groups if "contract_pre_tool_use" in g["hooks"][0]["command"]][1:]
    return [handler["if"] for group in found for handler in group["hooks"]]


def test_setup_names_a_broken_contract_and_registers_its_last_good_entries(world: World) -> None:
    folder = world.project / ".plangate" / "contracts"
    world.contract(folder)
    world.setup()
    assert world.err == ""
    path = folder / "notes.toml"
    path.write_text(NOTES.replace('name = "review"', "name = review"))  # line 13
    world.setup()
    assert f"warning: the contract {path}:13 does not parse (not valid TOML" in world.err
    assert "every skill start in the project and its Read and Agent" in world.err
    assert "registered from its last good version" in world.err
    assert "fix: fix the TOML syntax on that line" in world.err
    assert f"then run `plangate contract check {path}`" in world.err
    assert _entry_conditions(world) == ["Read(**/.claude/skills/notes/phases/review.md)"]

    check = checks.check_entries(registrations(str(world.project)), str(world.project))
    assert check.status == PROBLEM
    assert f"{path}:13 does not parse" in check.detail and "contract_invalid" in check.detail
    assert f"`plangate contract check {path}`" in check.remedy
    path.write_text(NOTES)
    check = checks.check_entries(registrations(str(world.project)), str(world.project))
    assert check.status == OK


def test_setup_with_a_contract_that_never_parsed(world: World) -> None:
    folder = world.state / "contracts"
    folder.mkdir(parents=True)
    path = folder / "mine.toml"
    path.write_text(NOTES.replace('reads = [".claude', "reads = [.claude"))  # line 14
    world.setup()
    assert f"warning: the contract {path}:14 does not parse" in world.err
    assert "no Read or Agent entry of it is known, so none is registered" in world.err
    assert "and `plangate setup` again" in world.err
    assert _entry_conditions(world) == []
    path.write_text(NOTES.replace("[[phase.artifact]]", "[[phase.artifacts]]"))  # valid TOML
    world.setup()
    assert "registered as the broken file names them" in world.err
    assert _entry_conditions(world) == ["Read(**/.claude/skills/notes/phases/review.md)"]
