"""The benchmarks' journals: generated once per size into a work folder, copied, continued.

A :class:`GeneratedJournal` is one :class:`~benchmarks.synthetic.SyntheticJournal` session of
a given size in ``<workdir>/journal-<size>/config/projects/<slug>/<session>.jsonl``, reused
while :data:`GENERATOR` and the Python version stay the same.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
import uuid
from collections.abc import Callable
from typing import Any

from benchmarks.corpus import MB, Corpus
from benchmarks.synthetic import SyntheticJournal
from plangate.locations import project_slug

GENERATOR = "cc-2.1.332-synthetic/3"
"""Names the generator's output: change it whenever the journals it writes change."""
APPEND_BYTES = 10_000


def records_label(records: int) -> str:
    """``1M records``, ``250k records``: the size column of a record-count journal."""
    if records >= 1_000_000:
        return f"{records / 1_000_000:g}M records"
    return f"{records / 1000:g}k records" if records >= 1000 else f"{records} records"


class GeneratedJournal:
    """One generated journal of ``size`` MB and where it lives, in ``root``; with ``records``
    instead, a journal of that many short event-less records (progress records streamed by
    one long Bash call, :meth:`~benchmarks.synthetic.SyntheticJournal.progress_flood`)."""

    def __init__(self, root: str, size: float, records: int = 0) -> None:
        self.size = size
        self.records = records
        name = f"records-{records}" if records else f"{size:g}"
        if records:
            self.label = records_label(records)
        else:
            self.label = f"{size * 1000:g} KB" if size < 1 else f"{size:g} MB"
        self.folder = os.path.join(root, f"journal-{name}")
        self.project = os.path.join(root, "project")
        seed = f"session-records-{records}" if records else f"session-{size}"
        self.session = str(uuid.UUID(int=random.Random(seed).getrandbits(128), version=4))
        self.config = os.path.join(self.folder, "config")
        self.path = self.path_in(self.config)
        self.meta_path = os.path.join(self.folder, "meta.json")
        self.meta: dict[str, Any] = {}

    def path_in(self, config: str) -> str:
        return os.path.join(config, "projects", project_slug(self.project), self.session + ".jsonl")

    def expected_meta(self) -> dict[str, Any]:
        return {
            "generator": GENERATOR,
            "python": sys.version.split()[0],
            "size": self.size,
            "records": self.records,
            "project": self.project,
            "session": self.session,
        }

    def ensure(self, corpus_factory: Callable[[], Corpus], regenerate: bool) -> bool:
        """Generate unless a matching cached copy exists; True when generated."""
        os.makedirs(self.project, exist_ok=True)
        if not regenerate and os.path.exists(self.meta_path) and os.path.exists(self.path):
            with open(self.meta_path, encoding="utf-8") as handle:
                meta = json.load(handle)
            if all(meta.get(k) == v for k, v in self.expected_meta().items()) and meta.get(
                "bytes"
            ) == os.path.getsize(self.path):
                self.meta = meta
                return False
        shutil.rmtree(self.folder, ignore_errors=True)
        os.makedirs(os.path.dirname(self.path))
        corpus = corpus_factory()
        rng = random.Random(f"{GENERATOR}-{self.size}-{self.records}")
        target = int(self.size * MB)
        with open(self.path, "wb", buffering=1 << 20) as out:
            writer = SyntheticJournal(
                out,
                rng,
                corpus,
                self.session,
                self.project,
                max_file=min(MB, max(12_000, target // 8)),
            )
            if self.records:
                writer.progress_flood(self.records)
            else:
                writer.generate(target)
        meta = self.expected_meta()
        meta.update(
            {
                "bytes": writer.bytes,
                "lines": writer.line_count,
                "largest_line": writer.largest,
                "state": writer.state(),
            }
        )
        with open(self.meta_path, "w", encoding="utf-8") as handle:
            json.dump(meta, handle, indent=1)
        self.meta = meta
        return True


def copy_tree(journal: GeneratedJournal, folder: str) -> tuple[str, str]:
    """A fresh ``<folder>/config/projects/<slug>/<session>.jsonl`` copy, flushed to disk."""
    shutil.rmtree(folder, ignore_errors=True)
    config = os.path.join(folder, "config")
    path = journal.path_in(config)
    os.makedirs(os.path.dirname(path))
    shutil.copyfile(journal.path, path)
    _fsync(path)
    for name in ("cache", "state", "tmp"):
        os.makedirs(os.path.join(folder, name))
    return config, path


def _fsync(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def append_records(
    path: str, journal: GeneratedJournal, state: dict[str, Any], seed: str, corpus: Corpus
) -> tuple[dict[str, Any], int]:
    """About :data:`APPEND_BYTES` of new records (one Bash call and its result) appended to
    ``path`` and flushed; returns the writer's state and the bytes."""
    with open(path, "ab") as out:
        writer = SyntheticJournal(
            out, random.Random(seed), corpus, journal.session, journal.project, state=state
        )
        writer.append_cycle(APPEND_BYTES)
        out.flush()
        os.fsync(out.fileno())
    return writer.state(), writer.bytes
