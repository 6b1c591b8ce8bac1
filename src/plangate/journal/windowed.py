"""A windowed read: fold a tracker over what was appended, reload only its window.

:func:`read_window` is what :func:`plangate.journal.reader.read_journal` does after it went on
from a saved index when the caller gave a tracker (:mod:`.window`). Standard library only
(hook path).
"""

from __future__ import annotations

from plangate.journal.records import Record
from plangate.journal.reload import clean_bash_results, reload_records, reloader
from plangate.journal.verdict import READY, Verdict
from plangate.journal.window import Tracker, Window

TYPE_CHECKING = False
if TYPE_CHECKING:
    from plangate.journal import index as journal_index


def read_window(
    verdict: Verdict,
    fd: int,
    tracker: Tracker,
    retained_max: int,
    saved: journal_index.Index,
    appended: list[Record],
    bases: dict[int, int],
) -> bool:
    """Fold the tracker over the appended records and reload only the window it names;
    False (nothing reloaded, the fold's state kept or forgotten) when it names none."""
    state = saved.tracked if saved.tracker_key == tracker.key else None
    if state is not None:
        state = tracker.fold(state, saved.count, appended, reloader(fd, bases))
    saved.tracker_key, saved.tracked = tracker.key, state
    plan = tracker.window(state) if state is not None else None
    if plan is None:
        return False
    cut, earlier = plan
    old = saved.count
    ids = saved.ids_from(min([cut, *earlier]))
    first = old - len(ids)
    wanted = [*earlier, *range(cut, old + len(appended))]
    # Only the saved records from the first one wanted on: a window is a session's end.
    indices, offsets = saved.indices.tolist(first), saved.offsets.tolist(first)
    lengths, slots = saved.lengths.tolist(first), saved.slots.tolist(first)
    starts: dict[int, int] = {}
    total = saved.slots_total - sum(slots)
    for position, used in enumerate(slots, first):
        starts[position] = total
        total += used
    chosen: list[Record] = []
    for position in wanted:
        if position >= old:
            chosen.append(appended[position - old])
            continue
        at = position - first
        record = Record.indexed(indices[at], offsets[at], lengths[at], ids[at], slots[at], ())
        bases[record.index] = starts[position]
        chosen.append(record)
    if reload_records(fd, chosen, bases, verdict, retained_max, counted=False):
        return True  # refused: the verdict says why
    events = [event for record in chosen for event in record.events]
    clean_bash_results(events)
    verdict.events = events
    cut_order = starts[cut] if cut < old else bases[appended[cut - old].index]
    verdict.window = Window(cut_order, state)
    verdict.status = READY
    return True
