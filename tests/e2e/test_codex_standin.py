"""The stand-in's Responses API and the harness that runs the real Codex CLI against it.

The first group talks HTTP to the stand-in directly (fast, no CLI); the tests marked ``e2e``
run real ``codex exec`` sessions and the terminal UI (tmux) offline, with the pinned Codex CLI
(:data:`plangate.harness.codex.VERIFIED_VERSION`).
"""

from __future__ import annotations

import json
import tomllib
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from codex_tui import CodexTui

from plangate.harness.autoplan import Player
from plangate.harness.codex import MODEL, CodexEnv, config_toml
from plangate.harness.standin import ModelRequest, Reply, Script, StandIn, text, tool_use
from plangate.harness.standin.responses import (
    PATCH_TOOL,
    SHELL_TOOL,
    apply_patch,
    messages_view,
    shell,
)

# ------------------------------------------------------------------------------------------
# helpers


def _post(model: StandIn, body: dict[str, Any], headers: dict[str, str] | None = None) -> bytes:
    request = urllib.request.Request(
        model.codex_base_url() + "/responses",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **(headers or {})},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.headers.get("Content-Type", "").startswith("text/event-stream")
        data: bytes = response.read()
        return data


def _events(payload: bytes) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for chunk in payload.decode().split("\n\n"):
        if not chunk.strip():
            continue
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        data = json.loads(lines["data"])
        assert data["type"] == lines["event"]
        found.append((lines["event"], data))
    return found


def _user(prompt: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}


#: What 0.171.0's terminal UI tries to reach at every start (announcement_tip.toml).
ANNOUNCEMENT_FETCH = "CONNECT raw.githubusercontent.com:443"
PATCH = "*** Begin Patch\n*** Add File: added.txt\n+written by apply_patch\n*** End Patch\n"


# ------------------------------------------------------------------------------------------
# the wire format, without the CLI


def test_a_reply_streams_as_responses_events() -> None:
    script = Script(main=[["Looking.", tool_use("Bash", command="ls", description="List")]])
    with StandIn(script) as model:
        payload = _post(model, {"model": MODEL, "stream": True, "input": [_user("go")]})
        [recorded] = model.responses_requests()
    events = _events(payload)
    names = [name for name, _ in events]
    assert names[0] == "response.created" and names[-1] == "response.completed"
    assert names.count("response.output_item.added") == 2
    assert names.count("response.output_item.done") == 2
    assert [d["sequence_number"] for _, d in events] == list(range(len(events)))
    done = [d["item"] for name, d in events if name == "response.output_item.done"]
    assert done[0]["type"] == "message"
    assert done[0]["content"][0] == {"type": "output_text", "text": "Looking.", "annotations": []}
    deltas = "".join(d["delta"] for name, d in events if name == "response.output_text.delta")
    assert deltas == "Looking."
    # Claude Code's Bash step is Codex's shell tool; its description has no place there.
    assert done[1]["type"] == "function_call" and done[1]["name"] == SHELL_TOOL
    assert json.loads(done[1]["arguments"]) == {"cmd": "ls"}
    completed = events[-1][1]["response"]
    assert completed["status"] == "completed" and completed["output"] == done
    assert set(completed["usage"]) >= {"input_tokens", "output_tokens", "total_tokens"}
    assert completed["usage"]["input_tokens_details"] == {"cached_tokens": 0}
    assert recorded.api == "responses" and recorded.kind == "main"
    assert recorded.reply == completed
    assert not recorded.is_messages


def test_patch_and_other_calls_as_output_items() -> None:
    script = Script(main=[[apply_patch(PATCH), tool_use("view_image", path="a.png")]])
    with StandIn(script) as model:
        events = _events(_post(model, {"model": MODEL, "stream": True, "input": [_user("go")]}))
        calls = model.tool_calls()
    done = [d["item"] for name, d in events if name == "response.output_item.done"]
    assert done[0]["type"] == "custom_tool_call" and done[0]["name"] == PATCH_TOOL
    assert done[0]["input"] == PATCH
    assert done[1]["type"] == "function_call" and done[1]["name"] == "view_image"
    assert json.loads(done[1]["arguments"]) == {"path": "a.png"}
    assert [(c.name, dict(c.input)) for c in calls] == [
        (PATCH_TOOL, {"input": PATCH}),
        ("view_image", {"path": "a.png"}),
    ]
    assert [c.id for c in calls] == [d["call_id"] for d in done]
    added = [d["item"] for name, d in events if name == "response.output_item.added"]
    assert added[0]["input"] == "" and added[0]["status"] == "in_progress"


def test_a_request_reads_as_messages_to_a_script() -> None:
    body = {
        "model": MODEL,
        "input": [
            {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": "BASE"}],
            },
            _user("<environment_context>cwd</environment_context>"),
            _user("do it"),
            {"type": "reasoning", "summary": [], "content": None, "encrypted_content": None},
            {
                "type": "function_call",
                "name": SHELL_TOOL,
                "call_id": "c1",
                "arguments": '{"cmd":"ls"}',
            },
            {"type": "function_call_output", "call_id": "c1", "output": "Output:\nnotes.txt\n"},
            {"type": "custom_tool_call", "name": PATCH_TOOL, "call_id": "c2", "input": PATCH},
            {
                "type": "custom_tool_call_output",
                "call_id": "c2",
                "output": [{"type": "input_text", "text": "Success."}],
            },
        ],
        "tools": [
            {"type": "function", "name": SHELL_TOOL, "parameters": {}},
            {"type": "custom", "name": PATCH_TOOL},
            {"type": "web_search"},
        ],
    }
    view = messages_view(body)
    request = ModelRequest(body=view, kind="main", api="responses", wire=body)
    assert request.system == "BASE"
    assert request.tool_names == [SHELL_TOOL, PATCH_TOOL, "web_search"]
    assert request.first_user_text.endswith("do it")
    roles = [m["role"] for m in request.messages]
    assert roles == ["user", "assistant", "user", "assistant", "user"]
    shell_use, shell_output, patch_use, patch_output = request.messages[1:]
    assert shell_use["content"] == [
        {"type": "tool_use", "id": "c1", "name": SHELL_TOOL, "input": {"cmd": "ls"}}
    ]
    assert shell_output["content"] == [
        {"type": "tool_result", "tool_use_id": "c1", "content": "Output:\nnotes.txt\n"}
    ]
    assert patch_use["content"][0]["input"] == {"input": PATCH}
    # A script reads the results of the last call as Claude Code's: the last user message's.
    assert [(r["tool_use_id"], r["content"]) for r in request.tool_results()] == [
        ("c2", "Success.")
    ]


def test_the_title_request_is_a_side_request() -> None:
    asked: list[ModelRequest] = []

    def script(request: ModelRequest) -> Reply:
        asked.append(request)
        return Reply([text("main answer")]) if request.kind == "main" else Reply([text("x")])

    title = json.dumps({"thread_source": "thread_title", "turn_id": "t"})
    with StandIn(Script(main=["main answer"])) as model:
        events = _events(
            _post(model, {"input": [_user("name it")]}, {"x-codex-turn-metadata": title})
        )
        [recorded] = model.responses_requests("side")
        assert isinstance(model.script, Script) and model.script.remaining_main == 1
    assert recorded.side_reason == "title"
    assert events[-1][1]["response"]["output"][0]["content"][0]["text"] == "Stand-in session"
    with StandIn(script) as model:
        user = json.dumps({"thread_source": "user"})
        _post(model, {"input": [_user("hi")]}, {"x-codex-turn-metadata": user})
    assert [r.kind for r in asked] == ["main"] and asked[0].api == "responses"


def test_the_config_points_codex_at_the_standin(tmp_path: Path) -> None:
    project = tmp_path / "p"
    config = tomllib.loads(config_toml("http://127.0.0.1:9/v1", [project]))
    assert config["model"] == MODEL
    provider = config["model_providers"][config["model_provider"]]
    assert provider["wire_api"] == "responses"
    assert provider["base_url"] == "http://127.0.0.1:9/v1"
    assert provider["request_max_retries"] == 0 and provider["stream_max_retries"] == 0
    assert config["projects"][str(project)] == {"trust_level": "trusted"}
    assert config["analytics"] == {"enabled": False}
    assert not any(config["features"].values())


def test_a_refused_tunnel_is_recorded() -> None:
    with StandIn() as model:
        import http.client

        connection = http.client.HTTPConnection("127.0.0.1", model.port, timeout=5)
        connection.request("CONNECT", "chatgpt.com:443")
        assert connection.getresponse().status == 403
        connection.close()
        assert model.outside_attempts() == ["CONNECT chatgpt.com:443"]


# ------------------------------------------------------------------------------------------
# the real Codex CLI


def _env(tmp_path: Path, model: StandIn, codex_bin: Path) -> CodexEnv:
    cx = CodexEnv.create(tmp_path / "cx", model, binary=codex_bin)
    (cx.project_dir / "notes.txt").write_text("hello notes\n", encoding="utf-8")
    return cx


@pytest.mark.e2e
def test_exec_gets_a_text_answer(tmp_path: Path, codex_bin: Path) -> None:
    with StandIn(Script(main=["The stand-in says PINEAPPLE-42."])) as model:
        cx = _env(tmp_path, model, codex_bin)
        result = cx.exec("say the word")
        requests = model.responses_requests()
        assert result.ok, result.describe()
        assert result.last_message == "The stand-in says PINEAPPLE-42."
        assert [r.kind for r in requests] == ["main"]
        assert model.outside_attempts() == [], "Codex tried to reach the network"
        assert set(model.paths()) == {"POST /v1/responses"}
    [request] = requests
    assert request.headers["originator"] == "codex_exec"
    assert request.headers["authorization"] == "Bearer sk-plangate-standin"
    body = request.body
    assert body is not None and body["stream"] is True and body["model"] == MODEL
    view = request.request_view()
    assert view is not None
    tools = [t["name"] for t in view["tools"]]
    assert SHELL_TOOL in tools and PATCH_TOOL in tools
    # Codex's own user items (<environment_context>) and the prompt share the last message.
    [prompt_message] = view["messages"]
    assert prompt_message["role"] == "user"
    assert prompt_message["content"][0]["text"].startswith("<environment_context>")
    assert prompt_message["content"][-1] == {"type": "text", "text": "say the word"}
    assert result.thread_id is not None and result.rollout is not None
    assert result.rollout.name.endswith(f"{result.thread_id}.jsonl")
    lines = [json.loads(line) for line in result.rollout.read_text().splitlines()]
    assert lines[0]["type"] == "session_meta"
    assert lines[0]["payload"]["cli_version"] == "0.171.0"


@pytest.mark.e2e
def test_exec_runs_a_shell_call_and_sends_its_output_back(tmp_path: Path, codex_bin: Path) -> None:
    seen: list[ModelRequest] = []

    def after_shell(request: ModelRequest) -> Reply:
        seen.append(request)
        return Reply([text("The shell said it.")])

    # Claude Code's Bash step, as a script for either CLI writes it, played by the Player
    # the /autoplan sessions use.
    player = Player(
        [[tool_use("Bash", command="echo shell-$((6 * 7)); cat notes.txt")], after_shell]
    )
    with StandIn(player) as model:
        cx = _env(tmp_path, model, codex_bin)
        result = cx.exec("run it")
        calls = model.tool_calls()
    assert result.ok, result.describe()
    assert [c.name for c in calls] == [SHELL_TOOL]
    [request] = seen
    [output] = request.tool_results()
    assert output["tool_use_id"] == calls[0].id
    assert "shell-42\nhello notes\n" in output["content"]
    assert "Process exited with code 0" in output["content"]
    executed = [
        e["item"]
        for e in result.events
        if e.get("type") == "item.completed" and e["item"]["type"] == "command_execution"
    ]
    assert [(i["exit_code"], i["aggregated_output"]) for i in executed] == [
        (0, "shell-42\nhello notes\n")
    ]
    assert result.last_message == "The shell said it."


@pytest.mark.e2e
def test_exec_applies_a_patch(tmp_path: Path, codex_bin: Path) -> None:
    script = Script(main=[[apply_patch(PATCH)], [shell("cat added.txt")], "Patched."])
    with StandIn(script) as model:
        cx = _env(tmp_path, model, codex_bin)
        result = cx.exec("write the file")
        requests = model.responses_requests()
    assert result.ok, result.describe()
    assert (cx.project_dir / "added.txt").read_text() == "written by apply_patch\n"
    assert len(requests) == 3
    view = requests[1].request_view()
    assert view is not None
    patched = ModelRequest(body=view, kind="main").tool_results()
    assert "Success. Updated the following files:\nA added.txt" in patched[0]["content"]
    changes = [
        e["item"]["changes"]
        for e in result.events
        if e.get("type") == "item.completed" and e["item"]["type"] == "file_change"
    ]
    assert changes == [[{"path": str(cx.project_dir / "added.txt"), "kind": "add"}]]
    assert result.last_message == "Patched."


@pytest.mark.e2e
def test_the_terminal_ui_shows_the_scripted_answer(tmp_path: Path, codex_bin: Path) -> None:
    with StandIn(Script(main=["The stand-in says MANGO-7."])) as model:
        cx = _env(tmp_path, model, codex_bin)
        with CodexTui(cx) as tui:
            tui.start()
            tui.type("say the word")
            tui.wait_for("The stand-in says MANGO-7.", 30)
            tui.wait_idle()
            status = tui.exit()
            farewell = tui.screen()
        requests = model.responses_requests()
        outside = model.outside_attempts()
    # The terminal UI fetches its announcement tip from GitHub whatever the config says; the
    # proxy (the stand-in) refuses it, and that is its only attempt to go outside.
    assert set(outside) <= {ANNOUNCEMENT_FETCH}, outside
    # Ctrl-C at the empty input line quits and says how to resume the session. tmux 3.3a now
    # and then leaves the exited CLI unreaped (a zombie) and so reports no exit status.
    assert status in (0, None)
    assert "codex resume" in farewell
    main = [r for r in requests if r.kind == "main"]
    assert len(main) == 1 and main[0].headers["originator"] == "codex-tui"
    # The UI names its thread with a request of its own, answered without using a step.
    assert [r.side_reason for r in requests if r.kind == "side"] in ([], ["title"])
    # One session file: the title thread is not saved as one.
    assert len(cx.rollouts) == 1, cx.rollouts
    # --no-daemon: no app-server copied its binaries into CODEX_HOME (or outlived the UI).
    assert not (cx.codex_home / "packages").exists()
