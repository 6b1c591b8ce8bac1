"""Property tests: whatever bytes a journal holds, the reader gives a verdict and never raises.

Mutations start from real journals: the public corpus (``spotter/short.jsonl``,
``mimer/real_transcript.jsonl``) when it is checked out, Claude Code 2.1.332 journals in
``/tmp/cc-journals`` when present, and always a synthetic 2.1.332 journal from the builder.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plangate.journal import ERROR, MISSING, READY, Verdict, codes, read_journal
from testkit.journals import Journal, dumps, use_id
from tests.corpus import CORPUS

CC_JOURNALS = Path("/tmp/cc-journals")
PROJECT = "/home/user/project"

FIXED_REASONS = {
    codes.TOO_LARGE,
    codes.OVERSIZED_INVOCATION,
    codes.REWRITTEN,
    codes.IDENTITY,
    codes.MALFORMED,
    codes.COMPETING_ROOT,
    codes.CYCLE,
    codes.SIDECHAIN,
    codes.AGENT,
    codes.FOREIGN_CWD,
}

SETTINGS = settings(
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
MORE = settings(SETTINGS, max_examples=400)


def synthetic() -> bytes:
    journal = Journal(cwd=PROJECT)
    journal.session_start_hook(parent=None)
    journal.session()
    launch = journal.tool_use("Agent", {"prompt": "BG", "run_in_background": True})
    journal.async_launch_result(use_id(launch))
    journal.compact()
    journal.slash_command("autoplan", "plan.md")
    journal.text("ok")
    journal.task_notification(use_id(launch))
    journal.text("done")
    return journal.to_bytes()


def sources() -> dict[str, bytes]:
    found = {"synthetic-2.1.332": synthetic()}
    for name in ("spotter/short.jsonl", "mimer/real_transcript.jsonl"):
        if (CORPUS / name).is_file():
            found[name] = (CORPUS / name).read_bytes()
    if CC_JOURNALS.is_dir():
        for path in sorted(CC_JOURNALS.glob("0[2-5]*/projects/*/*.jsonl"))[:3]:
            found[f"cc-journals/{path.parent.parent.parent.name}"] = path.read_bytes()
    return found


SOURCES = sources()


def key(verdict: Verdict) -> tuple[object, ...]:
    return (
        verdict.status,
        verdict.reason,
        verdict.claude_code_version,
        verdict.records,
        verdict.owned,
        verdict.root_shape,
        verdict.complete,
        verdict.record_bytes,
        [event.as_dict() for event in verdict.events],
    )


def check(verdict: Verdict) -> None:
    """What every verdict promises, whatever the input."""
    assert verdict.status in (READY, MISSING, ERROR)
    if verdict.status == ERROR:
        assert verdict.reason is not None
        assert verdict.reason in FIXED_REASONS or verdict.reason.startswith("unrecognized_shape:")
        assert verdict.events == []
    else:
        assert verdict.reason is None
    if verdict.status != READY:
        assert verdict.events == []
    orders = [event.order for event in verdict.events]
    assert orders == sorted(orders) and len(set(orders)) == len(orders)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("properties")


def write(workdir: Path, data: bytes) -> str:
    path = workdir / "journal.jsonl"
    path.write_bytes(data)
    return str(path)


@MORE
@given(data=st.binary(max_size=4096))
def test_arbitrary_bytes_get_a_verdict(workdir: Path, data: bytes) -> None:
    path = write(workdir, data)
    check(read_journal(path))
    check(read_journal(path, full=True, owners=[PROJECT]))


LINE_PIECES = [
    b"{",
    b"}",
    b"[]",
    b"null",
    b'"x"',
    b"\xff",
    b"\xc3",
    b" ",
    b"\r",
    b'{"type":"user"}',
    b'{"uuid":"u","parentUuid":null}',
]


@SETTINGS
@given(
    pieces=st.lists(
        st.one_of(
            st.sampled_from(LINE_PIECES),
            st.sampled_from(SOURCES["synthetic-2.1.332"].splitlines()),
            st.binary(max_size=40),
        ),
        max_size=40,
    ),
    newline_every=st.integers(min_value=1, max_value=4),
)
def test_journal_like_bytes_get_a_verdict(
    workdir: Path, pieces: list[bytes], newline_every: int
) -> None:
    data = b"".join(
        piece + (b"\n" if n % newline_every == 0 else b"") for n, piece in enumerate(pieces)
    )
    path = write(workdir, data)
    check(read_journal(path, full=True))


# mutations of real journals


def _mutate(data: bytes, draw: st.DrawFn) -> bytes:
    lines = data.split(b"\n")
    kind = draw(
        st.sampled_from(["flip", "delete", "insert", "drop", "duplicate", "swap", "truncate"])
    )
    if kind in ("drop", "duplicate", "swap") and len(lines) > 1:
        i = draw(st.integers(0, len(lines) - 1))
        j = draw(st.integers(0, len(lines) - 1))
        if kind == "drop":
            del lines[i]
        elif kind == "duplicate":
            lines.insert(j, lines[i])
        else:
            lines[i], lines[j] = lines[j], lines[i]
        return b"\n".join(lines)
    if not data:
        return draw(st.binary(max_size=16))
    at = draw(st.integers(0, len(data) - 1))
    if kind == "flip":
        return data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :]
    if kind == "delete":
        return data[:at] + data[at + draw(st.integers(1, 64)) :]
    if kind == "insert":
        return data[:at] + draw(st.binary(min_size=1, max_size=16)) + data[at:]
    return data[:at]


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, bytes]:
    name = draw(st.sampled_from(sorted(SOURCES)))
    data = SOURCES[name]
    for _ in range(draw(st.integers(1, 4))):
        data = _mutate(data, draw)
    return name, data


@MORE
@given(case=mutated())
def test_mutated_real_journals_get_a_verdict(workdir: Path, case: tuple[str, bytes]) -> None:
    _, data = case
    path = write(workdir, data)
    first = read_journal(path, full=True)
    check(first)
    again = read_journal(path, full=True)
    assert key(again) == key(first)
    index = read_journal(path)
    check(index)
    assert (index.status, index.reason) == (first.status, first.reason)
    if first.prefix is not None:
        same = read_journal(path, full=True, prior=first.prefix)
        assert key(same) == key(first)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_every_mutation_source_is_ready_unmutated(workdir: Path, name: str) -> None:
    verdict = read_journal(write(workdir, SOURCES[name]), full=True)
    assert (verdict.status, verdict.reason) == (READY, None)


@SETTINGS
@given(
    name=st.sampled_from(sorted(SOURCES)),
    tail=st.binary(min_size=1, max_size=2048).filter(lambda b: b"\n" not in b),
)
def test_an_unfinished_tail_never_changes_the_verdict(
    workdir: Path, name: str, tail: bytes
) -> None:
    path = write(workdir, SOURCES[name])
    expected = key(read_journal(path, full=True))
    path = write(workdir, SOURCES[name] + tail)
    verdict = read_journal(path, full=True)
    assert verdict.complete is False
    assert key(verdict)[:-3] == expected[:-3]
    assert key(verdict)[-1] == expected[-1]


# arbitrary record graphs: ids from a small pool make duplicates, loops and orphans likely

IDS = ["u1", "u2", "u3", "u4", "u5"]


@st.composite
def records(draw: st.DrawFn) -> dict[str, object]:
    record: dict[str, object] = {"sessionId": "S"}
    record["type"] = draw(
        st.sampled_from(["user", "assistant", "attachment", "system", "progress", "last-prompt"])
    )
    if draw(st.booleans()):
        record["uuid"] = draw(st.sampled_from(IDS))
    if draw(st.integers(0, 3)):
        record["parentUuid"] = draw(st.one_of(st.none(), st.sampled_from([*IDS, "gone"])))
    if record["type"] == "system" and draw(st.booleans()):
        record["subtype"] = "compact_boundary"
        record["logicalParentUuid"] = draw(st.sampled_from([*IDS, "gone"]))
    record["isSidechain"] = draw(st.sampled_from([False, False, False, True, None]))
    if draw(st.integers(0, 5)) == 0:
        record["agentId"] = "a1"
    record["cwd"] = draw(st.sampled_from([PROJECT, PROJECT, "/elsewhere", "C:\\x", "rel", 3]))
    record["timestamp"] = draw(st.sampled_from(["2026-11-29T19:37:45.603Z", "yesterday"]))
    record["version"] = draw(st.sampled_from(["2.1.332", "2.1.39", "x"]))
    if record["type"] in ("user", "assistant") and draw(st.integers(0, 4)):
        role = draw(st.sampled_from([record["type"], "user", "assistant"]))
        content = draw(
            st.one_of(
                st.text(max_size=20),
                st.lists(
                    st.sampled_from(
                        [
                            {"type": "text", "text": "hi"},
                            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}},
                            {"type": "tool_result", "tool_use_id": "t1", "content": "ok"},
                            {"type": "tool_result", "tool_use_id": 5},
                            "not a block",
                        ]
                    ),
                    max_size=3,
                ),
            )
        )
        record["message"] = {"role": role, "content": content, "stop_reason": "end_turn"}
    if record["type"] == "attachment" and draw(st.booleans()):
        record["attachment"] = {"type": "hook_success", "hookEvent": "SessionStart"}
    return record


@SETTINGS
@given(graph=st.lists(records(), max_size=12), owners=st.sampled_from([None, [PROJECT]]))
def test_arbitrary_record_graphs_get_a_verdict(
    workdir: Path, graph: list[dict[str, object]], owners: list[str] | None
) -> None:
    path = write(workdir, b"".join(dumps(r) + b"\n" for r in graph))
    verdict = read_journal(path, full=True, owners=owners)
    check(verdict)
    assert key(read_journal(path, full=True, owners=owners)) == key(verdict)
    assert os.path.getsize(path) == len(b"".join(dumps(r) + b"\n" for r in graph))
