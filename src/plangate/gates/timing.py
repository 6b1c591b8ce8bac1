"""The gate's deadline, and journal timestamps as seconds since the epoch.

Standard library only (hook path): no :mod:`datetime`, no :mod:`re`.
"""

from __future__ import annotations

import os
import time

from plangate.gates.errors import GATE_TIMEOUT, GateError
from plangate.journal.world import OS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from plangate.journal.world import World

DEADLINE_ENV = "PLANGATE_SKILL_GATE_DEADLINE_MS"
DEFAULT_DEADLINE_MS = 5000
MAX_DEADLINE_MS = 20000
SETTLE_MAX_S = 2.0


MIN_DEADLINE_MS = 3000
"""The floor: a settings file's ``env`` reaches the gates, and a gate that runs out of time
lets the stop through, so a lower value would be an off switch."""


def deadline_ms(environ: dict[str, str] | None = None) -> int:
    """The deadline in milliseconds: ``PLANGATE_SKILL_GATE_DEADLINE_MS``, clamped to 3..20 s.

    A value that is not a positive whole number is ignored (the default, 5 s, applies).
    """
    source = os.environ if environ is None else environ
    text = source.get(DEADLINE_ENV, "").strip()
    if text.isascii() and text.isdigit():
        value = int(text)
        if value > 0:
            return max(MIN_DEADLINE_MS, min(value, MAX_DEADLINE_MS))
    return DEFAULT_DEADLINE_MS


class Deadline:
    """A monotonic deadline; :meth:`check` raises ``GATE_TIMEOUT`` once it has passed.

    ``world`` (:mod:`plangate.journal.world`) is what the gate reads and the time it runs on
    (the operating system's unless a test injects a clock): the deadline, the transcript's
    reads and its settle loop all use it."""

    __slots__ = ("seconds", "start", "end", "world", "clock")

    def __init__(self, milliseconds: int, start: float | None = None, *, world: World = OS) -> None:
        self.world = world
        self.clock = world.clock
        self.seconds = milliseconds / 1000.0
        self.start = world.clock() if start is None else start
        self.end = self.start + self.seconds

    def remaining(self) -> float:
        return max(0.0, self.end - self.clock())

    def expired(self) -> bool:
        return self.clock() >= self.end

    def check(self, doing: str) -> None:
        if self.expired():
            raise GateError(GATE_TIMEOUT, f"the {self.seconds:g} s deadline passed while {doing}")

    @property
    def settle_budget(self) -> float:
        """How long to wait for the transcript to catch up: 2 s or half the deadline."""
        return min(SETTLE_MAX_S, self.seconds / 2.0)


def _days_from_civil(year: int, month: int, day: int) -> int:
    # Howard Hinnant's algorithm: days since 1970-01-01 in the proleptic Gregorian calendar.
    year -= month <= 2
    era = (year if year >= 0 else year - 399) // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def parse_timestamp(text: object) -> float | None:
    """``2026-11-29T19:59:56.059Z`` as seconds since the epoch; None when it is not one.

    Only the UTC form Claude Code writes is accepted (``Z`` or ``+00:00``, optional fraction).
    """
    if not isinstance(text, str) or len(text) < 20 or len(text) > 40:
        return None
    date, t, clock = text[:10], text[10], text[11:19]
    if t != "T" or date[4] != "-" or date[7] != "-" or clock[2] != ":" or clock[5] != ":":
        return None
    digits = date[:4] + date[5:7] + date[8:10] + clock[:2] + clock[3:5] + clock[6:8]
    if not (digits.isascii() and digits.isdigit()):
        return None
    rest = text[19:]
    fraction = 0.0
    if rest.startswith("."):
        end = 1
        while end < len(rest) and rest[end].isdigit():
            end += 1
        if end == 1:
            return None
        fraction = float("0" + rest[:end])
        rest = rest[end:]
    if rest not in ("Z", "+00:00"):
        return None
    year, month, day = int(date[:4]), int(date[5:7]), int(date[8:10])
    hour, minute, second = int(clock[:2]), int(clock[3:5]), int(clock[6:8])
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour < 24 and minute < 60 and second < 61):
        return None
    days = _days_from_civil(year, month, day)
    return days * 86400 + hour * 3600 + minute * 60 + second + fraction


def utc_timestamp(now: float | None = None) -> str:
    """``2026-11-29T20:01:02.345Z`` (ISO 8601, UTC, milliseconds)."""
    seconds = time.time() if now is None else now
    whole = int(seconds)
    millis = int((seconds - whole) * 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{millis:03d}Z"
