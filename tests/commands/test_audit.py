"""``plangate audit``, the hook-call trace it reads, and the stop held for unguarded calls.

The hooks run as Claude Code runs them (the registered command, the payload on stdin), so the
trace lines are real; a call "with the hooks switched off" is one whose hook is not run, as
Claude Code does not run it then. The journals are written in 2.1.332's layout where Claude
Code keeps them (:mod:`tests.contracts.conftest`), in a cc-sdd project whose shipped
contract applies.
"""

from __future__ import annotations

import io
import json
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from plangate import audit, audit_hold, hook_registry
from plangate.commands.audit import EXIT_UNGUARDED, EXIT_UNREADABLE, audit_command
from plangate.decisions import log, reasons
from plangate.decisions.defence_codes import AGENT_COMMAND, UNGUARDED_CALLS
from plangate.errors import PlangateError, UsageError
from plangate.hook_io import trace
from tests.contracts.conftest import Project, project, through_requirements

__all__ = ["project"]  # the fixture, used by name

CONTRACT_HOOK = "plangate.hooks.contract_pre_tool_use"
GUARD_HOOK = "plangate.hooks.pre_tool_use"


def run_hook(module: str, payload: dict[str, Any] | bytes) -> str:
    """The hook as Claude Code runs it: its registered command, the payload on stdin."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    done = subprocess.run(
        ["sh", "-c", hook_registry.hook_command(module)],
        input=data,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.decode()


def trace_of(state: Path) -> list[dict[str, Any]]:
    path = state / "analytics" / trace.TRACE_NAME
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def register(project: Project, *, gates: bool = False) -> None:
    """plangate's hooks in the project's shared settings, as `plangate setup --project`
    writes them."""
    hooks = hook_registry.hook_settings(gates, gates, workflow_contracts=True)
    folder = project.dir / ".claude"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps({"hooks": hooks}))
    project.journal.prompt("Go on.")


def call(project: Project, tool: str, tool_input: dict[str, Any], *, hooked: bool) -> str:
    """The model's call, journaled; its registered hooks run unless ``hooked`` is false."""
    payload = project.journaled(tool, tool_input)
    if hooked:
        for module in audit.covering(
            audit.registered(str(project.dir), str(project.config)),
            "PreToolUse",
            tool,
            tool_input,
            str(project.dir),
            str(project.config.parent),
        ):
            run_hook(hook_registry.HOOK_MODULE_PREFIX + module, payload)
    project.journal.tool_result(str(payload["tool_use_id"]), "ok")
    return str(payload["tool_use_id"])


def hook_all(project: Project) -> None:
    """Run the registered hooks for every call journaled so far (the hooks were on)."""
    regs = audit.registered(str(project.dir), str(project.config))
    for record in project.journal.records:
        content = record.get("message", {}).get("content")
        for block in content if isinstance(content, list) else ():
            if block.get("type") != "tool_use":
                continue
            payload = project.payload(block["name"], block["input"])
            payload["tool_use_id"] = block["id"]
            for module in audit.covering(
                regs, "PreToolUse", block["name"], block["input"], str(project.dir), "/"
            ):
                run_hook(hook_registry.HOOK_MODULE_PREFIX + module, payload)


def audited(project: Project) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    code = audit_command(
        project.journal.session_id,
        project=str(project.dir),
        as_json=True,
        config_dir=str(project.config),
        state_root=str(project.state),
        out=out,
    )
    return code, json.loads(out.getvalue())


# -- the trace -------------------------------------------------------------------------------


def test_the_fast_empty_answer_leaves_a_trace_line_keyed_by_the_call(project: Project) -> None:
    payload = project.payload("Bash", {"command": "ls"})
    assert run_hook(CONTRACT_HOOK, payload).strip() == "{}"
    [line] = trace_of(project.state)
    assert line["sid"] == project.journal.session_id
    assert line["id"] == payload["tool_use_id"]
    assert (line["ev"], line["tool"], line["hook"], line["out"]) == (
        "PreToolUse",
        "Bash",
        "contract_pre_tool_use",
        "none",
    )
    assert line["t0"] <= line["ts"]


def test_a_refusal_is_traced_with_its_code(project: Project) -> None:
    through_requirements(project)
    payload = project.journaled("Write", {"file_path": str(project.dir / "src" / "a.py")})
    answer = json.loads(run_hook(CONTRACT_HOOK, payload))
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    [line] = trace_of(project.state)
    assert line["out"] == "deny" and line["code"] == "contract_edit_scope"


def test_a_payload_over_64_kib_is_traced_by_its_tail(project: Project) -> None:
    tool_input = {"file_path": "/tmp/x", "content": 'y"tool_use_id":"forged' * 8000}
    payload = project.payload("Write", tool_input)
    data = json.dumps(payload, separators=(",", ":")).encode()
    assert len(data) > trace.HEAD_BYTES
    run_hook(CONTRACT_HOOK, data)
    [line] = trace_of(project.state)
    assert line["id"] == payload["tool_use_id"] and line["sid"] == project.journal.session_id


def test_the_trace_is_never_written_through_a_link(tmp_path: Path) -> None:
    folder = tmp_path / "state" / "analytics"
    folder.mkdir(parents=True)
    target = tmp_path / "elsewhere"
    target.write_text("")
    (folder / trace.TRACE_NAME).symlink_to(target)
    assert not trace.append(b"{}\n", str(tmp_path / "state"))
    assert target.read_text() == ""


def test_the_trace_keeps_two_generations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace, "ROTATE_BYTES", 100)
    root = str(tmp_path)
    for number in range(30):
        assert trace.append(b'{"n":%d}\n' % number, root)
    old, current = (Path(path) for path in trace.trace_paths(root))
    assert old.exists() and current.exists()
    assert len(old.read_bytes()) + len(current.read_bytes()) < 230


# -- the audit -------------------------------------------------------------------------------


def test_calls_made_with_the_hooks_off_are_listed_and_exit_1(project: Project) -> None:
    register(project)
    project.journal.prompt("/kiro-spec-init a greeting command")
    guarded = call(project, "Bash", {"command": "ls"}, hooked=True)
    off = call(project, "Bash", {"command": "python3 -c 'print(1)'"}, hooked=False)
    skipped = call(project, "Write", {"file_path": str(project.dir / "x.md")}, hooked=False)
    project.save()
    code, report = audited(project)
    assert code == EXIT_UNGUARDED
    assert [item["id"] for item in report["unguarded"]] == [off, skipped]
    assert report["unguarded"][0]["hooks"] == ["contract_pre_tool_use"]
    assert guarded not in json.dumps(report["unguarded"])
    assert report["checked"] == 3


def test_every_call_decided_exits_0(project: Project) -> None:
    register(project)
    call(project, "Bash", {"command": "ls"}, hooked=True)
    call(project, "Write", {"file_path": str(project.dir / "x.md")}, hooked=True)
    project.save()
    code, report = audited(project)
    assert code == 0 and report["unguarded"] == [] and report["checked"] == 2


def test_a_call_no_registered_matcher_or_condition_covers_is_not_expected(
    project: Project,
) -> None:
    register(project, gates=True)
    call(project, "Read", {"file_path": str(project.dir / "README.md")}, hooked=False)
    call(project, "Grep", {"pattern": "x"}, hooked=False)
    phase = project.config.parent / "skills" / "autoplan" / "sections" / "1-ceo.md"
    entry = call(project, "Read", {"file_path": str(phase)}, hooked=False)
    project.save()
    code, report = audited(project)
    assert code == EXIT_UNGUARDED
    assert [item["id"] for item in report["unguarded"]] == [entry]
    assert report["unguarded"][0]["hooks"] == ["pre_tool_use"]


def test_disable_all_hooks_does_not_hide_the_registrations(project: Project) -> None:
    register(project)
    local = project.dir / ".claude" / "settings.local.json"
    local.write_text(json.dumps({"disableAllHooks": True}))
    off = call(project, "Bash", {"command": "echo hi"}, hooked=False)
    project.save()
    code, report = audited(project)
    assert code == EXIT_UNGUARDED and [item["id"] for item in report["unguarded"]] == [off]


def test_a_hook_removed_from_the_settings_is_still_expected_once_it_ran(project: Project) -> None:
    register(project)
    call(project, "Bash", {"command": "ls"}, hooked=True)
    (project.dir / ".claude" / "settings.json").write_text("{}")
    off = call(project, "Bash", {"command": "echo later"}, hooked=False)
    project.save()
    code, report = audited(project)
    assert code == EXIT_UNGUARDED and [item["id"] for item in report["unguarded"]] == [off]


def test_without_any_registration_nothing_is_expected(project: Project) -> None:
    project.journal.prompt("Go on.")
    call(project, "Bash", {"command": "ls"}, hooked=False)
    project.save()
    code, report = audited(project)
    assert code == 0 and report["checked"] == 0


def test_refusals_and_approvals_are_listed_with_who_gave_them(project: Project) -> None:
    register(project)
    through_requirements(project)
    refused = project.journaled("Write", {"file_path": str(project.dir / "src" / "a.py")})
    run_hook(CONTRACT_HOOK, refused)
    project.answered(refused, "contract_edit_scope", "")
    project.person("Looks right: approve requirements.")
    design = project.journaled("Skill", {"skill": "kiro-spec-design", "args": "greet"})
    assert run_hook(CONTRACT_HOOK, design).strip() == "{}"
    # A plangate command the session ran, refused outside any hook call.
    later = time.time() + 0.05  # after the hook call, before the session's next record
    refusal = reasons.Decision.deny(AGENT_COMMAND)
    extra = {"event": "approval"}
    log.append_decision(refusal, state_root=str(project.state), now=later, extra=extra)
    project.journal._clock = datetime.fromtimestamp(later + 0.05, UTC)
    project.journal.text("Design started.")
    project.save()
    _, report = audited(project)
    assert [(r["id"], r["code"]) for r in report["refusals"]] == [
        (refused["tool_use_id"], "contract_edit_scope"),
        (None, AGENT_COMMAND),
    ]
    [approval] = report["approvals"]
    assert (approval["phase"], approval["via"]) == ("requirements", "human")
    assert approval["by"] == "a person's turn in the session"


def test_an_unreadable_journal_is_exit_3_and_an_unknown_session_is_usage(
    project: Project,
) -> None:
    path = project.save()
    path.write_text("not json\n")
    with pytest.raises(PlangateError) as caught:
        audited(project)
    assert "journal inspect" in caught.value.remedy
    from plangate import cli

    assert cli.exit_codes("audit").failure == EXIT_UNREADABLE
    with pytest.raises(UsageError):
        audit_command("no-such-session", project=str(project.dir), config_dir=str(project.config))


def test_the_newest_session_of_the_project_is_the_default(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    register(project)
    call(project, "Bash", {"command": "echo x"}, hooked=False)
    path = project.save()
    monkeypatch.chdir(project.dir)  # put back after the test: later tests run where they began
    out = io.StringIO()
    code = audit_command(
        None,
        config_dir=str(project.config),
        state_root=str(project.state),
        out=out,
        codex_home=str(project.dir / "no-codex"),  # no Codex session of the user's counts
    )
    assert code == EXIT_UNGUARDED
    assert str(path) in out.getvalue() and "UNGUARDED: 1 call(s)" in out.getvalue()


def test_if_conditions_in_permission_rule_syntax() -> None:
    home, cwd = "/home/u", "/p"
    covers = audit.condition_covers
    assert covers(
        "Read(**/autoplan/sections/*.md)",
        "Read",
        {"file_path": "/a/autoplan/sections/1.md"},
        cwd,
        home,
    )
    assert not covers(
        "Read(**/autoplan/sections/*.md)",
        "Read",
        {"file_path": "/a/autoplan/sections/x/1.md"},
        cwd,
        home,
    )
    assert covers("Read(//etc/*.conf)", "Read", {"file_path": "/etc/a.conf"}, cwd, home)
    assert covers("Read(~/notes/**)", "Read", {"file_path": "/home/u/notes/a/b"}, cwd, home)
    assert covers("Read(docs/*.md)", "Read", {"file_path": "docs/a.md"}, cwd, home)
    assert not covers("Read(docs/*.md)", "Read", {"file_path": "/q/docs/a.md"}, cwd, home)
    assert covers("Bash(git push:*)", "Bash", {"command": "git push origin"}, cwd, home)
    assert not covers("Bash(git push:*)", "Bash", {"command": "git status"}, cwd, home)
    assert covers("Agent", "Agent", {}, cwd, home) and not covers("Agent", "Read", {}, cwd, home)
    assert audit.matcher_covers("Skill|Write|Bash", "Bash")
    assert not audit.matcher_covers("Skill|Write|Bash", "BashOutput")
    assert audit.matcher_covers("Notebook.*", "NotebookEdit") and audit.matcher_covers("*", "X")


# -- the stop held once ----------------------------------------------------------------------


def stop_payload(project: Project) -> dict[str, Any]:
    path = project.save()
    return {
        "session_id": project.journal.session_id,
        "transcript_path": str(path),
        "cwd": str(project.dir),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }


def test_the_final_stop_in_a_workflow_is_held_once_naming_the_calls(project: Project) -> None:
    register(project)
    through_requirements(project)
    hook_all(project)
    offs = [call(project, "Bash", {"command": f"echo {n}"}, hooked=False) for n in range(5)]
    project.journal.text("Done.")
    payload = stop_payload(project)
    held = json.loads(run_hook("plangate.hooks.contract_stop", payload))
    assert held["decision"] == "block"
    assert UNGUARDED_CALLS in held["reason"]
    assert all(one in held["reason"] for one in offs[:3]), held["reason"]
    assert offs[3] not in held["reason"]
    assert "5 unguarded" in held["reason"] and "and 2 more" in held["reason"]
    logged = (project.state / "analytics" / "autoplan-guard.jsonl").read_text()
    assert UNGUARDED_CALLS in logged
    again = json.loads(run_hook("plangate.hooks.contract_stop", payload))
    assert again.get("decision") != "block" or UNGUARDED_CALLS not in again.get("reason", "")
    lines = [line for line in trace_of(project.state) if line["ev"] == "Stop"]
    assert [line["out"] for line in lines][0] == "block"
    # Switched off again after the hold: the next final stop is held again, once.
    later = call(project, "Bash", {"command": "echo later"}, hooked=False)
    project.journal.text("Done again.")
    payload = stop_payload(project)
    third = json.loads(run_hook("plangate.hooks.contract_stop", payload))
    assert third["decision"] == "block" and "6 unguarded" in third["reason"]
    assert later not in third["reason"]  # the first few are named, the rest counted
    fourth = json.loads(run_hook("plangate.hooks.contract_stop", payload))
    assert UNGUARDED_CALLS not in fourth.get("reason", "")


def test_a_stop_with_every_call_decided_or_outside_a_workflow_is_not_held(
    project: Project,
) -> None:
    register(project)
    call(project, "Bash", {"command": "echo outside"}, hooked=False)
    project.journal.text("Done.")
    assert audit_hold.held(stop_payload(project), "contract") is None
    through_requirements(project)
    hook_all(project)
    project.journal.text("Done.")
    assert audit_hold.held(stop_payload(project), "contract") is None


def marker(project: Project, count: int) -> Path:
    return (
        project.state
        / audit_hold.HOLDS_DIR
        / audit_hold.marker_name(project.journal.session_id, count)
    )


def test_two_stop_hooks_at_once_hold_once_between_them(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANGATE_AUTOPLAN_GATE", "on")
    register(project, gates=True)
    through_requirements(project)
    project.journal.slash_command("autoplan", "plan the greeting")
    hook_all(project)
    call(project, "Bash", {"command": "echo off"}, hooked=False)
    project.journal.text("Done.")
    data = stop_payload(project)
    first = audit_hold.held(data, "contract")
    second = audit_hold.held(data, "autoplan")
    assert first is not None and second is None
    marker(project, 1).unlink()
    assert audit_hold.held(data, "autoplan") is not None  # /autoplan alone holds too
    monkeypatch.setenv("PLANGATE_AUTOPLAN_GATE", "off")
    marker(project, 1).unlink()
    assert audit_hold.held(data, "autoplan") is None  # the /autoplan gate off: no hold


def test_a_call_claude_code_refused_itself_is_not_unguarded(project: Project) -> None:
    register(project)
    refused = project.journal.tool_use("Write", {"file_path": str(project.dir / "d.txt")})
    project.journal.tool_result(
        str(refused["message"]["content"][0]["id"]),
        "<tool_use_error>File is in a directory that is denied by your permission settings."
        "</tool_use_error>",
        is_error=True,
    )
    failed = project.journal.tool_use("Bash", {"command": "false"})
    failing = str(failed["message"]["content"][0]["id"])
    project.journal.tool_result(failing, "Error: Exit code 1", is_error=True)
    project.save()
    code, report = audited(project)
    assert code == EXIT_UNGUARDED and [item["id"] for item in report["unguarded"]] == [failing]
