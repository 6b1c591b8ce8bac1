"""The hook-facing reads of a journal of many short event-less records: time, CPU, memory.

```
.venv/bin/python -m benchmarks.record_count [--records 1000000] [--repeat 3] [--json]
```

On the record-count journal of :mod:`benchmarks.journal_decision` (a first turn whose one
Bash call streams ``--records`` progress records, each hanging from the one before),
continued with an ``/autoplan`` invocation as :mod:`benchmarks.guard_decision` continues its
journals, it runs what people and hooks run, in fresh processes, with plangate installed by
``plangate setup``:

- ``plangate journal inspect PATH --json`` (a content read: no journal index either time);
- the PreToolUse guard on a Read of the Tasks phase's driver (``tasks-aggregator.md``) with
  no phase published. The answer due is the guard's on the journal of the same shape with
  only ``--reference`` records (1,000: read in a blink), a deny (``phase_order``: Phase 1
  is due). **cold**: a fresh state root (no journal index); **warm**: the same entry again
  once the first run's index is saved;
- the Stop hook after the turn's last assistant text (``last_assistant_message``): the
  gates keep no journal index, so **warm** is only the second stop of the session.

Every round starts on a fresh copy of the journal and a fresh state root. Wall time is spawn
to reap; CPU is the process's user and system time (``os.wait4``); peak memory the max RSS
of one extra, untimed run of each case under GNU ``time -f %M``. The outcome column is what
the hook answered (the guard's decision log entry, the gate's output), so a time is never
reported for a wrong answer. Targets (issue 24): the guard gives the answer due within its
deadline (10 s, an upper bound, not the expected time) and every peak is under 64 MiB.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
from typing import Any

from benchmarks import journal_decision as jd
from benchmarks.corpus import Corpus
from benchmarks.generated import GeneratedJournal
from benchmarks.guard_session import Installation, Session
from benchmarks.timing import (
    Sample,
    default_python,
    gnu_time_works,
    load_average,
    log,
    run,
    source_state,
)
from plangate import tuning

TASKS_DRIVER = os.path.join("skills", "autoplan", "sections", "tasks-aggregator.md")
STOP_MODULE = "plangate.hooks.stop"
PEAK_TARGET_MIB = 64
GUARD_DEADLINE_S = 10.0
CLOSING_TEXT = "The plan is reviewed; the Tasks phase comes next."


class Row:
    """One case: its timed samples, its peak, and the outcomes it gave."""

    def __init__(self, case: str, run_kind: str) -> None:
        self.case = case
        self.run_kind = run_kind
        self.samples: list[Sample] = []
        self.peak_kib: int | None = None
        self.outcomes: set[str] = set()

    def add(self, sample: Sample, outcome: str, peak: bool) -> None:
        self.outcomes.add(outcome)
        if peak:
            self.peak_kib = sample.peak_kib
        else:
            self.samples.append(sample)

    def as_dict(self) -> dict[str, Any]:
        walls = [sample.seconds * 1000 for sample in self.samples]
        cpus = [(sample.cpu_seconds or 0.0) * 1000 for sample in self.samples]
        return {
            "case": self.case,
            "run": self.run_kind,
            "median_ms": round(statistics.median(walls), 1),
            "min_ms": round(min(walls), 1),
            "median_cpu_ms": round(statistics.median(cpus), 1),
            "peak_mib": None if self.peak_kib is None else round(self.peak_kib / 1024, 1),
            "outcome": ", ".join(sorted(self.outcomes)),
            "samples_ms": [round(wall, 1) for wall in walls],
        }


class RecordBench:
    def __init__(
        self, workdir: str, python: str, repeat: int, regenerate: bool, records: int
    ) -> None:
        self.workdir = workdir
        self.repeat = repeat
        base_env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
        self.install = Installation(workdir, python, base_env)
        self.base_env = base_env
        self.journal = GeneratedJournal(workdir, 0, records)
        self._corpus: Corpus | None = None
        self.journal.ensure(self.corpus, regenerate)
        self.runs = os.path.join(workdir, "record-count-runs")
        self.stop_argv, self.stop_env = self._stop_hook()
        self.peaks = gnu_time_works()
        names = [
            ("journal inspect", "cold"),
            ("journal inspect", "again"),
            ("guard, Tasks entry", "cold"),
            ("guard, Tasks entry", "warm"),
            ("Stop gate", "first stop"),
            ("Stop gate", "second stop"),
        ]
        self.rows = {name: Row(*name) for name in names}
        self.due = ""
        self.reference_records = 0

    def corpus(self) -> Corpus:
        if self._corpus is None:
            self._corpus = Corpus()
        return self._corpus

    def _stop_hook(self) -> tuple[list[str], dict[str, str]]:
        """The Stop command and the environment that turns the /autoplan gate on, as
        ``plangate settings --autoplan`` gives them (the gates are opt-in)."""
        done = subprocess.run(
            [self.install.plangate, "settings", "--autoplan"],
            env=self.install.env,
            capture_output=True,
            text=True,
            check=True,
        )
        settings = json.loads(done.stdout)
        for group in settings.get("hooks", {}).get("Stop", []):
            for handler in group.get("hooks", []):
                if f"from {STOP_MODULE} import main" in handler.get("command", ""):
                    return shlex.split(handler["command"]), dict(settings.get("env", {}))
        raise SystemExit("plangate settings --autoplan has no Stop hook")

    def session(self, name: str) -> Session:
        folder = os.path.join(self.runs, name)
        shutil.rmtree(folder, ignore_errors=True)
        env = dict(self.base_env)
        env[tuning.ENV] = tuning.joined(env.get(tuning.ENV, ""), preindex=0)
        return Session(self.journal, folder, self.install, self.corpus, env)

    def reference(self, records: int) -> str:
        """The guard's cold answer on the journal of the same shape with ``records``
        records: the answer due, which the long journal must give too."""
        journal = GeneratedJournal(self.workdir, 0, records)
        journal.ensure(self.corpus, False)
        long_journal, self.journal = self.journal, journal
        try:
            session = self.session("reference")
            outcome = self.guard(session, False, record=False)
            shutil.rmtree(session.folder, ignore_errors=True)
        finally:
            self.journal = long_journal
        return outcome

    def measure(self, reference: int) -> None:
        self.reference_records = reference
        self.due = self.reference(reference)
        rounds = [False] * self.repeat + ([True] if self.peaks else [])
        for number, peak in enumerate(rounds):
            log(f"{self.journal.label}: round {number + 1}/{len(rounds)}")
            session = self.session(f"round-{number}")
            self.inspect(session, peak)
            self.guard(session, peak)
            self.stop(session, peak)
            shutil.rmtree(session.folder, ignore_errors=True)

    def inspect(self, session: Session, peak: bool) -> None:
        argv = [self.install.plangate, "journal", "inspect", session.path, "--json"]
        for kind in ("cold", "again"):
            sample = run(argv, env=session.env, cwd=self.journal.project, peak=peak)
            text = sample.output.decode("utf-8", "replace")
            try:
                outcome = str(json.loads(text).get("status"))
            except ValueError:
                outcome = f"exit {sample.returncode}: {text.strip()[-200:]}"
            self.rows[("journal inspect", kind)].add(sample, outcome, peak)

    def guard(self, session: Session, peak: bool, record: bool = True) -> str:
        """The cold and warm runs (``record``: kept as rows); the cold run's answer."""
        driver = os.path.join(session.config, TASKS_DRIVER)
        first = ""
        for kind in ("cold", "warm") if record else ("cold",):
            sample, lines = session.run_hook(
                self.install.hook_argv, session.new_tool_id(), driver, peak
            )
            entry = json.loads(lines[-1]) if lines else {}
            outcome = f"{entry.get('decision')} {entry.get('code')}" if entry else "no log entry"
            if not record:
                return outcome
            self.rows[("guard, Tasks entry", kind)].add(sample, outcome, peak)
            if kind == "cold":
                first = outcome
                self.settled(session)
        return first

    def settled(self, session: Session) -> None:
        """Wait for the index save a hook leaves to a detached child (up to 120 s)."""
        import time

        from plangate.journal import index as journal_index

        index_dir = os.path.join(session.state_root, "journal-index")
        until = time.monotonic() + 120
        while time.monotonic() < until:
            info = os.stat(session.path)
            saved = journal_index.load(
                index_dir, self.journal.session, session.path, info, [self.journal.project]
            )
            if saved is not None and saved.boundary == info.st_size:
                return
            time.sleep(0.05)
        log("the cold guard run saved no journal index within 120 s")

    def stop(self, session: Session, peak: bool) -> None:
        def closing(writer: Any) -> None:
            block = {"type": "text", "text": CLOSING_TEXT}
            writer.assistant_record(block, writer.new_message_id(), 0, "end_turn")

        session.write(closing)
        payload = {
            "session_id": self.journal.session,
            "transcript_path": session.path,
            "cwd": self.journal.project,
            "permission_mode": "default",
            "hook_event_name": "Stop",
            "stop_hook_active": False,
            "last_assistant_message": CLOSING_TEXT,
        }
        path = os.path.join(session.folder, "stop.json")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(payload, handle)
        env = {**session.env, **self.stop_env}
        for kind in ("first stop", "second stop"):
            fd = os.open(path, os.O_RDONLY)
            try:
                sample = run(self.stop_argv, env=env, cwd=self.journal.project, peak=peak, stdin=fd)
            finally:
                os.close(fd)
            self.rows[("Stop gate", kind)].add(sample, stop_outcome(sample), peak)

    def report(self, as_json: bool) -> None:
        rows = [row.as_dict() for row in self.rows.values()]
        meta = self.journal.meta
        if as_json:
            document = {
                "journal": {"records": self.journal.records, **_sizes(meta)},
                "rows": rows,
                "load_average": load_average(),
                "cpus": os.cpu_count(),
                "repeat": self.repeat,
                "due": self.due,
            }
            print(json.dumps(document, indent=1))
            return
        print(
            f"Record-count journal: {self.journal.label}, {meta['bytes']:,} bytes, "
            f"{meta['lines']:,} lines (+ the /autoplan invocation); plangate at "
            f"{source_state()}; {os.cpu_count()} CPUs; load average {load_average()}; "
            f"Python {sys.version.split()[0]}; {self.repeat} timed run(s) per case.\n"
        )
        print("| case | run | median ms | min ms | median CPU ms | peak MiB | outcome |")
        print("|---|---|---:|---:|---:|---:|---|")
        for row in rows:
            peak = "-" if row["peak_mib"] is None else f"{row['peak_mib']:.1f}"
            print(
                f"| {row['case']} | {row['run']} | {row['median_ms']:.0f} | {row['min_ms']:.0f} "
                f"| {row['median_cpu_ms']:.0f} | {peak} | {row['outcome']} |"
            )
        peaks = [row["peak_mib"] for row in rows if row["peak_mib"] is not None]
        guard = [row for row in rows if row["case"].startswith("guard")]
        print()
        if peaks:
            print(
                f"- every peak under {PEAK_TARGET_MIB} MiB: "
                f"{'met' if max(peaks) < PEAK_TARGET_MIB else 'not met'} (max {max(peaks):.1f})"
            )
        slowest = max(row["median_ms"] for row in guard) / 1000
        print(
            f"- the guard within its {GUARD_DEADLINE_S:g} s deadline: "
            f"{'met' if slowest < GUARD_DEADLINE_S else 'not met'} (slowest median "
            f"{slowest:.2f} s); every answer the one due (`{self.due}`, the guard's on the "
            f"same shape with {self.reference_records:,} records): "
            f"{'yes' if all(r['outcome'] == self.due for r in guard) else 'no'}"
        )


def stop_outcome(sample: Sample) -> str:
    text = sample.output.decode("utf-8", "replace")
    for code in ("GATE_TIMEOUT", "GATE_TRANSCRIPT", "GATE_STATE"):
        if code in text:
            return code
    last = text.strip().splitlines()[-1] if text.strip() else ""
    try:
        answer = json.loads(last) if last else {}
    except ValueError:
        return f"exit {sample.returncode}: {last[-120:]}"
    if isinstance(answer, dict) and answer.get("decision") == "block":
        return "block"
    return f"exit {sample.returncode}, {json.dumps(answer)[:60]}"


def _sizes(meta: dict[str, Any]) -> dict[str, Any]:
    return {"bytes": meta.get("bytes"), "lines": meta.get("lines")}


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000, help="default 1000000")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per case (default 3)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    parser.add_argument(
        "--workdir",
        help="where journals are generated and cached, shared "
        "with journal_decision.py (default: <tmp>/plangate-bench)",
    )
    parser.add_argument(
        "--python",
        default=default_python(),
        help="interpreter whose plangate is installed and timed",
    )
    parser.add_argument("--regenerate", action="store_true", help="ignore cached journals")
    parser.add_argument(
        "--reference",
        type=int,
        default=1000,
        help="records of the short journal whose guard answer is the one due (default 1000)",
    )
    args = parser.parse_args(argv)
    if args.records < 1:
        parser.error("--records must be at least 1")
    workdir, python = jd.places(parser, args)
    bench = RecordBench(workdir, python, args.repeat, args.regenerate, args.records)
    bench.measure(args.reference)
    bench.report(args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
