"""Pass one reads a journal through one reused buffer (plangate.journal.scan): whatever the
size of its reads, it finds the same records, events, digest and verdict.

Tiny reads put every kind of line across read boundaries (a line split in two, a line
spanning many reads, a non-ASCII character or a damaged byte cut in half, a read that ends on
a newline), and a buffer that is reused must never leave an earlier read's bytes in a later
line. Checked on every corpus journal and on damaged copies, with and without the compiled
parser.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from plangate import tuning
from plangate.journal import read_journal, scan
from plangate.journal.verdict import Verdict
from tests import corpus

pytestmark = corpus.needed
corpus.skip_module_without_corpus()

FILES = corpus.files()
CHUNKS = (7, 61, 4096, 65_537)
TINY_MAX = 40_000
"""Files up to this size are also read a few bytes at a time."""


def _chunks(size: int, rnd: random.Random) -> list[int]:
    """Read sizes for a file of ``size`` bytes: tiny ones for small files (every line then
    crosses reads), and ones that leave a few hundred reads for any file."""
    sizes = [rnd.choice(CHUNKS[2:]), max(509, size // 300)]
    if size <= TINY_MAX:
        sizes.append(rnd.choice(CHUNKS[:2]))
    return sizes


def _fingerprint(verdict: Verdict) -> tuple[object, ...]:
    prefix = verdict.prefix
    return (
        verdict.status,
        verdict.reason,
        verdict.detail,
        verdict.records,
        verdict.lines,
        verdict.complete,
        (prefix.size, prefix.digest) if prefix is not None else None,
        [event.as_dict() for event in verdict.events],
    )


def _read_in_chunks(path: Path, chunk: int, monkeypatch: pytest.MonkeyPatch) -> tuple[object, ...]:
    monkeypatch.setattr(scan, "CHUNK_BYTES", chunk)
    return _fingerprint(read_journal(str(path), full=True))


@pytest.mark.parametrize("fast", ["compiled", "standard library"])
def test_any_read_size_finds_the_same_in_every_corpus_journal(
    fast: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    threshold = 0 if fast == "compiled" else 10**12
    monkeypatch.setenv(tuning.ENV, tuning.joined(fast_min_bytes=threshold))
    rnd = random.Random(9)
    for path in FILES:
        expected = _read_in_chunks(path, scan.CHUNK_BYTES, monkeypatch)
        for chunk in _chunks(path.stat().st_size, rnd):
            assert _read_in_chunks(path, chunk, monkeypatch) == expected, (path.name, chunk)


def test_damaged_and_unfinished_journals_read_the_same_in_any_read_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(tuning.ENV, tuning.joined(fast_min_bytes=0))
    rnd = random.Random(10)
    sources = [path for path in FILES if 5_000 < path.stat().st_size < 4 * TINY_MAX]
    assert len(sources) >= 5
    target = tmp_path / "damaged.jsonl"
    verdicts = set()
    for round_ in range(40):
        data = rnd.choice(sources).read_bytes()
        cut = rnd.randrange(len(data))
        damage = rnd.choice([b"", b"\xff", b"\xc3", "é".encode(), b"\n\n", b" \t\n", b"{"])
        data = data[:cut] + damage + data[cut:]
        if round_ % 3 == 0:
            data = data[: rnd.randrange(len(data))]  # an unfinished last line
        target.write_bytes(data)
        expected = _read_in_chunks(target, scan.CHUNK_BYTES, monkeypatch)
        verdicts.add(expected[0])
        for chunk in (*_chunks(len(data), rnd), len(data) // 2 or 1):
            assert _read_in_chunks(target, chunk, monkeypatch) == expected, (round_, chunk)
    assert len(verdicts) > 1  # damage made some unreadable, and some read through
    os.remove(target)
