"""Typed events read from a journal (gstack-design A.4-A.6, A.10, A.11, B.6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from plangate.journal import (
    READY,
    AssistantText,
    EndTurn,
    Event,
    HumanTurn,
    ReadRange,
    TaskNotification,
    ToolResult,
    ToolUse,
    Verdict,
    read_journal,
)
from plangate.journal.events import QueuedPrompt
from testkit.journals import DEDUP_REPLY, Journal, use_id

PROJECT = "/home/user/project"


def judge(journal: Journal, tmp_path: Path, **kwargs: object) -> Verdict:
    path = journal.write(tmp_path / f"{journal.session_id}.jsonl")
    verdict = read_journal(str(path), **kwargs)  # type: ignore[arg-type]
    assert (verdict.status, verdict.reason) == (READY, None), verdict.detail
    return verdict


def of(verdict: Verdict, kind: type[Event]) -> list:  # type: ignore[type-arg]
    return [e for e in verdict.events if isinstance(e, kind)]


# tool uses and results


def test_uses_and_results_are_paired_by_id(journal: Journal, tmp_path: Path) -> None:
    journal.session()
    verdict = judge(journal, tmp_path, full=True)
    uses = verdict.tool_uses()
    assert [(u.name, u.input) for u in uses.values()] == [
        ("Read", {"file_path": f"{PROJECT}/notes.txt"}),
        ("Bash", {"command": "echo hi && pwd", "description": "Print a greeting"}),
    ]
    read_id, bash_id = list(uses)
    assert [r.text for r in verdict.results_for(read_id)] == ["1\thello notes\n2\tline two\n"]
    assert [r.text for r in verdict.results_for(bash_id)] == [f"hi\n{PROJECT}"]
    assert verdict.results_for("toolu_01nothing") == []
    for use in uses.values():
        (result,) = verdict.results_for(use.tool_use_id)
        assert result.order > use.order


def test_pairing_ignores_adjacency(journal: Journal, tmp_path: Path) -> None:
    journal.prompt("Two at once")
    first, second = journal.parallel_tool_uses(
        [("Bash", {"command": "echo one"}), ("Bash", {"command": "echo two"})]
    )
    journal.bash_result(use_id(second), "two", parent=second["uuid"])
    journal.bash_result(use_id(first), "one", parent=first["uuid"])
    journal.text("Both done.")
    verdict = judge(journal, tmp_path, full=True)
    assert [r.text for r in verdict.results_for(use_id(first))] == ["one"]
    assert [r.text for r in verdict.results_for(use_id(second))] == ["two"]


def test_parallel_tool_calls_of_one_message_share_its_id(journal: Journal, tmp_path: Path) -> None:
    journal.prompt("Do two things at once.")
    journal.turn_attachments()
    calls = journal.parallel_tool_uses([("Read", {"file_path": "/a"}), ("Bash", {"command": "ls"})])
    journal.read_result(use_id(calls[0]), "/a", ["x"], parent=calls[0]["uuid"])
    journal.bash_result(use_id(calls[1]), "a", parent=calls[1]["uuid"])
    journal.text("Done.")
    verdict = judge(journal, tmp_path)
    uses = of(verdict, ToolUse)
    assert len(uses) == 2
    assert uses[0].message_id == uses[1].message_id == calls[0]["message"]["id"]
    (text,) = of(verdict, AssistantText)
    assert text.message_id not in (None, uses[0].message_id)
    assert [r.tool_use_id for r in of(verdict, ToolResult)] == [u.tool_use_id for u in uses]


@pytest.mark.parametrize(
    ("flag", "expected"),
    [(True, True), (False, False), (None, False), ("true", False), (1, False)],
)
def test_only_is_error_true_marks_an_error(
    flag: object, expected: bool, journal: Journal, tmp_path: Path
) -> None:
    journal.prompt("Run it")
    use = journal.tool_use("Bash", {"command": "false"})
    journal.tool_result(use_id(use), "Exit code 1", is_error=None)
    if flag is not None:
        journal.records[-1]["message"]["content"][0]["is_error"] = flag
    journal.text("It failed.")
    (result,) = of(judge(journal, tmp_path), ToolResult)
    assert result.is_error is expected


def test_a_read_result_carries_the_range_it_delivered(journal: Journal, tmp_path: Path) -> None:
    journal.prompt("Read part of it")
    part = journal.tool_use("Read", {"file_path": "/p/a.md", "offset": 10, "limit": 5})
    journal.read_result(use_id(part), "/p/a.md", ["l"] * 5, start_line=10, total_lines=100)
    whole = journal.tool_use("Read", {"file_path": "/p/b.md"})
    journal.read_result(use_id(whole), "/p/b.md", ["a", "b", "c"])
    again = journal.tool_use("Read", {"file_path": "/p/b.md"})
    journal.dedup_read_result(use_id(again), "/p/b.md")
    journal.text("Read.")
    verdict = judge(journal, tmp_path, full=True)
    (part_result,) = verdict.results_for(use_id(part))
    assert part_result.file == ReadRange("/p/a.md", 10, 5, 100, "l\nl\nl\nl\nl\n")
    assert (part_result.file.end_line, part_result.file.covers_whole_file) == (14, False)
    assert part_result.file.is_dedup_witness is False
    (whole_result,) = verdict.results_for(use_id(whole))
    assert whole_result.file is not None and whole_result.file.content is not None
    assert whole_result.file == ReadRange("/p/b.md", 1, 3, 3, whole_result.file.content)
    assert whole_result.file.content.startswith("a\nb\nc")
    assert whole_result.file.covers_whole_file is True
    (dedup,) = verdict.results_for(use_id(again))
    assert dedup.file == ReadRange("/p/b.md", None, None, None)
    assert dedup.file.is_dedup_witness is True
    assert dedup.is_dedup_reply is True and dedup.text == DEDUP_REPLY
    assert whole_result.is_dedup_reply is False


def test_a_background_launch_receipt_is_async(journal: Journal, tmp_path: Path) -> None:
    journal.prompt("Run a slow check in the background.")
    launch = journal.tool_use(
        "Agent",
        {"description": "Slow check", "prompt": "BG-TASK", "run_in_background": True},
    )
    journal.async_launch_result(use_id(launch))
    journal.text("Started.")
    fg = journal.tool_use("Agent", {"description": "Count", "prompt": "FG-TASK"})
    journal.tool_result(
        use_id(fg),
        [{"type": "text", "text": "3 files"}],
        tool_use_result={"status": "completed", "agentId": "afb690a755a4e489f"},
    )
    journal.text("Three.")
    verdict = judge(journal, tmp_path, full=True)
    (receipt,) = verdict.results_for(use_id(launch))
    assert receipt.is_async is True
    assert receipt.text is not None and receipt.text.startswith("Async agent launched")
    (review,) = verdict.results_for(use_id(fg))
    assert (review.is_async, review.text) == (False, "3 files")


@pytest.mark.parametrize(
    ("side_car", "expected"),
    [
        ({"isAsync": True}, True),
        ({"status": "async_launched"}, True),
        ({"isAsync": False, "status": "completed"}, False),
        ({"isAsync": "true"}, False),
    ],
    ids=["isAsync", "status", "neither", "isAsync-string"],
)
def test_either_async_marker_makes_a_launch_receipt(
    side_car: dict[str, object], expected: bool, journal: Journal, tmp_path: Path
) -> None:
    journal.prompt("go")
    launch = journal.tool_use("Agent", {"prompt": "BG"})
    journal.tool_result(use_id(launch), "Async agent launched.", tool_use_result=side_car)
    journal.text("ok")
    (receipt,) = judge(journal, tmp_path).results_for(use_id(launch))
    assert receipt.is_async is expected


def test_a_task_notification_names_its_tool_use(journal: Journal, tmp_path: Path) -> None:
    journal.prompt("Run a slow check in the background.")
    launch = journal.tool_use("Agent", {"prompt": "BG-TASK", "run_in_background": True})
    journal.async_launch_result(use_id(launch))
    journal.text("Started.")
    journal.system("stop_hook_summary", hookCount=0)
    journal.meta("<system-reminder>\n</system-reminder>")
    journal.task_notification(use_id(launch), status="completed")
    journal.text("The check passed.")
    verdict = judge(journal, tmp_path)
    (notice,) = of(verdict, TaskNotification)
    assert (notice.tool_use_id, notice.status) == (use_id(launch), "completed")
    assert len(of(verdict, HumanTurn)) == 1  # the typed prompt only
    assert notice.order > verdict.results_for(use_id(launch))[0].order


def test_an_older_task_notification_without_task_id_is_read(
    journal: Journal, tmp_path: Path
) -> None:
    journal.prompt("go")
    journal.text("ok")
    journal.user_text(
        "<task-notification>\n<tool-use-id>toolu_REV</tool-use-id>\n<status>failed</status>\n"
        "<result>…</result>\n</task-notification>",
        origin={"kind": "task-notification"},
        promptSource="system",
    )
    journal.text("Noted.")
    (notice,) = of(judge(journal, tmp_path), TaskNotification)
    assert (notice.tool_use_id, notice.status) == ("toolu_REV", "failed")


@pytest.mark.parametrize("bad_id", ["", "toolu bad", "toolu_<x>", "t" * 161])
def test_a_task_notification_with_a_bad_tool_use_id_is_no_event(
    bad_id: str, journal: Journal, tmp_path: Path
) -> None:
    journal.prompt("go")
    journal.text("ok")
    journal.user_text(
        f"<task-notification>\n<tool-use-id>{bad_id}</tool-use-id>\n</task-notification>",
        origin={"kind": "task-notification"},
    )
    journal.text("Noted.")
    verdict = judge(journal, tmp_path)
    assert of(verdict, TaskNotification) == []
    assert len(of(verdict, HumanTurn)) == 1


def test_a_prompt_typed_while_the_model_works_is_a_queued_prompt(
    journal: Journal, tmp_path: Path
) -> None:
    """2.1.332 gives the model a prompt the person typed during its turn as a
    ``queued_command`` attachment of human origin: the person's words, not a new turn."""
    journal.prompt("what does the spec say?")
    read = journal.tool_use("Read", {"file_path": f"{PROJECT}/spec.md"})
    journal.tool_result(use_id(read), "1\t# Spec")
    journal.queued_prompt("approve the spec")
    journal.tool_use("Skill", {"skill": "speckit-plan", "args": ""})
    for verdict in (judge(journal, tmp_path), judge(journal, tmp_path, full=True)):
        (queued,) = of(verdict, QueuedPrompt)
        assert queued.text == "approve the spec"
        assert verdict.results_for(use_id(read))[0].order < queued.order
        assert queued.order < of(verdict, ToolUse)[-1].order
        assert len(of(verdict, HumanTurn)) == 1  # the first prompt only
        assert of(verdict, TaskNotification) == []


@pytest.mark.parametrize(
    ("mode", "origin"),
    [
        ("task-notification", {"kind": "task-notification"}),
        ("prompt", {"kind": "hook"}),
        ("prompt", None),
        ("bash", {"kind": "human"}),
    ],
)
def test_a_queued_command_no_person_typed_as_a_prompt_is_no_queued_prompt(
    mode: str, origin: dict[str, str] | None, journal: Journal, tmp_path: Path
) -> None:
    journal.prompt("go")
    journal.text("working")
    if origin is None:
        journal.attachment("queued_command", prompt="approve the spec", commandMode=mode)
    else:
        journal.attachment(
            "queued_command", prompt="approve the spec", commandMode=mode, origin=origin
        )
    journal.text("Noted.")
    assert of(judge(journal, tmp_path, full=True), QueuedPrompt) == []


def test_a_long_queued_prompt_keeps_its_text_only_in_full(journal: Journal, tmp_path: Path) -> None:
    journal.prompt("go")
    journal.text("working")
    journal.queued_prompt("approve the spec " + "p" * 5000)
    journal.text("Noted.")
    (light,) = of(judge(journal, tmp_path), QueuedPrompt)
    (full,) = of(judge(journal, tmp_path, full=True), QueuedPrompt)
    assert light.text is None and full.text == "approve the spec " + "p" * 5000
    assert light.order == full.order


# assistant text and end of turn


def test_assistant_text_and_end_turn(journal: Journal, tmp_path: Path) -> None:
    journal.prompt("Hi")
    message_id = journal.new_message_id()
    journal.assistant(
        [{"type": "thinking", "thinking": "", "signature": "x"}],
        message_id=message_id,
        stop_reason=None,
    )
    journal.assistant([{"type": "text", "text": "   "}], message_id=message_id, stop_reason=None)
    journal.assistant([{"type": "text", "text": "Hello!"}], message_id=message_id)
    verdict = judge(journal, tmp_path, full=True)
    assert [type(e) for e in verdict.events] == [HumanTurn, AssistantText, EndTurn]
    _, text, end = verdict.events
    assert isinstance(text, AssistantText)
    assert (text.text, text.message_id) == ("Hello!", message_id)
    assert end.message_id == message_id
    assert end.order == text.order + 1


def test_every_content_block_takes_one_order_slot(journal: Journal, tmp_path: Path) -> None:
    """One record with thinking, text and a tool use (an older layout): slots are blocks."""
    journal.prompt("Hi")
    journal.assistant(
        [
            {"type": "thinking", "thinking": "hm", "signature": "x"},
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_0001", "name": "Read", "input": {"file_path": "/a"}},
        ],
        stop_reason="tool_use",
    )
    journal.read_result("toolu_0001", "/a", ["x"])
    journal.text("Done.")
    verdict = judge(journal, tmp_path, full=True)
    assert [(e.kind, e.order) for e in verdict.events] == [
        ("human_turn", 0),
        ("assistant_text", 2),
        ("tool_use", 3),
        ("tool_result", 4),
        ("assistant_text", 5),
        ("end_turn", 6),
    ]


def test_event_order_follows_causal_order(journal: Journal, tmp_path: Path) -> None:
    journal.session()
    journal.prompt("And now?")
    journal.text("Now this.")
    verdict = judge(journal, tmp_path)
    orders = [e.order for e in verdict.events]
    assert orders == sorted(orders) and len(set(orders)) == len(orders)
    assert [e.kind for e in verdict.events] == [
        "human_turn",
        "tool_use",
        "tool_result",
        "tool_use",
        "tool_result",
        "assistant_text",
        "end_turn",
        "human_turn",
        "assistant_text",
        "end_turn",
    ]


# human turns


def test_a_typed_prompt_is_a_human_turn(journal: Journal, tmp_path: Path) -> None:
    prompt = journal.typed_prompt("Review plan.md")
    journal.text("ok")
    (turn,) = of(judge(journal, tmp_path), HumanTurn)
    assert (turn.text, turn.command, turn.arguments) == ("Review plan.md", None, None)
    assert (turn.source, turn.prompt_id) == ("typed", prompt["promptId"])


def test_an_sdk_prompt_is_a_human_turn(journal: Journal, tmp_path: Path) -> None:
    journal.prompt("Read notes.txt")
    journal.text("ok")
    (turn,) = of(judge(journal, tmp_path), HumanTurn)
    assert (turn.text, turn.source) == ("Read notes.txt", "sdk")


def test_a_prompt_with_text_blocks_is_one_human_turn(journal: Journal, tmp_path: Path) -> None:
    journal.prompt("")
    journal.records[-1]["message"]["content"] = [
        {"type": "text", "text": "Look at this"},
        {"type": "image", "source": {"type": "base64", "data": "AA=="}},
        {"type": "text", "text": "and fix it"},
    ]
    journal.text("ok")
    turns = of(judge(journal, tmp_path, full=True), HumanTurn)
    assert [t.text for t in turns] == ["Look at this\nand fix it"]


@pytest.mark.parametrize("style", ["legacy", "2.1.332"])
@pytest.mark.parametrize(("args", "expected"), [("plan.md", "plan.md"), ("", ""), (None, None)])
def test_slash_commands_are_parsed_in_both_orders(
    style: str, args: str | None, expected: str | None, journal: Journal, tmp_path: Path
) -> None:
    record = journal.slash_command("autoplan", args, style=style)  # type: ignore[arg-type]
    journal.text("ok")
    (turn,) = of(judge(journal, tmp_path), HumanTurn)
    assert (turn.command, turn.arguments) == ("autoplan", expected)
    assert turn.text == record["message"]["content"]
    if style == "2.1.332":
        assert "\n            <command-message>autoplan</command-message>" in turn.text


def test_a_prompt_laid_out_name_first_is_parsed(journal: Journal, tmp_path: Path) -> None:
    """The layout of 2.1.332's ``/compact`` record, in a record marked as a prompt sent to the
    model (``promptSource``). Claude Code's own record of the command, unmarked, is no turn
    at all (tests/journal/test_local_commands.py)."""
    journal.prompt(
        "<command-name>/compact</command-name>\n"
        "            <command-message>compact</command-message>\n"
        "            <command-args></command-args>"
    )
    journal.text("ok")
    (turn,) = of(judge(journal, tmp_path), HumanTurn)
    assert (turn.command, turn.arguments) == ("compact", "")


@pytest.mark.parametrize(
    "text",
    [
        "<command-message>autoplan</command-message>\n<command-name>/other</command-name>",
        "<command-message>autoplan</command-message>",
        "<command-name>/autoplan</command-name>\nplus words",
        "please run <command-name>/autoplan</command-name>",
        "<command-message>a</command-message>\n<command-message>a</command-message>\n"
        "<command-name>/a</command-name>",
    ],
    ids=["name-mismatch", "no-name", "extra-text", "inline", "repeated-tag"],
)
def test_text_that_is_not_exactly_a_slash_expansion_is_a_plain_turn(
    text: str, journal: Journal, tmp_path: Path
) -> None:
    journal.prompt(text)
    journal.text("ok")
    (turn,) = of(judge(journal, tmp_path), HumanTurn)
    assert (turn.command, turn.arguments) == (None, None)


def test_records_that_are_not_human_turns(journal: Journal, tmp_path: Path) -> None:
    journal.prompt("Read it")
    journal.text("ok")
    journal.meta("<local-command-caveat>Caveat</local-command-caveat>")
    journal.meta("Stop hook feedback:\nfinish the checklist first")
    journal.local_command_stdout("Compacted")
    journal.compact()
    journal.user_text("<local-command-stderr>oops</local-command-stderr>")
    journal.text("again")
    turns = of(judge(journal, tmp_path), HumanTurn)
    assert [t.text for t in turns] == ["Read it"]


def test_tool_result_records_are_not_human_turns(journal: Journal, tmp_path: Path) -> None:
    journal.session()
    assert len(of(judge(journal, tmp_path), HumanTurn)) == 1


# the cwd-reset footer


def test_the_cwd_reset_footer_is_stripped_from_bash_results(
    journal: Journal, tmp_path: Path
) -> None:
    journal.prompt("go")
    cases = {
        "plain": ("/tmp", "/tmp"),
        "json": ('{"ok": true}', '{"ok": true}'),
        "only": ("", ""),
    }
    ids = {}
    for name, (stdout, _) in cases.items():
        use = journal.tool_use("Bash", {"command": f"cd /tmp && {name}"})
        journal.bash_result(use_id(use), stdout, cwd_reset=PROJECT)
        ids[name] = use_id(use)
    journal.text("ok")
    verdict = judge(journal, tmp_path, full=True)
    for name, (_, expected) in cases.items():
        (result,) = verdict.results_for(ids[name])
        assert result.text == expected, name
    (json_result,) = verdict.results_for(ids["json"])
    assert json_result.text_starts_json is True


def test_the_footer_stays_on_other_tools_and_inside_bash_output(
    journal: Journal, tmp_path: Path
) -> None:
    footer = f"Shell cwd was reset to {PROJECT}"
    journal.prompt("go")
    read = journal.tool_use("Read", {"file_path": "/p/log.txt"})
    journal.tool_result(use_id(read), f"1\tbuilt\n{footer}")
    bash = journal.tool_use("Bash", {"command": "cat log"})
    journal.bash_result(use_id(bash), f"{footer}\nmore output")
    journal.text("ok")
    verdict = judge(journal, tmp_path, full=True)
    assert [r.text for r in verdict.results_for(use_id(read))] == [f"1\tbuilt\n{footer}"]
    assert [r.text for r in verdict.results_for(use_id(bash))] == [f"{footer}\nmore output"]


# the index (no content) and reloading


def test_without_full_only_the_index_is_kept(journal: Journal, tmp_path: Path) -> None:
    journal.session()
    big_input = {"command": "echo " + "x" * 5000}
    big = journal.tool_use("Bash", big_input)
    journal.bash_result(use_id(big), "x")
    journal.prompt("p" * 5000)
    journal.text("bye")
    index = judge(journal, tmp_path)
    full = judge(journal, tmp_path, full=True)
    assert [(e.kind, e.order, e.record) for e in index.events] == [
        (e.kind, e.order, e.record) for e in full.events
    ]
    assert [e.text for e in of(index, AssistantText)] == [None, None]
    assert [e.text for e in of(index, ToolResult)] == [None, None, None]
    assert [e.text for e in of(full, AssistantText)] == ["The notes say hello.", "bye"]
    uses = of(index, ToolUse)
    assert uses[0].input == {"file_path": f"{PROJECT}/notes.txt"}  # small inputs stay
    assert uses[-1].input is None and of(full, ToolUse)[-1].input == big_input
    turns = of(index, HumanTurn)
    assert turns[0].text is not None and turns[-1].text is None
    assert of(full, HumanTurn)[-1].text == "p" * 5000
    ranges = [r.file for r in of(index, ToolResult)]
    assert ranges[0] == ReadRange(f"{PROJECT}/notes.txt", 1, 2, 2)
    assert index.retained_bytes == 0 and full.retained_bytes > 0


def test_a_select_reload_keeps_the_same_orders(journal: Journal, tmp_path: Path) -> None:
    journal.session()
    full = judge(journal, tmp_path, full=True)

    def last_two(records: list) -> list:  # type: ignore[type-arg]
        return records[-3:]

    chosen = judge(journal, tmp_path, select=last_two)
    assert [(e.kind, e.order) for e in chosen.events] == [(e.kind, e.order) for e in full.events]
    assert [e.text for e in of(chosen, AssistantText)] == ["The notes say hello."]
    assert [r.text for r in of(chosen, ToolResult)] == [None, f"hi\n{PROJECT}"]


def test_a_typed_prompt_that_looks_like_a_notification_is_a_human_turn(
    journal: Journal, tmp_path: Path
) -> None:
    """Only a record Claude Code wrote (origin task-notification) is a notice (gstack A.5)."""
    journal.typed_prompt(
        "<task-notification>\n<tool-use-id>toolu_X</tool-use-id>\n"
        "<status>completed</status>\n</task-notification>"
    )
    journal.text("ok")
    verdict = judge(journal, tmp_path)
    assert of(verdict, TaskNotification) == []
    assert len(of(verdict, HumanTurn)) == 1


def test_the_interrupt_marker_is_not_a_human_turn(journal: Journal, tmp_path: Path) -> None:
    """Claude Code's own marker, as 2.1.38 wrote it (corpus spotter/short.jsonl, line 13),
    is no prompt a person typed (gstack A.10)."""
    journal.prompt("mix phx.server doesnt seem to start")
    use = journal.tool_use("Bash", {"command": "mix phx.server"})
    journal.tool_result(use_id(use), "Interrupted", is_error=True)
    record = journal.user_text(
        [{"type": "text", "text": "[Request interrupted by user for tool use]"}]
    )
    del record["promptId"]
    journal.text("ok")
    turns = of(judge(journal, tmp_path, full=True), HumanTurn)
    assert [t.text for t in turns] == ["mix phx.server doesnt seem to start"]
