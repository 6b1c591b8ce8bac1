"""``plangate doctor``'s protection checks, on real settings files in every scope: which
protection is in force, hooks switched off, hooks missing from a scope, interpreters in
``sandbox.excludedCommands``."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from plangate.install import hardened, protection, registrations
from plangate.install.check import OK, PROBLEM, Check
from plangate.install.doctor import doctor
from plangate.install.setup import setup

PY = "/opt/py/bin/python3"


@dataclass
class Machine:
    root: Path
    tools: Path

    @property
    def project(self) -> Path:
        return self.root / "project"

    @property
    def managed(self) -> Path:
        return self.root / "etc-claude-code"

    def path(self, scope: str) -> Path:
        return {
            protection.USER: self.root / ".claude" / "settings.json",
            protection.PROJECT: self.project / ".claude" / "settings.json",
            protection.LOCAL: self.project / ".claude" / "settings.local.json",
            protection.MANAGED: self.managed / "managed-settings.json",
        }[scope]

    def write(self, scope: str, data: dict[str, Any]) -> Path:
        path = self.path(scope)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data), encoding="utf-8")
        return path

    def scopes(self) -> list[protection.Scope]:
        return protection.scopes(str(self.project), str(self.managed))

    def environ(self) -> dict[str, str]:
        return {"PATH": str(self.tools)}

    def setup(self, hardened_mode: bool | None = None, ceo: bool | None = None) -> None:
        setup(
            project=False,
            uninstall=False,
            ceo_review_gate=ceo,
            autoplan_gate=None,
            out=io.StringIO(),
            err=io.StringIO(),
            cwd=str(self.project),
            skills_source=str(self.root / "bundle"),
            python=PY,
            environ=self.environ(),
            hardened=hardened_mode,
        )

    def protection(self) -> Check:
        return protection.check_protection(self.scopes(), self.environ())


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Machine:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(tmp_path / "state"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / ".claude"))
    for name in ("PLANGATE_CEO_REVIEW_GATE", "PLANGATE_AUTOPLAN_GATE"):
        monkeypatch.delenv(name, raising=False)
    tools = tmp_path / "tools"
    tools.mkdir()
    for name in ("bwrap", "socat"):
        (tools / name).write_text("#!/bin/sh\n")
        (tools / name).chmod(0o755)
    (tmp_path / "bundle").mkdir()
    machine = Machine(tmp_path, tools)
    machine.project.mkdir()
    monkeypatch.chdir(machine.project)
    return machine


HOLDS = {"enabled": True, "failIfUnavailable": True, "allowUnsandboxedCommands": False}


# -- which protection is in force ------------------------------------------------------------


def test_no_sandbox_is_hooks_only(machine: Machine) -> None:
    machine.setup()
    check = machine.protection()
    assert check.status == OK
    assert check.detail.startswith("hooks only: Claude Code's sandbox is off")
    assert "plangate setup --hardened" in check.detail


def test_setup_hardened_is_hooks_and_the_operating_system(machine: Machine) -> None:
    machine.setup(hardened_mode=True)
    check = machine.protection()
    assert (check.status, check.detail.split(" (")[0]) == (OK, "hooks + operating system")
    assert "from ~/.claude/settings.json" in check.detail
    assert "a project's .claude/settings*.json outranks it" in check.detail


def test_managed_settings_need_no_caveat(machine: Machine) -> None:
    machine.write(protection.MANAGED, {"sandbox": HOLDS})
    check = machine.protection()
    assert check.status == OK
    assert check.detail == (
        "hooks + operating system (Claude Code's sandbox, from "
        "~/etc-claude-code/managed-settings.json)"
    )


def test_a_project_that_turns_the_sandbox_off_is_a_problem(machine: Machine) -> None:
    machine.setup(hardened_mode=True)
    machine.write(protection.PROJECT, {"sandbox": {"enabled": False}})
    check = machine.protection()
    assert check.status == PROBLEM
    assert check.detail == (
        "hooks only: Claude Code's sandbox is on in ~/.claude/settings.json, and "
        "~/project/.claude/settings.json, which outranks it, turns it off"
    )
    assert "plangate settings --hardened" in check.remedy


def test_a_sandbox_turned_off_nowhere_on_is_hooks_only(machine: Machine) -> None:
    machine.write(protection.USER, {"sandbox": {"enabled": False}})
    check = machine.protection()
    assert check.status == OK
    assert check.detail.startswith(
        "hooks only: Claude Code's sandbox is off (~/.claude/settings.json turns it off)"
    )


@pytest.mark.parametrize(
    ("sandbox", "said"),
    [
        ({"enabled": True}, "failIfUnavailable is unset (not set in any settings file)"),
        ({"enabled": True}, "allowUnsandboxedCommands is true (not set in any settings file)"),
        ({**HOLDS, "failIfUnavailable": False}, "failIfUnavailable is false in ~/project/"),
        (
            {**HOLDS, "allowUnsandboxedCommands": True},
            "allowUnsandboxedCommands is true in ~/project/.claude/settings.local.json",
        ),
        ({**HOLDS, "allowNestedUserNamespaces": True}, "allowNestedUserNamespaces is on in"),
        ({**HOLDS, "enableWeakerNestedSandbox": True}, "enableWeakerNestedSandbox is on in"),
    ],
)
def test_a_sandbox_that_does_not_hold_is_a_problem(
    machine: Machine, sandbox: dict[str, object], said: str
) -> None:
    machine.write(protection.LOCAL, {"sandbox": sandbox})
    check = machine.protection()
    assert check.status == PROBLEM
    assert check.detail.startswith("Claude Code's sandbox is on (~/project/.claude/settings.")
    assert said in check.detail
    assert "plangate setup --hardened" in check.remedy


def test_a_lower_scope_cannot_loosen_a_higher_one(machine: Machine) -> None:
    machine.write(protection.MANAGED, {"sandbox": HOLDS})
    machine.write(protection.USER, {"sandbox": {"allowUnsandboxedCommands": True}})
    assert machine.protection().status == OK


def test_the_sandbox_without_its_tools_is_a_problem(machine: Machine) -> None:
    machine.write(protection.USER, {"sandbox": HOLDS})
    (machine.tools / "bwrap").unlink()
    check = machine.protection()
    assert check.status == PROBLEM
    assert "bubblewrap missing: the sandbox cannot start" in check.detail
    assert "apt-get install -y bubblewrap socat" in check.detail


# -- hooks switched off ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "scope", [protection.USER, protection.PROJECT, protection.LOCAL, protection.MANAGED]
)
def test_disable_all_hooks_in_any_scope_is_a_problem(machine: Machine, scope: str) -> None:
    machine.setup()
    path = machine.path(scope)
    data = json.loads(path.read_text()) if path.exists() else {}
    machine.write(scope, {**data, "disableAllHooks": True})
    check = protection.check_switched_off(machine.scopes())
    assert check.status == PROBLEM
    shown = str(path).replace(str(machine.root), "~")
    assert check.detail == f"disableAllHooks is true in {shown}: no hook runs"
    assert check.remedy == f'remove "disableAllHooks" from {shown}'


def test_disable_all_hooks_false_and_managed_hooks_only(machine: Machine) -> None:
    machine.write(protection.USER, {"disableAllHooks": False})
    assert protection.check_switched_off(machine.scopes()).status == OK
    machine.write(protection.MANAGED, {"allowManagedHooksOnly": True})
    check = protection.check_switched_off(machine.scopes())
    assert check.status == PROBLEM and "plangate's are dropped" in check.detail


def test_managed_drop_ins_are_read(machine: Machine) -> None:
    drop_in = machine.managed / "managed-settings.d" / "50-team.json"
    drop_in.parent.mkdir(parents=True)
    drop_in.write_text('{"disableAllHooks": true}')
    check = protection.check_switched_off(machine.scopes())
    assert check.status == PROBLEM and "50-team.json" in check.detail


def test_an_unreadable_scope_is_named(machine: Machine) -> None:
    machine.path(protection.LOCAL).parent.mkdir(parents=True)
    machine.path(protection.LOCAL).write_text("{not json")
    check = protection.check_switched_off(machine.scopes())
    assert check.status == OK
    assert "cannot read ~/project/.claude/settings.local.json" in check.detail


# -- hooks missing from a scope --------------------------------------------------------------


def _hook_scopes(machine: Machine) -> Check:
    found = registrations.registrations(str(machine.project))
    return protection.check_hook_scopes(found, machine.environ(), str(machine.project))


def test_every_wanted_hook_registered_is_ok(machine: Machine) -> None:
    machine.setup(ceo=True)
    check = _hook_scopes(machine)
    assert check.status == OK, check.detail


def test_a_hook_removed_from_a_scope_is_a_problem(machine: Machine) -> None:
    machine.setup(ceo=True)
    path = machine.path(protection.USER)
    data = json.loads(path.read_text())
    del data["hooks"]["Stop"]
    path.write_text(json.dumps(data))
    check = _hook_scopes(machine)
    assert check.status == PROBLEM
    assert "~/.claude/settings.json registers plangate without contract_stop, stop" in check.detail
    assert "plangate setup" in check.remedy


def test_hooks_gone_from_a_scope_setup_registered_is_a_problem(machine: Machine) -> None:
    machine.write(protection.USER, {"model": "opus"})
    machine.setup()
    machine.write(protection.USER, {"model": "opus"})  # every hook gone; setup's backup stays
    check = _hook_scopes(machine)
    assert check.status == PROBLEM
    assert "plangate setup registered its hooks in ~/.claude/settings.json" in check.detail


# -- interpreters in excludedCommands --------------------------------------------------------


def test_an_interpreter_in_excluded_commands_is_a_problem(machine: Machine) -> None:
    machine.write(protection.PROJECT, {"sandbox": {"excludedCommands": ["docker", "python3"]}})
    machine.write(protection.USER, {"sandbox": {"excludedCommands": ["sh:*"]}})
    check = protection.check_exclusions(machine.scopes())
    assert check.status == PROBLEM
    assert "python3 in ~/project/.claude/settings.json" in check.detail
    assert "sh:* in ~/.claude/settings.json" in check.detail
    assert "remove them from sandbox.excludedCommands" in check.remedy
    machine.write(protection.PROJECT, {"sandbox": {"excludedCommands": ["docker"]}})
    machine.write(protection.USER, {})
    assert protection.check_exclusions(machine.scopes()).status == OK


# -- doctor --json ---------------------------------------------------------------------------


def test_doctor_json_carries_each_check(machine: Machine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hardened, "MANAGED_DIR", str(machine.managed))
    monkeypatch.setenv("PATH", f"{machine.tools}:/usr/bin:/bin")
    machine.setup(hardened_mode=True)
    machine.write(protection.LOCAL, {"disableAllHooks": True})
    out = io.StringIO()
    code = doctor(as_json=True, out=out, cwd=str(machine.project))
    record = json.loads(out.getvalue())
    checks = {check["check"]: check for check in record["checks"]}
    assert code == 1 and record["healthy"] is False
    assert checks["protection"]["status"] == OK
    assert checks["protection"]["detail"].startswith("hooks + operating system")
    assert checks["hooks off"]["status"] == PROBLEM
    assert checks["hooks off"]["remedy"].startswith('remove "disableAllHooks" from')
    assert checks["exclusions"]["status"] == OK
    assert checks["hook scopes"]["status"] == OK
    assert checks["package files"]["status"] == OK
    assert set(checks["package files"]) == {"check", "status", "detail", "remedy"}
