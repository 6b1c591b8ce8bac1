"""The conversation's root, ownership and causal order (gstack-design A.7-A.9, B.4, B.5)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from plangate.journal import ERROR, MISSING, READY, AssistantText, Verdict, read_journal
from plangate.journal.codes import (
    AGENT,
    COMPACTION_UNREACHABLE,
    COMPETING_ROOT,
    CYCLE,
    FOREIGN_CWD,
    IDENTITY,
    SIDECHAIN,
    unrecognized,
)
from plangate.journal.owners import project_owners
from testkit.journals import Journal, dumps, use_id

PROJECT = "/home/user/project"


def judge(journal: Journal, tmp_path: Path, **kwargs: object) -> Verdict:
    path = journal.write(tmp_path / f"{journal.session_id}.jsonl")
    return read_journal(str(path), **kwargs)  # type: ignore[arg-type]


def texts(verdict: Verdict) -> list[str | None]:
    return [e.text for e in verdict.events if isinstance(e, AssistantText)]


def answer(journal: Journal, prompt: str = "Hello?", reply: str = "Hi.") -> None:
    """A short turn with array content (a journal without any is not ready yet)."""
    journal.prompt(prompt)
    journal.turn_attachments()
    journal.text(reply)


# the three accepted roots


def test_a_user_record_with_a_null_parent_is_a_root(journal: Journal, tmp_path: Path) -> None:
    journal.session()
    verdict = judge(journal, tmp_path, owners=[PROJECT])
    assert (verdict.status, verdict.reason) == (READY, None)
    assert verdict.root_shape == ["user"]
    assert (verdict.genesis, verdict.owner) == (False, PROJECT)
    assert verdict.claude_code_version == "2.1.332"


def test_a_sessionstart_attachment_chain_is_a_root(journal: Journal, tmp_path: Path) -> None:
    journal.queue_operation("enqueue", "hi")
    journal.session_start_hook("hook_success", parent=None)
    journal.session_start_hook("hook_additional_context")
    journal.session()
    verdict = judge(journal, tmp_path, owners=[PROJECT])
    assert (verdict.status, verdict.reason) == (READY, None)
    assert verdict.root_shape == [
        "attachment:hook_success",
        "attachment:hook_additional_context",
        "user",
    ]


def test_sessionstart_progress_records_of_2_1_39_are_a_root(tmp_path: Path) -> None:
    journal = Journal(cwd=PROJECT, version="2.1.39")
    journal.metadata("file-history-snapshot", snapshot={})
    journal.session_start_progress(parent=None)
    journal.session_start_progress(command="bd prime")
    journal.session()
    verdict = judge(journal, tmp_path, owners=[PROJECT])
    assert (verdict.status, verdict.reason) == (READY, None)
    assert verdict.root_shape == ["progress:hook_progress", "progress:hook_progress", "user"]
    assert verdict.claude_code_version == "2.1.39"


def test_a_compact_boundary_first_in_the_file_is_a_fork_root(
    journal: Journal, tmp_path: Path
) -> None:
    """``--fork-session`` of a compacted session: metadata, then the copied boundary."""
    journal.metadata("mode", mode="normal")
    journal.queue_operation("enqueue", "Continue in a fork.")
    boundary = journal.compact_boundary(logical_parent="2a38eacd-c3a8-4d40-958a-078ecbe6545b")
    journal.compact_summary()
    journal.text("The notes say hello.")
    answer(journal, "Continue in a fork.", "Forked.")
    verdict = judge(journal, tmp_path, owners=[PROJECT], full=True)
    assert (verdict.status, verdict.reason) == (READY, None)
    assert verdict.genesis is True
    assert verdict.root_shape == ["system:compact_boundary", "user"]
    assert texts(verdict) == ["The notes say hello.", "Forked."]
    assert boundary["parentUuid"] is None


def test_a_fork_root_in_another_folder_is_foreign_cwd(journal: Journal, tmp_path: Path) -> None:
    journal.compact_boundary(logical_parent="2a38eacd-c3a8-4d40-958a-078ecbe6545b")
    journal.compact_summary()
    answer(journal, "Continue in a fork.", "Forked.")
    verdict = judge(journal, tmp_path, owners=["/home/user/other"])
    assert (verdict.status, verdict.reason, verdict.genesis) == (ERROR, FOREIGN_CWD, True)


def test_a_clear_session_is_rooted_in_its_sessionstart_chain(
    journal: Journal, tmp_path: Path
) -> None:
    journal.session_start_hook(parent=None, hook_name="SessionStart:clear")
    journal.meta("<local-command-caveat>Caveat</local-command-caveat>")
    journal.slash_command("clear", "")
    journal.system("local_command", content="<local-command-stdout></local-command-stdout>")
    answer(journal, "Start again.", "Sure.")
    verdict = judge(journal, tmp_path, owners=[PROJECT])
    assert (verdict.status, verdict.reason) == (READY, None)
    assert verdict.root_shape == ["attachment:hook_success", "user"]


def test_a_lone_sessionstart_record_without_a_message_below_is_no_second_root(
    journal: Journal, tmp_path: Path
) -> None:
    journal.session()
    journal.session_start_hook(parent=None, hook_name="SessionStart:resume")
    verdict = judge(journal, tmp_path)
    assert (verdict.status, verdict.reason) == (READY, None)


# competing roots, cycles, subagents


def test_a_later_null_parent_root_is_the_conversation(journal: Journal, tmp_path: Path) -> None:
    """An Esc or a rewind on the first prompt: Claude Code writes the next prompt as a new
    null-parent root and follows the chain up from the newest record."""
    journal.session()
    answer(journal)
    journal.prompt("A second root", parent=None)
    journal.text("ok")
    verdict = judge(journal, tmp_path, full=True)
    assert (verdict.status, verdict.reason) == (READY, None)
    assert texts(verdict) == ["ok"]
    assert set(verdict.dropped) == {"abandoned_root"}


def test_two_roots_written_in_turn_compete(journal: Journal, tmp_path: Path) -> None:
    """Two writers: the abandoned conversation goes on after the live one started."""
    journal.session()
    answer(journal)
    earlier = journal.records[-1]
    journal.prompt("A second root", parent=None)
    journal.text("from the second writer")
    journal.text("from the first writer", parent=earlier["uuid"])
    journal.text("the second writer again", parent=journal.records[-2]["uuid"])
    verdict = judge(journal, tmp_path)
    assert (verdict.status, verdict.reason) == (ERROR, COMPETING_ROOT)
    assert verdict.events == []


def test_a_second_sessionstart_chain_leading_to_a_turn_is_the_conversation(
    journal: Journal, tmp_path: Path
) -> None:
    journal.session()
    journal.session_start_hook(parent=None)
    journal.session_start_hook("hook_additional_context")
    journal.prompt("Another conversation")
    journal.text("ok")
    verdict = judge(journal, tmp_path, full=True)
    assert (verdict.status, verdict.reason) == (READY, None)
    assert texts(verdict) == ["ok"]
    assert verdict.root_shape[-1] == "user"
    assert set(verdict.dropped) == {"abandoned_root"}


def test_two_node_records_sharing_a_uuid_compete(journal: Journal, tmp_path: Path) -> None:
    journal.session()
    first = journal.text("one")
    journal.text("two", uuid=first["uuid"])
    verdict = judge(journal, tmp_path)
    assert (verdict.status, verdict.reason) == (ERROR, COMPETING_ROOT)
    assert verdict.root_shape == ["duplicate_uuid"]


def test_a_non_node_copy_of_a_uuid_does_not_compete(journal: Journal, tmp_path: Path) -> None:
    journal.session()
    first = journal.text("one")
    journal.subagent("a sidechain copy", role="user", uuid=first["uuid"])
    verdict = judge(journal, tmp_path)
    assert (verdict.status, verdict.reason) == (READY, None)


def test_parent_links_forming_a_loop_are_a_cycle(journal: Journal, tmp_path: Path) -> None:
    journal.prompt("Hello", parent="00000000-0000-4000-8000-0000000000bb", uuid="u-a")
    journal.text("Hi", parent="u-a", uuid="00000000-0000-4000-8000-0000000000bb")
    verdict = judge(journal, tmp_path)
    assert (verdict.status, verdict.reason) == (ERROR, CYCLE)


def test_a_longer_loop_above_the_first_turn_is_a_cycle(journal: Journal, tmp_path: Path) -> None:
    journal.session_start_hook(parent="hook-b", uuid="hook-a")
    journal.session_start_hook(parent="hook-a", uuid="hook-b")
    journal.prompt("Hello", parent="hook-b")
    journal.text("Hi")
    verdict = judge(journal, tmp_path)
    assert (verdict.status, verdict.reason) == (ERROR, CYCLE)


def test_a_compact_boundary_whose_logical_parent_loops_back_is_compaction_unreachable(
    journal: Journal, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Seed 000: records after a compaction that hang from a boundary whose logical parent
    descends from it are ``unrecognized_shape:compaction_unreachable`` (an unverified allow),
    for the hook and for ``plangate journal inspect`` alike, not ``cycle``."""
    from plangate.cli import main

    answer(journal)
    later = "00000000-0000-4000-8000-0000000000cc"
    journal.compact_boundary(logical_parent=later)
    journal.compact_summary("Summary of the conversation so far.")
    journal.text("Going on after the compaction.", uuid=later)
    verdict = judge(journal, tmp_path)
    assert (verdict.status, verdict.reason) == (ERROR, unrecognized(COMPACTION_UNREACHABLE))
    path = tmp_path / f"{journal.session_id}.jsonl"
    assert main(["journal", "inspect", str(path)]) != 0
    shown = capsys.readouterr().out
    assert "unrecognized_shape:compaction_unreachable" in shown and "cycle" not in shown


def test_a_sidechain_first_turn_is_sidechain(journal: Journal, tmp_path: Path) -> None:
    journal.prompt("Warmup", parent=None, is_sidechain=True)
    journal.text("Ready", is_sidechain=True)
    verdict = judge(journal, tmp_path)
    assert (verdict.status, verdict.reason) == (ERROR, SIDECHAIN)


def test_a_sidechain_ancestor_is_sidechain(journal: Journal, tmp_path: Path) -> None:
    journal.session_start_hook(parent=None, is_sidechain=True)
    answer(journal)
    verdict = judge(journal, tmp_path)
    assert (verdict.status, verdict.reason) == (ERROR, SIDECHAIN)


def test_a_subagent_first_turn_is_agent(journal: Journal, tmp_path: Path) -> None:
    journal.subagent("FG-TASK: count the files", parent=None)
    journal.subagent([{"type": "text", "text": "3 files"}], role="assistant")
    verdict = judge(journal, tmp_path)
    assert (verdict.status, verdict.reason) == (ERROR, AGENT)


def test_an_ancestry_through_a_subagent_record_is_agent(journal: Journal, tmp_path: Path) -> None:
    journal.session_start_hook(parent=None, agent_id="a7f3", is_sidechain=True)
    answer(journal)
    verdict = judge(journal, tmp_path)
    assert (verdict.status, verdict.reason) == (ERROR, AGENT)


def test_subagent_records_inline_after_the_root_are_left_out(
    journal: Journal, tmp_path: Path
) -> None:
    journal.session()
    leaf = journal.leaf
    journal.subagent("FG-TASK", agent_id="afb690a755a4e489f")
    journal.subagent([{"type": "text", "text": "subagent words"}], role="assistant")
    journal.text("parent words", parent=leaf)
    verdict = judge(journal, tmp_path, full=True)
    assert (verdict.status, verdict.reason) == (READY, None)
    assert "subagent words" not in texts(verdict)
    assert texts(verdict)[-1] == "parent words"


# owners


def test_a_root_written_in_another_folder_is_foreign_cwd(journal: Journal, tmp_path: Path) -> None:
    journal.session()
    verdict = judge(journal, tmp_path, owners=["/home/user/other"])
    assert (verdict.status, verdict.reason) == (ERROR, FOREIGN_CWD)
    assert judge(journal, tmp_path, owners=["/home/user/other", PROJECT]).status == READY


def test_a_preamble_record_in_another_folder_is_foreign_cwd(
    journal: Journal, tmp_path: Path
) -> None:
    journal.session_start_hook(parent=None, cwd="/home/user/other")
    journal.session()
    verdict = judge(journal, tmp_path, owners=[PROJECT])
    assert (verdict.status, verdict.reason) == (ERROR, FOREIGN_CWD)


def test_a_later_cd_does_not_change_the_owner(journal: Journal, tmp_path: Path) -> None:
    journal.session()
    journal.prompt("cd elsewhere", cwd="/tmp")
    journal.text("done", cwd="/tmp")
    verdict = judge(journal, tmp_path, owners=[PROJECT])
    assert (verdict.status, verdict.reason) == (READY, None)


def _git(*args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        check=True,
        capture_output=True,
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_linked_git_worktree_of_the_project_is_an_owner(tmp_path: Path) -> None:
    base = tmp_path.resolve()
    project, worktree = base / "project", base / "project-wt"
    _git("init", "-q", str(project))
    _git("-C", str(project), "commit", "-q", "--allow-empty", "-m", "init")
    _git("-C", str(project), "worktree", "add", "-q", str(worktree))
    owners = project_owners(str(project))
    assert owners == [str(project), str(worktree)]
    journal = Journal(cwd=str(worktree))
    journal.session()
    verdict = judge(journal, tmp_path, owners=owners)
    assert (verdict.status, verdict.reason, verdict.owner) == (READY, None, str(worktree))
    alone = judge(journal, tmp_path, owners=[str(project)])
    assert (alone.status, alone.reason) == (ERROR, FOREIGN_CWD)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_one_sided_worktree_link_is_no_owner(tmp_path: Path) -> None:
    base = tmp_path.resolve()
    project, fake = base / "project", base / "fake"
    _git("init", "-q", str(project))
    admin = project / ".git" / "worktrees" / "fake"
    admin.mkdir(parents=True)
    fake.mkdir()
    (admin / "gitdir").write_text(f"{fake}/.git\n")
    (fake / ".git").write_text(f"gitdir: {base}/elsewhere/.git/worktrees/fake\n")
    owners = project_owners(str(project))
    assert owners == [str(project)]
    journal = Journal(cwd=str(fake))
    journal.session()
    verdict = judge(journal, tmp_path, owners=owners)
    assert (verdict.status, verdict.reason) == (ERROR, FOREIGN_CWD)


WINDOWS_SPELLINGS = [
    "C:\\Users\\me\\proj",
    "c:\\Users\\me\\proj",
    "C:/Users/me/proj",
    "/c/Users/me/proj",
]


@pytest.mark.parametrize("owner", WINDOWS_SPELLINGS)
@pytest.mark.parametrize("cwd", WINDOWS_SPELLINGS)
def test_windows_spellings_of_one_folder_are_one_owner(
    owner: str, cwd: str, tmp_path: Path
) -> None:
    journal = Journal(cwd=cwd)
    journal.session()
    verdict = judge(journal, tmp_path, owners=[owner])
    assert (verdict.status, verdict.reason, verdict.owner) == (READY, None, owner)


@pytest.mark.parametrize(
    "owner", ["D:\\Users\\me\\proj", "C:\\Users\\me\\proj\\sub", "/d/Users/me/proj"]
)
def test_another_windows_folder_is_foreign(owner: str, tmp_path: Path) -> None:
    journal = Journal(cwd="C:\\Users\\me\\proj")
    journal.session()
    verdict = judge(journal, tmp_path, owners=[owner])
    assert (verdict.status, verdict.reason) == (ERROR, FOREIGN_CWD)


def test_an_owner_that_is_a_symlink_to_the_root_cwd_is_cwd_spelling(tmp_path: Path) -> None:
    real = tmp_path.resolve() / "real"
    real.mkdir()
    link = tmp_path.resolve() / "link"
    link.symlink_to(real)
    journal = Journal(cwd=str(real))
    journal.session()
    verdict = judge(journal, tmp_path, owners=[str(link)])
    assert (verdict.status, verdict.reason) == (ERROR, "unrecognized_shape:cwd_spelling")
    assert judge(journal, tmp_path, owners=[str(real)]).status == READY


def test_an_empty_owner_list_gets_a_verdict(journal: Journal, tmp_path: Path) -> None:
    """gstack B.1: the owner list must not be empty; a verdict, never an exception."""
    journal.session()
    verdict = judge(journal, tmp_path, owners=[])
    assert (verdict.status, verdict.reason) == (ERROR, IDENTITY)


# shapes the reader does not know


@pytest.mark.parametrize(
    ("build", "shape"),
    [
        ("local_command", "system:local_command"),
        ("environment", "attachment:environment"),
        ("after_hook", "attachment:environment"),
        ("pretooluse_progress", "progress:hook_progress"),
        ("stop_hook", "attachment:hook_success"),
    ],
)
def test_a_non_sessionstart_record_above_the_first_turn_is_an_unknown_preamble(
    build: str, shape: str, journal: Journal, tmp_path: Path
) -> None:
    if build == "local_command":
        journal.system("local_command", parent=None, content="<local-command-stdout/>")
    elif build == "environment":
        journal.attachment("environment", parent=None, snapshot={})
    elif build == "after_hook":
        journal.session_start_hook(parent=None)
        journal.attachment("environment", snapshot={})
    elif build == "pretooluse_progress":
        record = journal.session_start_progress(parent=None)
        record["data"]["hookEvent"] = "PreToolUse"
    else:
        record = journal.session_start_hook(parent=None)
        record["attachment"]["hookEvent"] = "Stop"
    answer(journal)
    verdict = judge(journal, tmp_path)
    assert (verdict.status, verdict.reason) == (ERROR, f"unrecognized_shape:preamble:{shape}")


@pytest.mark.parametrize("hooked", [False, True], ids=["bare", "after-sessionstart"])
def test_a_first_turn_that_is_not_a_user_record_is_unknown(
    hooked: bool, journal: Journal, tmp_path: Path
) -> None:
    if hooked:
        journal.session_start_hook(parent=None)
    journal.text("I speak first", parent=journal.leaf)
    answer(journal)
    verdict = judge(journal, tmp_path)
    assert (verdict.status, verdict.reason) == (ERROR, "unrecognized_shape:first_turn:assistant")


@pytest.mark.parametrize("parent", ["absent", "empty", "number"])
def test_a_root_whose_parent_is_not_null_is_unknown(
    parent: str, journal: Journal, tmp_path: Path
) -> None:
    record = journal.prompt("Hello", parent=None)
    if parent == "absent":
        del record["parentUuid"]
    else:
        record["parentUuid"] = "" if parent == "empty" else 7
    journal.text("Hi")
    verdict = judge(journal, tmp_path)
    assert (verdict.status, verdict.reason) == (ERROR, "unrecognized_shape:root_parent:user")


# nothing owned yet


def test_an_unwritten_ancestor_means_nothing_is_owned_yet(journal: Journal, tmp_path: Path) -> None:
    journal.prompt("Hello", parent="00000000-0000-4000-8000-00000000dead")
    journal.text("Hi")
    verdict = judge(journal, tmp_path)
    assert (verdict.status, verdict.reason, verdict.owned) == (MISSING, None, 0)


def test_a_boundary_with_an_absent_parent_that_is_not_first_is_the_top(
    journal: Journal, tmp_path: Path
) -> None:
    journal.attachment("environment", parent=None, snapshot={})
    journal.compact_boundary(logical_parent="00000000-0000-4000-8000-00000000dead")
    journal.compact_summary()
    answer(journal)
    verdict = judge(journal, tmp_path)
    assert (verdict.status, verdict.reason, verdict.genesis) == (READY, None, True)
    assert verdict.dropped == {"summarized": 1}


def test_a_journal_without_array_content_is_missing(journal: Journal, tmp_path: Path) -> None:
    journal.queue_operation("enqueue", "Hello")
    journal.prompt("Hello")
    only_prompt = judge(journal, tmp_path)
    assert (only_prompt.status, only_prompt.reason) == (MISSING, None)
    assert only_prompt.owned == 1
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert (read_journal(str(empty)).status, read_journal(str(empty)).reason) == (MISSING, None)


def test_a_metadata_line_with_a_message_before_the_first_turn_is_ignored(
    journal: Journal, tmp_path: Path
) -> None:
    """2.1.332's uuid-less ``api-request-blob`` lines carry a ``message``; never a first turn."""
    journal.queue_operation("enqueue", "Hello")
    journal.api_request_blob("user", [{"type": "text", "text": "Hello"}])
    journal.session()
    verdict = judge(journal, tmp_path)
    assert (verdict.status, verdict.reason) == (READY, None)


# causal order


def test_a_child_written_before_its_parent_is_ordered_after_it(
    journal: Journal, tmp_path: Path
) -> None:
    journal.prompt("Hello", parent=None)
    journal.text("first", stop_reason=None)
    journal.text("second")
    lines = journal.lines()
    lines[1], lines[2] = lines[2], lines[1]
    path = tmp_path / "swapped.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    verdict = read_journal(str(path), full=True)
    assert (verdict.status, verdict.reason) == (READY, None)
    assert texts(verdict) == ["first", "second"]
    assert [e.record for e in verdict.events] == [0, 2, 1, 1]
    assert [e.kind for e in verdict.events] == [
        "human_turn",
        "assistant_text",
        "assistant_text",
        "end_turn",
    ]
    orders = [e.order for e in verdict.events]
    assert orders == sorted(orders) and len(set(orders)) == len(orders)


def test_timestamps_going_backwards_do_not_reorder(journal: Journal, tmp_path: Path) -> None:
    stamps = iter(f"2026-11-29T19:37:{59 - n:02d}.000Z" for n in range(20))
    journal.prompt("Hello", parent=None, timestamp=next(stamps))
    journal.text("one", stop_reason=None, timestamp=next(stamps))
    use = journal.tool_use("Bash", {"command": "ls"}, timestamp=next(stamps))
    journal.bash_result(use_id(use), "a", timestamp=next(stamps))
    journal.text("two", timestamp=next(stamps))
    verdict = judge(journal, tmp_path, full=True)
    assert (verdict.status, verdict.reason) == (READY, None)
    assert [e.kind for e in verdict.events] == [
        "human_turn",
        "assistant_text",
        "tool_use",
        "tool_result",
        "assistant_text",
        "end_turn",
    ]
    assert texts(verdict) == ["one", "two"]
    assert [e.timestamp for e in verdict.events][:2] == [
        "2026-11-29T19:37:59.000Z",
        "2026-11-29T19:37:58.000Z",
    ]


def test_compaction_is_followed_through_the_logical_parent(
    journal: Journal, tmp_path: Path
) -> None:
    journal.session()
    journal.metadata("mode", mode="normal")
    before = journal.leaf
    boundary = journal.compact()
    journal.meta("<local-command-caveat>Caveat</local-command-caveat>")
    journal.slash_command("compact", "")
    journal.local_command_stdout("Compacted")
    answer(journal, "What did we do?", "We read notes.")
    verdict = judge(journal, tmp_path, full=True)
    assert (verdict.status, verdict.reason) == (READY, None)
    assert (boundary["parentUuid"], boundary["logicalParentUuid"]) == (None, before)
    assert texts(verdict) == ["The notes say hello.", "We read notes."]
    nodes = [r for r in journal.records if "uuid" in r]
    assert verdict.owned == len(nodes)


def test_a_mid_file_boundary_with_a_missing_logical_parent_is_the_top(
    journal: Journal, tmp_path: Path
) -> None:
    """An automatic compaction can point at a record Claude Code never wrote (2.1.39 did):
    the chain stops at the boundary, and what came before it is summarized away."""
    journal.session()
    before = len([r for r in journal.records if "uuid" in r])
    journal.compact_boundary(logical_parent="2a38eacd-c3a8-4d40-958a-078ecbe6545b")
    journal.compact_summary()
    answer(journal, "What did we do?", "We read notes.")
    journal.prompt("And then?")
    journal.text("Nothing else.")
    verdict = judge(journal, tmp_path, full=True)
    assert (verdict.status, verdict.reason) == (READY, None)
    assert verdict.genesis is True
    assert texts(verdict) == ["We read notes.", "Nothing else."]
    assert verdict.dropped == {"summarized": before}
    assert verdict.owned == len([r for r in journal.records if "uuid" in r]) - before
    records = [e.record for e in verdict.events]
    assert records == sorted(records)


def test_sibling_assistant_records_stay_in_file_order(journal: Journal, tmp_path: Path) -> None:
    """Assistant records hanging side by side from the chain are the blocks of its messages
    (parallel tool calls): both are in the conversation, in file order."""
    prompt = journal.prompt("Hello", parent=None)
    journal.text("old answer")
    journal.text("new answer", parent=prompt["uuid"])
    verdict = judge(journal, tmp_path, full=True)
    assert (verdict.status, verdict.reason) == (READY, None)
    assert texts(verdict) == ["old answer", "new answer"]


def test_the_builder_writes_one_json_object_per_line(journal: Journal) -> None:
    journal.session()
    data = journal.to_bytes()
    assert data.endswith(b"\n") and data.count(b"\n") == len(journal.records)
    assert all(line == dumps(r) for line, r in zip(journal.lines(), journal.records, strict=True))
    assert os.linesep.encode() not in dumps(journal.records[0])
