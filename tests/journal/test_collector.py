"""A read runs with the cyclic garbage collector off and gives it back as it found it; the
index's integer columns grow the same by ``extend`` as by ``append``."""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator
from pathlib import Path

from plangate.journal import READY, read_journal
from plangate.journal.codes import MALFORMED
from plangate.journal.longs import Longs
from plangate.journal.records import Record
from testkit.journals import Journal


def _enabled_during(path: Path, seen: list[bool]) -> str:
    def select(records: list[Record]) -> Iterable[Record]:
        seen.append(gc.isenabled())
        return records

    return read_journal(str(path), select=select).status


def test_the_collector_is_off_while_reading_and_back_on_after(
    journal: Journal, tmp_path: Path
) -> None:
    journal.session()
    path = journal.write(tmp_path / "j.jsonl")
    assert gc.isenabled()
    seen: list[bool] = []
    assert _enabled_during(path, seen) == READY
    assert seen == [False]
    assert gc.isenabled()


def test_a_refused_read_turns_the_collector_back_on(journal: Journal, tmp_path: Path) -> None:
    journal.session()
    path = journal.write(tmp_path / "j.jsonl", trailing=b"{not json\n")
    verdict = read_journal(str(path))
    assert verdict.reason == MALFORMED
    assert gc.isenabled()


def test_a_caller_that_turned_the_collector_off_keeps_it_off(
    journal: Journal, tmp_path: Path
) -> None:
    journal.session()
    path = journal.write(tmp_path / "j.jsonl")
    gc.disable()
    try:
        seen: list[bool] = []
        assert _enabled_during(path, seen) == READY
        assert seen == [False]
        assert not gc.isenabled()
    finally:
        gc.enable()


def _values() -> Iterator[int]:
    yield from (0, 1, -1, 255, 256, 2**40 + 7, -(2**63), 2**63 - 1)


def test_extend_adds_the_bytes_append_adds() -> None:
    one, many = Longs(), Longs()
    for value in _values():
        one.append(value)
    many.extend(list(_values()))
    many.extend([])
    assert many.tobytes() == one.tobytes()
    assert many.tolist() == list(_values())
    assert len(many) == len(one) == len(list(_values()))
