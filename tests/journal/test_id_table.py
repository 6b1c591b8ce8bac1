"""The riders' id table (:class:`plangate.journal.compact.HashedIds`) stays linear whatever
ids the journal's writer chose: counted in probes and in the table's clusters, not in time
(speed is ``benchmarks/id_shapes.py``'s).

Ids whose slot-giving bytes are the same (a counter at the end of the id, a time-ordered id
of one host) once fell into one cluster: every insert probed every id before it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from plangate.journal import READY, read_journal
from plangate.journal.compact import HashedIds, rider_key

from .conftest import PROJECT

COUNT = 10_000

SHAPES: dict[str, Callable[[int], str]] = {
    "sequential": lambda i: f"00000000-0000-4000-8000-{i:012x}",
    "counter in the node's first bytes": lambda i: f"00000000-0000-4000-8000-{i:06x}000000",
    "shared tail, counter up front": lambda i: f"{i:08x}-0000-4000-8000-0242ac120002",
    "counter in the clock sequence": lambda i: f"00000000-0000-4000-{i:04x}-000000000000",
    "not a uuid": lambda i: f"id-{i}",
}


def longest_cluster(table: HashedIds) -> int:
    """The longest run of occupied slots (linear probing walks at most that far)."""
    longest = run = 0
    for key in table.view:
        run = run + 1 if key else 0
        longest = max(longest, run)
    return longest


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_adversarial_ids_probe_linearly(shape: str) -> None:
    ids = [SHAPES[shape](i) for i in range(1, COUNT + 1)]
    table = HashedIds()
    for uuid in ids:
        table.add(uuid)
    assert table.count == len({rider_key(uuid) for uuid in ids})
    # Half full at most: random keys make clusters of a few dozen; one cluster of
    # thousands is the quadratic read.
    assert longest_cluster(table) < 200
    assert table.probes < 8 * COUNT
    for uuid in ids:
        assert table.maybe(uuid)
    assert table.probes < 16 * COUNT


@pytest.mark.parametrize("shape", ["sequential", "counter in the node's first bytes"])
def test_a_run_of_keys_probes_linearly(shape: str) -> None:
    """The streak path adds a run of keys in one loop (:meth:`HashedIds.add_keys`)."""
    keys = [rider_key(SHAPES[shape](i)) for i in range(1, COUNT + 1)]
    table = HashedIds()
    assert table.add_keys(keys)
    assert longest_cluster(table) < 200
    assert table.probes < 8 * COUNT
    assert not table.add_keys(keys[:1])  # a key there already is found


def test_the_slot_mixes_every_bit_of_the_key() -> None:
    """Keys differing only in their high bits, or only in their low bits, spread out."""
    table = HashedIds()
    table.reserve(4096)
    high = {table.slot((i << 48) | 1) for i in range(4096)}
    low = {table.slot((i << 1) | 1) for i in range(4096)}
    assert len(high) > 2048
    assert len(low) > 2048


def test_each_process_mixes_differently() -> None:
    """The multiplier is drawn per table: a writer cannot precompute colliding ids."""
    multipliers = {(table.multiplier, table.second) for table in [HashedIds() for _ in range(8)]}
    assert len(multipliers) == 8
    assert all(first & second & 1 for first, second in multipliers)


def test_a_journal_of_sequential_ids_reads_as_the_random_one(tmp_path: Path) -> None:
    """End to end: every sequential rider is taken, the answer is ready."""
    from testkit.journals import Journal

    journal = Journal(cwd=PROJECT)
    journal.session()
    for i in range(1, 2001):
        journal.attachment("date", uuid=SHAPES["sequential"](i), date="2026-11-29")
    journal.text("Done.")
    path = journal.write(tmp_path / f"{journal.session_id}.jsonl")
    verdict = read_journal(str(path), session_id=journal.session_id)
    assert verdict.status == READY
    assert verdict.records == len(journal.records)
