"""The live chain (:mod:`plangate.journal.chain`): the conversation is what Claude Code would
send, followed up from the current call or the newest record, in the shapes the real 2.1.332
terminal UI writes (``docs/journal-reading.md``; the real sessions are in
``tests/e2e/test_tui_sessions.py``). Each shape is also grown after an index was saved, and
the indexed read must equal a full read."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.journal import READY, HumanTurn, ToolUse, Verdict, read_journal
from plangate.journal.codes import COMPETING_ROOT, CYCLE
from testkit.journals import Journal
from tests import corpus

from .conftest import PROJECT
from .test_index import Growing

INTERRUPT = "[Request interrupted by user]"


def judge(journal: Journal, tmp_path: Path, **kwargs: object) -> Verdict:
    path = journal.write(tmp_path / f"{journal.session_id}.jsonl")
    return read_journal(str(path), full=True, **kwargs)  # type: ignore[arg-type]


def prompts(verdict: Verdict) -> list[str | None]:
    return [event.text for event in verdict.events if isinstance(event, HumanTurn)]


ROOT = object()


def turn(journal: Journal, prompt: str, reply: str, *, parent: object = None) -> int:
    """A typed prompt (hung from ``parent`` when given, a new root for ``ROOT``) and a reply;
    returns how many records with an id it wrote."""
    before = nodes(journal)
    options: dict[str, object] = {}
    if parent is ROOT:
        options["parent"] = None
    elif parent is not None:
        options["parent"] = parent
    journal.typed_prompt(prompt, **options)
    journal.turn_attachments()
    journal.text(reply)
    return nodes(journal) - before


def nodes(journal: Journal) -> int:
    return sum(1 for record in journal.records if "uuid" in record)


def test_esc_on_the_first_prompt_then_a_new_prompt(journal: Journal, tmp_path: Path) -> None:
    first = journal.typed_prompt("First try")
    journal.user_text([{"type": "text", "text": INTERRUPT}], parent=first["uuid"])
    turn(journal, "Second try", "Answered.", parent=ROOT)
    verdict = judge(journal, tmp_path)
    assert (verdict.status, verdict.reason) == (READY, None)
    assert prompts(verdict) == ["Second try"]
    assert verdict.dropped == {"abandoned_root": 2}
    assert verdict.root_shape == ["user"]


def test_a_rewind_to_a_later_prompt_drops_the_rewound_branch(
    journal: Journal, tmp_path: Path
) -> None:
    turn(journal, "One", "Answer one.")
    end_of_one = journal.leaf
    rewound = turn(journal, "Two", "Answer two.")
    journal.tool_use("Bash", {"command": "ls"})
    turn(journal, "Two, edited", "Answer two again.", parent=end_of_one)
    verdict = judge(journal, tmp_path)
    assert (verdict.status, verdict.reason) == (READY, None)
    assert prompts(verdict) == ["One", "Two, edited"]
    assert verdict.dropped == {"abandoned_branch": rewound + 1}
    assert not verdict.tool_uses()


def test_summarize_from_the_first_prompt(journal: Journal, tmp_path: Path) -> None:
    """A boundary with neither parent nor logical parent; the live chain hangs from it."""
    summarized = turn(journal, "One", "Answer one.") + turn(journal, "Two", "Answer two.")
    journal.compact_boundary(logical_parent=None)
    journal.compact_summary()
    journal.tool_use("Read", {"file_path": "/home/user/project/eng.md"})
    verdict = judge(journal, tmp_path)
    assert (verdict.status, verdict.reason, verdict.genesis) == (READY, None, True)
    assert prompts(verdict) == []
    assert verdict.dropped == {"summarized": summarized}
    assert [use.name for use in verdict.tool_uses().values()] == ["Read"]


def test_summarize_from_a_later_prompt(journal: Journal, tmp_path: Path) -> None:
    turn(journal, "One", "Answer one.")
    end_of_one = journal.leaf
    summarized = turn(journal, "Two", "Answer two.")
    journal.compact_boundary(logical_parent=end_of_one)
    journal.compact_summary()
    turn(journal, "Three", "Answer three.")
    verdict = judge(journal, tmp_path)
    assert (verdict.status, verdict.reason, verdict.genesis) == (READY, None, False)
    assert prompts(verdict) == ["One", "Three"]
    assert verdict.dropped == {"summarized": summarized}


def test_parallel_tool_calls_and_their_results_are_live(journal: Journal, tmp_path: Path) -> None:
    """2.1.332 chains the blocks of one message and hangs each result from its own block."""
    journal.typed_prompt("Read both")
    journal.text("Reading.", stop_reason=None)
    first, second = journal.parallel_tool_uses(
        [("Read", {"file_path": "/home/user/project/a"}), ("Read", {"file_path": "/b"})]
    )
    ids = [first["message"]["content"][0]["id"], second["message"]["content"][0]["id"]]
    journal.tool_result(ids[0], "A", parent=first["uuid"])
    journal.tool_result(ids[1], "B", parent=second["uuid"])
    journal.text("Both read.")
    for anchor in (None, ids[0], ids[1]):
        verdict = judge(journal, tmp_path, tool_use_id=anchor)
        assert (verdict.status, verdict.dropped) == (READY, {})
        assert set(verdict.tool_uses()) == set(ids)
        assert all(verdict.results_for(use) for use in ids)


def test_the_current_call_anchors_the_chain(journal: Journal, tmp_path: Path) -> None:
    """The chain is followed up from the call's own record. A call on a branch that another
    branch went on from afterwards can only come from a second writer."""
    turn(journal, "One", "Answer one.")
    end_of_one = journal.leaf
    journal.typed_prompt("Two")
    call = journal.tool_use("Read", {"file_path": "/home/user/project/x"})
    use_id = call["message"]["content"][0]["id"]
    turn(journal, "Two, edited", "Answer.", parent=end_of_one)
    by_newest = judge(journal, tmp_path)
    by_call = judge(journal, tmp_path, tool_use_id=use_id)
    assert use_id not in by_newest.tool_uses() and prompts(by_newest) == ["One", "Two, edited"]
    assert (by_call.status, by_call.reason) == ("error", COMPETING_ROOT)


def test_an_abandoned_branch_that_keeps_growing_is_a_competing_root(
    journal: Journal, tmp_path: Path
) -> None:
    turn(journal, "One", "Answer one.")
    end_of_one = journal.leaf
    journal.typed_prompt("Writer A")
    a_leaf = journal.text("A's answer.")["uuid"]
    turn(journal, "Writer B", "B's answer.", parent=end_of_one)
    journal.text("A goes on.", parent=a_leaf)
    journal.text("B goes on.", parent=journal.records[-2]["uuid"])
    verdict = judge(journal, tmp_path)
    assert (verdict.status, verdict.reason) == ("error", COMPETING_ROOT)


def test_a_loop_off_the_chain_is_a_cycle(journal: Journal, tmp_path: Path) -> None:
    turn(journal, "One", "Answer one.")
    journal.text("dead", uuid="loop-a", parent="loop-b")
    journal.text("dead", uuid="loop-b", parent="loop-a")
    turn(journal, "Two", "Answer two.")
    verdict = judge(journal, tmp_path)
    assert (verdict.status, verdict.reason) == ("error", CYCLE)


def _corpus_main(name: str) -> list[dict[str, object]]:
    path = corpus.journal(name)
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@corpus.needed
@settings(max_examples=80, deadline=None)
@given(st.data())
def test_a_loop_anywhere_in_a_real_journal_is_a_cycle(data: st.DataObject) -> None:
    """Issue 14's fault: a loop was looked for only on the first turn's ancestry."""
    records = _corpus_main("spotter/tool_heavy.jsonl")
    position = {r["uuid"]: i for i, r in enumerate(records) if isinstance(r.get("uuid"), str)}
    start = data.draw(st.sampled_from(sorted(position.values())))
    below = {start}  # the record and its descendants, along the file's parent links
    for index, record in enumerate(records):
        if position.get(record.get("parentUuid")) in below:
            below.add(index)
    target = data.draw(st.sampled_from(sorted(below)))
    looped = dict(records[start])
    looped["parentUuid"] = records[target]["uuid"]
    changed = [*records[:start], looped, *records[start + 1 :]]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "looped.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in changed), encoding="utf-8")
        verdict = read_journal(str(path))
    assert (verdict.status, verdict.reason) == ("error", CYCLE)


# the same shapes, grown after an index was saved


def _grown(config_dir: Path, tmp_path: Path, journal: Journal) -> tuple[Growing, str]:
    """Two turns, the second with a Bash call, read once (which saves the index); returns
    the journal and the id of the last record of turn one."""
    growing = Growing(config_dir, PROJECT, journal.session_id, tmp_path / "index")
    turn(journal, "One", "Answer one.")
    end_of_one = journal.leaf
    assert end_of_one is not None
    journal.typed_prompt("Two")
    call = journal.tool_use("Bash", {"command": "ls"})
    journal.tool_result(call["message"]["content"][0]["id"], "a")
    journal.text("Listed.")
    growing.append(journal.to_bytes())
    growing.compare()
    return growing, end_of_one


@pytest.mark.parametrize(
    ("change", "extended"),
    [
        ("next_turn", True),
        ("rewind_later", False),
        ("esc_first_new_root", False),
        ("summarize_first", False),
        ("summarize_later", False),
        ("parallel_calls", True),
    ],
)
def test_interactive_changes_after_the_index_equal_a_full_read(
    change: str,
    extended: bool,
    journal: Journal,
    config_dir: Path,
    tmp_path: Path,
    started_scans: list[int],  # noqa: F811
) -> None:
    growing, end_of_one = _grown(config_dir, tmp_path, journal)
    since = len(journal.records)
    if change == "next_turn":
        turn(journal, "Three", "Answer three.")
    elif change == "rewind_later":
        turn(journal, "Two, edited", "Answer.", parent=end_of_one)
    elif change == "esc_first_new_root":
        turn(journal, "Again", "Answer.", parent=ROOT)
    elif change == "summarize_first":
        journal.compact_boundary(logical_parent=None)
        journal.compact_summary()
        journal.text("After.")
    elif change == "summarize_later":
        journal.compact_boundary(logical_parent=end_of_one)
        journal.compact_summary()
        journal.text("After.")
    else:
        calls = [("Read", {"file_path": "/a"}), ("Read", {"file_path": "/b"})]
        uses = journal.parallel_tool_uses(calls)
        for use in uses:
            journal.tool_result(use["message"]["content"][0]["id"], "x", parent=use["uuid"])
    started_scans.clear()
    growing.append(b"".join(line + b"\n" for line in journal.lines()[since:]))
    verdict = growing.compare()
    assert verdict.ready
    # An extension is one scan from the index, then compare's own full read; a fallback
    # reads in full once more in between.
    assert started_scans[0] > 0, started_scans
    assert started_scans[1:] == ([0] if extended else [0, 0]), started_scans
    if change == "parallel_calls":
        call = journal.records[-3]["message"]["content"][0]["id"]
        anchored = growing.compare(tool_use_id=call)
        assert call in {u.tool_use_id for u in anchored.events if isinstance(u, ToolUse)}


def test_journal_inspect_reports_the_live_chain_and_what_it_dropped(
    journal: Journal, tmp_path: Path
) -> None:
    import subprocess
    import sys

    first = journal.typed_prompt("First try")
    journal.user_text([{"type": "text", "text": INTERRUPT}], parent=first["uuid"])
    turn(journal, "Second try", "Answered.", parent=ROOT)
    path = journal.write(tmp_path / f"{journal.session_id}.jsonl")
    command = [sys.executable, "-m", "plangate", "journal", "inspect", str(path)]
    shown = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    rows = dict(line.split(None, 1) for line in shown.stdout.splitlines() if " " in line)
    assert rows["dropped"].strip() == "2 under an abandoned first prompt (an Esc or a rewind on it)"
    live = nodes(journal) - 2
    other = len(journal.records) - nodes(journal)
    assert rows["records"].strip() == (
        f"{len(journal.records)} ({live} in the live conversation, {other} metadata or "
        "subagent lines)"
    )
    as_json = subprocess.run([*command, "--json"], capture_output=True, text=True, timeout=60)
    report = json.loads(as_json.stdout)
    assert report["dropped"] == {"abandoned_root": 2}
    assert report["owned_records"] == nodes(journal) - 2
