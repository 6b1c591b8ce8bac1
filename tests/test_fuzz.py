"""The fuzz and fault suite: bad journals and hook payloads never crash plangate.

Modest by default so CI runs it on every change; run it longer with
``PLANGATE_FUZZ_EXAMPLES=10000 .venv/bin/pytest -m fuzz`` (the figures are printed with
``-s``). Journals are real corpus sessions with their parent links, roots, ids and records
mutated at random; payloads are random bytes and random JSON handed to the real hook entry
points in this process (the hook-process tests run the same entry points as processes).
"""

from __future__ import annotations

import io
import json
import os
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from plangate.journal import ERROR, MISSING, READY, read_journal
from plangate.journal.codes import ERROR_STATUS_REASONS, UNRECOGNIZED_SHAPE, base_code
from tests import corpus

pytestmark = pytest.mark.fuzz

EXAMPLES = int(os.environ.get("PLANGATE_FUZZ_EXAMPLES", "300"))
SOURCES = [
    "spotter/tool_heavy.jsonl",
    "spotter/short.jsonl",
    "mimer/real_transcript.jsonl",
    "agtrace/claude_session.jsonl",
    "ai-systems/main-transcript.jsonl",
    "slopometry/transcript.jsonl",
]


def _corpus() -> list[list[dict[str, Any]]]:
    journals = []
    for name in SOURCES:
        path = corpus.journal(name)
        lines = path.read_text(encoding="utf-8").splitlines()
        journals.append([json.loads(line) for line in lines if line.strip()])
    return journals


def _mutate(records: list[dict[str, Any]], rnd: random.Random) -> list[dict[str, Any]]:
    records = [dict(r) for r in records]
    ids = [r["uuid"] for r in records if isinstance(r.get("uuid"), str)]
    for _ in range(rnd.randint(1, 5)):
        if not records:
            break
        at = rnd.randrange(len(records))
        record = records[at]
        kind = rnd.random()
        if kind < 0.25:
            record["parentUuid"] = rnd.choice([*ids, None, "never-written"])
        elif kind < 0.35:  # a compact boundary, with or without its logical parent
            record.update(type="system", subtype="compact_boundary", parentUuid=None)
            record["logicalParentUuid"] = rnd.choice([*ids, None, "never-written"])
            record.pop("message", None)
        elif kind < 0.45:
            record["uuid"] = rnd.choice(ids) if ids else "x"
        elif kind < 0.55:
            record["isSidechain"] = True
        elif kind < 0.65:  # a copy written elsewhere: a rewind's new branch, a second writer
            records.insert(rnd.randrange(len(records) + 1), dict(record, uuid=f"n{rnd.random()}"))
        elif kind < 0.75:
            record["parentUuid"] = rnd.choice([1, [], {}, "", True, "\x00"])
        elif kind < 0.85:
            record["sessionId"] = rnd.choice(["other-session", None, 7])
        else:
            del records[at]
    return records


def _tool_uses(records: list[dict[str, Any]]) -> list[str]:
    found = []
    for record in records:
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                found.append(str(block.get("id")))
    return found


@corpus.needed
def test_mutated_real_journals_always_get_a_verdict(tmp_path: Path) -> None:
    rnd = random.Random(int(os.environ.get("PLANGATE_FUZZ_SEED", "8")))
    journals = _corpus()
    verdicts: Counter[str] = Counter()
    path = tmp_path / "fuzzed.jsonl"
    for _ in range(EXAMPLES):
        records = _mutate(rnd.choice(journals), rnd)
        data = "".join(json.dumps(r) + "\n" for r in records).encode()
        if rnd.random() < 0.1:  # a damaged byte somewhere, or an unfinished last line
            data = data[: rnd.randrange(len(data) + 1)] + rnd.choice([b"\xff", b"{", b""])
        path.write_bytes(data)
        anchor = rnd.choice([*_tool_uses(records), None, "toolu_unknown"])
        verdict = read_journal(str(path), tool_use_id=anchor, full=rnd.random() < 0.5)
        assert verdict.status in (READY, MISSING, ERROR)
        if verdict.status == ERROR:
            assert verdict.reason is not None and verdict.detail
            code = base_code(verdict.reason)
            assert code in ERROR_STATUS_REASONS or code == UNRECOGNIZED_SHAPE, verdict.reason
        else:
            assert verdict.reason is None
        if verdict.ready:
            orders = [event.order for event in verdict.events]
            assert orders == sorted(orders)
        verdicts[verdict.status + (f":{base_code(verdict.reason)}" if verdict.reason else "")] += 1
    print(f"\njournals fuzzed: {EXAMPLES}; verdicts: {dict(sorted(verdicts.items()))}")
    assert verdicts[READY] > 0 and len(verdicts) > 3  # the mutations reach every kind


def _payloads(rnd: random.Random) -> list[bytes]:
    fields: dict[str, list[Any]] = {
        "session_id": ["0d2c1b7e-0000-4000-8000-000000000000", "", None, 5, "../x"],
        "transcript_path": ["/nonexistent/x.jsonl", "relative.jsonl", None, "/dev/zero"],
        "hook_event_name": ["PreToolUse", "Stop", "SubagentStop", None, ""],
        "tool_name": ["Read", "Agent", "Bash", None, 3],
        "tool_input": [{"file_path": "/x/sections/ceo-phase.md"}, {}, None, "x"],
        "tool_use_id": ["toolu_01", None, ""],
        "cwd": ["/tmp", "relative", None],
        "agent_transcript_path": ["/etc/passwd", None, ""],
        "last_assistant_message": ["Done.", None, "x" * 5000],
    }
    found = []
    for _ in range(EXAMPLES):
        if rnd.random() < 0.3:
            found.append(bytes(rnd.randrange(256) for _ in range(rnd.randrange(200))))
            continue
        payload: dict[str, Any] = {
            k: rnd.choice(v) for k, v in fields.items() if rnd.random() < 0.8
        }
        found.append(json.dumps(payload).encode())
    return found


def test_garbage_hook_payloads_get_one_json_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plangate.gates.entry import policy
    from plangate.hook_io import runtime
    from plangate.hooks import pre_tool_use

    monkeypatch.setenv("PLANGATE_CEO_REVIEW_GATE", "on")
    monkeypatch.setenv("PLANGATE_SKILL_GATE_DEADLINE_MS", "200")
    rnd = random.Random(int(os.environ.get("PLANGATE_FUZZ_SEED", "8")))
    tried = 0
    for data in _payloads(rnd):
        for entry in ("guard", "Stop", "SubagentStop"):
            out = io.StringIO()
            if entry == "guard":
                code = runtime.run(pre_tool_use.POLICY, stdin=io.BytesIO(data), stdout=out)
            else:
                gate = policy(entry, io.StringIO())
                code = runtime.run(gate, stdin=io.BytesIO(data), stdout=out)
            lines = out.getvalue().splitlines()
            assert code == 0 and len(lines) == 1, (entry, data[:80], lines)
            assert isinstance(json.loads(lines[0]), dict)
            tried += 1
    print(f"\nhook payloads tried: {tried}")


EDGE_VALUES = [
    18446744073709551616,  # past 64 bits: exact in the standard library
    -9223372036854775809,
    "\ud800",  # a lone surrogate (json.dumps writes the escape)
    float("nan"),  # written as NaN, which the reader refuses
    float("inf"),
    1e308,
    "\ufeff",
    "caf\u00e9 \U0001f600",
]


def _fingerprint(verdict: Any) -> tuple[Any, ...]:
    return (
        verdict.status,
        verdict.reason,
        verdict.records,
        verdict.owned,
        [event.as_dict() for event in verdict.events],
    )


@corpus.needed
def test_mutated_journals_read_the_same_with_the_compiled_parser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ``fast`` extra (msgspec) never changes a verdict or an event: every line it does
    not turn into an object goes to the standard library."""
    from plangate import tuning
    from plangate.journal.fast import MODULE, fast_parser

    monkeypatch.setenv(tuning.ENV, tuning.joined(fast_min_bytes=0))
    assert fast_parser(0) is not None, f"{MODULE} (the fast extra) is not installed"
    rnd = random.Random(int(os.environ.get("PLANGATE_FUZZ_SEED", "8")) + 1)
    journals = _corpus()
    path = tmp_path / "fuzzed.jsonl"
    differing = 0
    for _ in range(EXAMPLES):
        records = _mutate(rnd.choice(journals), rnd)
        if records and rnd.random() < 0.5:
            victim = rnd.choice(records)
            victim[rnd.choice(["extra", "timestamp", "version", "uuid"])] = rnd.choice(EDGE_VALUES)
        data = "".join(json.dumps(r) + "\n" for r in records).encode()
        if rnd.random() < 0.2:  # a damaged byte somewhere (invalid UTF-8, a broken line)
            cut = rnd.randrange(len(data) + 1)
            data = (
                data[:cut] + rnd.choice([b"\xff", b"\xed\xa0\x80", b"{", b"\xc0\xaf"]) + data[cut:]
            )
        path.write_bytes(data)
        full = rnd.random() < 0.5
        monkeypatch.setenv(tuning.ENV, tuning.joined(fast_min_bytes=0))
        fast = read_journal(str(path), full=full)
        monkeypatch.setenv(tuning.ENV, tuning.joined(fast_min_bytes=len(data) + 1))
        plain = read_journal(str(path), full=full)
        differing += _fingerprint(fast) != _fingerprint(plain)
        assert _fingerprint(fast) == _fingerprint(plain), data[:200]
    assert differing == 0
