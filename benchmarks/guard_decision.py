"""Decision time of the phase publication guard (the PreToolUse hook), beside floors.

Run from the repository root: ``python -m benchmarks.guard_decision [--sizes 1,10,100]
[--repeat N] [--json]``.

For each journal size this times the guard hook exactly as Claude Code runs it: the command
``plangate setup`` registers (``<python> -c 'from plangate.hooks.pre_tool_use import main;
raise SystemExit(main())'``), the PreToolUse payload on stdin, process start to decision. The
journal is the synthetic 2.1.332-shaped one of ``journal_decision.py`` with an /autoplan
invocation appended after its bulk history (the slash command, the real ``plangate autoplan
init`` call and its output), and the guarded call is the Read of the installed skill's
``sections/ceo-phase.md``: a real phase decision that must be the verified allow. Timed:

- the journal path (the Read is journaled and the payload names its ``tool_use_id``) and the
  payload path (Claude Code has not written the Read yet), cold and after a ~10 KB append;
- a non-phase Read (``/etc/hostname``), the fast path that never reads the journal;
- for reference, the reader alone (as ``journal_decision.py`` runs it) on the same journal;

with peak memory, next to the floors of ``journal_decision.py`` (bare start-up, ``cat``, a
naive ``json.loads`` of every line), and judged against the reader's targets.

Journal generation (:mod:`benchmarks.synthetic`, :mod:`benchmarks.generated`), timing and
floors (:mod:`benchmarks.timing`) and the table's header (:mod:`benchmarks.journal_decision`)
are shared with ``journal_decision.py``.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from typing import Any

from benchmarks import journal_decision as jd
from benchmarks.generated import GeneratedJournal
from benchmarks.guard_session import Installation, Session
from benchmarks.timing import (
    REPO,
    Case,
    Sample,
    case_rows,
    floor_rows,
    load_average,
    log,
    run,
    source_state,
)

IMPORT_SCRIPT = "import plangate.hooks.pre_tool_use, plangate.guard.evaluate"
NON_PHASE_FILE = "/etc/hostname"
INSTALL_ENV = ("CLAUDE", "PLANGATE", "ANTHROPIC")
"""Inherited variables with these prefixes are dropped: the children get only ours."""

PROFILE_SCRIPT = """\
import cProfile, io, pstats, sys
from plangate.hooks.pre_tool_use import main
out = io.StringIO()
sys.stdout, real = out, sys.stdout
profile = cProfile.Profile()
profile.enable()
main()
profile.disable()
sys.stdout = real
print(out.getvalue().strip())
stats = pstats.Stats(profile, stream=sys.stderr)
stats.sort_stats(sys.argv[1]).print_stats(int(sys.argv[2]))
"""


# --------------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------------


def verified_allow(output: Any) -> bool:
    """``{}``, or the guard's explicit approval of /autoplan's own file after it allowed (a
    driver Read outside the working folder gets ``permissionDecision: allow``)."""
    if output == {}:
        return True
    if not isinstance(output, dict) or set(output) != {"hookSpecificOutput"}:
        return False
    specific = output["hookSpecificOutput"]
    return (
        isinstance(specific, dict)
        and specific.get("hookEventName") == "PreToolUse"
        and specific.get("permissionDecision") == "allow"
        and set(specific) == {"hookEventName", "permissionDecision", "permissionDecisionReason"}
    )


class GuardBench(jd.Bench):
    """The guard's cases; floors, start-up rows and the table's header from ``jd.Bench``."""

    def __init__(
        self,
        install: Installation,
        workdir: str,
        repeat: int,
        regenerate: bool,
        reader: bool,
    ) -> None:
        super().__init__(install.hook_argv[0], workdir, repeat, regenerate)
        self.install = install
        self.reader = reader
        self.imports = Case(
            "-", "info: start-up as hooks start + import of the hook and decision modules"
        )
        self.base_env = {k: v for k, v in self.base_env.items() if not k.startswith(INSTALL_ENV)}
        self.runs = os.path.join(workdir, "guard-runs")
        self.outputs: dict[str, str] = {}
        self.tails: dict[str, int] = {}

    def start_up(self, peak: bool = False) -> None:
        self.floor(self.bare, [self.python, "-c", "pass"], peak=peak)
        self.floor(self.bare_s, [self.python, *self.hook_flags, "-c", "pass"], peak=peak)
        self.floor(self.imports, self.import_argv(IMPORT_SCRIPT), peak=peak)

    def session(self, journal: GeneratedJournal, name: str) -> Session:
        folder = os.path.join(self.runs, name)
        return Session(journal, folder, self.install, self.corpus, self.env(folder))

    def guard(
        self,
        session: Session,
        tool_id: str,
        file_path: str,
        path: str | None,
        peak: bool = False,
    ) -> Sample:
        """One hook run; ``path`` is the decision path the log must show (None: the fast
        path, which must answer ``{}`` and log nothing). Anything else stops the benchmark."""
        payload = os.path.join(session.folder, "payload.json")
        with open(payload, "wb") as handle:
            handle.write(session.payload(tool_id, file_path))
        logged = len(session.log_lines())
        fd = os.open(payload, os.O_RDONLY)
        try:
            sample = run(
                self.install.hook_argv,
                env=session.env,
                cwd=session.journal.project,
                peak=peak,
                stdin=fd,
            )
        finally:
            os.close(fd)
        session.unread = 0
        text = sample.output.decode("utf-8", "replace").strip()
        lines = session.log_lines()
        what = f"{session.journal.label}, {os.path.basename(session.folder)}, {file_path}"
        try:
            output = json.loads(text)
        except ValueError:
            output = None
        if sample.returncode != 0 or output is None:
            raise SystemExit(f"the guard failed ({what}): exit {sample.returncode}\n{text}")
        if path is None:
            if output != {} or len(lines) != logged:
                raise SystemExit(f"the fast path did not answer {{}} silently ({what}): {text}")
            return sample
        entry = json.loads(lines[-1]) if len(lines) == logged + 1 else None
        if (
            not verified_allow(output)
            or entry is None
            or entry.get("decision") != "allow"
            or entry.get("code") is not None
            or entry.get("path") != path
        ):
            raise SystemExit(
                f"the guard did not give the verified allow on the {path} path ({what}).\n"
                f"output: {text}\nlog: {lines[logged:]}"
            )
        self.outputs.setdefault(path, text)
        return sample

    def measure(self, size: float) -> None:
        journal = GeneratedJournal(self.workdir, size)
        started = time.perf_counter()
        if journal.ensure(self.corpus, self.regenerate):
            log(
                f"{journal.label}: generated {journal.meta['bytes']:,} bytes, "
                f"{journal.meta['lines']:,} lines in {time.perf_counter() - started:.1f} s"
            )
        label = journal.label
        on_journal = Case(label, "guard, journal path, cold")
        on_payload = Case(label, "guard, payload path, cold")
        fast = Case(label, f"guard, non-phase Read `{NON_PHASE_FILE}` (fast path)")
        reader = Case(label, "reference: reader alone (hook-style), same journal")
        appended_journal = Case(label, "guard, journal path, after append")
        appended_payload = Case(label, "guard, payload path, after append")
        cat = Case(label, "floor: `cat` > /dev/null")
        naive = Case(label, "floor: naive `json.loads` per line")
        scratch = Case(label, "warm-up")

        def cold(name: str, peak: bool = False) -> tuple[Sample, Sample, Sample, Sample | None]:
            """The cold cases, each on its own fresh copy: journal path (then the reader, on
            the same copy), payload path (then the fast path, on the same copy)."""
            session = self.session(journal, f"{name}-journal")
            tool_id, _, _ = session.pending_read()
            by_journal = self.guard(session, tool_id, session.driver, "journal", peak)
            by_reader = None
            if self.reader:
                folder = session.folder
                by_reader = self.decide(journal, session.path, session.config, folder, peak)[0]
            shutil.rmtree(session.folder)
            session = self.session(journal, f"{name}-payload")
            tool_id = session.new_tool_id()
            by_payload = self.guard(session, tool_id, session.driver, "payload", peak)
            tool_id = session.new_tool_id()
            by_fast = self.guard(session, tool_id, NON_PHASE_FILE, None, peak)
            self.tails[label] = session.tail_bytes
            shutil.rmtree(session.folder)
            return by_journal, by_payload, by_fast, by_reader

        def add(samples: tuple[Sample, Sample, Sample, Sample | None]) -> None:
            by_journal, by_payload, by_fast, by_reader = samples
            on_journal.add(by_journal)
            on_payload.add(by_payload)
            fast.add(by_fast)
            if by_reader is not None:
                reader.add(by_reader)

        cat_argv = ["cat", journal.path]
        naive_argv = [self.python, "-c", jd.NAIVE_SCRIPT, journal.path]
        # Warm-up, untimed: page cache, .pyc files, and a check of every decision.
        cold("warm-up")
        self.floor(scratch, cat_argv, capture=False)
        self.floor(scratch, naive_argv)
        if self.peaks:  # peak memory: one extra run of each case under GNU time
            self.floor(cat, cat_argv, peak=True, capture=False)
            self.floor(naive, naive_argv, peak=True)
            add(cold("cold-peak", peak=True))

        rounds = self.repeat * (4 if size <= 1 else 1)
        for round_ in range(rounds):
            log(f"{label}: round {round_ + 1}/{rounds}")
            self.start_up()
            self.floor(cat, cat_argv, capture=False)
            self.floor(naive, naive_argv)
            parsed = self.parse_floor(journal)
            add(cold(f"cold-{round_}"))

        # After an append: one session in which an earlier hook run read the journal; each
        # round appends ~10 KB of unrelated work (a Bash call and its result), then the
        # guarded Read again, and times the next decision on each path in turn.
        session = self.session(journal, "append")
        tool_id = session.new_tool_id()
        self.guard(session, tool_id, session.driver, "payload")
        session.unjournaled_read_ran(tool_id)
        sizes: dict[str, list[int]] = {"journal": [], "payload": []}
        for round_ in range(self.repeat + (1 if self.peaks else 0)):
            peak = round_ == self.repeat
            session.append_bulk()
            tool_id, use, block = session.pending_read()
            sizes["journal"].append(session.unread)
            appended_journal.add(self.guard(session, tool_id, session.driver, "journal", peak))
            session.read_ran(use, block)
            session.append_bulk()
            tool_id = session.new_tool_id()
            sizes["payload"].append(session.unread)
            appended_payload.add(self.guard(session, tool_id, session.driver, "payload", peak))
            session.unjournaled_read_ran(tool_id)
        shutil.rmtree(session.folder)
        for path, case in (("journal", appended_journal), ("payload", appended_payload)):
            case.verdict = {"appended_bytes_each": sizes[path]}
            mean = sum(sizes[path]) / len(sizes[path]) / 1000
            case.name = f"guard, {path} path, after {mean:.0f} KB append"
        cases = [on_journal, on_payload, appended_journal, appended_payload, fast]
        cases += [reader] if self.reader else []
        self.cases += [*cases, cat, naive, *parsed]
        self.journals.append((journal, {}))

    # -- report -----------------------------------------------------------------------------

    def table(self) -> str:
        argv = shlex.join(
            [os.path.relpath(self.install.hook_argv[0], REPO), *self.install.hook_argv[1:]]
        )
        lines = [
            f"Guard decision: `{argv}` (the command `plangate setup` registers) with a "
            "PreToolUse payload for a Read on stdin, process start to decision; guard at "
            f"{source_state()}; {os.cpu_count()} CPUs; Python {sys.version.split()[0]}.",
            f"{self.repeat} timed runs per case after one warm-up run (4x as many for journals "
            "up to 1 MB). The journal is the synthetic 2.1.332 session of "
            "`journal_decision.py` continued with an /autoplan invocation (slash command, the "
            "real `plangate autoplan init` call and its output); the guarded call is the Read "
            'of the installed `sections/ceo-phase.md` (Phase 1 entry). "cold": a fresh copy '
            "of the journal in a fresh config folder, HOME and state root; the file is in the "
            'page cache. "after append": one session in which earlier hook runs read the '
            "journal; before each timed run, ~10 KB of unrelated work (a Bash call and its "
            "result) plus the previous guarded Read's records were appended (the label shows "
            "the mean bytes appended since the previous hook run). Every guarded run was "
            "checked to be the verified allow, logged as `allow` with `code: null` on the "
            "path named. Peak = max RSS of the child (one extra run under GNU time). "
            f"1-minute load average {self.load_start} at start, {load_average()} at end.",
            "",
            "| size | case | median ms | min ms | runs | peak MiB |",
            "|---|---|---:|---:|---:|---:|",
        ]
        lines += case_rows([self.bare, self.bare_s, self.imports, *self.cases])
        lines += [
            "",
            "| journal | bytes before the invocation | lines | invocation records | largest line |",
            "|---|---:|---:|---:|---:|",
        ]
        tails = self.tails
        for journal, _ in self.journals:
            meta = journal.meta
            lines.append(
                f"| {journal.label} | {meta['bytes']:,} | {meta['lines']:,} | "
                f"{tails.get(journal.label, 0):,} bytes | {meta['largest_line']:,} |"
            )
        lines += ["", "Guard outputs (verified allow):", ""]
        lines += [f"- {path} path: `{text}`" for path, text in sorted(self.outputs.items())]
        lines += [
            "",
            "Targets (issue 16, on both decision paths; for a 2-core machine), judged on "
            "medians with the floors of this run; the same comparison on the minimums follows "
            "in brackets:",
            "",
        ]
        lines += [f"- {line['text']}" for line in self.targets()]
        busy = self.busy()
        if busy:
            lines += ["", f"Warning: {busy}"]
        return "\n".join(lines)

    def targets(self) -> list[dict[str, Any]]:
        paths = {f"{path} path": f"guard, {path} path" for path in ("journal", "payload")}
        return jd.issue_targets(self, paths)

    def as_dict(self) -> dict[str, Any]:
        tails = self.tails
        return {
            "hook": self.install.hook_argv,
            "cpus": os.cpu_count(),
            "repeat": self.repeat,
            "load_average": [self.load_start, load_average()],
            "guard": source_state(),
            "cases": [c.as_dict() for c in [self.bare, self.bare_s, self.imports, *self.cases]],
            "floors": floor_rows([self.bare, self.bare_s, *self.cases]),
            "journals": [
                {
                    "size": j.label,
                    "bytes": j.meta["bytes"],
                    "lines": j.meta["lines"],
                    "largest_line": j.meta["largest_line"],
                    "invocation_bytes": tails.get(j.label),
                }
                for j, _ in self.journals
            ],
            "outputs": self.outputs,
            "targets": self.targets(),
            "warning": self.busy() or None,
        }

    # -- profile ----------------------------------------------------------------------------

    def profile(self, size: float, sort: str, top: int, after_append: bool) -> None:
        """cProfile of one hook run in-process, per decision path, printed to stderr; with
        ``after_append``, of a run after an earlier one and a ~10 KB append."""
        journal = GeneratedJournal(self.workdir, size)
        journal.ensure(self.corpus, self.regenerate)
        for path in ("journal", "payload"):
            session = self.session(journal, f"profile-{path}")
            if after_append:
                tool_id = session.new_tool_id()
                self.guard(session, tool_id, session.driver, "payload")
                session.unjournaled_read_ran(tool_id)
                session.append_bulk()
            if path == "journal":
                tool_id, _, _ = session.pending_read()
            else:
                tool_id = session.new_tool_id()
            payload = os.path.join(session.folder, "payload.json")
            with open(payload, "wb") as handle:
                handle.write(session.payload(tool_id, session.driver))
            log(f"== {journal.label}, {path} path: cProfile of one in-process hook run ==")
            with open(payload, "rb") as stdin:
                done = subprocess.run(
                    [self.python, "-c", PROFILE_SCRIPT, sort, str(top)],
                    stdin=stdin,
                    env=session.env,
                    cwd=journal.project,
                    capture_output=True,
                    text=True,
                )
            log(f"output: {done.stdout.strip()}; log: {session.log_lines()}")
            log(done.stderr)
            shutil.rmtree(session.folder)


def main(argv: list[str] | None = None) -> int:
    parser = jd.arguments(
        (__doc__ or "").split("\n\n")[0],
        "where journals are generated and cached, shared with journal_decision.py "
        "(default: <tmp>/plangate-bench)",
        "interpreter whose plangate is installed and timed (default: the project's .venv)",
    )
    parser.add_argument(
        "--no-reader", action="store_true", help="skip the reader-alone reference rows"
    )
    parser.add_argument(
        "--profile",
        type=float,
        metavar="MB",
        help="instead of the table, cProfile one in-process hook run per decision path on "
        "a journal of this size (stderr)",
    )
    parser.add_argument(
        "--profile-append",
        action="store_true",
        help="profile the run after an earlier hook run and a ~10 KB append, not a cold one",
    )
    parser.add_argument("--profile-sort", default="cumulative", help="pstats sort key")
    parser.add_argument("--profile-top", type=int, default=40, help="pstats rows")
    args = parser.parse_args(argv)
    workdir, python = jd.places(parser, args)
    base_env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PYTHON") and not k.startswith(INSTALL_ENV)
    }
    install = Installation(workdir, python, base_env)
    bench = GuardBench(install, workdir, args.repeat, args.regenerate, not args.no_reader)
    if args.profile is not None:
        bench.profile(args.profile, args.profile_sort, args.profile_top, args.profile_append)
    else:
        bench.report(args.sizes, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
