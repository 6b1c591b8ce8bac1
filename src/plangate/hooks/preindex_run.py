"""The pre-index's process (started by :mod:`plangate.guard.preindex`, never by hand).

Arguments: the journal, the session id, the hook call's cwd and tool-use id, and the
descriptor of the session's locked marker file, which it keeps open until it exits (that is
what holds the lock). It makes the guard's first read of a phase entry
(:func:`plangate.guard.evaluate.read_ahead`), which saves the journal index with the guard's
fold, and exits 0. It runs at a lower priority, within :data:`DEADLINE_S`, and swallows every
failure: the index is a cache that each guarded read verifies, written atomically or not at
all (:mod:`plangate.journal.index`), so a pre-index that fails leaves only a full read for the
next phase entry, as without it.
"""

from __future__ import annotations

import os
import sys
import time

from plangate.hook_io.runtime import within

DEADLINE_S = 120.0
NICE = 10
ATTEMPTS = 3
"""Reads while Claude Code is mid-write (the journal ends inside a line, and no index can be
saved), :data:`PAUSE_S` apart."""
PAUSE_S = 0.1
DESCRIPTORS_MAX = 256


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    if len(words) != 5 or not words[4].isdigit():
        return 2
    journal, session_id, cwd, tool_use_id, lock = words
    try:
        _close_others(int(lock))
        os.nice(NICE)
        within(DEADLINE_S, lambda: _read(journal, session_id, cwd, tool_use_id))
        _prune()
    except Exception:  # noqa: BLE001 - nothing waits for this process or reads its output
        return 0
    return 0


def _close_others(keep: int) -> None:
    """Hold no descriptor of the hook's besides the lock (Claude Code's pipes are already
    replaced by ``/dev/null``)."""
    os.closerange(3, keep)
    os.closerange(keep + 1, DESCRIPTORS_MAX)


def _read(journal: str, session_id: str, cwd: str, tool_use_id: str) -> None:
    from plangate.guard.evaluate import read_ahead

    payload: dict[str, object] = {
        "transcript_path": journal,
        "session_id": session_id,
        "cwd": cwd,
        "tool_use_id": tool_use_id,
    }
    for attempt in range(ATTEMPTS):
        verdict = read_ahead(payload)
        if verdict is None or not verdict.exists or verdict.complete:
            return
        if attempt + 1 < ATTEMPTS:
            time.sleep(PAUSE_S)


def _prune() -> None:
    """Remove other sessions' markers (and indexes) not written for as long as the index
    keeps files."""
    from plangate.guard.preindex import SUFFIX
    from plangate.journal.index import prune
    from plangate.locations import journal_index_dir

    prune(journal_index_dir(), time.time(), also=(SUFFIX,))


if __name__ == "__main__":
    raise SystemExit(main())
