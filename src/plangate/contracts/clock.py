"""Journal timestamps as seconds, without ``datetime`` or ``time.strptime`` (hook path)."""

from __future__ import annotations


def _days(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 (the proleptic Gregorian calendar)."""
    year -= month <= 2
    era = (year if year >= 0 else year - 399) // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def seconds(stamp: str) -> float | None:
    """``2026-12-01T20:01:02.345Z`` → seconds since the epoch; None when not that shape."""
    try:
        date, clock = stamp.rstrip("Z").split("T", 1)
        year, month, day = (int(part) for part in date.split("-"))
        hours, minutes, rest = clock.split(":", 2)
        secs = float(rest.split("+", 1)[0])
        return _days(year, month, day) * 86400 + int(hours) * 3600 + int(minutes) * 60 + secs
    except ValueError:
        return None
