"""Each speed device of the hooks on and off, interleaved run by run with bare start-up.

Run from the repository root: ``python -m benchmarks.speed_devices [--repeat 9]
[--devices index,fast,defer,preindex,fold]``.

Issue 35's item 4: a device stays only where it spares a hook call more than 1 ms. Each
round runs bare start-up (``python -S -c pass``) and, per device, the hook call it serves
with the device as shipped and with it turned off through ``PLANGATE_TUNING``
(:mod:`plangate.tuning`): the guard's phase entry on a 10 MB journal after a ~10 KB append
(``index``), cold on a 20 MB journal (``fast``) and on a 10 MB one (``defer``), the first
phase entry of a 10 MB session after a non-phase Read (``preindex``, with that Read's own
time), and the contracts' decisions after an append (``fold``, :mod:`.contract_decision`).
Every decision is checked as its benchmark checks it. The table gives median and minimum
wall time and the median CPU time (user + system, ``os.wait4``), steadier on a shared
machine. ``docs/hook-speed.md`` has the figures.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks import contract_decision as cd
from benchmarks.generated import GeneratedJournal
from benchmarks.guard_decision import GuardBench, remove
from benchmarks.guard_session import Installation, Session
from benchmarks.journal_decision import places
from benchmarks.timing import Case, Sample, default_python, load_average, log
from plangate import tuning

DEVICES = ("index", "fast", "defer", "preindex", "fold")
OFF = 10**15
"""A threshold no journal reaches: the device never applies."""


class Devices:
    def __init__(self, bench: GuardBench, devices: list[str]) -> None:
        self.bench = bench
        self.devices = devices
        self.cases: dict[str, Case] = {}
        self.j10 = GeneratedJournal(bench.workdir, 10.0)
        self.j10.ensure(bench.corpus, bench.regenerate)
        self.j20 = GeneratedJournal(bench.workdir, 20.0)
        if "fast" in devices:
            self.j20.ensure(bench.corpus, bench.regenerate)
        self.appended: dict[str, Session] = {}
        self.contract_rows: list[tuple[str, Callable[[], Sample]]] = []
        self.roots: list[Path] = []
        if "fold" in devices:
            self._contract_benches()

    def case(self, name: str) -> Case:
        return self.cases.setdefault(name, Case("-", name))

    def session(self, journal: GeneratedJournal, name: str, settings: str) -> Session:
        session = self.bench.session(journal, name)  # the pre-index off
        if settings:
            session.env[tuning.ENV] = tuning.joined(session.env[tuning.ENV], **_parse(settings))
        return session

    def cold(self, journal: GeneratedJournal, name: str, settings: str) -> Sample:
        session = self.session(journal, name, settings)
        tool_id, _, _ = session.pending_read()
        sample = self.bench.guard(session, tool_id, session.driver, "journal")
        self.bench.settled_index(session, None)  # a deferred save, untimed
        remove(session.folder)
        return sample

    def after_append(self, name: str, settings: str) -> Sample:
        session = self.appended.get(name)
        if session is None:
            session = self.session(self.j10, f"devices-{name}", settings)
            tool_id, use, block = session.pending_read()
            self.bench.guard(session, tool_id, session.driver, "journal")
            session.read_ran(use, block)
            self.bench.settled_index(session, None)
            self.appended[name] = session
        session.append_bulk()
        tool_id, use, block = session.pending_read()
        sample = self.bench.guard(session, tool_id, session.driver, "journal")
        session.read_ran(use, block)
        time.sleep(0.3)
        return sample

    def preindex(self, on: bool, number: int) -> tuple[Sample, Sample]:
        session = self.bench.session(self.j10, f"devices-pre-{int(on)}-{number}", ahead=on)
        started = time.perf_counter()
        fast = self.bench.non_phase(session)
        if on:
            self.bench.preindexed(session, started)
        tool_id, _, _ = session.pending_read()
        entry = self.bench.guard(session, tool_id, session.driver, "journal")
        self.bench.settled_index(session, None)
        remove(session.folder)
        return fast, entry

    def _contract_benches(self) -> None:
        for label, settings in (("on", ""), ("off (fold=0)", "fold=0")):
            root = Path(tempfile.mkdtemp(prefix="plangate-devices-"))
            self.roots.append(root)
            bench = _TunedBench(root, 10.0, settings)
            source = str(bench.project / "src" / "app.py")

            def write(bench: _TunedBench = bench, source: str = source) -> Sample:
                payload = bench.payload(
                    "Write", {"file_path": source, "content": "x"}, bench.project
                )
                return bench.time(
                    "plangate.hooks.contract_pre_tool_use", payload, "contract_edit_scope"
                )

            def skill(bench: _TunedBench = bench) -> Sample:
                call = {"skill": "kiro-spec-design", "args": cd.FEATURE}
                return bench.journaled_call("Skill", call, "contract_approval")

            write()
            skill()
            self.contract_rows.append(
                (f"fold: contract Write after append, {label}", cd.appended_run(bench, write))
            )
            self.contract_rows.append(
                (f"fold: contract Skill entry after append, {label}", cd.appended_run(bench, skill))
            )

    def round(self, number: int) -> None:
        bench = self.bench
        bare = [bench.python, *bench.hook_flags, "-c", "pass"]
        bench.floor(self.case("bare start-up `python -S -c pass`"), bare)
        if "index" in self.devices:
            on = self.after_append("index-on", "")
            off = self.after_append("index-off", f"index_min_bytes={OFF}")
            self.case("index: 10 MB after ~10 KB append, on").add(on)
            self.case("index: 10 MB after ~10 KB append, off").add(off)
        if "fast" in self.devices:
            self.case("fast: 20 MB cold, msgspec").add(self.cold(self.j20, f"f1-{number}", ""))
            off = self.cold(self.j20, f"f0-{number}", f"fast_min_bytes={OFF}")
            self.case("fast: 20 MB cold, standard library").add(off)
        if "defer" in self.devices:
            self.case("defer: 10 MB cold, save deferred").add(
                self.cold(self.j10, f"d1-{number}", "")
            )
            off = self.cold(self.j10, f"d0-{number}", f"defer_min_bytes={OFF}")
            self.case("defer: 10 MB cold, save in line").add(off)
        if "preindex" in self.devices:
            fast_on, entry_on = self.preindex(True, number)
            fast_off, entry_off = self.preindex(False, number)
            self.case("preindex: non-phase Read 10 MB that starts it").add(fast_on)
            self.case("preindex: non-phase Read 10 MB, off").add(fast_off)
            self.case("preindex: first phase entry 10 MB, after it").add(entry_on)
            self.case("preindex: first phase entry 10 MB, off").add(entry_off)
        rows = self.contract_rows
        shift = number % len(rows) if rows else 0
        for name, timed in rows[shift:] + rows[:shift]:
            self.case(name).add(timed())

    def close(self) -> None:
        for session in self.appended.values():
            remove(session.folder)
        for root in self.roots:
            shutil.rmtree(root, ignore_errors=True)

    def table(self) -> str:
        lines = [
            f"| {'case':52} | {'median ms':>9} | {'min ms':>7} | {'CPU ms':>7} | runs |",
            f"|{'-' * 54}|{'-' * 11}|{'-' * 9}|{'-' * 9}|------|",
        ]
        for case in self.cases.values():
            cpu = [s.cpu_seconds for s in case.samples if s.cpu_seconds is not None]
            cpu_ms = statistics.median(cpu) * 1000 if cpu else float("nan")
            lines.append(
                f"| {case.name:52} | {case.median_ms:>9.1f} | {case.min_ms:>7.1f} "
                f"| {cpu_ms:>7.1f} | {len(case.samples):>4} |"
            )
        return "\n".join(lines)


class _TunedBench(cd.Bench):
    """The contract benchmark's project and session, its hooks run with ``settings``."""

    def __init__(self, root: Path, megabytes: float, settings: str) -> None:
        super().__init__(root, megabytes)
        self.settings = settings

    def env(self) -> dict[str, str]:
        env = super().env()
        if self.settings:
            env[tuning.ENV] = tuning.joined("", **_parse(self.settings))
        return env


def _parse(settings: str) -> dict[str, int]:
    return tuning.settings(settings)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=9, help="rounds (default 9)")
    parser.add_argument("--devices", default=",".join(DEVICES), help="comma separated")
    parser.add_argument("--workdir", help="work folder (default: <tmp>/plangate-bench)")
    parser.add_argument("--python", default=default_python(), help="interpreter to time")
    parser.add_argument("--regenerate", action="store_true", help="ignore cached journals")
    args = parser.parse_args(argv)
    devices = [name for name in args.devices.split(",") if name]
    unknown = sorted(set(devices) - set(DEVICES))
    if unknown:
        parser.error(f"unknown devices: {', '.join(unknown)} (known: {', '.join(DEVICES)})")
    workdir, python = places(parser, args)
    base_env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTHON", "CLAUDE", "PLANGATE", "ANTHROPIC"))
    }
    install = Installation(workdir, python, base_env)
    bench = GuardBench(install, workdir, args.repeat, args.regenerate, reader=False)
    scene = Devices(bench, devices)
    try:
        for number in range(args.repeat):
            scene.round(number)
            log(f"round {number + 1}/{args.repeat}")
    finally:
        scene.close()
    print(f"load average {load_average()}, {args.repeat} rounds\n")
    print(scene.table())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
