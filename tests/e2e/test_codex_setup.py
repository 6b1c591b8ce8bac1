"""``plangate setup --codex`` against the real Codex CLI 0.171.0: its app-server lists
plangate's hooks as trusted with the hash setup computed (and as modified after an edit), a
real ``codex exec`` session runs them (a person-only command refused, an ordinary one run
with no failed hook), and ``doctor --live``'s Codex proof holds, then fails for an edited
hook."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from codex_support import setup_codex

from plangate import hook_registry
from plangate.harness.codex import CodexEnv
from plangate.harness.standin import Script, StandIn, shell
from plangate.install import codex_hooks, codex_places
from plangate.install.codex_live import codex_line
from plangate.processes import run_bounded

pytestmark = pytest.mark.e2e


def _hooks_list(cx: CodexEnv, home: Path | None = None) -> list[dict[str, Any]]:
    """``hooks/list`` of ``codex app-server`` (JSON-RPC over stdio) in the project."""
    messages: list[dict[str, Any]] = [
        {"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "t", "version": "0"}}},
        {"method": "initialized"},
        {"id": 2, "method": "hooks/list", "params": {}},
    ]
    lines = "".join(json.dumps({"jsonrpc": "2.0", **m}) + "\n" for m in messages)
    out = cx.tmp / "app-server.out"
    # the server ends at the end of its input: keep it open until the answer is written
    script = (
        f"{{ printf '%s' {shlex.quote(lines)}; i=0; "
        f"while ! grep -q '\"id\":2' {shlex.quote(str(out))} && [ $i -lt 200 ]; "
        f"do sleep 0.1; i=$((i+1)); done; }} | {shlex.quote(str(cx.binary))} app-server "
        f"> {shlex.quote(str(out))}"
    )
    env = cx.environ({"CODEX_HOME": str(home)} if home is not None else None)
    done = run_bounded(["sh", "-c", script], timeout=60, cwd=cx.project_dir, env=env)
    assert done.returncode == 0, done.stderr
    for line in out.read_text().splitlines():
        message = json.loads(line)
        if message.get("id") == 2:
            hooks: list[dict[str, Any]] = message["result"]["data"][0]["hooks"]
            return hooks
    raise AssertionError(f"no hooks/list answer: {out.read_text()}")


def test_codex_trusts_what_setup_trusted_and_not_an_edited_hook(
    tmp_path: Path, codex_bin: Path
) -> None:
    cx = CodexEnv.create(tmp_path, "http://127.0.0.1:9/v1", binary=codex_bin)
    printed = setup_codex(cx)
    listed = _hooks_list(cx)
    ours = {h["key"]: h for h in listed}
    hooks_path = cx.codex_home / "hooks.json"
    data = json.loads(hooks_path.read_text())
    expected = codex_hooks.trust_entries(str(hooks_path), data)
    assert sorted(ours) == sorted(key for key, _ in expected)
    for key, digest in expected:
        assert ours[key]["trustStatus"] == "trusted"
        assert ours[key]["currentHash"] == digest
        assert f"trusted {key} = {digest}" in printed

    hooks_path.write_text(hooks_path.read_text().replace('"timeout": 25', '"timeout": 24'))
    edited = {h["key"]: h for h in _hooks_list(cx)}
    for key, digest in codex_hooks.trust_entries(
        str(hooks_path), json.loads(hooks_path.read_text())
    ):
        assert edited[key]["trustStatus"] == "modified"
        assert edited[key]["currentHash"] == digest  # the hash of the edited hook, as Codex has it


def test_a_linked_codex_home_is_trusted_by_its_real_path(tmp_path: Path, codex_bin: Path) -> None:
    cx = CodexEnv.create(tmp_path, "http://127.0.0.1:9/v1", binary=codex_bin)
    link = tmp_path / "linked-codex"
    link.symlink_to(cx.codex_home)
    printed = setup_codex(cx, home=link)
    listed = _hooks_list(cx, home=link)
    assert len(listed) == 3  # PreToolUse, UserPromptSubmit, Stop
    for hook in listed:
        assert hook["key"].startswith(str(cx.codex_home / "hooks.json") + ":")
        assert hook["trustStatus"] == "trusted"
        assert f"trusted {hook['key']} = {hook['currentHash']}" in printed


def test_a_real_session_runs_the_hooks(tmp_path: Path, codex_bin: Path) -> None:
    script = Script(
        main=[
            [shell("plangate approve demo design --yes")],
            [shell("echo hello > out.txt")],
            "Done.",
        ]
    )
    with StandIn(script) as model:
        cx = CodexEnv.create(tmp_path, model, binary=codex_bin)
        before = cx.config_path.read_bytes()
        setup_codex(cx)
        result = cx.exec("go", json_events=False, extra_args=["--color", "never"])
        requests = model.responses_requests(kind="main")
    assert result.ok, result.describe()
    assert len(requests) == 3
    refused = requests[1].text()
    assert "Command blocked by PreToolUse hook: [plangate]" in refused
    assert "protected_command" in refused
    assert (cx.project_dir / "out.txt").read_text() == "hello\n"  # the ordinary call ran
    assert "hook: PreToolUse Blocked" in result.stderr
    assert "Failed" not in result.stderr  # no hook output Codex rejected ({} for an allow)
    assert "hook: Stop" in result.stderr

    setup_codex(cx, uninstall=True)
    assert cx.config_path.read_bytes() == before
    assert not (cx.codex_home / "hooks.json").exists()


def test_doctor_live_proves_the_codex_hooks(tmp_path: Path, codex_bin: Path) -> None:
    cx = CodexEnv.create(tmp_path, "http://127.0.0.1:9/v1", binary=codex_bin)
    environ = {"CODEX_HOME": str(cx.codex_home), "PLANGATE_CODEX_BIN": str(codex_bin)}
    status, detail, _ = codex_line(environ, 90) or ("", "", "")
    assert status == "skip" and "setup --codex" in detail
    setup_codex(cx)
    status, detail, _ = codex_line(environ, 90) or ("", "", "")
    assert status == "ok", detail
    assert "protected_command" in detail and "0.171.0" in detail
    hooks_path = cx.codex_home / "hooks.json"
    hooks_path.write_text(hooks_path.read_text().replace('"timeout": 25', '"timeout": 24'))
    status, detail, remedy = codex_line(environ, 90) or ("", "", "")
    assert status == "problem", detail
    assert "plangate setup --codex" in remedy


def test_doctor_live_proves_hooks_registered_in_config_toml(
    tmp_path: Path, codex_bin: Path
) -> None:
    """plangate registered by the person in ``config.toml``'s ``[hooks]`` (no hooks.json) is
    proven too: trusted, the real session refuses; not trusted, it is a problem."""
    cx = CodexEnv.create(tmp_path, "http://127.0.0.1:9/v1", binary=codex_bin)
    environ = {"CODEX_HOME": str(cx.codex_home), "PLANGATE_CODEX_BIN": str(codex_bin)}
    command = hook_registry.hook_command(
        hook_registry.HOOK_MODULE_PREFIX + "contract_pre_tool_use", sys.executable
    )
    table = (
        '[[hooks.PreToolUse]]\nmatcher = "^Bash$"\n[[hooks.PreToolUse.hooks]]\n'
        f'type = "command"\ncommand = {json.dumps(command)}\ntimeout = 25\n'
    )
    config = cx.config_path
    before = config.read_text()
    config.write_text(before + "\n" + table)
    status, detail, remedy = codex_line(environ, 90) or ("", "", "")
    assert status == "problem", detail  # never trusted: Codex skips it without a word
    assert "config.toml [hooks]" in detail and "plangate setup --codex" in remedy
    place = codex_places.Place(str(config), codex_places.USER)
    trust = "".join(
        f"[hooks.state.{json.dumps(r.key)}]\ntrusted_hash = {json.dumps(r.digest)}\n"
        for r in codex_places.registrations(place)
    )
    config.write_text(before + "\n" + table + trust)
    status, detail, _ = codex_line(environ, 90) or ("", "", "")
    assert status == "ok", detail
    assert "config.toml [hooks]" in detail and "protected_command" in detail
    assert config.read_text() == before + "\n" + table + trust  # nothing of the user's written
