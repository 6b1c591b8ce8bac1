"""Timing for the benchmarks: runs timed from spawn to reap, peak memory, floors, targets.

Standard library only. Used by :mod:`benchmarks.journal_decision` and
:mod:`benchmarks.guard_decision`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def case_rows(cases: list[Case]) -> list[str]:
    """The timing table's rows: size, case, median and min ms, runs, peak MiB."""
    return [
        f"| {case.size} | {case.name} | {case.median_ms:.1f} | {case.min_ms:.1f} | "
        f"{len(case.samples)} | {'-' if case.peak_mib is None else f'{case.peak_mib:.1f}'} |"
        for case in cases
    ]


def label(size: float) -> str:
    return f"{size * 1000:g} KB" if size < 1 else f"{size:g} MB"


class Sample:
    __slots__ = ("seconds", "returncode", "output", "peak_kib")

    def __init__(
        self, seconds: float, returncode: int, output: bytes, peak_kib: int | None
    ) -> None:
        self.seconds = seconds
        self.returncode = returncode
        self.output = output
        self.peak_kib = peak_kib


GNU_TIME = "/usr/bin/time"


def gnu_time_works() -> bool:
    if not os.path.exists(GNU_TIME):
        return False
    with tempfile.NamedTemporaryFile("r", suffix=".peak") as report:
        try:
            done = subprocess.run(
                [GNU_TIME, "-f", "%M", "-o", report.name, "true"], capture_output=True, check=False
            )
        except OSError:
            return False
        return done.returncode == 0 and report.read().strip().isdigit()


def run(
    argv: list[str],
    *,
    env: dict[str, str],
    cwd: str | None = None,
    capture: bool = True,
    peak: bool = False,
    stdin: int | None = None,
) -> Sample:
    """Run ``argv`` to completion, timing spawn to reap with ``perf_counter``.

    With ``peak`` the command runs under GNU ``time -f %M`` instead, for the child's max RSS
    (such runs are not timed: the wrapper adds a process). The driver cannot read a child's
    peak itself: on Linux a child's ``ru_maxrss`` also counts the driver's own memory, which
    the child shares between fork and exec. ``stdin`` is a descriptor the child reads (a
    hook's payload); by default it reads nothing.
    """
    report = None
    if peak:
        fd, report = tempfile.mkstemp(suffix=".peak")
        os.close(fd)
        argv = [GNU_TIME, "-f", "%M", "-o", report, *argv]
    start = time.perf_counter()
    process = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL if stdin is None else stdin,
        stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
        stderr=subprocess.STDOUT if capture else subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    )
    output = b""
    if process.stdout is not None:
        output = process.stdout.read()
        process.stdout.close()
    _, status, _usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    peak_kib = None
    if report is not None:
        with open(report, encoding="utf-8") as handle:
            lines = handle.read().split()
        os.unlink(report)
        peak_kib = int(lines[-1]) if lines and lines[-1].isdigit() else None
    return Sample(seconds, process.returncode, output, peak_kib)


class Case:
    """Timed samples of one measurement, and the peak RSS of separate runs."""

    def __init__(self, size: str, name: str) -> None:
        self.size = size
        self.name = name
        self.samples: list[Sample] = []
        self.peaks: list[int] = []
        self.verdict: dict[str, Any] | None = None

    def add(self, sample: Sample) -> None:
        if sample.peak_kib is not None:
            self.peaks.append(sample.peak_kib)
        else:
            self.samples.append(sample)

    @property
    def median_ms(self) -> float:
        return statistics.median(s.seconds for s in self.samples) * 1000

    @property
    def min_ms(self) -> float:
        return min(s.seconds for s in self.samples) * 1000

    @property
    def peak_mib(self) -> float | None:
        return max(self.peaks) / 1024 if self.peaks else None

    def as_dict(self) -> dict[str, Any]:
        peak = self.peak_mib
        return {
            "size": self.size,
            "case": self.name,
            "median_ms": round(self.median_ms, 2),
            "min_ms": round(self.min_ms, 2),
            "peak_mib": None if peak is None else round(peak, 1),
            "runs": len(self.samples),
            "samples_ms": [round(s.seconds * 1000, 2) for s in self.samples],
            "verdict": self.verdict,
        }


def met(value: bool) -> str:
    return "met" if value else "not met"


def load_average() -> str:
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "?"


def source_state() -> str:
    """Which reader was measured: the commit, and how many files under src/ differ from it."""
    try:
        head = subprocess.run(
            ["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", REPO, "status", "--porcelain", "--", "src"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head}" + (f" with {len(dirty)} changed file(s) under src/" if dirty else "")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def cold_target(what: str, cold: Case, bare: Case, cat: Case) -> str:
    """The issue's cold target, judged on medians and (in brackets) on minimums."""
    peak = cold.peak_mib
    small = peak is not None and peak < 200
    limit, limit_min = 2 * (bare.median_ms + cat.median_ms), 2 * (bare.min_ms + cat.min_ms)
    fast, fast_min = cold.median_ms <= limit, cold.min_ms <= limit_min
    peak_text = "not measured" if peak is None else f"{peak:.0f} MiB"
    return (
        f"{what}100 MB cold within 2x (bare start-up + cat) and under 200 MiB peak: "
        f"**{met(fast and small)}**. Time {met(fast)}: {cold.median_ms:.0f} ms vs "
        f"2 x ({bare.median_ms:.1f} + {cat.median_ms:.1f}) = {limit:.0f} ms "
        f"[min: {cold.min_ms:.0f} vs {limit_min:.0f} ms, {met(fast_min)}]. "
        f"Peak {met(small)}: {peak_text} vs 200 MiB."
    )


def append_target(what: str, appended: Case, bare: Case) -> str:
    """The issue's after-append target."""
    within = appended.median_ms <= bare.median_ms + 50
    within_min = appended.min_ms <= bare.min_ms + 50
    return (
        f"{what}100 MB after an append (see the table) within bare start-up + 50 ms: "
        f"**{met(within)}**: {appended.median_ms:.0f} ms vs {bare.median_ms:.1f} + 50 = "
        f"{bare.median_ms + 50:.0f} ms [min: {appended.min_ms:.0f} vs "
        f"{bare.min_ms + 50:.0f} ms, {met(within_min)}]."
    )


def startup_target(what: str, small_journal: Case, bare: Case) -> str:
    """The issue's start-up target for a 100 KB journal."""
    within = small_journal.median_ms <= 1.3 * bare.median_ms
    within_min = small_journal.min_ms <= 1.3 * bare.min_ms
    return (
        f"{what}100 KB journal within 1.3x bare start-up: **{met(within)}**: "
        f"{small_journal.median_ms:.1f} ms vs 1.3 x {bare.median_ms:.1f} = "
        f"{1.3 * bare.median_ms:.1f} ms [min: {small_journal.min_ms:.1f} vs "
        f"{1.3 * bare.min_ms:.1f} ms, {met(within_min)}]."
    )


def default_python() -> str:
    venv = os.path.join(REPO, ".venv", "bin", "python")
    return venv if os.path.exists(venv) else sys.executable


def parse_sizes(text: str) -> list[float]:
    sizes = sorted({float(part) for part in text.split(",") if part.strip()})
    if any(size <= 0 for size in sizes):
        raise argparse.ArgumentTypeError("sizes are positive numbers of MB")
    return sizes
