"""Codex CLI's session history (:mod:`plangate.journal.codex`): the person's turns, the
model's calls and their outputs in order, bounded, tolerant of a line being written, and
refused with a code for what it does not know. The lines are built here in the shapes Codex
0.171.0 writes (recorded against the stand-in: session_meta, the harness's own user messages,
``item_completed`` ``UserMessage``, ``exec_command`` and ``apply_patch`` calls and outputs,
the model's message); tests/e2e/test_codex_rollout.py reads real ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from plangate.journal import codes
from plangate.journal.codex import read_rollout
from plangate.journal.events import AssistantText, HumanTurn, ToolResult, ToolUse
from plangate.journal.verdict import ERROR, MISSING, READY

SESSION = "01a24813-9797-7ef2-94de-d32a3424092d"
PATCH = "*** Begin Patch\n*** Add File: src/greet.py\n+def greet():\n+    return 1\n*** End Patch\n"


class Rollout:
    """A rollout's lines, written as Codex writes them."""

    def __init__(self, session: str = SESSION) -> None:
        self.lines: list[dict[str, Any]] = []
        self.line("session_meta", id=session, cwd="/p", cli_version="0.171.0", source="exec")
        self.event("task_started")
        self.item("message", role="developer", content=[{"type": "input_text", "text": "x"}])
        context = "<environment_context>\n  <cwd>/p</cwd>\n</environment_context>"
        self.item("message", role="user", content=[{"type": "input_text", "text": context}])
        self.line("turn_context", cwd="/p")

    def line(self, kind: str, **payload: Any) -> None:
        stamp = f"2026-12-05T21:19:{len(self.lines):02d}.000Z"
        self.lines.append(
            {"timestamp": stamp, "ordinal": len(self.lines), "type": kind, "payload": payload}
        )

    def event(self, kind: str, **payload: Any) -> None:
        self.line("event_msg", type=kind, **payload)

    def item(self, kind: str, **payload: Any) -> None:
        self.line("response_item", type=kind, **payload)

    def person(self, text: str) -> None:
        self.item("message", role="user", content=[{"type": "input_text", "text": text}])
        user = {"type": "UserMessage", "id": "u", "content": [{"type": "text", "text": text}]}
        self.event("item_completed", item=user)

    def shell(self, call: str, command: str, output: str) -> None:
        self.item(
            "function_call",
            name="exec_command",
            arguments=json.dumps({"cmd": command}),
            call_id=call,
        )
        self.item("function_call_output", call_id=call, output=output)

    def patch(self, call: str, text: str) -> None:
        self.item("custom_tool_call", name="apply_patch", input=text, call_id=call)
        self.item("custom_tool_call_output", call_id=call, output="Exit code: 0")

    def say(self, text: str) -> None:
        self.item("message", role="assistant", content=[{"type": "output_text", "text": text}])

    def data(self) -> bytes:
        return b"".join(json.dumps(line).encode() + b"\n" for line in self.lines)

    def write(self, folder: Path, tail: bytes = b"") -> str:
        path = folder / f"rollout-2026-12-05T21-19-33-{SESSION}.jsonl"
        path.write_bytes(self.data() + tail)
        return str(path)


def test_turns_calls_and_outputs_in_order(tmp_path: Path) -> None:
    rollout = Rollout()
    rollout.person("write the greeting please")
    rollout.shell("call_1", "echo hi > out.txt", "Process exited with code 0")
    rollout.patch("call_2", PATCH)
    rollout.say("All done.")
    verdict = read_rollout(rollout.write(tmp_path), session_id=SESSION)
    assert verdict.status == READY and verdict.claude_code_version == "codex-cli 0.171.0"
    kinds = [
        (type(e).__name__, getattr(e, "text", None) or getattr(e, "name", None))
        for e in verdict.events
    ]
    assert kinds == [
        ("HumanTurn", "write the greeting please"),
        ("ToolUse", "Bash"),
        ("ToolResult", "Process exited with code 0"),
        ("ToolUse", "apply_patch"),
        ("ToolResult", "Exit code: 0"),
        ("AssistantText", "All done."),
    ]
    shell, patch = [e for e in verdict.events if isinstance(e, ToolUse)]
    assert (shell.tool_use_id, shell.input) == ("call_1", {"command": "echo hi > out.txt"})
    assert (patch.tool_use_id, patch.input) == ("call_2", {"command": PATCH})
    assert [e.order for e in verdict.events] == list(range(6))


def test_the_harness_messages_and_a_stop_hooks_prompt_are_no_persons_turn(
    tmp_path: Path,
) -> None:
    rollout = Rollout()
    rollout.person("go")
    rollout.say("Stopping.")
    held = '<hook_prompt hook_run_id="stop:4:/h/hooks.json">approve requirements</hook_prompt>'
    rollout.item("message", role="user", content=[{"type": "input_text", "text": held}])
    rollout.event("item_completed", item={"type": "HookPrompt", "id": "h"})
    verdict = read_rollout(rollout.write(tmp_path))
    assert [e.text for e in verdict.events if isinstance(e, HumanTurn)] == ["go"]
    assert isinstance(verdict.events[-1], AssistantText)


def test_a_line_being_written_is_left_for_the_next_read(tmp_path: Path) -> None:
    rollout = Rollout()
    rollout.person("go")
    path = rollout.write(tmp_path, tail=b'{"timestamp":"2026-12-05T21:19:59.000Z","type":"resp')
    verdict = read_rollout(path)
    assert verdict.status == READY and len(verdict.events) == 1


@pytest.mark.parametrize(
    ("damage", "code"),
    [
        ("not json", codes.MALFORMED),
        ("first line", codes.unrecognized("first_line:event_msg")),
        ("unknown line", codes.unrecognized("line:surprise")),
        ("rolled back", codes.unrecognized("event:thread_rolled_back")),
        ("call without id", codes.MALFORMED),
    ],
)
def test_what_it_does_not_know_is_refused_with_a_code(
    tmp_path: Path, damage: str, code: str
) -> None:
    rollout = Rollout()
    rollout.person("go")
    if damage == "first line":
        del rollout.lines[0]
    elif damage == "unknown line":
        rollout.line("surprise")
    elif damage == "rolled back":
        rollout.event("thread_rolled_back", num_turns=1)
    elif damage == "call without id":
        rollout.item("function_call", name="exec_command", arguments="{}")
    tail = b"{not json\n" if damage == "not json" else b""
    verdict = read_rollout(rollout.write(tmp_path, tail=tail))
    assert (verdict.status, verdict.reason) == (ERROR, code), verdict.detail
    assert verdict.events == []


def test_another_session_and_a_missing_file(tmp_path: Path) -> None:
    path = Rollout().write(tmp_path)
    verdict = read_rollout(path, session_id="someone-else")
    assert (verdict.status, verdict.reason) == (ERROR, codes.IDENTITY)
    assert read_rollout(str(tmp_path / "none.jsonl")).status == MISSING


def test_a_history_over_the_read_limit_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(codes, "RETAINED_MAX_BYTES", 1024)
    rollout = Rollout()
    for number in range(20):
        rollout.shell(f"call_{number}", "true", "x" * 100)
    verdict = read_rollout(rollout.write(tmp_path))
    assert (verdict.status, verdict.reason) == (ERROR, codes.OVERSIZED_INVOCATION)


def test_outputs_keep_their_calls_ids(tmp_path: Path) -> None:
    rollout = Rollout()
    rollout.person("go")
    rollout.shell("call_9", "ls", "a\nb")
    verdict = read_rollout(rollout.write(tmp_path))
    (result,) = [e for e in verdict.events if isinstance(e, ToolResult)]
    assert (result.tool_use_id, result.is_error) == ("call_9", False)


def test_journal_inspect_reads_a_codex_rollout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from plangate.cli import main

    rollout = Rollout()
    rollout.person("go")
    rollout.shell("call_1", "ls", "a")
    path = rollout.write(tmp_path)
    assert main(["journal", "inspect", path, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["status"], report["session_id"]) == ("ready", SESSION)
    assert report["event_kinds"] == {"human_turn": 1, "tool_result": 1, "tool_use": 1}


def test_a_typed_skill_is_the_turns_command(tmp_path: Path) -> None:
    """``$kiro-spec-requirements greet`` typed in Codex is that skill, started by the person
    (as a typed ``/kiro-spec-requirements greet`` is in Claude Code); ``$5`` is no skill."""
    rollout = Rollout()
    rollout.person("$kiro-spec-requirements greet")
    rollout.person("it costs $5 more")
    first, second = read_rollout(rollout.write(tmp_path)).events
    assert isinstance(first, HumanTurn) and isinstance(second, HumanTurn)
    assert (first.command, first.arguments) == ("kiro-spec-requirements", "greet")
    assert (second.command, second.arguments) == (None, None)


def test_a_refused_or_failed_call_is_an_error_result(tmp_path: Path) -> None:
    """As Claude Code's ``is_error``: a call a PreToolUse hook refused (it never ran) and a
    command that exited non-zero failed; an output that merely says so in its text did not.
    The outputs are as Codex 0.171.0 wrote them (tests/e2e/test_codex_workflow.py)."""
    blocked = "Command blocked by PreToolUse hook: [plangate] no. Command: cat x"
    failed = (
        "Chunk ID: e0cd3b\nWall time: 0.0000 seconds\nProcess exited with code 1\nOutput:\nno\n"
    )
    ran = "Chunk ID: 1\nProcess exited with code 0\nOutput:\nProcess exited with code 1\n"
    rollout = Rollout()
    rollout.person("go")
    rollout.shell("call_1", "cat x", blocked)
    rollout.shell("call_2", "cat y", failed)
    rollout.shell("call_3", "cat z", ran)
    rollout.shell("call_4", "echo", "Command blocked by PreToolUse hook")  # no colon: text
    verdict = read_rollout(rollout.write(tmp_path))
    results = [e for e in verdict.events if isinstance(e, ToolResult)]
    assert [(r.tool_use_id, r.is_error) for r in results] == [
        ("call_1", True),
        ("call_2", True),
        ("call_3", False),
        ("call_4", False),
    ]


def test_a_shell_calls_workdir_is_a_cd_before_its_command(tmp_path: Path) -> None:
    """The shell tool runs where its ``workdir`` says (relative: in the session's folder,
    ``/p`` here); Codex gives that folder to the hook as its ``cwd``, and the reader gives it
    to the fold as a ``cd``, which the write and read scanners follow."""
    rollout = Rollout()
    rollout.person("go")
    arguments = json.dumps({"cmd": "cat SKILL.md", "workdir": ".agents/it's"})
    rollout.item("function_call", name="exec_command", arguments=arguments, call_id="c1")
    verdict = read_rollout(rollout.write(tmp_path))
    (call,) = [e for e in verdict.events if isinstance(e, ToolUse)]
    assert call.input == {"command": "cd '/p/.agents/it'\\''s' && cat SKILL.md"}


def test_a_hooks_project_is_its_sessions_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read from the head of the rollout's first line as Codex writes it (compact JSON), with
    no parse; parsed whole when it does not stand there plainly; None for a payload not
    Codex's."""
    from plangate.journal import codex
    from plangate.journal.codex_folder import session_folder

    def compact(rollout: Rollout) -> bytes:
        lines = (json.dumps(line, separators=(",", ":")) for line in rollout.lines)
        return "".join(f"{line}\n" for line in lines).encode()

    path = tmp_path / f"rollout-2026-12-05T21-19-33-{SESSION}.jsonl"
    path.write_bytes(compact(Rollout()))
    payload: dict[str, object] = {"transcript_path": str(path), "turn_id": "t", "cwd": "/p/src"}
    with monkeypatch.context() as patched:
        patched.setattr(codex, "meta", None)  # not called: the head says it plainly
        assert session_folder(payload) == "/p"
    escaped = Rollout()
    escaped.lines[0]["payload"]["cwd"] = '/p/a "quoted" name'
    path.write_bytes(compact(escaped))
    assert session_folder(payload) == '/p/a "quoted" name'
    assert session_folder({**payload, "turn_id": None}) is None  # Claude Code's payload
    assert session_folder({**payload, "transcript_path": str(tmp_path / "x.jsonl")}) is None


def test_how_the_session_was_started_is_the_verdicts(tmp_path: Path) -> None:
    """``session_meta`` ``source``, read with the rest of the rollout: the stop gates tell a
    headless ``codex exec`` from the terminal UI by it without opening the file again."""
    assert read_rollout(Rollout().write(tmp_path)).started_by == "exec"
    typed = Rollout()
    typed.lines[0]["payload"]["source"] = "cli"
    assert read_rollout(typed.write(tmp_path)).started_by == "cli"
    del typed.lines[0]["payload"]["source"]
    assert read_rollout(typed.write(tmp_path)).started_by is None


def test_the_sessions_folder_is_read_through_the_world_it_is_handed() -> None:
    """The project of a Codex hook comes from the world's files (the one read seam), plainly
    from the head or from the whole first line: a rollout that exists only in the world."""
    from plangate.journal.codex_folder import session_folder
    from plangate.journal.world import World

    class Files(World):
        def __init__(self, files: dict[str, bytes]) -> None:
            self.files = files
            self.reads: list[str] = []

        def read_file(self, path: str, limit: int) -> bytes:
            self.reads.append("head")
            return self.files[path][:limit]

        def first_line(self, path: str, limit: int) -> bytes:
            self.reads.append("line")
            return self.files[path].split(b"\n", 1)[0][:limit]

    path = f"/nowhere/rollout-2026-12-05T21-19-33-{SESSION}.jsonl"
    payload: dict[str, object] = {"transcript_path": path, "turn_id": "t", "cwd": "/p/src"}
    compact = (json.dumps(line, separators=(",", ":")) for line in Rollout().lines)
    world = Files({path: "".join(f"{line}\n" for line in compact).encode()})
    assert session_folder(payload, world) == "/p" and world.reads == ["head"]
    escaped = Rollout()
    escaped.lines[0]["payload"]["cwd"] = "/p/caf\\u00e9"
    world = Files({path: escaped.data()})
    assert session_folder(payload, world) == "/p/caf\\u00e9" and world.reads == ["head", "line"]
    assert session_folder(payload) is None  # the operating system has no such file
