"""Codex CLI 0.171.0's own session history, read by :func:`plangate.journal.codex.read_rollout`:
real ``codex exec`` sessions on the stand-in write the rollouts (issue 36, item 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from plangate.harness.codex import CodexEnv
from plangate.harness.standin import Script, StandIn
from plangate.harness.standin.responses import apply_patch, shell
from plangate.journal.codex import read_rollout
from plangate.journal.events import AssistantText, HumanTurn, ToolResult, ToolUse
from plangate.journal.verdict import READY

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

PATCH = (
    "*** Begin Patch\n*** Add File: src/greet.py\n+def greet():\n+    return 'hi'\n*** End Patch\n"
)


def test_a_real_session_reads_as_the_persons_turn_the_calls_and_their_outputs(
    tmp_path: Path, codex_bin: Path
) -> None:
    script = Script(
        main=[[shell("echo hi > out.txt && cat out.txt")], [apply_patch(PATCH)], "All done."]
    )
    with StandIn(script) as model:
        codex = CodexEnv.create(tmp_path, model, binary=codex_bin)
        result = codex.exec("write the greeting please")
        assert result.ok, result.describe()
    (path,) = codex.rollouts
    session = path.stem.split("-", 6)[-1]
    verdict = read_rollout(str(path), session_id=session)
    assert verdict.status == READY, verdict.detail
    shown = [type(event).__name__ for event in verdict.events]
    assert shown == [
        "HumanTurn",
        "ToolUse",
        "ToolResult",
        "ToolUse",
        "ToolResult",
        "AssistantText",
    ]
    turn, shell_call, shell_out, patch_call, patch_out, said = verdict.events
    assert isinstance(turn, HumanTurn) and turn.text == "write the greeting please"
    assert isinstance(shell_call, ToolUse) and shell_call.name == "Bash"
    assert shell_call.input == {"command": "echo hi > out.txt && cat out.txt"}
    assert isinstance(shell_out, ToolResult) and shell_out.tool_use_id == shell_call.tool_use_id
    assert isinstance(patch_call, ToolUse) and patch_call.name == "apply_patch"
    assert patch_call.input == {"command": PATCH}
    assert isinstance(patch_out, ToolResult) and "Success" in str(patch_out.text)
    assert isinstance(said, AssistantText) and said.text == "All done."
    assert (codex.project_dir / "src" / "greet.py").is_file()
