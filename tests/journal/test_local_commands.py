"""Commands the person runs in Claude Code itself are not a turn of the conversation.

The shapes are Claude Code 2.1.332's, recorded in the terminal UI (tmux) and with
``claude -p``: ``/compact`` writes a compact boundary, the summary, a caveat (meta), the
command's record (name first, the rest indented, no ``promptSource``, no ``origin``) and its
output; ``/clear`` opens a new journal with the caveat, the command's record and a
``local_command`` system record for its output; ``/model`` and ``/context`` write
``local_command`` system records (``/context`` also a meta record of its table); ``/cost``
writes nothing to the conversation; ``!cmd`` writes ``<bash-input>`` and its
``<bash-stdout>``/``<bash-stderr>`` as two user records, and the model is asked to answer.
A skill command the person types is laid out message first, and carries ``origin`` human
in the terminal UI (nothing in ``claude -p``); a typed prompt carries ``promptSource`` and
``origin``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from plangate.journal import READY, EndTurn, HumanTurn, Verdict, read_journal
from plangate.journal.building import local_command
from testkit.contents import slash_text
from testkit.journals import Journal


def judged(journal: Journal, tmp_path: Path, full: bool) -> Verdict:
    path = journal.write(tmp_path / f"{journal.session_id}.jsonl")
    verdict = read_journal(str(path), full=full)
    assert (verdict.status, verdict.reason) == (READY, None), verdict.detail
    return verdict


def turns(verdict: Verdict) -> list[tuple[str | None, str | None, str | None]]:
    return [
        (e.command, e.arguments, e.text if e.command is None else None)
        for e in verdict.events
        if isinstance(e, HumanTurn)
    ]


FULL = pytest.mark.parametrize("full", [True, False], ids=["full", "index"])


@FULL
@pytest.mark.parametrize("args", ["", "approve requirements"])
def test_compact_is_no_turn_and_the_chain_ends_where_the_conversation_did(
    journal: Journal, tmp_path: Path, full: bool, args: str
) -> None:
    """``/compact`` (its instructions too): the last event is still the reply's end of turn,
    so a read waiting for the next prompt goes on waiting."""
    journal.typed_prompt("hi")
    journal.text("Hello there.")
    journal.manual_compact(args)
    journal.attachment("deferred_tools_delta", addedNames=[])
    verdict = judged(journal, tmp_path, full)
    assert turns(verdict) == [(None, None, "hi")]
    assert isinstance(verdict.events[-1], EndTurn)


@FULL
def test_clear_opens_a_journal_whose_first_turn_is_the_next_prompt(
    journal: Journal, tmp_path: Path, full: bool
) -> None:
    journal.local_command("clear", system_output=True)
    path = journal.write(tmp_path / f"{journal.session_id}.jsonl")
    assert read_journal(str(path), full=full).events == []
    journal.typed_prompt("after clear")
    journal.text("Fourth answer.")
    assert turns(judged(journal, tmp_path, full)) == [(None, None, "after clear")]


@FULL
def test_model_context_and_their_tables_are_no_turn(
    journal: Journal, tmp_path: Path, full: bool
) -> None:
    journal.typed_prompt("hi")
    journal.text("Hello there.")
    journal.system_local_command("model", "approve requirements", "Kept model as Opus 5.5")
    journal.system_local_command("context", "", " Context usage")
    journal.meta("## Context Usage\n\n**Model:** claude-opus-5-5")
    verdict = judged(journal, tmp_path, full)
    assert len(turns(verdict)) == 1
    assert isinstance(verdict.events[-1], EndTurn)


@FULL
@pytest.mark.parametrize("size", [20, 5000], ids=["short", "long"])
def test_a_shell_command_and_its_output_are_no_turn(
    journal: Journal, tmp_path: Path, full: bool, size: int
) -> None:
    """``!echo approve requirements`` and its output (a long one is read by the header
    decoder, not whole), then the model's answer to it."""
    journal.typed_prompt("hi")
    journal.text("Hello there.")
    journal.shell_command("echo approve requirements", "approve requirements\n" + "x" * size)
    journal.text("Third answer.")
    verdict = judged(journal, tmp_path, full)
    assert len(turns(verdict)) == 1


@FULL
def test_commands_sent_to_the_model_stay_the_persons_turns(
    journal: Journal, tmp_path: Path, full: bool
) -> None:
    """A skill command typed in the terminal UI (message first, ``origin`` human), the same
    in ``claude -p`` (message first, no mark), a prompt, and a record laid out name first
    that Claude Code marked as a prompt it sent the model."""
    journal.user_text(slash_text("kiro-spec-design", "greet", "legacy"), origin={"kind": "human"})
    journal.text("Design written.")
    journal.user_text(slash_text("kiro-spec-tasks", "greet", "legacy"))
    journal.text("Tasks written.")
    journal.typed_prompt("approve tasks")
    journal.text("Noted.")
    journal.prompt(slash_text("kiro-impl", "greet"), source="typed", origin={"kind": "human"})
    journal.text("Done.")
    got = turns(judged(journal, tmp_path, full))
    assert got == [
        ("kiro-spec-design", "greet", None),
        ("kiro-spec-tasks", "greet", None),
        (None, None, "approve tasks"),
        ("kiro-impl", "greet", None),
    ]


def _record(text: object, **fields: object) -> dict[str, object]:
    return {"type": "user", "message": {"role": "user", "content": text}, **fields}


@pytest.mark.parametrize(
    ("record", "local"),
    [
        (_record("<bash-input>ls</bash-input>"), True),
        (_record([{"type": "text", "text": "<bash-stdout>a</bash-stdout>"}]), True),
        (_record("  <bash-stderr>no</bash-stderr>", promptSource="typed"), True),
        (_record("<local-command-stderr>oops</local-command-stderr>"), True),
        (_record(slash_text("compact", "keep it short")), True),
        (_record(slash_text("compact", ""), promptSource="sdk"), False),
        (_record(slash_text("compact", ""), origin={"kind": "human"}), False),
        (_record(slash_text("kiro-impl", "greet", "legacy")), False),
        (_record("please run <bash-input>ls</bash-input>"), False),
        (_record("ls"), False),
        (_record(None), False),
    ],
    ids=[
        "bash-input",
        "bash-stdout-block",
        "bash-stderr-marked",
        "local-stderr",
        "compact",
        "name-first-sdk-prompt",
        "name-first-human",
        "skill-message-first",
        "inline-tag",
        "plain",
        "no-text",
    ],
)
def test_the_rule_record_by_record(record: dict[str, object], local: bool) -> None:
    assert local_command(record) is local
