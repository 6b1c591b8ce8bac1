"""The stand-in model and the harness that runs the real Claude Code CLI against it.

The first group talks HTTP to the stand-in directly (fast, no CLI); the tests marked ``e2e`` run
real ``claude -p`` sessions offline.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import subagents_script
from plangate.claude_cli import ClaudeNotFoundError, find_claude
from plangate.harness.claude import ClaudeEnv, ClaudeResult
from plangate.harness.standin import ModelRequest, Reply, Script, StandIn, text, tool_use
from plangate.locations import project_slug
from plangate.processes import marked_pids

MakeEnv = Callable[[StandIn], ClaudeEnv]


# ------------------------------------------------------------------------------------------
# helpers


def _post(model: StandIn, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
    request = urllib.request.Request(
        model.base_url + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers.get("Content-Type", ""), response.read()


def _sse_events(payload: bytes) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in payload.decode().strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def _body(
    prompt: str, *, system: str = "You are Claude Code.", tools: bool = True
) -> dict[str, Any]:
    return {
        "model": "claude-test",
        "max_tokens": 100,
        "stream": True,
        "system": [{"type": "text", "text": system}],
        "tools": [{"name": "Bash", "input_schema": {"type": "object"}}] if tools else [],
        "messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]}],
    }


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _tree(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r.get("type") in ("user", "assistant", "attachment", "system")]


def _ok(result: ClaudeResult) -> None:
    assert result.ok, result.describe()


# ------------------------------------------------------------------------------------------
# the stand-in on its own


def test_streams_text_and_tool_use_as_sse() -> None:
    script = Script(main=[[text("Looking."), tool_use("Bash", command="ls")]])
    with StandIn(script) as model:
        content_type, payload = _post(model, "/v1/messages?beta=true", _body("hi"))
    assert content_type.startswith("text/event-stream")
    events = _sse_events(payload)
    names = [name for name, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert events[0][1]["message"]["id"].startswith("msg_")
    starts = [data["content_block"] for name, data in events if name == "content_block_start"]
    assert starts[0] == {"type": "text", "text": ""}
    assert starts[1]["type"] == "tool_use" and starts[1]["id"].startswith("toolu_")
    partial = "".join(
        data["delta"]["partial_json"]
        for name, data in events
        if name == "content_block_delta" and data["delta"]["type"] == "input_json_delta"
    )
    assert json.loads(partial) == {"command": "ls"}
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_non_streaming_request_gets_a_message_object() -> None:
    with StandIn(Script(main=["plain answer"])) as model:
        _, payload = _post(model, "/v1/messages", {**_body("hi"), "stream": False})
    message = json.loads(payload)
    assert message["content"] == [{"type": "text", "text": "plain answer"}]
    assert message["stop_reason"] == "end_turn"


def test_runs_out_gracefully_and_records_everything() -> None:
    with StandIn(Script(main=["first"], fallback="out of script")) as model:
        _post(model, "/v1/messages", _body("one"))
        _, payload = _post(model, "/v1/messages", _body("two"))
        _, counted = _post(model, "/v1/messages/count_tokens", _body("three"))
        _post(model, "/api/anything", {})
    texts = [
        d["delta"]["text"]
        for n, d in _sse_events(payload)
        if n == "content_block_delta" and d["delta"]["type"] == "text_delta"
    ]
    assert "".join(texts) == "out of script"
    assert json.loads(counted)["input_tokens"] > 0
    assert [r.kind for r in model.requests] == ["main", "main", "count_tokens", "other"]
    assert model.saw("three") and not model.saw("never sent")


def test_classifies_subagent_compaction_and_side_requests() -> None:
    script = Script(
        main=[[tool_use("Agent", description="d", prompt="SUB-1: count things")]],
        subagents={"sub-1": ["counted"]},
    )
    with StandIn(script) as model:
        _post(model, "/v1/messages", _body("main prompt"))
        _, sub = _post(
            model,
            "/v1/messages",
            _body("SUB-1: count things", system="x-anthropic-billing-header: cc_is_subagent=true;"),
        )
        _post(
            model,
            "/v1/messages",
            _body("Your task is to create a detailed summary of the conversation so far"),
        )
        _post(model, "/v1/messages", _body("name this", system="Write a title", tools=False))
    kinds = [(r.kind, r.side_reason, r.agent_prompt) for r in model.message_requests()]
    assert kinds == [
        ("main", None, None),
        ("subagent", None, "SUB-1: count things"),
        ("side", "compact", None),
        ("side", "title", None),
    ]
    assert b"counted" in sub


def test_script_may_be_a_function_and_errors_do_not_hang() -> None:
    seen: list[ModelRequest] = []

    def script(request: ModelRequest) -> Reply:
        seen.append(request)
        if len(seen) == 2:
            raise RuntimeError("boom")
        return Reply([text(f"you said {request.last_user_text}")])

    with StandIn(script) as model:
        _, first = _post(model, "/v1/messages", _body("ping"))
        _, second = _post(model, "/v1/messages", _body("again"))
    assert b"you said ping" in first
    assert b"stand-in script error" in second
    assert len(model.errors) == 1


def test_missing_cli_names_make_setup(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PLANGATE_CLAUDE_BIN", str(tmp_path / "nope"))
    with pytest.raises(ClaudeNotFoundError, match="make setup"):
        find_claude()


# ------------------------------------------------------------------------------------------
# the real CLI


@pytest.mark.e2e
def test_plain_session_writes_a_journal(make_env: MakeEnv) -> None:
    script = Script()
    with StandIn(script) as model:
        cc = make_env(model)
        script.add_main(
            [tool_use("Read", file_path=str(cc.project_dir / "notes.txt"))],
            [text("Now a command."), tool_use("Bash", command="echo hi", description="Say hi")],
            "The notes say hello.",
        )
        result = cc.run("Read the notes.", allowed_tools=["Read", "Bash"])
    _ok(result)
    assert result.result_text == "The notes say hello."
    assert result.journal_path is not None and result.journal_path.is_file()
    assert result.journal_path.parent.name == project_slug(str(cc.project_dir))
    records = _records(result.journal_path)
    assert {r["sessionId"] for r in records} == {result.session_id}
    assert any(r.get("version") == "2.1.332" for r in records)
    results = [
        block
        for r in records
        if r.get("type") == "user" and isinstance(r["message"]["content"], list)
        for block in r["message"]["content"]
        if block.get("type") == "tool_result"
    ]
    assert "hello notes" in results[0]["content"] and results[1]["content"] == "hi"
    assert [r.kind for r in model.message_requests()] == ["main"] * 3
    assert model.saw("hello notes")  # the tool result went back to the model
    assert result.subagent_journals == []


@pytest.mark.e2e
def test_pretooluse_deny_keeps_the_file_from_the_model(
    make_env: MakeEnv, hook_script: Callable[[str], str], hook_out: Path
) -> None:
    deny = hook_script(
        "if payload.get('tool_name') == 'Read':\n"
        "    print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PreToolUse',"
        " 'permissionDecision': 'deny', 'permissionDecisionReason': 'DENIED-BY-TEST'}}))"
    )
    script = Script()
    with StandIn(script) as model:
        cc = make_env(model)
        secret = cc.project_dir / "secret.txt"
        secret.write_text("TOP-SECRET-CONTENT\n")
        script.add_main([tool_use("Read", file_path=str(secret))], "I could not read it.")
        settings = {
            "hooks": {
                "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": deny}]}]
            }
        }
        result = cc.run("Read secret.txt", settings=settings, allowed_tools=["Read"])
    _ok(result)
    assert not model.saw("TOP-SECRET-CONTENT")
    assert model.saw("DENIED-BY-TEST")
    payload = json.loads((hook_out / "01-PreToolUse.json").read_text())
    assert payload["tool_input"] == {"file_path": str(secret)}
    assert result.journal_path is not None
    denied = [
        r
        for r in _records(result.journal_path)
        if r.get("permissionDecision", {}).get("source") == "hook"
    ]
    assert len(denied) == 1 and denied[0]["message"]["content"][0]["is_error"] is True


@pytest.mark.e2e
def test_stop_hook_blocks_once(
    make_env: MakeEnv, hook_script: Callable[[str], str], hook_out: Path
) -> None:
    block = hook_script(
        "if not payload.get('stop_hook_active'):\n"
        "    print(json.dumps({'decision': 'block', 'reason': 'FINISH-THE-CHECKLIST'}))"
    )
    with StandIn(Script(main=["Done, I think.", "Checklist finished."])) as model:
        cc = make_env(model)
        settings = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": block}]}]}}
        result = cc.run("Do the work.", settings=settings)
    _ok(result)
    assert result.result_text == "Checklist finished."
    assert model.saw("FINISH-THE-CHECKLIST")
    stops = [json.loads(p.read_text()) for p in sorted(hook_out.glob("*-Stop.json"))]
    assert [s["stop_hook_active"] for s in stops] == [False, True]
    assert stops[0]["last_assistant_message"] == "Done, I think."


@pytest.mark.e2e
def test_resume_compact_and_fork(make_env: MakeEnv) -> None:
    script = Script(main=["first answer", "second answer", "after compaction", "in the fork"])
    with StandIn(script) as model:
        cc = make_env(model)
        first = cc.run("First prompt.")
        _ok(first)
        second = cc.run("Second prompt.", resume=first.session_id)
        _ok(second)
        assert second.session_id == first.session_id
        compact = cc.run("/compact", continue_session=True)
        _ok(compact)
        third = cc.run("Third prompt.", resume=first.session_id)
        _ok(third)
        fork = cc.run("Fork prompt.", resume=first.session_id, fork_session=True)
        _ok(fork)
    assert [r.side_reason for r in model.message_requests("side")] == ["compact"]
    assert [r.kind for r in model.message_requests()].count("main") == 4
    assert first.journal_path is not None and fork.journal_path is not None
    records = _records(first.journal_path)
    boundaries = [r for r in _tree(records) if r.get("subtype") == "compact_boundary"]
    assert len(boundaries) == 1 and boundaries[0]["parentUuid"] is None
    assert any(r.get("isCompactSummary") for r in records)
    assert fork.session_id != first.session_id
    assert fork.journal_path != first.journal_path and fork.journal_path.is_file()
    assert fork.result_text == "in the fork"
    assert len(first.journals) == 2


@pytest.mark.e2e
def test_foreground_and_background_subagents(make_env: MakeEnv) -> None:
    script = subagents_script()
    with StandIn(script) as model:
        cc = make_env(model)
        result = cc.run("Use agents.", allowed_tools=["Agent", "Bash"], timeout=120)
    _ok(result)
    assert result.result_text == "Background check reported."
    subagent_prompts = [r.agent_prompt for r in model.message_requests("subagent")]
    assert subagent_prompts.count("FG-TASK: count files") == 2
    assert subagent_prompts.count("BG-TASK: slow check") == 2
    assert script.remaining_main == 0
    assert len(result.subagent_journals) == 2
    first_lines = [_records(p)[0] for p in result.subagent_journals]
    assert {r["message"]["content"] for r in first_lines} == {
        "FG-TASK: count files",
        "BG-TASK: slow check",
    }
    assert all(r["isSidechain"] for r in first_lines)
    assert model.saw("<task-notification>")


@pytest.mark.e2e
def test_timeout_kills_the_session(make_env: MakeEnv) -> None:
    # A plain `sleep` is refused by the Bash tool ("Foreground sleep is blocked").
    wait = 'python3 -c "import time; time.sleep(60)"'
    script = Script(main=[[tool_use("Bash", command=wait, description="Wait a minute")]])
    with StandIn(script) as model:
        cc = make_env(model)
        started = time.monotonic()
        result = cc.run("Sleep.", allowed_tools=["Bash"], timeout=3)
    assert result.timed_out and not result.ok
    # Real time: the session is killed at its 3 s timeout; 30 s leaves a busy machine room and
    # still fails a session left to run out its minute-long command.
    assert time.monotonic() - started < 30
    # The Bash tool runs the command in a process group of its own: it must be gone too.
    assert marked_pids(result.run_token) == []
