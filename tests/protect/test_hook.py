"""The protection as Claude Code runs it: the registered command, a payload on stdin, one
JSON line out, and a line in the decision log. Registered in every session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from plangate import hook_registry
from plangate.install.plugin import build
from tests.protect.conftest import World

MODULES = ("plangate.hooks.protect", "plangate.hooks.contract_pre_tool_use")


def run_hook(module: str, payload: dict[str, object], world: World) -> dict[str, object]:
    done = subprocess.run(
        ["/bin/sh", "-c", hook_registry.hook_command(module)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env={**os.environ, **world.env()},
        timeout=60,
        check=True,
    )
    output: dict[str, object] = json.loads(done.stdout)
    return output


def log_lines(world: World) -> list[dict[str, object]]:
    path = world.state / "analytics" / "autoplan-guard.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def reason(output: dict[str, object]) -> str:
    specific = output["hookSpecificOutput"]
    assert isinstance(specific, dict)
    assert specific["permissionDecision"] == "deny"
    return str(specific["permissionDecisionReason"])


@pytest.mark.parametrize("module", MODULES)
def test_a_refused_write_answers_deny_and_logs(world: World, module: str) -> None:
    settings = world.claude / "settings.json"
    output = run_hook(module, world.payload("Write", file_path=str(settings), content="{}"), world)
    text = reason(output)
    assert "(code protected_path" in text and str(settings) in text
    assert "plangate explain protected_path" in text
    assert settings.read_text() == "{}\n"
    (line,) = log_lines(world)
    assert (line["decision"], line["code"], line["event"]) == ("deny", "protected_path", "protect")
    assert str(settings) not in json.dumps(line)  # the log holds no paths


@pytest.mark.parametrize("module", MODULES)
def test_a_person_only_command_answers_deny(world: World, module: str) -> None:
    payload = world.payload("Bash", command="python -m plangate approve cc-sdd design greet")
    text = reason(run_hook(module, payload, world))
    assert "(code protected_command" in text and "plangate approve" in text
    assert [line["code"] for line in log_lines(world)] == ["protected_command"]


@pytest.mark.parametrize("module", MODULES)
def test_ordinary_calls_answer_nothing_and_log_nothing(world: World, module: str) -> None:
    for payload in (
        world.payload("Bash", command="ls -la src | wc -l"),
        world.payload("Write", file_path=str(world.project / "src" / "new.py"), content="x"),
        world.payload("Bash", command="cat ~/.claude/settings.json"),
    ):
        assert run_hook(module, payload, world) == {}
    assert log_lines(world) == []


def test_the_hooks_own_environment_under_dash_s(world: World) -> None:
    """The hook runs with ``-S`` (no ``site``, so ``sys.prefix`` is not the virtual
    environment's): its interpreter's environment is protected all the same."""
    venv = Path(sys.executable).parent.parent
    if not (venv / "pyvenv.cfg").is_file():
        pytest.skip("these tests run outside a virtual environment")
    for path in (venv / "pyvenv.cfg", venv / "lib" / "x.pth", Path(sys.executable)):
        payload = world.payload("Write", file_path=str(path), content="x")
        assert "(code protected_path" in reason(run_hook(MODULES[0], payload, world)), path


def test_a_crash_fails_closed(world: World) -> None:
    done = subprocess.run(
        ["/bin/sh", "-c", hook_registry.hook_command("plangate.hooks.protect")],
        input="not json",
        capture_output=True,
        text=True,
        env={**os.environ, **world.env()},
        timeout=60,
        check=True,
    )
    assert "hook_input" in reason(json.loads(done.stdout))


def _protecting(specs: list[hook_registry.HookSpec]) -> list[str]:
    return [
        spec.module
        for spec in specs
        if spec.event == "PreToolUse"
        and spec.module in MODULES
        and spec.matcher is not None
        and set(hook_registry.PROTECT_MATCHER.split("|")) <= set(spec.matcher.split("|"))
    ]


@pytest.mark.parametrize("contracts", [True, False])
@pytest.mark.parametrize("ceo", [True, False])
@pytest.mark.parametrize("autoplan", [True, False])
def test_every_switch_combination_registers_the_protection_once(
    contracts: bool, ceo: bool, autoplan: bool
) -> None:
    found = _protecting(hook_registry.wanted_hooks(ceo, autoplan, contracts))
    assert found == [MODULES[1] if contracts else MODULES[0]]
    switches = {
        hook_registry.CEO_REVIEW_GATE: ceo,
        hook_registry.AUTOPLAN_GATE: autoplan,
        hook_registry.WORKFLOW_CONTRACTS: contracts,
    }
    plugin = build.hooks_json(switches)["hooks"]
    assert isinstance(plugin, dict)
    names = [
        group["hooks"][0]["command"].rsplit(" ", 1)[1]
        for group in plugin["PreToolUse"]
        if group.get("matcher") != hook_registry.ENTRY_MATCHER
    ]
    assert names == ["contract_pre_tool_use" if contracts else "protect"]


def test_the_plugin_launcher_knows_the_protection(tmp_path: Path) -> None:
    text = build.launcher_text("/usr/bin/python3")
    assert "  protect) exec " in text and "from plangate.hooks.protect import main" in text
