"""Timing for the benchmarks: runs timed from spawn to reap, peak memory, floors, targets.

Standard library only. Used by :mod:`benchmarks.journal_decision` and
:mod:`benchmarks.guard_decision`.
"""

from __future__ import annotations

import argparse
import json
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
    """One run: wall seconds (spawn to reap), exit code, output, peak RSS (runs under GNU
    time only) and the CPU seconds (user + system) of the process and the children it
    waited for (a detached index save is not among them)."""

    __slots__ = ("seconds", "returncode", "output", "peak_kib", "cpu_seconds")

    def __init__(
        self,
        seconds: float,
        returncode: int,
        output: bytes,
        peak_kib: int | None,
        cpu_seconds: float | None = None,
    ) -> None:
        self.seconds = seconds
        self.returncode = returncode
        self.output = output
        self.peak_kib = peak_kib
        self.cpu_seconds = cpu_seconds


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
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    peak_kib = None
    if report is not None:
        with open(report, encoding="utf-8") as handle:
            lines = handle.read().split()
        os.unlink(report)
        peak_kib = int(lines[-1]) if lines and lines[-1].isdigit() else None
    return Sample(seconds, process.returncode, output, peak_kib, usage.ru_utime + usage.ru_stime)


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


def parser_state(python: str) -> str:
    """Which JSON parser the measured interpreter reads journals with, and from what size."""
    from plangate.journal.fast import fast_min_bytes

    found = subprocess.run(
        [python, "-c", "import msgspec; print(msgspec.__version__)"],
        capture_output=True,
        text=True,
        check=False,
    )
    if found.returncode != 0:
        return "parser: the standard library's json for every row (msgspec is not installed)"
    threshold = fast_min_bytes() / (1024 * 1024)
    return (
        f"parser: msgspec {found.stdout.strip()} for the rows of journals of {threshold:g} MiB "
        "or more, the standard library's json below"
    )


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


def default_python() -> str:
    venv = os.path.join(REPO, ".venv", "bin", "python")
    return venv if os.path.exists(venv) else sys.executable


def parse_sizes(text: str) -> list[float]:
    sizes = sorted({float(part) for part in text.split(",") if part.strip()})
    if any(size <= 0 for size in sizes):
        raise argparse.ArgumentTypeError("sizes are positive numbers of MB")
    return sizes


PARSE_SCRIPT = """\
import json, sys, time
with open(sys.argv[1], "rb") as handle:
    lines = [line for line in handle.read().split(b"\\n") if line.strip()]
out = {}
started = time.perf_counter()
for line in lines:
    json.loads(line.decode("utf-8"))
out["json"] = time.perf_counter() - started
try:
    import orjson
except ImportError:
    pass
else:
    started = time.perf_counter()
    for line in lines:
        orjson.loads(line)
    out["orjson"] = time.perf_counter() - started
try:
    import msgspec
except ImportError:
    pass
else:
    decode = msgspec.json.Decoder().decode
    started = time.perf_counter()
    for line in lines:
        decode(line)
    out["msgspec"] = time.perf_counter() - started
try:
    import simdjson
except ImportError:
    pass
else:
    parser = simdjson.Parser()
    started = time.perf_counter()
    for line in lines:
        parser.parse(line)
    out["simdjson"] = time.perf_counter() - started
print(json.dumps(out))
"""
"""In one process, every line of a journal already in memory parsed by each validating
parser installed (each checks UTF-8: the standard library by decoding first); prints the
seconds of each as JSON."""


def parse_floors(
    python: str, path: str, env: dict[str, str], cases: dict[str, Case], size: str
) -> None:
    """Add one sample of each parser's in-process time to ``cases`` (keyed by parser, made
    as needed) and of the fastest to ``cases["fastest"]``."""
    done = subprocess.run(
        [python, "-c", PARSE_SCRIPT, path], capture_output=True, env=env, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"the parse floor failed:\n{done.stderr.decode(errors='replace')}")
    seconds: dict[str, float] = json.loads(done.stdout)
    seconds["fastest"] = min(seconds.values())
    for name, value in seconds.items():
        if name not in cases:
            cases[name] = Case(
                size,
                "floor: in-process fastest validating parser, every line in memory"
                if name == "fastest"
                else f"floor: in-process `{name}` parse of every line in memory",
            )
        cases[name].add(Sample(value, 0, b"", None))


def target(
    key: str, text: str, value: Case | None, limit_ms: float | None, limit_min_ms: float | None
) -> dict[str, Any]:
    """One target, judged on medians (and, for information, on minimums)."""
    if value is None or limit_ms is None or limit_min_ms is None or not value.samples:
        return {"target": key, "text": f"{text}: not measured", "met": None}
    met_median = value.median_ms <= limit_ms
    met_min = value.min_ms <= limit_min_ms
    return {
        "target": key,
        "case": value.name,
        "size": value.size,
        "median_ms": round(value.median_ms, 2),
        "limit_ms": round(limit_ms, 2),
        "min_ms": round(value.min_ms, 2),
        "limit_min_ms": round(limit_min_ms, 2),
        "met": met_median,
        "text": f"{text}: **{met(met_median)}**: {value.median_ms:.1f} ms vs {limit_ms:.1f} ms "
        f"[min: {value.min_ms:.1f} vs {limit_min_ms:.1f} ms, {met(met_min)}]",
    }


def peak_target(
    key: str, cases: list[Case], limit_mib: float, what: str = "every 100 MB case"
) -> dict[str, Any]:
    peaks = [(case.peak_mib, case) for case in cases if case.peak_mib is not None]
    if not peaks:
        return {"target": key, "text": "peak memory: not measured", "met": None}
    worst, case = max(peaks, key=lambda pair: pair[0] or 0.0)
    assert worst is not None
    ok = worst < limit_mib
    return {
        "target": key,
        "case": case.name,
        "size": case.size,
        "peak_mib": round(worst, 1),
        "limit_mib": limit_mib,
        "met": ok,
        "text": f"peak memory of {what} under {limit_mib:g} MiB: **{met(ok)}**: "
        f"highest {worst:.1f} MiB ({case.name})",
    }


def floor_rows(cases: list[Case]) -> list[dict[str, Any]]:
    """The floors, for JSON output."""
    return [case.as_dict() for case in cases if case.name.startswith("floor")]
