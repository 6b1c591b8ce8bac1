"""Every place Codex 0.171.0 reads hooks from, as its own ``codex app-server`` lists them:
doctor finds plangate's hooks in each with the key and hash Codex has, and a registration in
two places really runs twice in a ``codex exec`` session."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from codex_support import setup_codex

from plangate.harness.codex import CodexEnv
from plangate.harness.standin import Script, StandIn, shell
from plangate.install import codex_hooks, codex_places
from plangate.processes import run_bounded
from tests.install.test_codex_doctor import toml_hook

pytestmark = pytest.mark.e2e


def _hooks_list(cx: CodexEnv, cwd: Path) -> dict[str, Any]:
    """``hooks/list`` of ``codex app-server`` (JSON-RPC over stdio) for a session in ``cwd``."""
    messages: list[dict[str, Any]] = [
        {"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "t", "version": "0"}}},
        {"method": "initialized"},
        {"id": 2, "method": "hooks/list", "params": {}},
    ]
    lines = "".join(json.dumps({"jsonrpc": "2.0", **m}) + "\n" for m in messages)
    out = cx.tmp / "app-server.out"
    script = (
        f"{{ printf '%s' {shlex.quote(lines)}; i=0; "
        f"while ! grep -q '\"id\":2' {shlex.quote(str(out))} && [ $i -lt 200 ]; "
        f"do sleep 0.1; i=$((i+1)); done; }} | {shlex.quote(str(cx.binary))} app-server "
        f"> {shlex.quote(str(out))}"
    )
    done = run_bounded(["sh", "-c", script], timeout=60, cwd=cwd, env=cx.environ())
    assert done.returncode == 0, done.stderr
    for line in out.read_text().splitlines():
        message = json.loads(line)
        if message.get("id") == 2:
            listed: dict[str, Any] = message["result"]["data"][0]
            return listed
    raise AssertionError(f"no hooks/list answer: {out.read_text()}")


def _trust_all(cx: CodexEnv, found: list[codex_places.Registration]) -> None:
    tables = "".join(
        f"[hooks.state.{json.dumps(r.key)}]\ntrusted_hash = {json.dumps(r.digest)}\n" for r in found
    )
    with cx.config_path.open("a", encoding="utf-8") as stream:
        stream.write(tables)


def test_doctor_reads_every_place_codex_lists(tmp_path: Path, codex_bin: Path) -> None:
    cx = CodexEnv.create(tmp_path, "http://127.0.0.1:9/v1", binary=codex_bin)
    setup_codex(cx)  # $CODEX_HOME/hooks.json
    with cx.config_path.open("a", encoding="utf-8") as stream:  # config.toml [hooks]
        stream.write(toml_hook("PreToolUse", "contract_pre_tool_use", "^(Bash|apply_patch)$"))
    project = cx.project_dir
    sub = project / "pkg"
    (project / ".codex").mkdir()
    stop = codex_hooks.hook_block(sys.executable, True)["Stop"][0]
    group = {"hooks": stop["hooks"]}
    (project / ".codex" / "hooks.json").write_text(json.dumps({"hooks": {"Stop": [group]}}))
    (sub / ".codex").mkdir(parents=True)
    (sub / ".codex" / "config.toml").write_text(toml_hook("Stop", "contract_stop"))

    found, unreadable = codex_places.all_registrations(str(cx.codex_home), str(sub))
    assert unreadable == []
    listed = _hooks_list(cx, sub)
    codex_has = {h["key"]: h for h in listed["hooks"]}
    assert sorted(r.key for r in found) == sorted(codex_has)  # every place, and nothing else
    for registration in found:
        assert codex_has[registration.key]["currentHash"] == registration.digest
    assert {h["source"] for h in listed["hooks"]} == {"user", "project"}
    assert any("loading hooks from both" in w for w in listed["warnings"])

    lines = codex_hooks.checks({"CODEX_HOME": str(cx.codex_home)}, str(sub), codex_found=True)
    twice = [line for line in lines if line.name == "codex hooks twice"]
    assert sorted(line.detail.split(" is registered")[0] for line in twice) == [
        "plangate's PreToolUse hook `contract_pre_tool_use`",
        "plangate's Stop hook `contract_stop`",
    ]


def test_a_hook_registered_twice_runs_twice(tmp_path: Path, codex_bin: Path) -> None:
    script = Script(main=[[shell("plangate approve demo design --yes")], "Done."])
    with StandIn(script) as model:
        cx = CodexEnv.create(tmp_path, model, binary=codex_bin)
        setup_codex(cx)
        config = codex_places.Place(str(cx.config_path), codex_places.USER)
        with cx.config_path.open("a", encoding="utf-8") as stream:
            stream.write(toml_hook("PreToolUse", "contract_pre_tool_use", "^Bash$"))
        _trust_all(cx, codex_places.registrations(config))
        result = cx.exec("go", json_events=False, extra_args=["--color", "never"])
    assert result.ok, result.describe()
    assert result.stderr.count("hook: PreToolUse Blocked") == 2  # both ran, both refused
    lines = codex_hooks.checks({"CODEX_HOME": str(cx.codex_home)}, str(cx.project_dir), True)
    [twice] = [line for line in lines if line.name == "codex hooks twice"]
    assert "PreToolUse hook `contract_pre_tool_use` is registered 2 times" in twice.detail
    assert result.stderr.count("hook: Stop") >= 1
