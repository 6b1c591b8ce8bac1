"""``plangate audit`` of a Codex CLI session, in-process: a rollout in 0.171.0's layout (the
lines a real ``codex exec`` wrote, ``tests/e2e/test_codex_audit.py``), plangate's hooks
registered and trusted by ``plangate setup --codex`` in a temporary ``CODEX_HOME``, and the
trace lines the hooks leave (one test runs the real hook command on a Codex payload)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from plangate import audit_codex, hook_registry
from plangate.commands.audit import EXIT_UNGUARDED, JournalUnreadable, audit_command
from plangate.errors import UsageError
from plangate.hook_io import trace
from plangate.install import codex_hooks
from plangate.install.setup import setup

SESSION = "01a248bf-3d29-7003-91cd-8f8fa4ff37bc"
T0 = datetime(2026, 12, 6, 0, 27, 2, tzinfo=UTC)
PATCH = "*** Begin Patch\n*** Add File: a.txt\n+hello\n*** End Patch\n"


def at(seconds: float) -> str:
    return trace.utc((T0 + timedelta(seconds=seconds)).timestamp())


class Session:
    """A Codex session being written: its rollout, and the trace lines its hooks leave."""

    def __init__(self, tmp_path: Path, session_id: str = SESSION) -> None:
        self.home = tmp_path / "codex"
        self.project = tmp_path / "project"
        self.state = tmp_path / "state"
        self.project.mkdir(parents=True, exist_ok=True)
        (self.project / ".git").mkdir(exist_ok=True)
        self.id = session_id
        folder = self.home / "sessions" / "2026" / "12" / "06"
        folder.mkdir(parents=True, exist_ok=True)
        self.rollout = folder / f"rollout-2026-12-06T00-27-02-{session_id}.jsonl"
        self.lines: list[dict[str, Any]] = []
        self.turns = 0
        self._line(
            0, "session_meta", {"id": session_id, "cwd": str(self.project), "source": "exec"}
        )

    def _line(self, t: float, kind: str, payload: dict[str, Any]) -> None:
        self.lines.append(
            {"timestamp": at(t), "ordinal": len(self.lines), "type": kind, "payload": payload}
        )
        self.rollout.write_text("".join(json.dumps(line) + "\n" for line in self.lines))

    def started(self, t: float) -> None:
        self.turns += 1
        self._line(t, "event_msg", {"type": "task_started", "turn_attribution": {}})

    def typed(self, t: float, text: str) -> None:
        item = {"type": "UserMessage", "id": f"u{t}", "content": [{"type": "text", "text": text}]}
        self._line(t, "event_msg", {"type": "item_completed", "item": item})

    def shell(self, t: float, call_id: str, command: str) -> None:
        arguments = json.dumps({"cmd": command})
        self._line(
            t,
            "response_item",
            {
                "type": "function_call",
                "name": "exec_command",
                "arguments": arguments,
                "call_id": call_id,
            },
        )
        output = "Chunk ID: 1\nProcess exited with code 0\nOutput:\n"
        self._line(
            t + 0.1,
            "response_item",
            {"type": "function_call_output", "call_id": call_id, "output": output},
        )

    def patch(self, t: float, call_id: str) -> None:
        call = {
            "type": "custom_tool_call",
            "name": "apply_patch",
            "input": PATCH,
            "call_id": call_id,
        }
        self._line(t, "response_item", call)
        self._line(
            t + 0.1,
            "response_item",
            {"type": "custom_tool_call_output", "call_id": call_id, "output": "Exit code: 0\n"},
        )

    def other_tool(self, t: float, call_id: str) -> None:
        call = {
            "type": "function_call",
            "name": "view_image",
            "arguments": "{}",
            "call_id": call_id,
        }
        self._line(t, "response_item", call)

    def complete(self, t: float) -> None:
        self._line(t, "event_msg", {"type": "task_complete", "turn_id": f"turn-{self.turns}"})

    def traced(
        self,
        t: float,
        event: str,
        hook: str,
        *,
        call_id: str | None = None,
        tool: str | None = None,
        out: str = "none",
        code: str | None = None,
    ) -> None:
        entry: dict[str, Any] = {
            "ts": at(t + 0.02),
            "t0": at(t),
            "sid": self.id,
            "ev": event,
            "tool": tool,
            "id": call_id,
            "hook": hook,
            "out": out,
            "code": code,
        }
        line = json.dumps({k: v for k, v in entry.items() if v is not None}) + "\n"
        assert trace.append(line.encode(), str(self.state))

    def audit(self, session: str | None = None, **extra: Any) -> tuple[int, dict[str, Any]]:
        out = io.StringIO()
        code = audit_command(
            session if session is not None else self.id,
            project=str(self.project),
            as_json=True,
            config_dir=str(self.project.parent / "no-claude"),
            state_root=str(self.state),
            codex_home=str(self.home),
            out=out,
            **extra,
        )
        return code, json.loads(out.getvalue())


def set_up(home: Path, *, uninstall: bool = False) -> None:
    setup(
        project=False,
        uninstall=uninstall,
        ceo_review_gate=None,
        autoplan_gate=None,
        out=io.StringIO(),
        python=sys.executable,
        environ={"CODEX_HOME": str(home)},
        codex=True,
    )


def guarded_turn(s: Session, start: float, *, hooks: bool = True, tag: str = "1") -> None:
    """A turn: a typed prompt, a shell call, an apply_patch, the stop; each traced by its
    plangate hook unless ``hooks`` is false."""
    s.started(start)
    if hooks:
        s.traced(start + 0.05, "UserPromptSubmit", "prompt_expansion")
    s.typed(start + 0.07, f"prompt {tag}")
    s.shell(start + 0.1, f"call_sh{tag}", "echo hi > out.txt")
    if hooks:
        s.traced(
            start + 0.12,
            "PreToolUse",
            "contract_pre_tool_use",
            call_id=f"call_sh{tag}",
            tool="Bash",
        )
    s.patch(start + 0.3, f"call_ap{tag}")
    if hooks:
        s.traced(
            start + 0.32,
            "PreToolUse",
            "contract_pre_tool_use",
            call_id=f"call_ap{tag}",
            tool="apply_patch",
        )
        s.traced(start + 0.4, "Stop", "contract_stop")
    s.complete(start + 0.45)


def test_every_call_decided_is_exit_0_with_the_refusal_and_its_code(tmp_path: Path) -> None:
    s = Session(tmp_path)
    set_up(s.home)
    s.started(0)
    s.traced(0.05, "UserPromptSubmit", "prompt_expansion")
    s.typed(0.07, "go")
    s.shell(0.1, "call_a", "plangate approve demo design --yes")
    s.traced(
        0.12,
        "PreToolUse",
        "contract_pre_tool_use",
        call_id="call_a",
        tool="Bash",
        out="deny",
        code="protected_command",
    )
    s.other_tool(0.2, "call_view")  # no registered matcher covers it: not expected
    s.traced(0.4, "Stop", "contract_stop")
    s.complete(0.45)
    guarded_turn(s, 1.0, tag="2")
    code, report = s.audit()
    assert code == 0, report
    assert report["agent"] == "codex"
    assert report["checked"] == 7  # two prompts, three calls, two stops
    assert [(r["tool"], r["answer"], r["code"]) for r in report["refusals"]] == [
        ("Bash", "deny", "protected_command")
    ]
    assert report["skipped"] == [] and report["unguarded"] == []
    assert sorted(report["registered"]) == sorted(
        f"{event}:{hook} ({s.home / 'hooks.json'}, trusted)"
        for event, hook in [
            ("PreToolUse", "contract_pre_tool_use"),
            ("UserPromptSubmit", "prompt_expansion"),
            ("Stop", "contract_stop"),
        ]
    )


def test_a_turn_without_hook_lines_is_unguarded_and_another_turns_lines_do_not_count(
    tmp_path: Path,
) -> None:
    s = Session(tmp_path)
    set_up(s.home)
    guarded_turn(s, 0, tag="1")
    guarded_turn(s, 0.6, hooks=False, tag="2")  # close to turn 1's lines: still not its own
    code, report = s.audit()
    assert code == EXIT_UNGUARDED
    assert [(c["kind"], c["id"]) for c in report["unguarded"]] == [
        ("prompt", "prompt@5"),
        ("tool", "call_sh2"),
        ("tool", "call_ap2"),
        ("stop", "stop@turn-2"),
    ], report["unguarded"]
    text = io.StringIO()
    assert (
        audit_command(
            SESSION,
            project=str(s.project),
            config_dir=str(tmp_path / "x"),
            state_root=str(s.state),
            codex_home=str(s.home),
            out=text,
        )
        == EXIT_UNGUARDED
    )
    assert "UNGUARDED: 4 call(s)" in text.getvalue()
    assert "plangate setup --codex" in text.getvalue()


def test_a_refused_prompts_turn_expects_no_stop(tmp_path: Path) -> None:
    s = Session(tmp_path)
    set_up(s.home)
    s.started(0)  # Codex writes neither the refused prompt nor a stop for its turn
    s.traced(0.05, "UserPromptSubmit", "prompt_expansion", out="block", code="contract_approval")
    s.complete(0.2)
    guarded_turn(s, 1.0)
    code, report = s.audit()
    assert code == 0, report
    assert report["checked"] == 4
    assert [(r["event"], r["code"]) for r in report["refusals"]] == [
        ("UserPromptSubmit", "contract_approval")
    ]


def test_hooks_edited_since_trusted_are_registered_but_skipped(tmp_path: Path) -> None:
    s = Session(tmp_path)
    set_up(s.home)
    hooks = s.home / "hooks.json"
    hooks.write_text(hooks.read_text().replace('"timeout": 25', '"timeout": 24'))
    guarded_turn(s, 0, hooks=False)
    code, report = s.audit()
    assert code == EXIT_UNGUARDED
    assert len(report["unguarded"]) == 4
    assert len(report["skipped"]) == 3 and all(
        "edited since trusted" in r for r in report["skipped"]
    )
    text = io.StringIO()
    audit_command(
        SESSION,
        project=str(s.project),
        config_dir=str(tmp_path / "x"),
        state_root=str(s.state),
        codex_home=str(s.home),
        out=text,
    )
    assert "registered but skipped: PreToolUse hook `contract_pre_tool_use`" in text.getvalue()


def test_removed_hooks_that_ran_earlier_are_still_expected(tmp_path: Path) -> None:
    s = Session(tmp_path)
    set_up(s.home)
    guarded_turn(s, 0, tag="1")
    set_up(s.home, uninstall=True)
    guarded_turn(s, 1.0, hooks=False, tag="2")
    code, report = s.audit()
    assert code == EXIT_UNGUARDED
    assert [c["id"] for c in report["unguarded"]] == [
        "prompt@5",
        "call_sh2",
        "call_ap2",
        "stop@turn-2",
    ], report["unguarded"]
    assert all("(trace)" in r for r in report["registered"])
    set_up(s.home)  # registered again, never run in a fresh session: nothing lost
    fresh = Session(tmp_path, "01a248bf-3d29-7003-91cd-8f8fa4ff3700")
    fresh.other_tool(0.1, "call_v")
    assert fresh.audit()[0] == 0


def test_project_hooks_in_an_untrusted_project_are_skipped(tmp_path: Path) -> None:
    s = Session(tmp_path)
    command = hook_registry.hook_command(
        hook_registry.HOOK_MODULE_PREFIX + "contract_pre_tool_use", sys.executable
    )
    group = {"matcher": "^Bash$", "hooks": [{"type": "command", "command": command}]}
    (s.project / ".codex").mkdir()
    (s.project / ".codex" / "hooks.json").write_text(json.dumps({"hooks": {"PreToolUse": [group]}}))
    s.home.mkdir(parents=True, exist_ok=True)
    s.started(0)
    s.typed(0.05, "go")
    s.shell(0.1, "call_sh", "ls")
    s.patch(0.2, "call_ap")  # the matcher is ^Bash$: apply_patch is not covered
    s.complete(0.3)
    code, report = s.audit()
    assert code == EXIT_UNGUARDED
    assert [c["id"] for c in report["unguarded"]] == ["call_sh"]
    where = s.project / ".codex" / "hooks.json"
    assert report["skipped"] == [
        f"PreToolUse:contract_pre_tool_use ({where}, {audit_codex.PROJECT_UNTRUSTED})"
    ]


def test_matchers_are_searched_regular_expressions() -> None:
    assert audit_codex.matcher_covers(codex_hooks.TOOL_MATCHER, "apply_patch")
    assert not audit_codex.matcher_covers(codex_hooks.TOOL_MATCHER, "view_image")
    assert audit_codex.matcher_covers("Bash", "Bash") and audit_codex.matcher_covers("ash", "Bash")
    assert audit_codex.matcher_covers("*", "anything") and audit_codex.matcher_covers(None, "x")
    assert audit_codex.matcher_covers("(", "Bash")  # does not compile: counted as covering


def test_the_session_is_found_by_id_path_or_as_the_projects_newest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = Session(tmp_path)
    set_up(s.home)
    guarded_turn(s, 0)
    assert s.audit(str(s.rollout))[1]["session"] == SESSION
    claude = tmp_path / "claude"
    folder = (
        claude / "projects" / str(s.project).replace("/", "-").replace(".", "-").replace("_", "-")
    )
    folder.mkdir(parents=True)
    older = folder / "00000000-0000-4000-8000-000000000000.jsonl"
    older.write_text("")
    os.utime(older, (1, 1))
    monkeypatch.setenv("CODEX_HOME", str(s.home))
    out = io.StringIO()
    assert (
        audit_command(
            None, project=str(s.project), config_dir=str(claude), state_root=str(s.state), out=out
        )
        == 0
    )
    assert str(s.rollout) in out.getvalue() and "agent Codex CLI" in out.getvalue()
    with pytest.raises(UsageError, match="no session 01a24"):
        s.audit("01a24000-0000-7000-8000-000000000000")


def test_a_codex_hook_call_is_traced_with_its_session_and_call_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = Session(tmp_path)
    s.started(0)
    s.typed(0.05, "go")
    s.shell(0.1, "call_0_0", "ls")
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(s.state))
    payload = {
        "session_id": SESSION,
        "turn_id": "t1",
        "transcript_path": str(s.rollout),
        "cwd": str(s.project),
        "hook_event_name": "PreToolUse",
        "model": "gpt-5.5",
        "permission_mode": "bypassPermissions",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_use_id": "call_0_0",
    }
    done = subprocess.run(
        [
            "sh",
            "-c",
            hook_registry.hook_command(hook_registry.HOOK_MODULE_PREFIX + "contract_pre_tool_use"),
        ],
        input=json.dumps(payload).encode(),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == b"{}"
    lines = [
        json.loads(line)
        for line in (s.state / "analytics" / trace.TRACE_NAME).read_text().splitlines()
    ]
    assert [(x["sid"], x["ev"], x["tool"], x["id"], x["hook"], x["out"]) for x in lines] == [
        (SESSION, "PreToolUse", "Bash", "call_0_0", "contract_pre_tool_use", "none")
    ]


def test_an_unreadable_rollout_is_the_unreadable_exit(tmp_path: Path) -> None:
    s = Session(tmp_path)
    guarded_turn(s, 0)
    s.rollout.write_text(s.rollout.read_text() + "not json\n")
    with pytest.raises(JournalUnreadable) as caught:
        s.audit()
    assert "malformed" in str(caught.value) and "journal inspect" in caught.value.remedy
