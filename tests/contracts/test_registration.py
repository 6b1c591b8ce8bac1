"""The contract hooks' registrations: off unless ``workflow_contracts`` is on, then one
matcher group each beside the guard's and the gates' (never replacing them)."""

from __future__ import annotations

import io
import json

from plangate import hook_registry
from plangate.commands.settings import settings


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


def test_off_by_default_on_beside_the_guard_and_gates() -> None:
    assert _modules(hook_registry.hook_settings(False, True)) == {
        "PreToolUse": ["pre_tool_use"],
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
