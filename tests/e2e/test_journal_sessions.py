"""The journal reader on journals the real Claude Code CLI wrote in this test run.

Each test plays the model through the stand-in, runs real `claude -p` sessions, then judges
the journal the CLI wrote with the hook's identity checks (layout, project owner) and
asserts the verdict and the typed events.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import subagents_script
from plangate.harness.claude import ClaudeEnv, ClaudeResult
from plangate.harness.standin import Script, StandIn, text, tool_use
from plangate.journal import (
    AssistantText,
    EndTurn,
    HumanTurn,
    TaskNotification,
    ToolResult,
    ToolUse,
    Verdict,
    read_journal,
)
from plangate.journal.owners import project_owners
from plangate.locations import project_slug

MakeEnv = Callable[[StandIn], ClaudeEnv]
HookScript = Callable[[str], str]

pytestmark = pytest.mark.e2e


def _ok(result: ClaudeResult) -> None:
    assert result.ok, result.describe()


def judge(env: ClaudeEnv, journal: Path | None, *, session: str | None = None) -> Verdict:
    """Read ``journal`` as the guard would: layout checked, owned by the project folder."""
    assert journal is not None and journal.is_file()
    verdict = read_journal(
        str(journal),
        session_id=session,
        owners=project_owners(str(env.project_dir)),
        config_dir=str(env.home / ".claude"),
        full=True,
    )
    assert verdict.status == "ready", (verdict.reason, verdict.detail)
    assert verdict.reason is None
    assert verdict.claude_code_version == "2.1.332"
    return verdict


def kinds(verdict: Verdict) -> list[str]:
    return [event.kind for event in verdict.events]


@pytest.mark.parametrize(
    "name",
    ["caf\u00e9 b.c_d-\U0001f600", "long-" + "x" * 230],
    ids=["outside-ascii", "longer-than-200"],
)
def test_the_journal_folder_is_named_as_project_slug_names_it(
    tmp_path: Path, claude_bin: Path, name: str
) -> None:
    """The CLI keeps the journal in ``projects/<project_slug(project dir)>/``: a character
    beyond the BMP gives two ``-``, a slug over 200 characters is cut and gets the hash."""
    with StandIn(Script(main=["Hello."])) as model:
        env = ClaudeEnv.create(
            tmp_path / "cc", model, project_dir=tmp_path / "p" / name, binary=claude_bin
        )
        result = env.run("Say hello.")
    _ok(result)
    slug = project_slug(str(env.project_dir))
    found = [str(path.relative_to(env.projects_dir)) for path in result.journals]
    assert found == [f"{slug}/{result.session_id}.jsonl"]


def assert_increasing(verdict: Verdict) -> None:
    orders = [event.order for event in verdict.events]
    assert orders == sorted(orders) and len(set(orders)) == len(orders)


def test_plain_session(make_env: MakeEnv) -> None:
    script = Script()
    with StandIn(script) as model:
        env = make_env(model)
        notes = str(env.project_dir / "notes.txt")
        script.add_main(
            [tool_use("Read", file_path=notes)],
            [text("Now a command."), tool_use("Bash", command="echo hi", description="Say hi")],
            "The notes say hello.",
        )
        result = env.run("Read the notes, run a command, answer.", allowed_tools=["Read", "Bash"])
    _ok(result)
    verdict = judge(env, result.journal_path)
    assert kinds(verdict) == [
        "human_turn",
        "tool_use",
        "tool_result",
        "assistant_text",
        "tool_use",
        "tool_result",
        "assistant_text",
        "end_turn",
    ]
    assert_increasing(verdict)
    human = verdict.events[0]
    assert isinstance(human, HumanTurn)
    assert human.text == "Read the notes, run a command, answer."
    read_use, read_result = verdict.events[1], verdict.events[2]
    assert isinstance(read_use, ToolUse) and read_use.name == "Read"
    assert isinstance(read_result, ToolResult) and not read_result.is_error
    assert read_result.tool_use_id == read_use.tool_use_id
    assert read_result.file is not None and read_result.file.file_path == notes
    # Claude Code counts the empty line after the final newline as a line of the file.
    assert (read_result.file.start_line, read_result.file.num_lines) == (1, 3)
    assert read_result.file.total_lines == 3 and read_result.file.covers_whole_file
    bash_use = verdict.events[4]
    assert isinstance(bash_use, ToolUse) and bash_use.input == {
        "command": "echo hi",
        "description": "Say hi",
    }
    assert verdict.results_for(bash_use.tool_use_id)[0].text == "hi"
    # Text and the tool call of one model message share its id.
    assert verdict.events[3].message_id == bash_use.message_id
    last = verdict.events[-2]
    assert isinstance(last, AssistantText) and last.text == "The notes say hello."
    assert isinstance(verdict.events[-1], EndTurn)
    assert verdict.root_shape == ["user"]


def test_session_start_hook_preamble(make_env: MakeEnv, hook_script: HookScript) -> None:
    with StandIn(Script(main=["Hello after the hook."])) as model:
        env = make_env(model)
        hook = hook_script(
            'print(json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", '
            '"additionalContext": "project notes"}}))'
        )
        settings = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": hook}]}]}}
        result = env.run("Say hello.", settings=settings)
    _ok(result)
    verdict = judge(env, result.journal_path)
    assert verdict.root_shape[-1] == "user"
    assert verdict.root_shape[:-1] and all(
        shape.startswith("attachment:hook_") for shape in verdict.root_shape[:-1]
    )
    assert kinds(verdict) == ["human_turn", "assistant_text", "end_turn"]


def test_resume_compaction_and_fork_of_the_compacted_session(make_env: MakeEnv) -> None:
    script = Script(
        main=[
            [tool_use("Bash", command="echo one", description="One")],
            "first answer",
            "second answer",
            "after compaction",
            "in the fork",
        ]
    )
    with StandIn(script) as model:
        env = make_env(model)
        first = env.run("First prompt.", allowed_tools=["Bash"])
        _ok(first)
        resumed = env.run("Second prompt.", resume=first.session_id)
        _ok(resumed)
        after_resume = judge(env, first.journal_path)
        compacted = env.run("/compact", continue_session=True)
        _ok(compacted)
        third = env.run("Third prompt.", resume=first.session_id)
        _ok(third)
        fork = env.run("Fork prompt.", resume=first.session_id, fork_session=True)
        _ok(fork)

    turns = [e.text for e in after_resume.events if isinstance(e, HumanTurn)]
    assert turns == ["First prompt.", "Second prompt."]

    whole = judge(env, first.journal_path)
    whole_turns = [e for e in whole.events if isinstance(e, HumanTurn)]
    assert [t.text for t in whole_turns if t.command is None] == [
        "First prompt.",
        "Second prompt.",
        "Third prompt.",
    ]
    # `/compact` is a command Claude Code runs itself, not a turn of the conversation.
    assert [t.command for t in whole_turns if t.command] == []
    texts = [e.text for e in whole.events if isinstance(e, AssistantText)]
    assert texts == ["first answer", "second answer", "after compaction"]
    # Everything before the compaction is still in causal order before what follows it.
    assert_increasing(whole)
    assert whole.root_shape == ["user"]

    assert fork.journal_path is not None and fork.journal_path != first.journal_path
    forked = judge(env, fork.journal_path)
    assert forked.genesis is True
    assert forked.root_shape[0] == "system:compact_boundary"
    fork_texts = [e.text for e in forked.events if isinstance(e, AssistantText)]
    assert fork_texts[-1] == "in the fork"
    # The fork's file holds only the fork's session: the source file is refused as another
    # session's journal when judged under the fork's id.
    other = read_journal(
        str(first.journal_path),
        session_id=fork.session_id,
        config_dir=str(env.home / ".claude"),
    )
    assert other.reason == "identity"


def test_foreground_and_background_subagents(make_env: MakeEnv) -> None:
    script = subagents_script()
    with StandIn(script) as model:
        env = make_env(model)
        result = env.run("Use agents.", allowed_tools=["Agent", "Bash"], timeout=120)
    _ok(result)
    verdict = judge(env, result.journal_path)
    agents = [e for e in verdict.events if isinstance(e, ToolUse) and e.name == "Agent"]
    assert [a.input["prompt"] for a in agents if a.input] == [
        "FG-TASK: count files",
        "BG-TASK: slow check",
    ]
    foreground, background = agents
    assert not verdict.results_for(foreground.tool_use_id)[0].is_async
    receipt = verdict.results_for(background.tool_use_id)
    assert len(receipt) == 1 and receipt[0].is_async
    notices = [e for e in verdict.events if isinstance(e, TaskNotification)]
    assert [(n.tool_use_id, n.status) for n in notices] == [(background.tool_use_id, "completed")]
    assert notices[0].order > receipt[0].order
    # Subagent tool calls never appear among the parent's events.
    assert not [e for e in verdict.events if isinstance(e, ToolUse) and e.name == "Bash"]

    assert len(result.subagent_journals) == 2
    for journal in result.subagent_journals:
        refused = read_journal(str(journal))
        assert refused.status == "error" and refused.reason == "agent"
        assert refused.events == []


def test_parallel_tool_calls_in_one_message(make_env: MakeEnv) -> None:
    script = Script(
        main=[
            [
                text("Two at once."),
                tool_use("Bash", command="echo left", description="Left"),
                tool_use("Bash", command="echo right", description="Right"),
            ],
            "Both done.",
        ]
    )
    with StandIn(script) as model:
        env = make_env(model)
        result = env.run("Run two commands.", allowed_tools=["Bash"])
    _ok(result)
    verdict = judge(env, result.journal_path)
    uses = [e for e in verdict.events if isinstance(e, ToolUse)]
    assert [u.input["command"] for u in uses if u.input] == ["echo left", "echo right"]
    assert uses[0].message_id == uses[1].message_id
    for use, expected in zip(uses, ["left", "right"], strict=True):
        results = verdict.results_for(use.tool_use_id)
        assert [r.text for r in results] == [expected]
        assert results[0].order > use.order
    assert_increasing(verdict)


def test_journal_read_by_a_hook_during_the_session(
    make_env: MakeEnv, hook_script: HookScript, hook_out: Path
) -> None:
    """A PreToolUse hook reads the journal while Claude Code is still writing it."""
    probe = (
        "from plangate.journal import read_journal\n"
        "from plangate.journal.owners import project_owners\n"
        "v = read_journal(payload['transcript_path'], session_id=payload['session_id'],\n"
        "                 owners=project_owners(os.environ['CLAUDE_PROJECT_DIR']),\n"
        "                 config_dir=os.path.join(os.environ['HOME'], '.claude'))\n"
        "ids = [e.tool_use_id for e in v.events if e.kind == 'tool_use']\n"
        "with open(os.path.join(out, 'verdicts.txt'), 'a') as fh:\n"
        "    fh.write(f\"{v.status} {v.reason} {payload['tool_use_id'] in ids}\\n\")\n"
    )
    script = Script(
        main=[
            [tool_use("Bash", command="echo one", description="One")],
            [tool_use("Bash", command="echo two", description="Two")],
            "Done.",
        ]
    )
    with StandIn(script) as model:
        env = make_env(model)
        command = hook_script(probe)
        settings = {
            "hooks": {
                "PreToolUse": [
                    {"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}
                ]
            }
        }
        result = env.run(
            "Run two commands.",
            settings=settings,
            allowed_tools=["Bash"],
            env={"PYTHONPATH": os.pathsep.join(p for p in [_src()] if p)},
        )
    _ok(result)
    lines = (hook_out / "verdicts.txt").read_text().splitlines()
    assert len(lines) == 2
    # In-flight reads are never refused. Before the model's first message is written the
    # journal holds only the prompt (missing: nothing with content yet); by the second call
    # it is ready. The current call may or may not be journaled yet when the hook runs (the
    # guard's payload path covers that).
    statuses = [line.split()[:2] for line in lines]
    assert statuses[0] in (["missing", "None"], ["ready", "None"]), lines
    assert statuses[1] == ["ready", "None"], lines


def _src() -> str:
    return str(Path(__file__).resolve().parents[2] / "src")
