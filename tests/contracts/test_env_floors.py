"""No value in a settings file's ``env`` block weakens a decision: Claude Code passes that
block to the hooks, so whatever can write a settings file can set it.

Every deadline has a floor (a decision cut short allows), and a gate switch set ``off`` in
the environment never turns off a gate the config turns on (tests/gates/test_ceo_review.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from plangate.gates.timing import deadline_ms
from plangate.hook_io.runtime import DEADLINE_FLOOR_MS, deadline_seconds
from tests.contracts.conftest import Project, through_requirements


@pytest.mark.parametrize("value", ["1", "50", "2999"])
def test_a_deadline_from_the_environment_never_goes_under_the_floor(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANGATE_GUARD_DEADLINE_MS", value)
    assert deadline_seconds("PLANGATE_GUARD_DEADLINE_MS", 10_000, 20_000) == 3.0
    assert deadline_seconds("PLANGATE_GUARD_DEADLINE_MS", 10_000, 20_000) * 1000 >= (
        DEADLINE_FLOOR_MS
    )
    assert deadline_ms({"PLANGATE_SKILL_GATE_DEADLINE_MS": value}) == 3000


def test_a_longer_deadline_still_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANGATE_GUARD_DEADLINE_MS", "7000")
    assert deadline_seconds("PLANGATE_GUARD_DEADLINE_MS", 10_000, 20_000) == 7.0


def test_the_contract_hook_with_a_1_ms_deadline_still_refuses(project: Project) -> None:
    """A real hook process, started as Claude Code starts it with the settings' env: the
    design phase before the requirements are approved is refused, not allowed unverified."""
    through_requirements(project)
    payload = project.journaled("Skill", {"skill": "kiro-spec-design", "args": "greet"})
    env = {
        **os.environ,
        **project.env(),
        "PLANGATE_GUARD_DEADLINE_MS": "1",
        "PLANGATE_SKILL_GATE_DEADLINE_MS": "1",
    }
    done = subprocess.run(
        [sys.executable, "-m", "plangate.hooks.contract_pre_tool_use"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env,
        cwd=str(project.dir),
        timeout=60,
        check=False,
    )
    output = json.loads(done.stdout)
    decision = output["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny", output
    assert "contract_approval" in decision["permissionDecisionReason"]


def test_a_decision_out_of_time_inside_an_active_workflow_refuses(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 32: a decision that runs out of time allowed (``contract_unverified``); inside an
    active workflow it refuses (``contract_timeout``). Outside one, the seed's warning stands.
    The deadline itself is cut to nothing here: what is tested is the answer to it."""
    from plangate.contracts import untrusted
    from plangate.hook_io import runtime
    from plangate.hook_io.runtime import DeadlinePassed
    from plangate.hooks import contract_pre_tool_use as hook

    def cut_short(payload: dict[str, object]) -> runtime.Result:
        raise DeadlinePassed  # as the alarm raises it

    monkeypatch.setattr(hook.POLICY, "decide", cut_short)

    def answer(payload: dict[str, Any]) -> dict[str, Any]:
        line, _, code = runtime.render("PreToolUse", runtime.decide(hook.POLICY, payload))
        assert line is not None and code == 0
        value: dict[str, Any] = json.loads(line)
        return value

    payload = project.journaled("Write", {"file_path": str(project.dir / "src" / "x.py")})
    outside = answer(payload)
    assert "permissionDecision" not in outside.get("hookSpecificOutput", {}), outside
    assert "contract_unverified" in json.dumps(outside)
    untrusted.mark_active(payload["session_id"], "cc-sdd")
    inside = answer(payload)
    decision = inside["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny", inside
    assert "(code contract_timeout," in decision["permissionDecisionReason"]
    assert "workflow cc-sdd" in decision["permissionDecisionReason"]
