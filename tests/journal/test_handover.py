"""Queued prompts judged in the reader's one pass (:class:`plangate.journal.trust.Handover`).

``Verdict.handed_over`` holds the lines of the queued prompts written as Claude Code 2.1.332
writes a prompt it hands over. It used to be found by a second read of the file
(``trust.queued_pairs``, deleted); :func:`old_pairs` here is that rule as it was, read from
the file's bytes, and the one pass must never pair a line it did not (and, on journals of
one session, pair exactly the lines it did): on generated journals, on the corpus with a
hand-over appended, across a saved journal index, with and without objects for event-less
records, and after a run of riders read by their bytes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plangate.gates.transcript import read_agent
from plangate.journal import index as journal_index
from plangate.journal import read_journal
from plangate.journal import reader as reader_module
from plangate.journal.building import EventBuilder
from plangate.journal.records import Record
from plangate.journal.scan import scan
from plangate.journal.trust import QUEUE_MAX, Handover
from testkit.journals import LEAF, Journal, journal_path, use_id
from tests import corpus
from tests.corpus import CORPUS

from .conftest import PROJECT
from .test_index import first_turn

# --- the rule as the second read applied it (test-only) -------------------------------------


def _load(line: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line.decode("utf-8"))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _calls(record: dict[str, Any]) -> bool:
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return (
        record.get("type") == "assistant"
        and isinstance(content, list)
        and any(isinstance(block, dict) and block.get("type") == "tool_use" for block in content)
    )


def old_pairs(path: Path, wanted: Collection[int]) -> set[int]:
    """``trust.queued_pairs`` as it was: of ``wanted`` (lines of queued prompts), those with
    an earlier enqueue of their text, the last earlier remove naming their ``source_uuid``
    with their text and session (each used once), and as parent the last line before them
    holding the bytes ``"parentUuid"``, which is not the model's call."""
    paired: set[int] = set()
    if not wanted:
        return paired
    enqueued: dict[str, int] = {}
    removed: dict[str, bytes] = {}
    chain = b""
    for number, line in enumerate(path.read_bytes().split(b"\n")):
        if number in wanted:
            record = _load(line)
            attachment = record.get("attachment") if record is not None else None
            if record is not None and isinstance(attachment, dict):
                prompt, source = attachment.get("prompt"), attachment.get("source_uuid")
                taken = _load(removed.get(source, b"")) if isinstance(source, str) else None
                before = _load(chain)
                if (
                    isinstance(prompt, str)
                    and taken is not None
                    and taken.get("content") == prompt
                    and taken.get("sessionId") == record.get("sessionId")
                    and before is not None
                    and before.get("uuid") == record.get("parentUuid")
                    and not _calls(before)
                    and enqueued.get(prompt)
                ):
                    enqueued[prompt] -= 1
                    del removed[str(source)]
                    paired.add(number)
        if b'"queue-operation"' in line:
            record = _load(line)
            if record is not None and record.get("type") == "queue-operation":
                content, operation = record.get("content"), record.get("operation")
                if operation == "enqueue" and isinstance(content, str):
                    enqueued[content] = enqueued.get(content, 0) + 1
                elif operation == "remove" and isinstance(record.get("commandUuid"), str):
                    removed[str(record["commandUuid"])] = line
        if b'"parentUuid"' in line:
            chain = line
    return paired


def queued_lines(path: Path, session: str | None, agent: bool = False) -> set[int]:
    """Every line the reader makes a queued prompt of (in ``session``, any when None), or
    ``read_agent`` does (``agent``: the lines of a subagent's transcript)."""
    found: set[int] = set()
    builder = EventBuilder(False)
    for number, line in enumerate(path.read_bytes().split(b"\n")):
        raw = _load(line) if line.strip() else None
        if raw is None or (session is not None and raw.get("sessionId") != session):
            continue
        if agent:
            raw = {key: value for key, value in raw.items() if key != "agentId"}
        events, _ = builder.build(raw, Record(number, 0, len(line), raw), 0)
        if any(event.kind == "queued_prompt" for event in events):
            found.add(number)
    return found


def live_queued(path: Path, **options: Any) -> tuple[frozenset[int], set[int]]:
    """The reader's set, and the live chain's queued prompts (what the callers ask about)."""
    verdict = read_journal(str(path), **options)
    return verdict.handed_over, {e.record for e in verdict.events if e.kind == "queued_prompt"}


def both_modes(path: Path, monkeypatch: pytest.MonkeyPatch, **options: Any) -> frozenset[int]:
    """``handed_over`` with no object for event-less records and with one each: the same."""
    compact = read_journal(str(path), **options).handed_over
    monkeypatch.setattr(reader_module, "COMPACT", False)
    try:
        whole = read_journal(str(path), **options).handed_over
    finally:
        monkeypatch.setattr(reader_module, "COMPACT", True)
    assert compact == whole
    return compact


def line_of(path: Path, uuid: object) -> int:
    for number, line in enumerate(path.read_bytes().split(b"\n")):
        if line.strip() and json.loads(line).get("uuid") == uuid:
            return number
    raise AssertionError(f"no line has the uuid {uuid}")


def attach(
    journal: Journal,
    text: str,
    source: str,
    parent: Any = LEAF,
    *,
    is_sidechain: bool = False,
    agent_id: str | None = None,
) -> dict[str, Any]:
    """A ``queued_command`` attachment of human origin, as Claude Code writes one."""
    return journal.attachment(
        "queued_command",
        parent=parent,
        is_sidechain=is_sidechain,
        agent_id=agent_id,
        prompt=text,
        source_uuid=source,
        commandMode="prompt",
        origin={"kind": "human"},
        humanTurn=True,
    )


def taken(journal: Journal, text: str, source: str, *, enqueue: bool = True) -> None:
    """The queue's lines for ``text``, taken as the command ``source``."""
    if enqueue:
        journal.queue_operation("enqueue", text)
    journal.queue_operation("remove", text, reason="absorbed_mid_turn", commandUuid=source)


# --- generated journals ---------------------------------------------------------------------

TEXTS = ("approve requirements", "approve design", "go on")
OPERATIONS = (
    "call",
    "open_call",
    "result",
    "text",
    "progress",
    "progress",
    "progress",
    "enqueue",
    "remove",
    "attach",
    "attach_older",
    "handover",
    "blob",
    "foreign",
    "foreign_queue",
)


def generated(steps: list[tuple[str, int]], foreign: bool) -> Journal:
    journal = Journal(cwd=PROJECT)
    journal.prompt("Start.")
    sources = [journal.new_uuid() for _ in range(3)]
    uuids = [str(journal.leaf)]
    open_calls: list[str] = []
    for operation, pick in steps:
        text, source = TEXTS[pick % 3], sources[pick // 3 % 3]
        record: dict[str, Any] | None = None
        if operation == "call":
            use = journal.tool_use("Bash", {"command": "ls"})
            record = journal.bash_result(use_id(use), "a")
        elif operation == "open_call":
            record = journal.tool_use("Bash", {"command": "ls"})
            open_calls.append(use_id(record))
        elif operation == "result" and open_calls:
            record = journal.bash_result(open_calls.pop(), "a")
        elif operation == "text":
            record = journal.text("ok", stop_reason=None)
        elif operation == "progress":
            record = journal.node("progress", {"data": {"type": "bash_progress"}})
        elif operation == "enqueue":
            journal.queue_operation("enqueue", text)
        elif operation == "remove":
            journal.queue_operation("remove", text, commandUuid=source)
        elif operation == "attach":
            record = attach(journal, text, source)
        elif operation == "attach_older":
            record = attach(journal, text, source, parent=uuids[pick % len(uuids)])
        elif operation == "handover":
            record = journal.queued_prompt(text)
        elif operation == "blob":
            journal.api_request_blob("user", "…")
        elif operation == "foreign" and foreign:
            record = journal.node("progress", {"data": {}}, session_id="other")
        elif operation == "foreign_queue" and foreign:
            journal.metadata("queue-operation", operation="enqueue", content=text, sessionId="x")
        if record is not None:
            uuids.append(str(record["uuid"]))
    return journal


@settings(
    max_examples=200,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    steps=st.lists(st.tuples(st.sampled_from(OPERATIONS), st.integers(0, 100)), max_size=40),
    foreign=st.booleans(),
)
def test_generated_journals_pair_only_what_the_second_read_paired(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    steps: list[tuple[str, int]],
    foreign: bool,
) -> None:
    journal = generated(steps, foreign)
    config = Path(os.path.realpath(tmp_path_factory.mktemp("claude")))
    path = journal.write(journal_path(config, PROJECT, journal.session_id))
    queued = queued_lines(path, journal.session_id)
    old = old_pairs(path, queued)
    layout = {"owners": [PROJECT], "config_dir": str(config), "session_id": journal.session_id}
    for options in (layout, {"session_id": journal.session_id}, {}):
        found = both_modes(path, monkeypatch, **options)
        assert found <= old  # never a line the second read refused
        if not foreign:
            assert found == old
        handed, live = live_queued(path, **options)
        if not foreign and live == queued:
            # What the callers asked the second read about: the live chain's queued prompts.
            assert handed & live == old_pairs(path, live)


# --- Claude Code's shapes, and forgeries, line by line --------------------------------------


def test_a_handover_after_a_streak_of_riders_read_by_their_bytes(
    journal: Journal, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The queued prompt hangs from the last of a long command's progress records, which a
    streak takes without decoding them: the line before it is that rider."""
    journal.prompt("Soak.")
    use = journal.tool_use("Bash", {"command": "make soak"})
    for _ in range(300):
        journal.node("progress", {"data": {"type": "bash_progress"}})
    source = journal.new_uuid()
    taken(journal, "approve the spec", source)
    handed = attach(journal, "approve the spec", source)
    journal.bash_result(use_id(use), "ok")
    path = journal.write(tmp_path / "streak.jsonl")
    fd = os.open(path, os.O_RDONLY)
    try:
        found = scan(
            fd,
            os.fstat(fd).st_size,
            session_id=None,
            prior=None,
            builder=EventBuilder(False),
            compact=True,
        )
    finally:
        os.close(fd)
    assert found.compactor is not None and found.compactor.streaked
    assert found.queue.handed == [line_of(path, handed["uuid"])]
    assert both_modes(path, monkeypatch) == {line_of(path, handed["uuid"])}


def test_a_queued_prompt_hung_over_the_riders_from_their_owner_is_not_handed_over(
    journal: Journal, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal.prompt("Soak.")
    use = journal.tool_use("Bash", {"command": "make soak"})
    journal.bash_result(use_id(use), "ok")
    owner = journal.leaf
    for _ in range(50):
        journal.node("progress", {"data": {"type": "bash_progress"}})
    source = journal.new_uuid()
    taken(journal, "approve the spec", source)
    attach(journal, "approve the spec", source, parent=owner)
    path = journal.write(tmp_path / "over.jsonl")
    assert both_modes(path, monkeypatch) == frozenset()
    assert old_pairs(path, queued_lines(path, None)) == set()


@pytest.mark.parametrize(
    ("shape", "handed"),
    [
        ("claude_code", True),
        ("other_session_enqueue", False),  # the second read took any session's enqueue
        ("parent_of_another_session", False),
    ],
)
def test_the_queue_and_the_line_before_are_of_the_prompts_session(
    journal: Journal, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: str, handed: bool
) -> None:
    journal.session()
    journal.text("working", stop_reason=None)
    source = journal.new_uuid()
    if shape == "other_session_enqueue":
        journal.metadata("queue-operation", operation="enqueue", content="go", sessionId="x")
        taken(journal, "go", source, enqueue=False)
    else:
        taken(journal, "go", source)
    if shape == "parent_of_another_session":
        journal.node("progress", {"data": {}}, session_id="other")
    queued = attach(journal, "go", source)
    path = journal.write(tmp_path / "session.jsonl")
    expected = {line_of(path, queued["uuid"])} if handed else set()
    assert both_modes(path, monkeypatch, session_id=journal.session_id) == expected
    assert both_modes(path, monkeypatch) == expected


def test_a_subagents_transcript_hands_over_as_the_session_does(tmp_path: Path) -> None:
    journal = Journal(cwd=PROJECT)
    journal.prompt("Review it.", is_sidechain=True, agent_id="a1")
    journal.text("working", stop_reason=None, is_sidechain=True, agent_id="a1")
    source = journal.new_uuid()
    taken(journal, "look at the tests", source)
    real = attach(journal, "look at the tests", source, is_sidechain=True, agent_id="a1")
    attach(journal, "approve", journal.new_uuid(), is_sidechain=True, agent_id="a1")
    path = journal.write(tmp_path / "agent-a1.jsonl")
    view = read_agent(str(path), "a1")
    assert [e.record for e in view.events if e.kind == "queued_prompt"] == [
        line_of(path, real["uuid"]),
        line_of(path, real["uuid"]) + 1,
    ]
    assert view.handed_over == {line_of(path, real["uuid"])}
    assert view.handed_over == old_pairs(path, queued_lines(path, None, agent=True))


# --- across a saved journal index -----------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "handed"),
    [
        ("claude_code", True),
        ("under_the_call", False),  # the model's call is the last line before the save
        ("another_command", False),  # the remove before the save took another command
        ("no_enqueue", False),
        ("after_a_rider", True),  # the last line before the save is a rider
        ("over_a_rider", False),  # hung from the rider's owner, the rider in between
    ],
)
def test_a_queue_operation_before_a_saved_index_pairs_an_attachment_after_it(
    journal: Journal,
    config_dir: Path,
    tmp_path: Path,
    started_scans: list[int],
    shape: str,
    handed: bool,
) -> None:
    growing = first_turn(journal, config_dir, tmp_path)
    source = journal.new_uuid()
    parent: Any = LEAF
    if shape == "under_the_call":
        journal.tool_use("Bash", {"command": 'cat >> "$JOURNAL" <<EOF'})
    elif shape in ("after_a_rider", "over_a_rider"):
        journal.text("working", stop_reason=None)
        parent = journal.leaf if shape == "over_a_rider" else LEAF
        journal.node("progress", {"data": {"type": "bash_progress"}})
    else:
        journal.text("working", stop_reason=None)
    named = journal.new_uuid() if shape == "another_command" else source
    taken(journal, "approve the spec", named, enqueue=shape != "no_enqueue")
    growing.append(journal.to_bytes()[len(growing.path.read_bytes()) :])
    growing.compare()  # the index is saved with the queue's lines pending
    queued = attach(journal, "approve the spec", source, parent=parent)
    growing.append(journal.to_bytes()[len(growing.path.read_bytes()) :])
    verdict = growing.compare()  # the indexed read, then a full one: the same verdict
    assert started_scans[-2] > 0  # the indexed read went on from the index
    expected = {line_of(growing.path, queued["uuid"])} if handed else set()
    assert verdict.handed_over == expected
    assert expected == old_pairs(growing.path, queued_lines(growing.path, None))


def test_a_prompt_handed_over_before_the_save_is_still_handed_over_after_it(
    journal: Journal, config_dir: Path, tmp_path: Path, started_scans: list[int]
) -> None:
    growing = first_turn(journal, config_dir, tmp_path)
    journal.text("working", stop_reason=None)
    first = journal.queued_prompt("approve the spec")
    growing.append(journal.to_bytes()[len(growing.path.read_bytes()) :])
    growing.compare()
    journal.text("And more.", stop_reason=None)
    second = journal.queued_prompt("approve the spec")  # the same text, taken again
    growing.append(journal.to_bytes()[len(growing.path.read_bytes()) :])
    verdict = growing.compare()
    assert started_scans[-2] > 0
    lines = {line_of(growing.path, first["uuid"]), line_of(growing.path, second["uuid"])}
    assert verdict.handed_over == lines


def test_the_saved_ledger_stays_bounded_by_unmatched_enqueues(
    journal: Journal, config_dir: Path, tmp_path: Path, started_scans: list[int]
) -> None:
    """Thousands of enqueues no prompt was handed over for (a forger's, or background tasks'
    notifications): the index keeps the newest :data:`QUEUE_MAX`, a recent prompt is still
    handed over, and one whose enqueue was forgotten is not."""
    growing = first_turn(journal, config_dir, tmp_path)
    journal.text("working", stop_reason=None)
    for number in range(4 * QUEUE_MAX):
        journal.queue_operation("enqueue", f"notification {number}")
        journal.queue_operation("remove", f"notification {number}", commandUuid=f"c{number}")
    old_source, new_source = journal.new_uuid(), journal.new_uuid()
    journal.queue_operation("remove", "notification 0", commandUuid=old_source)
    taken(journal, "approve the spec", new_source)
    growing.append(journal.to_bytes()[len(growing.path.read_bytes()) :])
    growing.compare()
    saved = journal_index.load(
        growing.index_dir,
        journal.session_id,
        str(growing.path),
        os.stat(growing.path),
        [PROJECT],
    )
    assert saved is not None
    ledger = Handover.restore(saved.queue)
    assert ledger is not None
    assert len(ledger.enqueued) == QUEUE_MAX and len(ledger.removed) == QUEUE_MAX
    forgotten = attach(journal, "notification 0", old_source)
    recent = attach(journal, "approve the spec", new_source)
    growing.append(journal.to_bytes()[len(growing.path.read_bytes()) :])
    verdict = growing.compare()
    assert started_scans[-2] > 0
    assert verdict.handed_over == {line_of(growing.path, recent["uuid"])}
    assert line_of(growing.path, forgotten["uuid"]) in old_pairs(
        growing.path, queued_lines(growing.path, None)
    )  # the second read, unbounded, kept it: the one way the pass is stricter by design


@pytest.mark.parametrize(
    "saved",
    [
        None,
        [],
        {"handed": [1], "enqueued": {}, "removed": {}},
        {"handed": ["1"], "enqueued": {}, "removed": {}, "before": [None, None, False]},
        {"handed": [], "enqueued": {"k": 0}, "removed": {}, "before": [None, None, False]},
        {"handed": [], "enqueued": {}, "removed": {"c": 1}, "before": [None, None, False]},
        {"handed": [], "enqueued": {}, "removed": {}, "before": [None, None, 0]},
        {"handed": [], "enqueued": {}, "removed": {}, "before": [1, None, False]},
    ],
)
def test_a_ledger_that_is_not_one_is_not_restored(saved: object) -> None:
    assert Handover.restore(saved) is None


def test_a_dumped_ledger_is_restored() -> None:
    ledger = Handover()
    line = {"type": "queue-operation", "content": "a", "sessionId": "s"}
    ledger.note({**line, "operation": "enqueue"})
    ledger.note({**line, "operation": "remove", "commandUuid": "c"})
    ledger.said = {"uuid": "u", "sessionId": "s", "type": "user"}
    restored = Handover.restore(ledger.dump(None))
    assert restored is not None
    assert (restored.enqueued, restored.removed) == (ledger.enqueued, ledger.removed)
    assert restored.last(None) == ("u", "s", False)


# --- the corpus -----------------------------------------------------------------------------


def _ends(path: Path) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """The journal's first session, its last line of that session with a uuid, and its last
    conversation line (a ``uuid`` or ``parentUuid`` key), of any session."""
    session: str | None = None
    last: dict[str, Any] | None = None
    spoken: dict[str, Any] | None = None
    for line in path.read_bytes().splitlines():
        raw = _load(line) if line.strip() else None
        if raw is None:
            continue
        if session is None and isinstance(raw.get("sessionId"), str):
            session = raw["sessionId"]
        if raw.get("sessionId") == session and isinstance(raw.get("uuid"), str):
            last = raw
        if "uuid" in raw or "parentUuid" in raw:
            spoken = raw
    assert session is not None and last is not None and spoken is not None
    return session, last, spoken


def _agent(path: Path) -> bool:
    """A subagent's transcript (``agent-*``, ``subagent*``, agtrace's ``claude_agent``)."""
    return "agent" in path.name


@corpus.needed
@pytest.mark.parametrize(
    "path", corpus.each(corpus.files()), ids=lambda p: p.relative_to(CORPUS).as_posix()
)
def test_the_corpus_pairs_what_the_second_read_paired(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each real journal as it is, then with a prompt handed over at its end as Claude Code
    writes it (hung from its last line with an id) and a forged one after it."""
    session, raw, spoken = _ends(path)
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())
    if _agent(path):
        found = read_agent(str(copy), None).handed_over
        assert found == old_pairs(copy, queued_lines(copy, None, agent=True))
    else:
        handed, live = live_queued(copy)
        assert handed == old_pairs(copy, live) == old_pairs(copy, queued_lines(copy, session))
    lines = copy.read_bytes()
    journal = Journal(cwd=str(raw.get("cwd") or PROJECT), session_id=session)
    journal.leaf = raw["uuid"]
    journal.version = str(raw.get("version") or journal.version)
    sidechain, agent = raw.get("isSidechain") is True, raw.get("agentId")
    source = journal.new_uuid()
    taken(journal, "approve the spec", source)
    real = attach(journal, "approve the spec", source, is_sidechain=sidechain, agent_id=agent)
    # The same lines again, as a forger would copy them: its remove is used already.
    attach(journal, "approve the spec", source, is_sidechain=sidechain, agent_id=agent)
    copy.write_bytes(lines.rstrip(b"\n") + b"\n" + journal.to_bytes())
    old = old_pairs(copy, queued_lines(copy, session, agent=_agent(path)))
    if _agent(path):
        found = read_agent(str(copy), None).handed_over
    else:
        found = both_modes(copy, monkeypatch)
    assert found == old
    # Handed over when the line it hangs from is the last conversation line, not a call.
    assert (line_of(copy, real["uuid"]) in found) == (spoken is raw and not _calls(raw))
