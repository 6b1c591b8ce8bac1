"""A phase decision at 100 KB against bare start-up, and what its process imports.

Run from the repository root: ``python -m benchmarks.phase_startup [--repeat N]
[--imports] [--json]``.

Issue 35's item 4: the guard's PreToolUse hook, run exactly as ``plangate setup`` registers
it, deciding a phase entry (the Read of the installed skill's ``sections/ceo-phase.md``) on a
fresh copy of the 100 KB synthetic journal (:mod:`benchmarks.guard_session`), must take at
most bare start-up (``python -S -c pass``, the hooks' own flags doing nothing) + 15 ms. Each
round runs, interleaved, bare start-up, start-up plus the imports of the hook and decision
modules, and one cold phase decision on each of the guard's paths (the journal path: the Read
is journaled; the payload path: it is not yet); every decision must be the verified allow,
or the benchmark stops. The table shows the median of N rounds and each row's ratio to bare
start-up, in wall time and in CPU time (user + system of the process, ``os.wait4``): on a
shared machine the CPU ratio is the steadier of the two.

With ``--imports``, one more journal-path decision runs under ``python -X importtime``, and
the modules it imported are listed: the costliest by their own time, then the totals for
the standard library and for plangate.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
from typing import Any

from benchmarks.generated import GeneratedJournal
from benchmarks.guard_decision import IMPORT_SCRIPT, GuardBench, remove
from benchmarks.guard_session import Installation
from benchmarks.journal_decision import places
from benchmarks.timing import Case, default_python, log

SIZE_MB = 0.1
TARGET_MS = 15.0
"""Issue 35's bound: a phase decision within bare start-up + this many milliseconds."""


class PhaseStartup:
    """The rounds: bare start-up, imports, and the two cold phase decisions."""

    def __init__(self, bench: GuardBench) -> None:
        self.bench = bench
        self.journal = GeneratedJournal(bench.workdir, SIZE_MB)
        self.journal.ensure(bench.corpus, bench.regenerate)
        self.bare = Case("100 KB", f"bare start-up {bench.bare_command()}")
        self.imports = Case("100 KB", "start-up + imports of the hook and decision modules")
        self.on_journal = Case("100 KB", "phase decision, journal path, cold")
        self.on_payload = Case("100 KB", "phase decision, payload path, cold")

    def round(self, number: int) -> None:
        bench = self.bench
        bench.floor(self.bare, [bench.python, *bench.hook_flags, "-c", "pass"])
        bench.floor(self.imports, bench.import_argv(f"import gc; gc.disable(); {IMPORT_SCRIPT}"))
        session = bench.session(self.journal, f"phase-journal-{number}")
        tool_id, _, _ = session.pending_read()
        self.on_journal.add(bench.guard(session, tool_id, session.driver, "journal"))
        remove(session.folder)
        session = bench.session(self.journal, f"phase-payload-{number}")
        self.on_payload.add(bench.guard(session, session.new_tool_id(), session.driver, "payload"))
        remove(session.folder)

    def cases(self) -> list[Case]:
        return [self.bare, self.imports, self.on_journal, self.on_payload]

    def rows(self) -> list[dict[str, Any]]:
        floor = self.bare.median_ms
        cpu_floor = cpu_ms(self.bare)
        return [
            {
                "case": case.name,
                "median_ms": round(case.median_ms, 2),
                "min_ms": round(case.min_ms, 2),
                "ratio": round(case.median_ms / floor, 2),
                "over_bare_ms": round(case.median_ms - floor, 2),
                "median_cpu_ms": round(cpu_ms(case), 2),
                "cpu_ratio": round(cpu_ms(case) / cpu_floor, 2) if cpu_floor else None,
            }
            for case in self.cases()
        ]

    def table(self) -> str:
        rounds = len(self.bare.samples)
        lines = [
            f"phase decision at 100 KB, median of {rounds} rounds "
            f"(target: at most bare start-up + {TARGET_MS:g} ms)",
            "",
            f"| {'case':66} | {'median ms':>9} | {'min ms':>7} | {'+ bare ms':>9} "
            f"| {'x bare':>6} | {'CPU ms':>6} | {'CPU x bare':>10} |",
            f"|{'-' * 68}|{'-' * 11}|{'-' * 9}|{'-' * 11}|{'-' * 8}|{'-' * 8}|{'-' * 12}|",
        ]
        for row in self.rows():
            cpu_ratio = "-" if row["cpu_ratio"] is None else f"{row['cpu_ratio']:.2f}"
            lines.append(
                f"| {row['case']:66} | {row['median_ms']:>9.2f} | {row['min_ms']:>7.2f} "
                f"| {row['over_bare_ms']:>9.2f} | {row['ratio']:>6.2f} "
                f"| {row['median_cpu_ms']:>6.2f} | {cpu_ratio:>10} |"
            )
        worst = max(self.on_journal.median_ms, self.on_payload.median_ms)
        over = worst - self.bare.median_ms
        held = "held" if over <= TARGET_MS else "not held"
        lines += ["", f"target {held}: the slower path takes bare start-up + {over:.2f} ms"]
        cpu_floor = cpu_ms(self.bare)
        if cpu_floor:
            cpu_worst = max(cpu_ms(self.on_journal), cpu_ms(self.on_payload))
            lines.append(f"in CPU time the slower path takes bare + {cpu_worst - cpu_floor:.2f} ms")
        return "\n".join(lines)

    def import_profile(self, top: int) -> str:
        """One journal-path decision under ``-X importtime``: the modules it imported."""
        bench = self.bench
        session = bench.session(self.journal, "phase-imports")
        tool_id, _, _ = session.pending_read()
        payload = session.payload(tool_id, session.driver)
        argv = bench.install.hook_argv
        done = subprocess.run(
            [argv[0], "-X", "importtime", *argv[1:]],
            input=payload,
            env=session.env,
            cwd=self.journal.project,
            capture_output=True,
        )
        remove(session.folder)
        if done.returncode != 0 or not done.stdout.strip():
            raise SystemExit(f"the guard failed under -X importtime:\n{done.stderr.decode()}")
        return import_table(parse_importtime(done.stderr.decode("utf-8", "replace")), top)


def cpu_ms(case: Case) -> float:
    """The median CPU time (user + system) of a case's runs, in ms; 0 when none was taken."""
    taken = [s.cpu_seconds for s in case.samples if s.cpu_seconds is not None]
    return statistics.median(taken) * 1000 if taken else 0.0


def parse_importtime(text: str) -> list[tuple[str, int, int]]:
    """``(module, self µs, cumulative µs)`` of each ``import time:`` line, in order."""
    found = []
    for line in text.splitlines():
        if not line.startswith("import time:") or "[us]" in line:
            continue
        own, cumulative, name = line[len("import time:") :].split("|", 2)
        found.append((name.strip(), int(own), int(cumulative)))
    return found


def import_table(modules: list[tuple[str, int, int]], top: int) -> str:
    ours = [m for m in modules if m[0] == "plangate" or m[0].startswith("plangate.")]
    stdlib = [m for m in modules if m not in ours]
    lines = [
        f"imports of one phase decision: {len(modules)} modules, "
        f"{sum(m[1] for m in modules) / 1000:.2f} ms of their own time",
        f"  standard library and others: {len(stdlib)} modules, "
        f"{sum(m[1] for m in stdlib) / 1000:.2f} ms",
        f"  plangate: {len(ours)} modules, {sum(m[1] for m in ours) / 1000:.2f} ms",
        "",
        f"| {'module':44} | {'self ms':>7} | {'cumulative ms':>13} |",
        f"|{'-' * 46}|{'-' * 9}|{'-' * 15}|",
    ]
    for name, own, cumulative in sorted(modules, key=lambda m: -m[1])[:top]:
        lines.append(f"| {name:44} | {own / 1000:>7.2f} | {cumulative / 1000:>13.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=21, help="rounds (default 21)")
    parser.add_argument("--imports", action="store_true", help="also list what a decision imports")
    parser.add_argument("--top", type=int, default=25, help="modules listed with --imports")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--workdir", help="work folder (default: <tmp>/plangate-bench)")
    parser.add_argument("--python", default=default_python(), help="interpreter to time")
    parser.add_argument("--regenerate", action="store_true", help="ignore the cached journal")
    args = parser.parse_args(argv)
    workdir, python = places(parser, args)
    base_env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTHON", "CLAUDE", "PLANGATE", "ANTHROPIC"))
    }
    install = Installation(workdir, python, base_env)
    bench = GuardBench(install, workdir, args.repeat, args.regenerate, reader=False)
    scene = PhaseStartup(bench)
    scene.round(-1)  # warm-up: .pyc files written, the page cache filled
    for case in scene.cases():
        case.samples.clear()
    for number in range(args.repeat):
        scene.round(number)
    profile = scene.import_profile(args.top) if args.imports else ""
    if args.json:
        print(json.dumps({"rows": scene.rows(), "target_ms": TARGET_MS}, indent=2))
    else:
        print(scene.table())
    if profile:
        print("\n" + profile)
    if bench.busy():
        log(bench.busy())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
