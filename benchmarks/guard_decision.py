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
- for journals of at least the pre-index threshold (:mod:`plangate.guard.preindex`), issue
  16's target 5: on a fresh copy, the non-phase Read that starts the pre-index (the fast path
  with the spawn), the time until the detached pre-index ends (waited for, untimed by the
  hook), a second non-phase Read for which none is due, and then the first phase entry of the
  session on each path. Every other case runs with ``PLANGATE_TUNING=preindex=0``, so that
  they measure what they measured before it existed;

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
from benchmarks.guard_session import Installation, Session, read_call
from benchmarks.timing import (
    REPO,
    Case,
    Sample,
    case_rows,
    floor_rows,
    label,
    load_average,
    log,
    parser_state,
    source_state,
    target,
)
from plangate import tuning
from plangate.guard import preindex
from plangate.journal import index as journal_index

IMPORT_SCRIPT = "import plangate.hooks.pre_tool_use, plangate.guard.evaluate"
NON_PHASE_FILE = "/etc/hostname"
SPAWN_MS = 2.0
"""What starting the pre-index may add to the fast path (target 5)."""
SETTLE_S = 30.0
"""How long a hook run's deferred work (an index save after it answered) is waited for."""

INSTALL_ENV = ("CLAUDE", "PLANGATE", "ANTHROPIC")
"""Inherited variables with these prefixes are dropped: the children get only ours."""


def remove(folder: str) -> None:
    """Remove a session's folder, once the detached work of its hook runs (a deferred index
    save, a pre-index) has stopped writing into it."""
    for _ in range(int(SETTLE_S / 0.05)):
        try:
            shutil.rmtree(folder)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.05)
    shutil.rmtree(folder)


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

    def session(self, journal: GeneratedJournal, name: str, ahead: bool = False) -> Session:
        """A fresh copy; with ``ahead`` the guard's pre-index is on (as by default)."""
        folder = os.path.join(self.runs, name)
        env = self.env(folder)
        if not ahead:
            env[tuning.ENV] = tuning.joined(env.get(tuning.ENV, ""), preindex=0)
        return Session(journal, folder, self.install, self.corpus, env)

    def non_phase(self, session: Session) -> Sample:
        """A timed non-phase Read, then journaled with its result as Claude Code does."""
        tool_id = session.new_tool_id()
        sample = self.guard(session, tool_id, NON_PHASE_FILE, None)
        call = read_call(tool_id, NON_PHASE_FILE)
        session.write(lambda writer: writer.result(writer.call(call[0]), call))
        return sample

    @staticmethod
    def marker(session: Session) -> str:
        index_dir = os.path.join(session.state_root, "journal-index")
        return preindex.marker_file(index_dir, session.journal.session)

    def preindexed(self, session: Session, started: float) -> Sample:
        """Wait for the pre-index the last hook run started; the time from ``started`` (that
        run's start) to its end. Stops the benchmark unless it saved a usable index that
        covers the journal as the hook run saw it."""
        marker = self.marker(session)
        if not os.path.exists(marker):
            raise SystemExit(f"the non-phase Read started no pre-index ({session.folder})")
        until = time.monotonic() + 300
        while preindex.running(marker):
            if time.monotonic() > until:
                raise SystemExit(f"the pre-index did not end in 300 s ({session.folder})")
            time.sleep(0.002)
        seconds = time.perf_counter() - started
        with open(marker, "rb") as handle:
            marked = int(handle.read())
        saved = self.saved_index(session)
        if saved is None or saved[2] < marked:
            raise SystemExit(f"the pre-index saved no index covering the journal ({marker})")
        return Sample(seconds, 0, b"", None)

    def settled_index(
        self, session: Session, before: tuple[int, int, int] | None
    ) -> tuple[int, int, int] | None:
        """The index once the last hook run's save is done: a hook may leave it to a detached
        child after answering (:mod:`plangate.deferred`)."""
        until = time.monotonic() + SETTLE_S
        while True:
            saved = self.saved_index(session)
            if saved != before or time.monotonic() > until:
                return saved
            time.sleep(0.005)

    def saved_index(self, session: Session) -> tuple[int, int, int] | None:
        """The session's usable journal index: its file's inode, frames and covered bytes."""
        index_dir = os.path.dirname(self.marker(session))
        name = session.journal.session
        info = os.stat(session.path)
        saved = journal_index.load(index_dir, name, session.path, info, [session.journal.project])
        if saved is None:
            return None
        inode = os.stat(journal_index.index_file(index_dir, name)).st_ino
        return inode, saved.frames, saved.boundary

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
        sample, added = session.run_hook(self.install.hook_argv, tool_id, file_path, peak)
        session.unread = 0
        text = sample.output.decode("utf-8", "replace").strip()
        what = f"{session.journal.label}, {os.path.basename(session.folder)}, {file_path}"
        try:
            output = json.loads(text)
        except ValueError:
            output = None
        if sample.returncode != 0 or output is None:
            raise SystemExit(f"the guard failed ({what}): exit {sample.returncode}\n{text}")
        if path is None:
            if output != {} or added:
                raise SystemExit(f"the fast path did not answer {{}} silently ({what}): {text}")
            return sample
        entry = json.loads(added[0]) if len(added) == 1 else None
        if (
            not verified_allow(output)
            or entry is None
            or entry.get("decision") != "allow"
            or entry.get("code") is not None
            or entry.get("path") != path
        ):
            raise SystemExit(
                f"the guard did not give the verified allow on the {path} path ({what}).\n"
                f"output: {text}\nlog: {added}"
            )
        self.outputs.setdefault(path, text)
        return sample

    def measure(self, size: float, records: int = 0) -> None:
        journal = GeneratedJournal(self.workdir, size, records)
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
        spawning = Case(label, "guard, non-phase Read that starts the pre-index (fast path)")
        background = Case(label, "info: pre-index in the background, hook start to its end")
        idle = Case(label, "guard, non-phase Read after the pre-index, none due (fast path)")
        ahead_journal = Case(label, "guard, journal path, first phase entry after a pre-index")
        ahead_payload = Case(label, "guard, payload path, first phase entry after a pre-index")
        ahead_cases = [spawning, background, idle, ahead_journal, ahead_payload]
        long_enough = journal.meta["bytes"] >= preindex.MIN_BYTES
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
            remove(session.folder)
            session = self.session(journal, f"{name}-payload")
            tool_id = session.new_tool_id()
            by_payload = self.guard(session, tool_id, session.driver, "payload", peak)
            tool_id = session.new_tool_id()
            by_fast = self.guard(session, tool_id, NON_PHASE_FILE, None, peak)
            self.tails[label] = session.tail_bytes
            remove(session.folder)
            return by_journal, by_payload, by_fast, by_reader

        def add(samples: tuple[Sample, Sample, Sample, Sample | None]) -> None:
            by_journal, by_payload, by_fast, by_reader = samples
            on_journal.add(by_journal)
            on_payload.add(by_payload)
            fast.add(by_fast)
            if by_reader is not None:
                reader.add(by_reader)

        def ahead(name: str, timed: bool = True) -> None:
            """Target 5, on fresh copies: a non-phase Read starts the pre-index, which ends;
            a second one finds none due; then the session's first phase entry, per path."""
            entries = {"journal": ahead_journal, "payload": ahead_payload}
            for path, entry in entries.items():
                session = self.session(journal, f"{name}-ahead-{path}", ahead=True)
                started = time.perf_counter()
                samples = [(spawning, self.non_phase(session))]
                samples.append((background, self.preindexed(session, started)))
                with open(self.marker(session), "rb") as handle:
                    marked = handle.read()
                samples.append((idle, self.non_phase(session)))
                with open(self.marker(session), "rb") as handle:
                    if handle.read() != marked or preindex.running(self.marker(session)):
                        raise SystemExit(f"a pre-index started though none was due ({name})")
                if path == "journal":
                    tool_id, _, _ = session.pending_read()
                else:
                    tool_id = session.new_tool_id()
                before = self.saved_index(session)
                samples.append((entry, self.guard(session, tool_id, session.driver, path)))
                after = self.settled_index(session, before)
                # Gone on from the pre-index's index: a delta appended to the same file (a
                # full read would have written a new snapshot under a new inode).
                if before is None or after is None or after[:2] != (before[0], before[1] + 1):
                    raise SystemExit(f"the phase entry did not use the pre-index ({name})")
                remove(session.folder)
                for case, sample in samples if timed else []:
                    case.add(sample)

        cat_argv = ["cat", journal.path]
        naive_argv = [self.python, "-c", jd.NAIVE_SCRIPT, journal.path]
        # Warm-up, untimed: page cache, .pyc files, and a check of every decision.
        cold("warm-up")
        if long_enough:
            ahead("warm-up", timed=False)
        self.floor(scratch, cat_argv, capture=False)
        self.floor(scratch, naive_argv)
        if self.peaks:  # peak memory: one extra run of each case under GNU time
            self.floor(cat, cat_argv, peak=True, capture=False)
            self.floor(naive, naive_argv, peak=True)
            add(cold("cold-peak", peak=True))

        rounds = self.repeat * (4 if size <= 1 and not records else 1)
        for round_ in range(rounds):
            log(f"{label}: round {round_ + 1}/{rounds}")
            self.start_up()
            self.floor(cat, cat_argv, capture=False)
            self.floor(naive, naive_argv)
            parsed = self.parse_floor(journal)
            add(cold(f"cold-{round_}"))
            if long_enough:
                ahead(f"ahead-{round_}")

        # After an append: one session in which an earlier hook run read the journal; each
        # round appends ~10 KB of unrelated work (a Bash call and its result), then the
        # guarded Read again, and times the next decision on each path in turn.
        session = self.session(journal, "append")
        tool_id = session.new_tool_id()
        self.guard(session, tool_id, session.driver, "payload")
        self.settled_index(session, None)  # its save may be a detached child's: let it end
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
        remove(session.folder)
        for path, case in (("journal", appended_journal), ("payload", appended_payload)):
            case.verdict = {"appended_bytes_each": sizes[path]}
            mean = sum(sizes[path]) / len(sizes[path]) / 1000
            case.name = f"guard, {path} path, after {mean:.0f} KB append"
        cases = [on_journal, on_payload, appended_journal, appended_payload, fast]
        cases += [reader] if self.reader else []
        cases += ahead_cases if long_enough else []
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
            f"{source_state()}; {os.cpu_count()} CPUs; Python {sys.version.split()[0]}; "
            f"{parser_state(self.install.hook_argv[0])}.",
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
            'path named. Rows with "pre-index" (journals of at least '
            f"{preindex.MIN_BYTES / 1e6:.1f} MB, target 5): a fresh copy, a non-phase Read "
            "that starts the guard's pre-index (timed as a hook run), the wait until the "
            "detached pre-index ends (hook start to its end; not part of any hook run), a "
            "second non-phase Read for which none is due, then the session's first phase "
            "entry, checked to have gone on from the pre-index's index; every other row runs "
            "with `PLANGATE_TUNING=preindex=0`. Peak = max RSS of the child (one extra run "
            "under GNU time; none for the pre-index rows). "
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
        return jd.issue_targets(self, paths) + self.ahead_targets()

    def ahead_targets(self) -> list[dict[str, Any]]:
        """Target 5: after one non-phase Read started the pre-index, a first phase entry
        within target 1's limit (bare start-up + 20 ms), and the Read that started it within
        the fast path's own time (pre-index off, same journal) + :data:`SPAWN_MS`."""
        out: list[dict[str, Any]] = []
        bare = self.bare_s if self.bare_s.samples else None
        for size in (label(10), label(100)):
            for path in ("journal", "payload"):
                out.append(
                    target(
                        f"5:ahead:{path} path:{size}",
                        f"5. {path} path, {size}: the first phase entry after a pre-index "
                        f"within bare start-up ({self.bare_command()}) + 20 ms",
                        self.find(size, f"guard, {path} path, first phase entry"),
                        None if bare is None else bare.median_ms + 20,
                        None if bare is None else bare.min_ms + 20,
                    )
                )
            fast = self.find(size, "guard, non-phase Read `")
            out.append(
                target(
                    f"5:spawn:{size}",
                    f"5. {size}: the non-phase Read that starts the pre-index within the fast "
                    f"path's time (pre-index off) + {SPAWN_MS:g} ms",
                    self.find(size, "guard, non-phase Read that starts"),
                    None if fast is None else fast.median_ms + SPAWN_MS,
                    None if fast is None else fast.min_ms + SPAWN_MS,
                )
            )
        return out

    def as_dict(self) -> dict[str, Any]:
        tails = self.tails
        return {
            "hook": self.install.hook_argv,
            "cpus": os.cpu_count(),
            "parser": parser_state(self.install.hook_argv[0]),
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

    def profile(
        self, size: float, sort: str, top: int, after_append: bool, records: int = 0
    ) -> None:
        """cProfile of one hook run in-process, per decision path, printed to stderr; with
        ``after_append``, of a run after an earlier one and a ~10 KB append; with
        ``records``, on that record-count journal instead of ``size``."""
        journal = GeneratedJournal(self.workdir, size, records)
        journal.ensure(self.corpus, self.regenerate)
        for path in ("journal", "payload"):
            session = self.session(journal, f"profile-{path}")
            if after_append:
                tool_id = session.new_tool_id()
                self.guard(session, tool_id, session.driver, "payload")
                self.settled_index(session, None)  # a detached child may save its index
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
            remove(session.folder)


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
        "a journal of this size (stderr; 0 with --profile-records)",
    )
    parser.add_argument(
        "--profile-append",
        action="store_true",
        help="profile the run after an earlier hook run and a ~10 KB append, not a cold one",
    )
    parser.add_argument(
        "--profile-records",
        type=int,
        default=0,
        metavar="N",
        help="profile the journal of N short event-less records instead",
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
        bench.profile(
            args.profile,
            args.profile_sort,
            args.profile_top,
            args.profile_append,
            args.profile_records,
        )
    else:
        bench.report(args.sizes, args.json, tuple(args.records))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
