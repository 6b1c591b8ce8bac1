"""Hook-style decision time of the journal reader, beside floors measured in the same run.

Run from the repository root: ``python -m benchmarks.journal_decision [--sizes 1,10,100]
[--repeat N] [--json]``.

For each journal size this times ``<python> -S -c '<journal main>' ROOT PATH SESSION PROJECT
CONFIG`` (process start to verdict, started as ``plangate setup`` starts hooks: the command
:func:`plangate.hook_registry.hook_command` builds for :mod:`plangate.journal.__main__`; ROOT
is plangate's folder) and the
child's peak memory (max RSS, from one extra run under GNU ``time -f %M``), next to three
floors: a bare ``python -c pass`` with the same interpreter, ``cat`` of the journal to
/dev/null, and a naive script that ``json.loads`` every line.

Journals are synthetic but shaped like what Claude Code 2.1.332 writes
(:mod:`benchmarks.synthetic`, on the tests' journal writer; see ``benchmarks/README.md``); they
are generated once per size into ``--workdir`` and reused (:mod:`benchmarks.generated`).
Timing, floors and targets are :mod:`benchmarks.timing`'s.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

from benchmarks.corpus import Corpus
from benchmarks.generated import APPEND_BYTES, GeneratedJournal, append_records, copy_tree
from benchmarks.timing import (
    GNU_TIME,
    REPO,
    Case,
    Sample,
    case_rows,
    default_python,
    floor_rows,
    gnu_time_works,
    label,
    load_average,
    log,
    parse_floors,
    parse_sizes,
    parser_state,
    peak_target,
    run,
    source_state,
    target,
)
from plangate import deferred
from plangate.hook_registry import hook_command
from plangate.hooks.pre_tool_use import DEFAULT_DEADLINE_MS
from plangate.journal import index as journal_index

SETTLE_S = 30.0
"""How long a run's deferred index save is waited for."""
GUARD_DEADLINE_MS = DEFAULT_DEADLINE_MS
"""Issue 24's bound for a record-count journal: decided within the guard's default deadline."""
NAIVE_SCRIPT = """\
import json, sys
with open(sys.argv[1], "rb") as handle:
    for line in handle:
        if line.strip():
            json.loads(line)
"""
IMPORT_SCRIPT = "import plangate.journal.reader, plangate.jsonio"
READER_MODULE = "plangate.journal.__main__"
"""Reads one journal and prints its verdict, started the way plangate's hooks start (`-c`,
since `-m` would add runpy's imports to every run, and `-S` with plangate's folder as the
first argument, since hooks need no `site`)."""
ROOT_SCRIPT = "import os, plangate; print(os.path.dirname(os.path.dirname(plangate.__file__)))"


class Bench:
    def __init__(self, python: str, workdir: str, repeat: int, regenerate: bool) -> None:
        self.python = python
        found = subprocess.run([python, "-c", ROOT_SCRIPT], capture_output=True, text=True)
        if found.returncode != 0:
            raise SystemExit(f"{python} cannot import plangate:\n{found.stderr}")
        self.package_root = found.stdout.strip()
        self.workdir = workdir
        self.repeat = repeat
        self.regenerate = regenerate
        self._corpus: Corpus | None = None
        self.reader_argv = shlex.split(hook_command(READER_MODULE, python, self.package_root))
        # The interpreter flags hooks run with (`-S`: the registered command's, up to its `-c`):
        # "bare start-up" in targets 1-3 is that same invocation doing nothing.
        self.hook_flags = self.reader_argv[1 : self.reader_argv.index("-c")]
        self.bare = Case("-", "info: bare `python -c pass` (with `site`; not how hooks start)")
        self.bare_s = Case(
            "-", f"floor: bare start-up, the hooks' own flags: {self.bare_command()} (targets 1-3)"
        )
        self.parsers: dict[str, dict[str, Case]] = {}
        self.imports = Case("-", "info: start-up as hooks start + `import plangate.journal.reader`")
        self.cases: list[Case] = []
        self.journals: list[tuple[GeneratedJournal, dict[str, Any]]] = []
        self.peaks = gnu_time_works()
        if not self.peaks:
            log(f"{GNU_TIME} (GNU time) is missing: peak memory is not measured")
        # The children's environment: no PYTHON* variables (PYTHONDONTWRITEBYTECODE would make
        # every hook run recompile changed modules; a hook runs with its .pyc files).
        self.base_env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        self.load_start = load_average()

    def corpus(self) -> Corpus:
        if self._corpus is None:
            self._corpus = Corpus()
        return self._corpus

    def env(self, folder: str | None) -> dict[str, str]:
        env = dict(self.base_env)
        if folder is not None:
            # Somewhere for a reader that keeps state between hook runs to keep it, per scenario.
            env["XDG_CACHE_HOME"] = os.path.join(folder, "cache")
            env["XDG_STATE_HOME"] = os.path.join(folder, "state")
            env["TMPDIR"] = os.path.join(folder, "tmp")
            env["PLANGATE_STATE_ROOT"] = os.path.join(folder, "plangate")
        return env

    def decide(
        self,
        journal: GeneratedJournal,
        path: str,
        config: str,
        folder: str | None,
        peak: bool = False,
    ) -> tuple[Sample, dict[str, Any]]:
        argv = [*self.reader_argv, path, journal.session, journal.project, config]
        sample = run(argv, env=self.env(folder), cwd=journal.project, peak=peak)
        text = sample.output.decode("utf-8", "replace").strip()
        try:
            verdict = json.loads(text.splitlines()[-1])
        except (ValueError, IndexError):
            raise SystemExit(f"the reader printed no verdict for {path}:\n{text}") from None
        if verdict.get("status") != "ready" or sample.returncode != 0:
            raise SystemExit(f"the reader did not give `ready` for {path}: {text}")
        if folder is not None:
            self.settle(journal, path, folder)
        return sample, verdict

    def settle(self, journal: GeneratedJournal, path: str, folder: str) -> None:
        """Wait until the run's index save is done: a hook run may leave it to a detached
        child once it has answered (:mod:`plangate.deferred`), which must neither overlap the
        next timed run nor be missing from it."""
        index_dir = os.path.join(self.env(folder)["PLANGATE_STATE_ROOT"], "journal-index")
        size = os.path.getsize(path)
        if size < deferred.min_bytes():
            return  # saved before the run ended, if at all
        until = time.monotonic() + SETTLE_S
        while time.monotonic() < until:
            info = os.stat(path)
            saved = journal_index.load(index_dir, journal.session, path, info, [journal.project])
            if saved is not None and saved.boundary >= size:
                return
            time.sleep(0.005)
        raise SystemExit(f"no journal index covering {path} was saved within {SETTLE_S:g} s")

    def floor(self, case: Case, argv: list[str], peak: bool = False, capture: bool = True) -> None:
        sample = run(argv, env=self.base_env, cwd=self.workdir, peak=peak, capture=capture)
        if sample.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed:\n{sample.output.decode(errors='replace')}")
        case.add(sample)

    def start_up(self, peak: bool = False) -> None:
        self.floor(self.bare, [self.python, "-c", "pass"], peak=peak)
        self.floor(self.bare_s, [self.python, *self.hook_flags, "-c", "pass"], peak=peak)
        self.floor(self.imports, self.import_argv(IMPORT_SCRIPT), peak=peak)

    def bare_command(self) -> str:
        return "`" + " ".join(["python", *self.hook_flags, "-c", "pass"]) + "`"

    def import_argv(self, script: str) -> list[str]:
        """``script`` started as hooks are: the hooks' flags, plangate's folder as argument."""
        entry = f"import sys; sys.path.insert(0, sys.argv.pop(1)); {script}"
        return [self.python, *self.hook_flags, "-c", entry, self.package_root]

    def parse_floor(self, journal: GeneratedJournal) -> list[Case]:
        """One more sample of the in-process parse floors of ``journal`` (its cases)."""
        cases = self.parsers.setdefault(journal.label, {})
        parse_floors(self.python, journal.path, self.base_env, cases, journal.label)
        return list(cases.values())

    def measure(self, size: float, records: int = 0) -> None:
        """Every case on the journal of ``size`` MB, or of ``records`` records."""
        journal = GeneratedJournal(self.workdir, size, records)
        started = time.perf_counter()
        if journal.ensure(self.corpus, self.regenerate):
            log(
                f"{journal.label}: generated {journal.meta['bytes']:,} bytes, "
                f"{journal.meta['lines']:,} lines in {time.perf_counter() - started:.1f} s"
            )
        label = journal.label
        cold = Case(label, "decision, cold")
        appended = Case(label, f"decision, after {APPEND_BYTES // 1000} KB append")
        cat = Case(label, "floor: `cat` > /dev/null")
        naive = Case(label, "floor: naive `json.loads` per line")
        cat_argv = ["cat", journal.path]
        naive_argv = [self.python, "-c", NAIVE_SCRIPT, journal.path]
        runs = os.path.join(self.workdir, "runs")
        scratch = Case(label, "warm-up")

        # Warm-up, untimed: page cache, .pyc files, and a check that the journal is `ready`.
        folder = os.path.join(runs, "warm-up")
        shutil.rmtree(folder, ignore_errors=True)
        for name in ("cache", "state", "tmp"):
            os.makedirs(os.path.join(folder, name))
        _, verdict = self.decide(journal, journal.path, journal.config, folder)
        shutil.rmtree(folder)
        self.floor(scratch, cat_argv, capture=False)
        self.floor(scratch, naive_argv)
        if self.peaks:  # peak memory: one extra run of each case under GNU time
            self.floor(cat, cat_argv, peak=True, capture=False)
            self.floor(naive, naive_argv, peak=True)
            folder = os.path.join(runs, "cold-peak")
            config, path = copy_tree(journal, folder)
            cold.add(self.decide(journal, path, config, folder, peak=True)[0])
            shutil.rmtree(folder)

        # Runs of small journals are cheap: four times as many rounds steady their medians.
        rounds = self.repeat * (4 if size <= 1 and not records else 1)
        for round_ in range(rounds):
            log(f"{label}: round {round_ + 1}/{rounds}")
            self.start_up()
            self.floor(cat, cat_argv, capture=False)
            self.floor(naive, naive_argv)
            parsed = self.parse_floor(journal)
            folder = os.path.join(runs, f"cold-{round_}")
            config, path = copy_tree(journal, folder)
            cold.add(self.decide(journal, path, config, folder)[0])
            shutil.rmtree(folder)

        # After an append: an earlier hook run has read the journal (and may have left state);
        # then each round appends ~10 KB of new records and times the next decision.
        folder = os.path.join(runs, "append")
        config, path = copy_tree(journal, folder)
        self.decide(journal, path, config, folder)
        state = dict(journal.meta["state"])
        added = []
        for round_ in range(self.repeat + (1 if self.peaks else 0)):
            state, written = append_records(
                path, journal, state, f"append-{journal.label}-{round_}", self.corpus()
            )
            added.append(written)
            appended.add(self.decide(journal, path, config, folder, peak=round_ == self.repeat)[0])
        shutil.rmtree(folder)
        appended.verdict = {"appended_bytes_each": added}
        cold.verdict = verdict
        self.cases += [cold, appended, cat, naive, *parsed]
        self.journals.append((journal, verdict))

    def report(self, sizes: list[float], as_json: bool, records: tuple[int, ...] = ()) -> None:
        """Warm up, measure every size (and 100 KB) and every record count, print the table
        or JSON."""
        started = time.perf_counter()
        for _ in range(2):  # warm-up
            self.start_up()
        self.bare.samples.clear()
        self.bare_s.samples.clear()
        self.imports.samples.clear()
        if self.peaks:
            self.start_up(peak=True)
        for size in sorted({0.1, *sizes}):
            self.measure(size)
        for count in records:
            self.measure(0, count)
        log(f"done in {time.perf_counter() - started:.0f} s")
        print(json.dumps(self.as_dict(), indent=1) if as_json else self.table())

    def table(self) -> str:
        lines = [
            f"Hook-style decision: `{os.path.relpath(self.python, REPO)} -S -c '<journal main>' "
            "ROOT PATH SESSION PROJECT CONFIG`, process start to verdict; reader at "
            f"{source_state()}; {os.cpu_count()} CPUs; Python {sys.version.split()[0]}; "
            f"{parser_state(self.python)}.",
            f'{self.repeat} timed runs per case after one warm-up run. "cold" means no state '
            "from an earlier hook run (a fresh copy of the journal in a fresh config folder); "
            'the file is in the page cache. "after append": an earlier hook run read the '
            f"journal, then ~{APPEND_BYTES // 1000} KB of records were appended before each "
            "timed run. Peak = max RSS of the child (one extra run under GNU time). "
            f"1-minute load average {self.load_start} at start, {load_average()} at end "
            "(other work on the machine shows up as noise).",
            "",
            "| size | case | median ms | min ms | runs | peak MiB |",
            "|---|---|---:|---:|---:|---:|",
        ]
        lines += case_rows([self.bare, self.bare_s, self.imports, *self.cases])
        lines += [
            "",
            "| journal | bytes | lines | records | events | largest line |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for journal, verdict in self.journals:
            meta = journal.meta
            lines.append(
                f"| {journal.label} | {meta['bytes']:,} | {meta['lines']:,} | "
                f"{verdict.get('records', 0):,} | {verdict.get('events', 0):,} | "
                f"{meta['largest_line']:,} |"
            )
        lines += [
            "",
            "Targets (the issue's, for a 2-core machine), judged on medians; the same "
            "comparison on the minimums follows in brackets:",
            "",
        ]
        lines += [f"- {line['text']}" for line in self.targets()]
        busy = self.busy()
        if busy:
            lines += ["", f"Warning: {busy}"]
        return "\n".join(lines)

    def find(self, label: str, name: str) -> Case | None:
        return next((c for c in self.cases if c.size == label and c.name.startswith(name)), None)

    def busy(self) -> str:
        """Why the numbers may be noisy, or ''."""
        loads = [self.load_start, load_average()]
        cpus = os.cpu_count() or 1
        if any(load != "?" and float(load) > 0.5 * cpus for load in loads):
            return (
                f"the machine was busy (load average {loads[0]} at start, {loads[1]} at end on "
                f"{cpus} CPUs): medians are noisy, the minimums are closer to the truth."
            )
        return ""

    def targets(self) -> list[dict[str, Any]]:
        """Issue 16's targets for the reader alone (see :func:`issue_targets`)."""
        return issue_targets(self, {"reader": "decision"})

    def validating_floor(self, size: str) -> tuple[float, float] | None:
        """Bare ``-S`` start-up + ``cat`` + the fastest in-process validating parse, as
        ``(medians, minimums)`` in ms, or None when not measured."""
        cat = self.find(size, "floor: `cat`")
        parsed = self.find(size, "floor: in-process fastest")
        if cat is None or parsed is None or not self.bare_s.samples:
            return None
        return (
            self.bare_s.median_ms + cat.median_ms + parsed.median_ms,
            self.bare_s.min_ms + cat.min_ms + parsed.min_ms,
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "python": self.python,
            "cpus": os.cpu_count(),
            "parser": parser_state(self.python),
            "repeat": self.repeat,
            "load_average": [self.load_start, load_average()],
            "reader": source_state(),
            "cases": [c.as_dict() for c in [self.bare, self.bare_s, self.imports, *self.cases]],
            "floors": floor_rows([self.bare, self.bare_s, *self.cases]),
            "journals": [
                {
                    "size": j.label,
                    "bytes": j.meta["bytes"],
                    "lines": j.meta["lines"],
                    "largest_line": j.meta["largest_line"],
                    "verdict": v,
                }
                for j, v in self.journals
            ],
            "targets": self.targets(),
            "warning": self.busy() or None,
        }


def issue_targets(bench: Bench, paths: dict[str, str]) -> list[dict[str, Any]]:
    """Issue 16's targets, on medians with the floors of the same run. ``paths`` maps each
    decision path's name to the start of its cases' names ("decision" for the reader;
    "guard, journal path" and "guard, payload path" for the guard)."""
    out: list[dict[str, Any]] = []
    bare = bare_limits = None
    if bench.bare_s.samples:  # the hooks' own start-up: same interpreter, same flags
        bare = bench.bare_s
        bare_limits = (bare.median_ms, bare.min_ms)
    for size in (label(10), label(100)):
        for path, prefix in paths.items():
            case = bench.find(size, f"{prefix}, after")
            out.append(
                target(
                    f"1:append:{path}:{size}",
                    f"1. {path}, {size} after a ~10 KB append within bare start-up "
                    f"({bench.bare_command()}) + 20 ms",
                    case,
                    None if bare_limits is None else bare_limits[0] + 20,
                    None if bare_limits is None else bare_limits[1] + 20,
                )
            )
    floor = bench.validating_floor(label(100))
    for path, prefix in paths.items():
        out.append(
            target(
                f"2:cold:{path}:100 MB",
                f"2. {path}, 100 MB cold within 4x the validating floor (bare `-S` + cat + "
                "fastest in-process validating parse)",
                bench.find(label(100), f"{prefix}, cold"),
                None if floor is None else 4 * floor[0],
                None if floor is None else 4 * floor[1],
            )
        )
    for path, prefix in paths.items():
        out.append(
            target(
                f"3:startup:{path}:100 KB",
                f"3. {path}, 100 KB journal within 1.3x bare start-up ({bench.bare_command()})",
                bench.find(label(0.1), f"{prefix}, cold"),
                None if bare_limits is None else 1.3 * bare_limits[0],
                None if bare_limits is None else 1.3 * bare_limits[1],
            )
        )
    big = [case for case in bench.cases if case.size == label(100)]
    out.append(peak_target("4:peak:100 MB", big, 64))
    counted = sorted({case.size for case in bench.cases if case.size.endswith(" records")})
    for size in counted:
        cases = [case for case in bench.cases if case.size == size and "floor" not in case.name]
        out.append(peak_target(f"6:peak:{size}", cases, 64, f"every {size} case"))
        for path, prefix in paths.items():
            out.append(
                target(
                    f"6:deadline:{path}:{size}",
                    f"6. {path}, {size} cold within the guard's deadline "
                    f"({GUARD_DEADLINE_MS // 1000} s, an upper bound)",
                    bench.find(size, f"{prefix}, cold"),
                    GUARD_DEADLINE_MS,
                    GUARD_DEADLINE_MS,
                )
            )
    return out


def arguments(description: str, workdir_help: str, python_help: str) -> argparse.ArgumentParser:
    """The options both benchmarks take."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--sizes",
        type=parse_sizes,
        default=[1.0, 10.0, 100.0],
        help="journal sizes in MB (10^6 bytes), comma separated; a 100 KB "
        "journal is always added for the start-up target (default 1,10,100)",
    )
    parser.add_argument(
        "--records",
        type=parse_counts,
        default=[1_000_000],
        help="record counts of the journals of short event-less records, comma separated; "
        "0 for none (default 1000000)",
    )
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per case (default 5)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    parser.add_argument("--workdir", help=workdir_help)
    parser.add_argument("--python", default=default_python(), help=python_help)
    parser.add_argument("--regenerate", action="store_true", help="ignore cached journals")
    return parser


def parse_counts(text: str) -> list[int]:
    """``--records``: positive record counts (0 alone for none)."""
    try:
        counts = sorted({int(part.replace("_", "")) for part in text.split(",") if part.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError("record counts are whole numbers") from None
    if any(count < 0 for count in counts):
        raise argparse.ArgumentTypeError("record counts are not negative")
    return [count for count in counts if count]


def places(parser: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[str, str]:
    """The work folder (made) and the interpreter of the parsed options."""
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    workdir = os.path.realpath(
        args.workdir or os.path.join(tempfile.gettempdir(), "plangate-bench")
    )
    os.makedirs(workdir, exist_ok=True)
    return workdir, os.path.abspath(args.python)  # not resolved: a venv python is a symlink


def main(argv: list[str] | None = None) -> int:
    parser = arguments(
        (__doc__ or "").split("\n\n")[0],
        "where journals are generated and cached (default: <tmp>/plangate-bench)",
        "interpreter that runs the reader (default: the project's .venv)",
    )
    args = parser.parse_args(argv)
    workdir, python = places(parser, args)
    Bench(python, workdir, args.repeat, args.regenerate).report(
        args.sizes, args.json, tuple(args.records)
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
