"""What a caller folds over the owned records, kept in the journal index beside them.

A hook that decides from a long session's history (the guard) needs the whole history only
for a few facts: which background reviewers are still running, where the invocation began,
which calls were made. A :class:`Tracker` folds those facts over the owned records as they
are read (the light events, as the index holds them), the reader saves the fold's state in
the journal index, and a later read asks the tracker which records the decision needs in
full: the **window**, from a cut position to the end, plus a few earlier records. The
reader then reloads only those, instead of unpacking every saved event. A tracker that
cannot vouch for a window returns None, and the reader reads as it would without one.

Plain classes; the state is any value :mod:`marshal` can write (lists, dicts, tuples,
strings, numbers; sets are slow to marshal, so trackers keep lists). Standard library only.
"""

from __future__ import annotations

from plangate.journal.events import Event
from plangate.journal.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Generic, Protocol, TypeVar

    Reload = Callable[[Record], tuple[Event, ...]]

    class State(Protocol):
        """A fold's typed state: how many owned records it holds, and its saved form."""

        count: int

        def dump(self) -> Any:
            """The saved form (:mod:`marshal` writes it: lists, dicts, strings, numbers)."""
            ...

    S = TypeVar("S", bound=State)
else:

    class Generic:
        """``typing.Generic`` for the checker only: the hook path does not import
        :mod:`typing` (2-8 ms at start-up)."""

        def __class_getitem__(cls, item: object) -> type:
            return cls

    S = None


class Tracker:
    """The interface the reader calls, on saved states (what the index keeps). ``key`` names
    what the state depends on besides the journal (a saved state under another key is not
    used). A tracker is a :class:`Fold` over a typed state; this is its saved face."""

    key = ""

    def start(self) -> Any:
        """The saved state before any record."""
        raise NotImplementedError

    def fold(self, state: Any, position: int, records: list[Record], reload: Reload) -> Any:
        """The saved state once ``records`` (owned, in causal order, the first at
        ``position``, their events numbered) are folded in; ``reload(record)`` gives a
        record's events in full. None when the state can no longer be kept."""
        raise NotImplementedError

    def window(self, state: Any) -> tuple[int, list[int]] | None:
        """``(cut, earlier)``: the decision needs every record from position ``cut`` on and
        the records at positions ``earlier`` (all before ``cut``), in full; None when the
        tracker cannot say."""
        raise NotImplementedError


class Fold(Tracker, Generic[S]):
    """The one way a workflow folds the journal: a typed state ``S``, changed in place one
    batch of records at a time (:meth:`step`), saved and loaded only at the reader's
    boundary (:meth:`load`, ``S.dump``). The guard's fold (:mod:`plangate.guard.fold`) and
    the contracts' (:mod:`plangate.contracts.tracking`) are two of these."""

    def new(self) -> S:
        """The state before any record."""
        raise NotImplementedError

    def load(self, saved: Any) -> S:
        """The state a saved form holds (a copy: a fold never changes the saved value)."""
        raise NotImplementedError

    def step(self, state: S, position: int, records: list[Record], reload: Reload) -> bool:
        """Folds ``records`` (the first at ``position`` = ``state.count``) into ``state`` in
        place, its count included; False when the saved form cannot hold the result."""
        raise NotImplementedError

    def plan(self, state: S) -> tuple[int, list[int]] | None:
        """:meth:`Tracker.window` of a typed state."""
        raise NotImplementedError

    def start(self) -> Any:
        return self.new().dump()

    def fold(self, state: Any, position: int, records: list[Record], reload: Reload) -> Any:
        folded = self.load(state)
        if folded.count != position:
            return None  # saved for other records than these
        if not self.step(folded, position, records, reload):
            return None
        return folded.dump()

    def window(self, state: Any) -> tuple[int, list[int]] | None:
        return self.plan(self.load(state))


class Window:
    """A windowed read's outcome, for the caller: the first event order of the cut record
    and the tracker's state after every record (the events of the verdict are those of the
    chosen records only)."""

    __slots__ = ("cut_order", "state", "derived")

    def __init__(self, cut_order: int, state: Any) -> None:
        self.cut_order = cut_order
        self.state = state
        self.derived: Any = None  # what the caller derived from the state, kept for reuse
