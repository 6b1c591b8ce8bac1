"""Decision time of the workflow contract hooks, beside today's guard fast path.

Run from the repository root: ``python -m benchmarks.contract_decision [--mb 10]
[--repeat 5] [--json] [--with-guard [--workdir DIR]]``.

Every row times a hook exactly as Claude Code runs it: the command ``plangate setup``
registers (:func:`plangate.hook_registry.hook_command`), the payload on stdin, process start
to answer. The project has cc-sdd's skill folders installed (so the shipped cc-sdd contract
applies) and a synthetic 2.1.332-shaped session journal of ``--mb`` megabytes of bulk work
(Bash calls with long outputs) followed by a cc-sdd workflow in its requirements phase.

- reference: the /autoplan guard's fast path (a non-phase Read, which never reads the journal);
- a call no contract covers: a Bash command that writes no file (in the cc-sdd project), and
  a Write in a project where no contract applies (no kiro skills);
- a contract decision on the long journal: the Write of a source file during requirements
  (refused, ``contract_edit_scope``) and the model's Skill call for the design phase
  (refused, ``contract_approval``; the call journaled before its hook runs and its refused
  result after, as Claude Code writes them), cold and after a ~10 KB append (each read goes
  on from the contracts' journal index and reloads only the records from the session's
  first workflow call, :mod:`plangate.contracts.tracking`). The append is a Bash call and its
  result, as ``guard_decision.py`` appends: the model's turn goes on, and the current call
  follows a result (the guard's payload path). The after-append rows are interleaved run by
  run;
- the floor: bare ``python -S -c pass`` with the hooks' flags.

Compare the contract decision rows with the guard's "after append" rows of
``guard_decision.py`` at the same size (``--sizes 10``): ``--with-guard`` times those rows
(its session on its generated journal, its checks of the verified allow) in the same loop as
the contract rows after an append, so that a busy spell of the shared machine falls on both
alike. The hooks run without the ``PYTHON*`` variables of this environment
(``PYTHONDONTWRITEBYTECODE`` would make every run recompile what it imports; a hook runs
with its ``.pyc`` files).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.timing import Case, Sample, load_average, run
from plangate.hook_registry import hook_command
from testkit.journals import Journal, use_id

SKILLS = (
    "kiro-spec-init",
    "kiro-spec-requirements",
    "kiro-spec-design",
    "kiro-spec-tasks",
    "kiro-impl",
)
FEATURE = "greet"
SETTLE_S = 2.0
"""How long after each hook run its detached index save is given (as a session's next call
would find it: tool calls are seconds apart)."""
REQUIREMENTS = "# Requirements\n\n## Requirements\n1. When run, the greeter shall print hello.\n"


class Bench:
    def __init__(self, root: Path, megabytes: float) -> None:
        self.root = root
        self.project = root / "project"
        self.bare = root / "bare"
        self.config = root / "claude"
        self.state = root / "state"
        self.bare.mkdir(parents=True)
        for skill in SKILLS:
            folder = self.project / ".claude" / "skills" / skill
            folder.mkdir(parents=True)
            (folder / "SKILL.md").write_text(f"---\nname: {skill}\n---\n")
        self.journal = Journal(cwd=str(self.project), start=datetime.now(UTC))
        self.journal.prompt("Work through the backlog.")
        chunk = "x" * 2000 + "\n"
        while len(self.journal.to_bytes()) < megabytes * 1024 * 1024 * 0.98:
            self.bulk(chunk * 5)
        spec = self.project / ".kiro" / "specs" / FEATURE
        spec.mkdir(parents=True)
        self.journal.prompt("/kiro-spec-init a greeting command")
        self.call("Skill", {"skill": "kiro-spec-init", "args": "a greeting command"})
        self.write(spec / "spec.json", json.dumps({"feature_name": FEATURE, "approvals": {}}))
        self.call("Skill", {"skill": "kiro-spec-requirements", "args": FEATURE})
        self.write(spec / "requirements.md", REQUIREMENTS)
        self.path = self.journal.write_layout(self.config, project_dir=str(self.project))
        self.size = self.path.stat().st_size

    def bulk(self, output: str, *, closing: bool = True) -> None:
        """A Bash call and its result; with ``closing``, the model's text that ends its turn."""
        use = self.journal.tool_use("Bash", {"command": "make check", "description": "check"})
        self.journal.tool_result(use_id(use), output)
        if closing:
            self.journal.text("Checked.")

    def call(self, name: str, tool_input: dict[str, Any]) -> None:
        use = self.journal.tool_use(name, tool_input)
        self.journal.tool_result(use_id(use), "ok")

    def write(self, path: Path, text: str) -> None:
        path.write_text(text)
        self.call("Write", {"file_path": str(path), "content": text})

    def append(self) -> None:
        """~10 KB of unrelated work the model did since the last hook run, as
        ``guard_decision.py`` appends it: a Bash call and its result. The turn goes on (no
        closing text): a chain ending in the model's ``end_turn`` would be followed by a
        person's prompt before the model's next call, and until Claude Code has journaled
        that prompt the contracts' read waits for it (up to 2 s, :func:`plangate.contracts.
        evaluate.read_events`); the benchmark never writes one."""
        since = len(self.journal.records)
        self.bulk("y" * 10_000, closing=False)
        self.journal.append_new(self.path, since)

    def env(self) -> dict[str, str]:
        # No PYTHON* variables: PYTHONDONTWRITEBYTECODE would make every run recompile the
        # modules it imports; a hook runs with its .pyc files.
        keep = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("CLAUDE", "PLANGATE", "PYTHON"))
        }
        keep.update(CLAUDE_CONFIG_DIR=str(self.config), PLANGATE_STATE_ROOT=str(self.state))
        return keep

    def payload(
        self, tool: str, tool_input: dict[str, Any], cwd: Path, tool_use_id: str | None = None
    ) -> bytes:
        return json.dumps(
            {
                "session_id": self.journal.session_id,
                "transcript_path": str(self.path),
                "cwd": str(cwd),
                "hook_event_name": "PreToolUse",
                "tool_name": tool,
                "tool_input": tool_input,
                "tool_use_id": tool_use_id or self.journal.new_tool_use_id(),
            }
        ).encode()

    def journaled_call(self, tool: str, tool_input: dict[str, Any], expect: str) -> Sample:
        """The model's call journaled before its hook runs, then its refused result, as
        Claude Code writes them: a refusal for a missing approval of a call not journaled
        yet waits for it (up to 2 s, :func:`plangate.contracts.evaluate.settles`)."""
        since = len(self.journal.records)
        use = self.journal.tool_use(tool, tool_input)
        self.journal.append_new(self.path, since)
        payload = self.payload(tool, tool_input, self.project, use_id(use))
        sample = self.time("plangate.hooks.contract_pre_tool_use", payload, expect)
        since = len(self.journal.records)
        self.journal.tool_result(use_id(use), "Error: PreToolUse:Skill hook error", is_error=True)
        self.journal.append_new(self.path, since)
        return sample

    def time(self, module: str, payload: bytes, expect: str) -> Sample:
        argv = ["/bin/sh", "-c", hook_command(module)]
        with tempfile.TemporaryFile() as stdin:
            stdin.write(payload)
            stdin.seek(0)
            sample = run(argv, env=self.env(), stdin=stdin.fileno())
        if expect not in sample.output.decode("utf-8", "replace"):
            raise SystemExit(f"{module}: expected {expect!r}, got {sample.output[:300]!r}")
        time.sleep(SETTLE_S)  # untimed: a hook's index save is left to a detached child
        return sample


def measure(megabytes: float, repeat: int, guard_workdir: str | None = None) -> list[Case]:
    root = Path(tempfile.mkdtemp(prefix="plangate-contract-bench-"))
    try:
        bench = Bench(root, megabytes)
        size = f"{bench.size / 1024 / 1024:.1f} MB"
        src = str(bench.project / "src" / "app.py")
        rows: list[tuple[Case, Callable[[], Sample]]] = [
            (
                Case(size, "floor: bare `python -S -c pass`"),
                lambda: run([sys.executable, "-S", "-c", "pass"], env=bench.env()),
            ),
            (
                Case(size, "reference: guard fast path, non-phase Read `/etc/hostname`"),
                lambda: bench.time(
                    "plangate.hooks.pre_tool_use",
                    bench.payload("Read", {"file_path": "/etc/hostname"}, bench.project),
                    "{}",
                ),
            ),
            (
                Case(size, "no contract covers it: Bash `ls -la src | wc -l` (cc-sdd project)"),
                lambda: bench.time(
                    "plangate.hooks.contract_pre_tool_use",
                    bench.payload("Bash", {"command": "ls -la src | wc -l"}, bench.project),
                    "{}",
                ),
            ),
            (
                Case(size, "no contract covers it: Write in a project with no contract"),
                lambda: bench.time(
                    "plangate.hooks.contract_pre_tool_use",
                    bench.payload(
                        "Write", {"file_path": str(bench.bare / "a.py"), "content": "x"}, bench.bare
                    ),
                    "{}",
                ),
            ),
            (
                Case(size, "contract decision: source Write during requirements (deny)"),
                lambda: bench.time(
                    "plangate.hooks.contract_pre_tool_use",
                    bench.payload("Write", {"file_path": src, "content": "x"}, bench.project),
                    "contract_edit_scope",
                ),
            ),
            (
                Case(size, "contract decision: Skill kiro-spec-design entry (deny)"),
                lambda: bench.journaled_call(
                    "Skill", {"skill": "kiro-spec-design", "args": FEATURE}, "contract_approval"
                ),
            ),
        ]
        cases = []
        for case, timed in rows:
            timed()  # warm-up (and the contracts cache)
            for _ in range(repeat):
                case.add(timed())
            cases.append(case)
        rounds: list[tuple[Case, Callable[[], Sample]]] = []
        for name, timed in (("source Write", rows[4][1]), ("Skill entry", rows[5][1])):
            appended = Case(size, f"contract decision after a ~10 KB append: {name} (deny)")
            rounds.append((appended, appended_run(bench, timed)))
        guard = GuardRows(guard_workdir, megabytes) if guard_workdir is not None else None
        if guard is not None:
            rounds += guard.rows()
        for round_ in range(repeat):
            # Interleaved run by run, the order turned each round: a busy spell of the shared
            # machine falls on every row alike.
            shift = round_ % len(rounds)
            for case, timed in rounds[shift:] + rounds[:shift]:
                case.add(timed())
        if guard is not None:
            guard.close()
        return cases + [case for case, _ in rounds]
    finally:
        shutil.rmtree(root, ignore_errors=True)


def appended_run(bench: Bench, timed: Callable[[], Sample]) -> Callable[[], Sample]:
    def appended() -> Sample:
        bench.append()
        return timed()

    return appended


class GuardRows:
    """The guard's "after append" rows of ``guard_decision.py`` (its generated journal of
    the same size, its session and its checks), timed in the same loop as the contract
    rows, each run followed by the same pause."""

    def __init__(self, workdir: str, megabytes: float) -> None:
        from benchmarks import guard_decision as gd
        from benchmarks.generated import GeneratedJournal
        from benchmarks.guard_session import Installation

        self.gd = gd
        base_env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("PYTHON") and not k.startswith(gd.INSTALL_ENV)
        }
        install = Installation(workdir, sys.executable, base_env)
        self.bench = gd.GuardBench(install, workdir, 1, False, False)
        journal = GeneratedJournal(workdir, megabytes, 0)  # as `guard_decision.py --sizes`
        journal.ensure(self.bench.corpus, False)
        self.session = self.bench.session(journal, "contract-bench")
        tool_id = self.session.new_tool_id()
        self.bench.guard(self.session, tool_id, self.session.driver, "payload")
        self.bench.settled_index(self.session, None)  # a detached child may save its index
        self.session.unjournaled_read_ran(tool_id)
        self.label = journal.label

    def rows(self) -> list[tuple[Case, Callable[[], Sample]]]:
        return [
            (
                Case(self.label, "guard (guard_decision.py), journal path, after append"),
                self.on_journal,
            ),
            (
                Case(self.label, "guard (guard_decision.py), payload path, after append"),
                self.on_payload,
            ),
        ]

    def on_journal(self) -> Sample:
        session = self.session
        session.append_bulk()
        tool_id, use, block = session.pending_read()
        sample = self.bench.guard(session, tool_id, session.driver, "journal")
        session.read_ran(use, block)
        time.sleep(SETTLE_S)
        return sample

    def on_payload(self) -> Sample:
        session = self.session
        session.append_bulk()
        tool_id = session.new_tool_id()
        sample = self.bench.guard(session, tool_id, session.driver, "payload")
        session.unjournaled_read_ran(tool_id)
        time.sleep(SETTLE_S)
        return sample

    def close(self) -> None:
        self.gd.remove(self.session.folder)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--mb", type=float, default=10.0)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--with-guard",
        action="store_true",
        help="time the guard's after-append rows (guard_decision.py's) interleaved with the "
        "contract decisions after an append",
    )
    parser.add_argument(
        "--workdir",
        help="where --with-guard generates and caches its journal and installs plangate "
        "(default: <tmp>/plangate-bench, shared with guard_decision.py)",
    )
    args = parser.parse_args()
    workdir = None
    if args.with_guard:
        workdir = os.path.realpath(
            args.workdir or os.path.join(tempfile.gettempdir(), "plangate-bench")
        )
        os.makedirs(workdir, exist_ok=True)
    cases = measure(args.mb, args.repeat, workdir)
    if args.json:
        print(
            json.dumps(
                {"load_average": load_average(), "cases": [c.as_dict() for c in cases]}, indent=2
            )
        )
        return 0
    print(f"load average {load_average()}, {os.cpu_count()} CPUs, {args.repeat} runs each")
    print(f"| {'case':<72} | {'size':>8} | {'median ms':>9} | {'min ms':>7} |")
    print(f"|{'-' * 74}|{'-' * 10}|{'-' * 11}|{'-' * 9}|")
    for case in cases:
        print(
            f"| {case.name:<72} | {case.size:>8} | {case.median_ms:>9.1f} | {case.min_ms:>7.1f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
