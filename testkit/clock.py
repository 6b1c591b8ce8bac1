"""An injected monotonic clock for tests of code that takes one (no timed assertions), and
the read seam (:mod:`plangate.journal.world`) on it."""

from __future__ import annotations

from collections.abc import Callable

from plangate.journal.world import World


class FakeClock:
    """An injected monotonic clock: it moves only when the code sleeps on it (by as much as
    it asked), and ``on_sleep`` runs at each sleep (a writer that is late, say)."""

    def __init__(self, on_sleep: Callable[[FakeClock], None] | None = None) -> None:
        self.now = 1000.0
        self.start = self.now
        self.sleeps = 0
        self.on_sleep = on_sleep

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps += 1
        self.now += seconds
        if self.on_sleep is not None:
            self.on_sleep(self)

    @property
    def elapsed(self) -> float:
        return self.now - self.start

    def world(self) -> ClockWorld:
        """The operating system's files on this clock."""
        return ClockWorld(self)


class ClockWorld(World):
    """The real files; the time a :class:`FakeClock`'s (a test subclasses it to count or
    change reads)."""

    def __init__(self, fake: FakeClock) -> None:
        self.fake = fake

    def clock(self) -> float:
        return self.fake()

    def sleep(self, seconds: float) -> None:
        self.fake.sleep(seconds)
