"""Event-less records cost no object (:mod:`plangate.journal.compact`), and change no verdict.

Every journal here is read twice, keeping an object for every record (``COMPACT`` off) and
not, and the two verdicts must be equal in every field, including the dropped counts, the
owned count, the root's shape and the version. The journals are generated: runs of progress
records (and attachments, system records) hanging from each other, with branches off them,
ids shared, parents written later, compact boundaries on a rider, other sessions' records,
subagent records, SessionStart hooks and version changes; then mutated real journals.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plangate.journal import read_journal
from plangate.journal import reader as reader_module
from plangate.journal.building import EventBuilder
from plangate.journal.compact import HashedIds, Uncompacted
from plangate.journal.reader import Verdict
from plangate.journal.records import Record
from plangate.journal.scan import scan
from testkit.journals import LEAF, Journal, journal_path, use_id

from .conftest import PROJECT
from .test_index import Growing, fingerprint, last_records

SETTINGS = settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

OPERATIONS = (
    "progress",
    "progress",
    "progress",
    "progress",
    "attachment",
    "system",
    "hook_progress",
    "prompt",
    "tool",
    "text",
    "boundary",
    "shared_id",
    "sidechain",
    "agent",
    "foreign",
    "metadata",
    "blob",
    "forward",
    "late",
    "stale_time",
    "relative_cwd",
    "version",
    "queued",
    "handover",
)


def build(steps: list[tuple[str, int, bool]]) -> tuple[Journal, list[str]]:
    """A journal from ``steps``: (operation, a number to pick an earlier record by, whether
    it hangs from the leaf); returns it and its tool call ids."""
    journal = Journal(cwd=PROJECT)
    journal.prompt("Start.")
    uuids: list[str] = [str(journal.leaf)]
    calls: list[str] = []
    pending: list[str] = []  # ids promised to records written later

    def parent(pick: int, leaf: bool) -> Any:
        return LEAF if leaf or not uuids else uuids[pick % len(uuids)]

    for operation, pick, leaf in steps:
        at = parent(pick, leaf)
        record: dict[str, Any] | None = None
        if operation == "progress":
            record = journal.node("progress", {"data": {"type": "bash_progress"}}, parent=at)
        elif operation == "attachment":
            record = journal.attachment("date", date="2026-11-29", parent=at)
        elif operation == "system":
            record = journal.system("stop_hook_summary", parent=at, hookCount=1)
        elif operation == "hook_progress":
            record = journal.session_start_progress(parent=at)
        elif operation == "prompt":
            record = journal.prompt("Next.", parent=at)
        elif operation == "tool":
            use = journal.tool_use("Bash", {"command": "ls"}, parent=at)
            calls.append(use_id(use))
            uuids.append(str(use["uuid"]))
            record = journal.bash_result(use_id(use), "a\nb")
        elif operation == "text":
            record = journal.text("ok", parent=at)
        elif operation == "boundary":
            record = journal.compact_boundary(logical_parent=at)
        elif operation == "shared_id":
            again = uuids[pick % len(uuids)]
            record = journal.node("progress", {"data": {"type": "x"}}, uuid=again)
        elif operation == "sidechain":
            record = journal.node("progress", {"data": {}}, parent=at, is_sidechain=True)
        elif operation == "agent":
            record = journal.node("progress", {"data": {}}, parent=at, agent_id="a1")
        elif operation == "foreign":
            record = journal.node("progress", {"data": {}}, parent=at, session_id="other")
        elif operation == "metadata":
            journal.metadata("last-prompt", lastPrompt="…", leafUuid=journal.leaf)
        elif operation == "blob":
            journal.api_request_blob("user", "…")
        elif operation == "forward":
            promised = journal.new_uuid()
            pending.append(promised)
            record = journal.node("progress", {"data": {}}, parent=promised)
        elif operation == "late" and pending:
            record = journal.node("progress", {"data": {}}, parent=at, uuid=pending.pop())
        elif operation == "stale_time":
            record = journal.node("progress", {"data": {}}, parent=at, timestamp="yesterday")
        elif operation == "relative_cwd":
            record = journal.node("progress", {"data": {}}, parent=at, cwd="project")
        elif operation == "version":
            journal.version = f"2.1.{300 + pick % 40}"
        elif operation == "queued":
            record = journal.attachment("queued_command", prompt="<task-notification>", parent=at)
        elif operation == "handover":  # a prompt typed while the model worked, handed over
            record = journal.queued_prompt("approve", parent=at)
        if record is not None and isinstance(record.get("uuid"), str):
            uuids.append(str(record["uuid"]))
    return journal, calls


def from_last_turn(ordered: list[Record]) -> Iterable[Record]:
    """Every record from the last typed turn on, and the last five with events: the shape of
    the guard's and the gates' selections, which pick records by their events or from a
    turn to the end (a selection by position alone would see no rider)."""
    turns = [at for at, record in enumerate(ordered) if record.conversation and record.events]
    start = turns[-1] if turns else 0
    chosen = {id(record) for record in [r for r in ordered if r.events][-5:]}
    return [r for at, r in enumerate(ordered) if at >= start or id(r) in chosen]


def both(path: Path, monkeypatch: pytest.MonkeyPatch, **options: Any) -> tuple[Verdict, Verdict]:
    compact = read_journal(str(path), **options)
    monkeypatch.setattr(reader_module, "COMPACT", False)
    try:
        whole = read_journal(str(path), **options)
    finally:
        monkeypatch.setattr(reader_module, "COMPACT", True)
    return compact, whole


def same(path: Path, monkeypatch: pytest.MonkeyPatch, **options: Any) -> Verdict:
    compact, whole = both(path, monkeypatch, **options)
    assert fingerprint(compact) == fingerprint(whole)
    return compact


steps_strategy = st.lists(
    st.tuples(st.sampled_from(OPERATIONS), st.integers(0, 1000), st.booleans()),
    max_size=60,
)


@SETTINGS
@given(steps=steps_strategy, anchor=st.integers(0, 50), full=st.booleans())
def test_generated_journals_read_the_same_with_and_without_objects_for_event_less_records(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    steps: list[tuple[str, int, bool]],
    anchor: int,
    full: bool,
) -> None:
    journal, calls = build(steps)
    config = Path(os.path.realpath(tmp_path_factory.mktemp("claude")))
    path = journal.write(journal_path(config, PROJECT, journal.session_id))
    tool_use_id = calls[anchor % len(calls)] if calls and anchor % 3 else None
    for options in (
        {"owners": [PROJECT], "config_dir": str(config), "session_id": journal.session_id},
        {"session_id": journal.session_id},
        {},
    ):
        same(path, monkeypatch, full=full, tool_use_id=tool_use_id, **options)
        same(path, monkeypatch, select=from_last_turn, **options)


def flood(journal: Journal, count: int) -> str:
    """A Bash call whose ``count`` progress records hang from each other, then its result
    hanging from the last of them (as Claude Code 2.1.3x wrote them)."""
    use = journal.tool_use("Bash", {"command": "make soak"})
    for _ in range(count):
        journal.node("progress", {"data": {"type": "bash_progress"}})
    journal.bash_result(use_id(use), "ok")
    return use_id(use)


def test_a_record_without_events_costs_no_object(journal: Journal, tmp_path: Path) -> None:
    journal.prompt("Soak.")
    flood(journal, 500)
    for _ in range(40):
        journal.metadata("queue-operation", operation="enqueue")
    path = journal.write(tmp_path / "flood.jsonl")
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        kept = scan(fd, size, session_id=None, prior=None, builder=EventBuilder(False))
        compact = scan(
            fd, size, session_id=None, prior=None, builder=EventBuilder(False), compact=True
        )
    finally:
        os.close(fd)
    assert len(kept.records) == 1 + 1 + 500 + 1 + 40
    assert len(compact.records) == 3  # the prompt, the call and its result
    assert compact.counted == 540
    owner = compact.records[1]
    assert (owner.tail, owner.tail_first) == (500, 2)
    assert compact.records[2].hung_from_tail
    verdict = read_journal(str(path), full=True)
    assert (verdict.records, verdict.owned, verdict.ready) == (543, 503, True)


def test_a_flood_reads_the_same_and_a_branch_off_it_counts_as_dropped(
    journal: Journal, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal.prompt("Soak.")
    use = flood(journal, 50)
    result = journal.leaf
    journal.prompt("A rewound prompt.", parent=result)
    journal.node("progress", {"data": {}})
    journal.prompt("The live prompt.", parent=result)
    journal.text("done")
    path = journal.write(tmp_path / "branch.jsonl")
    verdict = same(path, monkeypatch, full=True)
    assert verdict.dropped == {"abandoned_branch": 2}  # the rewound prompt and its progress
    assert verdict.owned == 1 + 1 + 50 + 1 + 2
    # From the call, both prompts after its result start branches.
    assert same(path, monkeypatch, full=True, tool_use_id=use).dropped == {"abandoned_branch": 4}


@pytest.mark.parametrize(
    "twist",
    ["shared_id", "hang_from_middle", "forward", "boundary_on_rider", "preamble"],
)
def test_what_compacting_cannot_prove_is_read_with_every_record(
    journal: Journal, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, twist: str
) -> None:
    """Each twist makes the compact read give up (:class:`Uncompacted`) and read again."""
    if twist == "preamble":
        journal.session_start_progress(parent=None)
        journal.node("progress", {"data": {"type": "bash_progress"}})
        journal.prompt("Start.")
    else:
        journal.prompt("Start.")
    first = journal.node("progress", {"data": {}})
    journal.node("progress", {"data": {}})
    if twist == "shared_id":
        journal.node("progress", {"data": {}}, uuid=str(first["uuid"]))
    elif twist == "hang_from_middle":
        journal.text("a branch", parent=str(first["uuid"]))
    elif twist == "forward":
        journal.text("hangs from a record written later", parent="later-id")
        journal.node("progress", {"data": {}}, uuid="later-id")
    elif twist == "boundary_on_rider":
        journal.compact_boundary()
    journal.text("done")
    path = journal.write(tmp_path / f"{twist}.jsonl")
    gave_up: list[str] = []
    real = reader_module._read_whole

    def spy(*args: Any) -> Verdict:
        try:
            return real(*args)
        except Uncompacted as error:
            gave_up.append(str(error))
            raise

    monkeypatch.setattr(reader_module, "_read_whole", spy)
    same(path, monkeypatch, full=True)
    assert gave_up


def test_riders_appended_after_an_index_go_on_from_it(
    journal: Journal, config_dir: Path, tmp_path: Path, started_scans: list[int]
) -> None:
    """Progress records appended after a saved index ride on the saved last record: the
    indexed read counts them as a full read does, and goes on from the index."""
    starts = started_scans
    growing = Growing(config_dir, PROJECT, journal.session_id, tmp_path / "index")
    journal.prompt("Soak.")
    use = journal.tool_use("Bash", {"command": "make soak"})
    for _ in range(20):
        journal.node("progress", {"data": {"type": "bash_progress"}})
    growing.append(journal.to_bytes())
    growing.compare()
    for round_ in range(3):
        before = growing.path.stat().st_size
        for _ in range(30):
            journal.node("progress", {"data": {"type": "bash_progress"}})
        if round_ == 2:
            journal.bash_result(use_id(use), "ok")
            journal.text("done")
        growing.append(journal.to_bytes()[before:])
        starts.clear()
        verdict = growing.compare(select=last_records)
        assert starts[0] > 0, "the indexed read went on from the index"
        assert verdict.owned == 2 + 20 + 30 * (round_ + 1) + (2 if round_ == 2 else 0)


def test_hashed_ids_answer_maybe_for_every_id_added() -> None:
    ids = HashedIds()
    added = [f"id-{number}" for number in range(5000)]
    assert all(ids.add(value) for value in added)
    assert all(ids.maybe(value) for value in added)
    assert not any(ids.add(value) for value in added[:10])
    assert ids.count == 5000
    assert sum(ids.maybe(f"other-{number}") for number in range(5000)) == 0
    assert not ids.maybe(7)


FIELD_VALUES: dict[str, list[Any]] = {
    "isSidechain": [False, True, None, "false", 0],
    "sessionId": ["s1", "s2", None, 5],
    "agentId": [None, "", "a1", 0],
    "uuid": ["u-new", "", "has space", "u\nx", 7, "x" * 201],
    "timestamp": ["2026-11-29T10:00:00.000Z", "yesterday", None, "２０２６-11-29T10:00:00.000Z"],
    "cwd": ["/p", "p", None, "C:\\p", ""],
    "type": ["progress", "attachment", "system", "user", None],
    "subtype": [None, "compact_boundary", "stop_hook_summary"],
    "data": [None, {"type": "bash_progress"}, {"hookEvent": "SessionStart"}, "x"],
    "attachment": [
        None,
        {"type": "date"},
        {"type": "queued_command", "prompt": "<task-notification>"},
        {"type": "hook_success", "hookEvent": "SessionStart"},
    ],
    "message": [None, {"role": "user", "content": "x"}, "text"],
    "version": [None, "2.1.332", "x", 3],
    "logicalParentUuid": [None, "u-owner"],
}


RIDER = {
    "parentUuid": "u-owner",
    "isSidechain": False,
    "type": "progress",
    "data": {"type": "bash_progress"},
    "uuid": "u-new",
    "timestamp": "2026-11-29T10:00:01.000Z",
    "cwd": "/p",
    "sessionId": "s1",
    "version": "2.1.332",
}


@SETTINGS
@given(
    changed=st.dictionaries(
        st.sampled_from(sorted(FIELD_VALUES)),
        st.integers(0, 10),
        max_size=3,
    ),
    removed=st.sets(st.sampled_from(sorted(RIDER)), max_size=2),
    parent_null=st.booleans(),
)
def test_the_quick_rider_check_never_takes_what_the_record_would_not(
    changed: dict[str, int], removed: set[str], parent_null: bool
) -> None:
    """:meth:`Compactor.take_raw` decides on the raw line; whatever it takes, the judgement
    of the whole :class:`Record` (and its events) must take too. The lines start from a
    rider that both take, with fields changed or removed."""
    chosen = {
        key: FIELD_VALUES[key][pick % len(FIELD_VALUES[key])] for key, pick in changed.items()
    }
    rider = {key: value for key, value in RIDER.items() if key not in removed}
    if parent_null:
        rider["parentUuid"] = None
    assert check_rider({**rider, **chosen}) is not None


def test_the_quick_rider_check_takes_a_plain_progress_record() -> None:
    assert check_rider(dict(RIDER)) is True


def check_rider(raw: dict[str, Any]) -> bool:
    """Whether the quick check took ``raw``, having asserted that the full one would too."""
    from plangate.journal.compact import Compactor

    owner_raw = {
        "uuid": "u-owner",
        "parentUuid": None,
        "isSidechain": False,
        "cwd": "/p",
        "sessionId": "s1",
        "timestamp": "2026-11-29T10:00:00.000Z",
        "type": "progress",
    }
    builder = EventBuilder(full=False)

    def compactor() -> Compactor:
        found = Compactor()
        owner = Record(0, 0, 1, owner_raw)
        owner.events, owner.slots = builder.build(owner_raw, owner, 0)
        assert not found.take(owner) and owner.node
        return found

    quick = compactor()
    taken = quick.take_raw(raw, 1, scan_result())
    slow = compactor()
    record = Record(1, 0, 1, raw)
    record.events, record.slots = builder.build(raw, record, 0)
    if taken:
        assert slow.take(record), raw
        assert quick.counted == slow.counted == 1
    return taken


def scan_result() -> Any:
    from plangate.journal.scan import Scan

    return Scan()
