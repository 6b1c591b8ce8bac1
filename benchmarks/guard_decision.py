"""Decision time of the phase publication guard (the PreToolUse hook), beside floors.

Run: ``python benchmarks/guard_decision.py [--sizes 1,10,100] [--repeat N] [--json]``.

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

Journal generation, timing, floors and the table's header come from ``journal_decision.py``
(imported from this folder); the driver uses the standard library only.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import journal_decision as jd  # noqa: E402 - a sibling script, not a package

HOOK_MODULE = "plangate.hooks.pre_tool_use"
IMPORT_SCRIPT = "import plangate.hooks.pre_tool_use, plangate.guard.evaluate"
NON_PHASE_FILE = "/etc/hostname"
SKILL = "autoplan"
DRIVER = os.path.join("skills", SKILL, "sections", "ceo-phase.md")
LOG = os.path.join("analytics", "autoplan-guard.jsonl")
INSTALL_ENV = ("CLAUDE", "PLANGATE", "ANTHROPIC")
"""Inherited variables with these prefixes are dropped: the children get only ours."""

# The plan the /autoplan e2e tests review.
from plangate.testing.autoplan import PLAN  # noqa: E402

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

Block = dict[str, Any]


# --------------------------------------------------------------------------------------------
# The /autoplan invocation at the end of the journal
# --------------------------------------------------------------------------------------------


class GuardWriter(jd.SessionWriter):
    """Continues a generated journal with the records of an /autoplan invocation, in the
    same 2.1.332 shape and parent chain as :class:`journal_decision.SessionWriter`."""

    def slash_command(self, name: str, arguments: str) -> None:
        """A typed ``/name arguments`` human turn, as Claude Code writes a slash command."""
        text = f"/{name} {arguments}"
        self.prompt_index += 1
        self.prompt_id = self.new_uuid()
        self.prompt_text = text
        self.meta("queue-operation", operation="enqueue", timestamp=self.now(), content=text)
        self.meta("queue-operation", operation="dequeue", timestamp=self.now(1, 5))
        sent = int((jd.START + timedelta(milliseconds=self.clock_ms)).timestamp() * 1000)
        content = "\n            ".join(
            [
                f"<command-name>/{name}</command-name>",
                f"<command-message>{name}</command-message>",
                f"<command-args>{arguments}</command-args>",
            ]
        )
        self.chained(
            {
                "promptId": self.prompt_id,
                "type": "user",
                "message": {"role": "user", "content": content},
            },
            {
                "permissionMode": "default",
                "promptSource": "sdk",
                "sentAtMs": sent,
                "rowSource": "local",
                "turnOrigin": "sdk",
                "turnPosition": {"promptIndex": self.prompt_index, "turnIndex": 1},
            },
        )

    def tool_id(self) -> str:
        return f"toolu_01{self.hex_id(18)}"

    def call(self, block: Block) -> str:
        """One API round trip whose message is one tool call, before the call has run (what
        the journal holds when Claude Code runs the PreToolUse hook). Returns its uuid."""
        self.api_request()
        use = self.assistant_record(block, f"msg_01{self.hex_id(16)}", 0, "tool_use")
        self.meta("last-prompt", lastPrompt=self.prompt_text[:200], leafUuid=self.parent)
        self.meta("atis-latch", atis="")
        return use

    def result(self, use: str, block: Block, text: str, side: dict[str, Any]) -> None:
        """The call's successful result, with its ``toolUseResult`` side-car."""
        body: dict[str, Any] = {"toolUseResult": side}
        if block["name"] == "Bash":
            body["sandboxed"] = False
        body["sourceToolAssistantUUID"] = use
        body["permissionDecision"] = {
            "decision": "accept",
            "source": "config",
            "reasonType": "rule",
            "ruleSource": "cliArg",
        }
        content = {"tool_use_id": block["id"], "type": "tool_result", "content": text}
        content["is_error"] = False
        self.chained(
            {
                "promptId": self.prompt_id,
                "type": "user",
                "message": {"role": "user", "content": [content]},
            },
            body,
            parent=use,
            stamp=self.now(20, 3000),
        )


def bash_call(tool_id: str, command: str, stdout: str) -> tuple[Block, str, dict[str, Any]]:
    block = {
        "type": "tool_use",
        "id": tool_id,
        "name": "Bash",
        "input": {"command": command, "description": "Start the /autoplan run"},
    }
    side = {
        "stdout": stdout,
        "stderr": "",
        "interrupted": False,
        "isImage": False,
        "noOutputExpected": False,
    }
    return block, stdout, side


def read_call(tool_id: str, path: str) -> tuple[Block, str, dict[str, Any]]:
    """A whole-file Read of ``path`` and its result, as the generator writes Reads."""
    with open(path, encoding="utf-8") as handle:
        return jd.read_blocks(tool_id, path, handle.read())


class Installation:
    """The real project, plangate's skills installed by ``plangate setup``, and the output
    of the real ``plangate autoplan init`` that the journals' invocation records."""

    def __init__(self, workdir: str, python: str, base_env: dict[str, str]) -> None:
        self.plangate = os.path.join(os.path.dirname(python), "plangate")
        if not os.path.exists(self.plangate):
            raise SystemExit(f"no plangate command next to {python}")
        self.project = jd.Journal(workdir, 1).project  # every generated journal's cwd
        self.plan = os.path.join(self.project, "plan.md")
        self.restore = os.path.join(self.project, ".plangate", "tmp", SKILL, "plan-restore-1.md")
        folder = os.path.join(workdir, "guard-install")
        shutil.rmtree(folder, ignore_errors=True)
        self.config = os.path.join(folder, "config")
        self.env = dict(base_env)
        self.env.update(
            HOME=os.path.join(folder, "home"),
            CLAUDE_CONFIG_DIR=self.config,
            PLANGATE_STATE_ROOT=os.path.join(folder, "state"),
        )
        os.makedirs(self.env["HOME"])
        self._command([self.plangate, "setup"], folder)
        self.hook_argv = self._registered_hook()
        # A fresh invocation each run: the init rewrites the plan and keeps a restore point.
        os.makedirs(self.project, exist_ok=True)
        for name in ("plan.md", ".plangate"):
            path = os.path.join(self.project, name)
            if os.path.isdir(path):
                shutil.rmtree(path)
            elif os.path.exists(path):
                os.unlink(path)
        if not os.path.isdir(os.path.join(self.project, ".git")):
            self._command(["git", "init", "-q", self.project], self.project)
        with open(self.plan, "w", encoding="utf-8") as handle:
            handle.write(PLAN)
        words = [self.plangate, SKILL, "init", self.plan, self.plan, self.restore]
        # The literal call the skill tells the model to make: every word double-quoted.
        self.init_command = " ".join(f'"{w}"' if os.path.isabs(w) else w for w in words)
        self.init_stdout = self._command(words, self.project).rstrip("\n")
        init = json.loads(self.init_stdout)
        if init.get("reused") is not False or init.get("restorePath") != self.restore:
            raise SystemExit(f"unexpected init result: {self.init_stdout}")

    def _command(self, argv: list[str], cwd: str) -> str:
        done = subprocess.run(argv, env=self.env, cwd=cwd, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{shlex.join(argv)} failed:\n{done.stdout}{done.stderr}")
        return done.stdout

    def _registered_hook(self) -> list[str]:
        """The PreToolUse command ``plangate setup`` wrote into settings.json, as argv."""
        with open(os.path.join(self.config, "settings.json"), encoding="utf-8") as handle:
            settings = json.load(handle)
        for group in settings.get("hooks", {}).get("PreToolUse", []):
            for handler in group.get("hooks", []):
                command = handler.get("command", "")
                if f"from {HOOK_MODULE} import main" in command:
                    return shlex.split(command)
        raise SystemExit("plangate setup registered no PreToolUse guard")


class Session:
    """One copy of a generated journal, continued with the /autoplan invocation, in a fresh
    ``<folder>/config`` (with the installed skills), HOME and state root."""

    def __init__(
        self,
        journal: jd.Journal,
        folder: str,
        install: Installation,
        corpus: Callable[[], jd.Corpus],
        env: dict[str, str],
    ) -> None:
        self.journal = journal
        self.folder = folder
        self.corpus = corpus
        self.config, self.path = jd.copy_tree(journal, folder)
        shutil.copytree(os.path.join(install.config, "skills"), os.path.join(self.config, "skills"))
        self.driver = os.path.join(self.config, DRIVER)
        self.state_root = os.path.join(folder, "state")
        self.log = os.path.join(self.state_root, LOG)
        os.makedirs(os.path.join(folder, "home"))
        self.env = dict(env)
        self.env.update(
            HOME=os.path.join(folder, "home"),
            CLAUDE_CONFIG_DIR=self.config,
            CLAUDE_PROJECT_DIR=journal.project,
            PLANGATE_STATE_ROOT=self.state_root,
        )
        self.state: dict[str, Any] = dict(journal.meta["state"])
        self.rounds = 0
        self.unread = 0  # bytes appended since the last hook run
        self.payload_ids = random.Random(folder)

        def begin(writer: GuardWriter) -> None:
            writer.end_turn()
            writer.slash_command(SKILL, os.path.basename(install.plan))
            block, text, side = bash_call(
                writer.tool_id(), install.init_command, install.init_stdout
            )
            writer.result(writer.call(block), block, text, side)

        self.tail_bytes = self.write(begin)

    def write(self, records: Callable[[GuardWriter], None]) -> int:
        """Append what ``records`` writes (flushed to disk); returns the bytes."""
        with open(self.path, "ab") as out:
            writer = GuardWriter(
                out,
                random.Random(f"{self.folder}-{self.rounds}"),
                self.corpus(),
                self.journal.session,
                self.journal.project,
                state=self.state,
            )
            records(writer)
            out.flush()
            os.fsync(out.fileno())
        self.rounds += 1
        self.state = writer.state()
        self.unread += writer.bytes
        return writer.bytes

    def append_bulk(self) -> None:
        """About 10 KB of unrelated work: :func:`journal_decision.append_records`."""
        self.state, written = jd.append_records(
            self.path, self.journal, self.state, f"{self.folder}-{self.rounds}", self.corpus()
        )
        self.rounds += 1
        self.unread += written

    def pending_read(self) -> tuple[str, str, Block]:
        """Journal the guarded Read (not run yet); returns its id, uuid and block."""
        found: list[tuple[str, str, Block]] = []

        def records(writer: GuardWriter) -> None:
            block, _, _ = read_call(writer.tool_id(), self.driver)
            found.append((block["id"], writer.call(block), block))

        self.write(records)
        return found[0]

    def read_ran(self, use: str, block: Block) -> None:
        """The journaled Read ran: its result."""
        _, text, side = read_call(block["id"], self.driver)
        self.write(lambda writer: writer.result(use, block, text, side))

    def unjournaled_read_ran(self, tool_id: str) -> None:
        """A Read decided on the payload path ran: Claude Code writes it and its result."""
        block, text, side = read_call(tool_id, self.driver)
        self.write(lambda writer: writer.result(writer.call(block), block, text, side))

    def new_tool_id(self) -> str:
        return f"toolu_01{self.payload_ids.getrandbits(72):018x}{9_000_000 + self.rounds:08d}"

    def payload(self, tool_id: str, file_path: str) -> bytes:
        """The PreToolUse payload Claude Code 2.1.332 sends for a Read."""
        payload = {
            "session_id": self.journal.session,
            "transcript_path": self.path,
            "cwd": self.journal.project,
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Read",
            "tool_input": {"file_path": file_path},
            "tool_use_id": tool_id,
        }
        return json.dumps(payload).encode("utf-8")

    def log_lines(self) -> list[str]:
        try:
            with open(self.log, encoding="utf-8") as handle:
                return handle.read().splitlines()
        except FileNotFoundError:
            return []


# --------------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------------


class _FedSubprocess:
    """``subprocess`` as :func:`journal_decision.run` sees it, with ``DEVNULL`` replaced by an
    open descriptor: ``run`` gives its child ``stdin=subprocess.DEVNULL``, and a hook reads its
    payload from stdin. Everything else is the real module."""

    def __init__(self, fd: int) -> None:
        self.DEVNULL = fd

    def __getattr__(self, name: str) -> Any:
        return getattr(subprocess, name)


@contextlib.contextmanager
def stdin_from(path: str) -> Iterator[None]:
    """Within the block, children started by :func:`journal_decision.run` read ``path``."""
    fd = os.open(path, os.O_RDONLY)
    module = vars(jd)
    real = module["subprocess"]
    module["subprocess"] = _FedSubprocess(fd)
    try:
        yield
    finally:
        module["subprocess"] = real
        os.close(fd)


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
        self.imports = jd.Case("-", "info: start-up + import of the hook and decision modules")
        self.base_env = {k: v for k, v in self.base_env.items() if not k.startswith(INSTALL_ENV)}
        self.runs = os.path.join(workdir, "guard-runs")
        self.outputs: dict[str, str] = {}
        self.tails: dict[str, int] = {}

    def start_up(self, peak: bool = False) -> None:
        self.floor(self.bare, [self.python, "-c", "pass"], peak=peak)
        self.floor(self.imports, [self.python, "-c", IMPORT_SCRIPT], peak=peak)

    def session(self, journal: jd.Journal, name: str) -> Session:
        folder = os.path.join(self.runs, name)
        return Session(journal, folder, self.install, self.corpus, self.env(folder))

    def guard(
        self,
        session: Session,
        tool_id: str,
        file_path: str,
        path: str | None,
        peak: bool = False,
    ) -> jd.Sample:
        """One hook run; ``path`` is the decision path the log must show (None: the fast
        path, which must answer ``{}`` and log nothing). Anything else stops the benchmark."""
        payload = os.path.join(session.folder, "payload.json")
        with open(payload, "wb") as handle:
            handle.write(session.payload(tool_id, file_path))
        logged = len(session.log_lines())
        with stdin_from(payload):
            sample = jd.run(
                self.install.hook_argv, env=session.env, cwd=session.journal.project, peak=peak
            )
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
        journal = jd.Journal(self.workdir, size)
        started = time.perf_counter()
        if journal.ensure(self.corpus, self.regenerate):
            jd.log(
                f"{journal.label}: generated {journal.meta['bytes']:,} bytes, "
                f"{journal.meta['lines']:,} lines in {time.perf_counter() - started:.1f} s"
            )
        label = journal.label
        on_journal = jd.Case(label, "guard, journal path, cold")
        on_payload = jd.Case(label, "guard, payload path, cold")
        fast = jd.Case(label, f"guard, non-phase Read `{NON_PHASE_FILE}` (fast path)")
        reader = jd.Case(label, "reference: reader alone (hook-style), same journal")
        appended_journal = jd.Case(label, "guard, journal path, after append")
        appended_payload = jd.Case(label, "guard, payload path, after append")
        cat = jd.Case(label, "floor: `cat` > /dev/null")
        naive = jd.Case(label, "floor: naive `json.loads` per line")
        scratch = jd.Case(label, "warm-up")

        def cold(
            name: str, peak: bool = False
        ) -> tuple[jd.Sample, jd.Sample, jd.Sample, jd.Sample | None]:
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

        def add(samples: tuple[jd.Sample, jd.Sample, jd.Sample, jd.Sample | None]) -> None:
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
            jd.log(f"{label}: round {round_ + 1}/{rounds}")
            self.start_up()
            self.floor(cat, cat_argv, capture=False)
            self.floor(naive, naive_argv)
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
        self.cases += [*cases, cat, naive]
        self.journals.append((journal, {}))

    # -- report -----------------------------------------------------------------------------

    def table(self) -> str:
        argv = shlex.join(
            [os.path.relpath(self.install.hook_argv[0], jd.REPO), *self.install.hook_argv[1:]]
        )
        lines = [
            f"Guard decision: `{argv}` (the command `plangate setup` registers) with a "
            "PreToolUse payload for a Read on stdin, process start to decision; guard at "
            f"{jd._source_state()}; {os.cpu_count()} CPUs; Python {sys.version.split()[0]}.",
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
            f"1-minute load average {self.load_start} at start, {jd._load()} at end.",
            "",
            "| size | case | median ms | min ms | runs | peak MiB |",
            "|---|---|---:|---:|---:|---:|",
        ]
        lines += jd.case_rows([self.bare, self.imports, *self.cases])
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
            "Targets (the reader's, issue 2 section 6, applied to the guard on both decision "
            "paths; for a 2-core machine), judged on medians; the same comparison on the "
            "minimums follows in brackets:",
            "",
        ]
        lines += [f"- {line}" for line in self.targets()]
        busy = self.busy()
        if busy:
            lines += ["", f"Warning: {busy}"]
        return "\n".join(lines)

    def targets(self) -> list[str]:
        out: list[str] = []
        big = jd._label(100)
        cat = self.find(big, "floor: `cat`")
        for path in ("journal", "payload"):
            cold = self.find(big, f"guard, {path} path, cold")
            if cold is None or cat is None:
                out.append(f"{path} path, 100 MB cold: not measured (add 100 to --sizes)")
            else:
                out.append(jd.cold_target(f"{path} path, ", cold, self.bare, cat))
        for path in ("journal", "payload"):
            appended = self.find(big, f"guard, {path} path, after")
            if appended is None:
                out.append(f"{path} path, 100 MB after an append: not measured")
            else:
                out.append(jd.append_target(f"{path} path, ", appended, self.bare))
        for path in ("journal", "payload"):
            small_journal = self.find(jd._label(0.1), f"guard, {path} path, cold")
            if small_journal is not None:
                out.append(jd.startup_target(f"{path} path, ", small_journal, self.bare))
        return out

    def as_dict(self) -> dict[str, Any]:
        tails = self.tails
        return {
            "hook": self.install.hook_argv,
            "cpus": os.cpu_count(),
            "repeat": self.repeat,
            "load_average": [self.load_start, jd._load()],
            "guard": jd._source_state(),
            "cases": [c.as_dict() for c in [self.bare, self.imports, *self.cases]],
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
        journal = jd.Journal(self.workdir, size)
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
            jd.log(f"== {journal.label}, {path} path: cProfile of one in-process hook run ==")
            with open(payload, "rb") as stdin:
                done = subprocess.run(
                    [self.python, "-c", PROFILE_SCRIPT, sort, str(top)],
                    stdin=stdin,
                    env=session.env,
                    cwd=journal.project,
                    capture_output=True,
                    text=True,
                )
            jd.log(f"output: {done.stdout.strip()}; log: {session.log_lines()}")
            jd.log(done.stderr)
            shutil.rmtree(session.folder)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        type=jd.parse_sizes,
        default=[1.0, 10.0, 100.0],
        help="journal sizes in MB (10^6 bytes), comma separated; a 100 KB "
        "journal is always added for the start-up target (default 1,10,100)",
    )
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per case (default 5)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    parser.add_argument(
        "--workdir",
        help="where journals are generated and cached, shared with journal_decision.py "
        "(default: <tmp>/plangate-bench)",
    )
    parser.add_argument(
        "--python",
        default=jd.default_python(),
        help="interpreter whose plangate is installed and timed (default: the project's .venv)",
    )
    parser.add_argument("--regenerate", action="store_true", help="ignore cached journals")
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
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    workdir = os.path.realpath(
        args.workdir or os.path.join(tempfile.gettempdir(), "plangate-bench")
    )
    os.makedirs(workdir, exist_ok=True)
    python = os.path.abspath(args.python)  # not resolved: a venv python is a symlink
    base_env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PYTHON") and not k.startswith(INSTALL_ENV)
    }
    install = Installation(workdir, python, base_env)
    bench = GuardBench(install, workdir, args.repeat, args.regenerate, not args.no_reader)
    if args.profile is not None:
        bench.profile(args.profile, args.profile_sort, args.profile_top, args.profile_append)
        return 0
    sizes = sorted({0.1, *args.sizes})
    started = time.perf_counter()
    for _ in range(2):  # warm-up
        bench.start_up()
    bench.bare.samples.clear()
    bench.imports.samples.clear()
    if bench.peaks:
        bench.start_up(peak=True)
    for size in sizes:
        bench.measure(size)
    jd.log(f"done in {time.perf_counter() - started:.0f} s")
    if args.json:
        print(json.dumps(bench.as_dict(), indent=1))
    else:
        print(bench.table())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
