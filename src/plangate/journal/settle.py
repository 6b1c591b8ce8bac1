"""The one wait every reader of a journal shares: read, judge, and while the journal has not
caught up with what the hook was asked about, wait one poll and read again, within a bound.

Claude Code writes its journal asynchronously: a hook may run before the record it decides
on (the current call, the prompt it answers, the stop's message) is in the file. Every
workflow reads and waits in one loop (:func:`plangate.engine.settle`): the guard
(:class:`plangate.guard.observe.JournalRead`), the contracts
(:class:`plangate.contracts.evaluate.HistoryRead`) and the skill gates
(:class:`plangate.gates.transcript.Stop`) each judge a read their own way (what "caught
up" means differs), and wait the same way, on one clock: a :class:`Settle` a pass, made
with the bound, the clock and the sleep of the world it reads
(:mod:`plangate.journal.world`). A read
whose root shape the reader does not know is read once more before it is believed (a
record being written can look like one): :meth:`Settle.second_look`.

Standard library only (hook path).
"""

from __future__ import annotations

import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

POLL_SECONDS = 0.05
"""How long a reader waits between two reads of a journal that has not caught up."""


class Settle:
    """A bound on the time a reader waits for the journal, on ``clock`` (monotonic seconds),
    with ``sleep`` between reads."""

    __slots__ = ("until", "clock", "sleep", "poll", "_looked")

    def __init__(
        self,
        until: float,
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], object] | None = None,
        poll: float = POLL_SECONDS,
    ) -> None:
        self.until = until
        self.clock = clock if clock is not None else time.monotonic  # looked up when made
        self.sleep = sleep if sleep is not None else time.sleep
        self.poll = poll
        self._looked = False

    @classmethod
    def within(
        cls,
        seconds: float,
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], object] | None = None,
    ) -> Settle:
        """A bound ``seconds`` from now."""
        made = cls(0.0, clock, sleep)
        made.until = made.clock() + seconds
        return made

    def left(self) -> bool:
        """Whether time is left before the bound."""
        return self.clock() < self.until

    def again(self) -> bool:
        """Wait one poll and say to read again, or say that the bound has passed."""
        if not self.left():
            return False
        self.sleep(self.poll)
        return True

    def second_look(self) -> bool:
        """True the first time it is asked (read once more, at once: both reads must
        agree), False after."""
        if self._looked:
            return False
        self._looked = True
        return True
