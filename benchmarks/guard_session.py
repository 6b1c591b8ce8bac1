"""The guard benchmark's scene: plangate installed, and journal copies continued with an
/autoplan invocation and the guarded Read, in the generator's record shape and parent chain.
"""

from __future__ import annotations

import json
import os
import random
import shlex
import shutil
import subprocess
from collections.abc import Callable
from typing import Any

from benchmarks.content import Block, bash_call, read_blocks
from benchmarks.corpus import Corpus
from benchmarks.generated import GeneratedJournal, append_records, copy_tree
from benchmarks.synthetic import SyntheticJournal
from benchmarks.timing import Sample, run
from plangate.harness.autoplan import PLAN  # the plan the /autoplan e2e tests review

HOOK_MODULE = "plangate.hooks.pre_tool_use"
SKILL = "autoplan"
DRIVER = os.path.join("skills", SKILL, "sections", "ceo-phase.md")
LOG = os.path.join("analytics", "autoplan-guard.jsonl")


def read_call(tool_id: str, path: str) -> tuple[Block, str, dict[str, Any]]:
    """A whole-file Read of ``path`` and its result, as the generator writes Reads."""
    with open(path, encoding="utf-8") as handle:
        return read_blocks(tool_id, path, handle.read())


class Installation:
    """The real project, plangate's skills installed by ``plangate setup``, and the output
    of the real ``plangate autoplan init`` that the journals' invocation records."""

    def __init__(self, workdir: str, python: str, base_env: dict[str, str]) -> None:
        self.plangate = os.path.join(os.path.dirname(python), "plangate")
        if not os.path.exists(self.plangate):
            raise SystemExit(f"no plangate command next to {python}")
        self.project = GeneratedJournal(workdir, 1).project  # every generated journal's cwd
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
        journal: GeneratedJournal,
        folder: str,
        install: Installation,
        corpus: Callable[[], Corpus],
        env: dict[str, str],
    ) -> None:
        self.journal = journal
        self.folder = folder
        self.corpus = corpus
        self.config, self.path = copy_tree(journal, folder)
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

        def begin(writer: SyntheticJournal) -> None:
            writer.end_turn()
            writer.slash_turn(SKILL, os.path.basename(install.plan))
            call = bash_call(
                writer.new_tool_use_id(),
                install.init_command,
                install.init_stdout,
                "Start the /autoplan run",
            )
            writer.result(writer.call(call[0]), call)

        self.tail_bytes = self.write(begin)

    def write(self, records: Callable[[SyntheticJournal], None]) -> int:
        """Append what ``records`` writes (flushed to disk); returns the bytes."""
        with open(self.path, "ab") as out:
            writer = SyntheticJournal(
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
        """About 10 KB of unrelated work: :func:`benchmarks.generated.append_records`."""
        self.state, written = append_records(
            self.path, self.journal, self.state, f"{self.folder}-{self.rounds}", self.corpus()
        )
        self.rounds += 1
        self.unread += written

    def pending_read(self) -> tuple[str, str, Block]:
        """Journal the guarded Read (not run yet); returns its id, uuid and block."""
        found: list[tuple[str, str, Block]] = []

        def records(writer: SyntheticJournal) -> None:
            block, _, _ = read_call(writer.new_tool_use_id(), self.driver)
            found.append((block["id"], writer.call(block), block))

        self.write(records)
        return found[0]

    def read_ran(self, use: str, block: Block) -> None:
        """The journaled Read ran: its result."""
        call = read_call(block["id"], self.driver)
        self.write(lambda writer: writer.result(use, call))

    def unjournaled_read_ran(self, tool_id: str) -> None:
        """A Read decided on the payload path ran: Claude Code writes it and its result."""
        call = read_call(tool_id, self.driver)
        self.write(lambda writer: writer.result(writer.call(call[0]), call))

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

    def run_hook(
        self, argv: list[str], tool_id: str, file_path: str, peak: bool = False
    ) -> tuple[Sample, list[str]]:
        """One run of the hook ``argv`` on the Read payload of ``file_path``, fed on stdin as
        Claude Code feeds it; the sample, and the decision-log lines the run added."""
        payload = os.path.join(self.folder, "payload.json")
        with open(payload, "wb") as handle:
            handle.write(self.payload(tool_id, file_path))
        logged = len(self.log_lines())
        fd = os.open(payload, os.O_RDONLY)
        try:
            sample = run(argv, env=self.env, cwd=self.journal.project, peak=peak, stdin=fd)
        finally:
            os.close(fd)
        return sample, self.log_lines()[logged:]

    def log_lines(self) -> list[str]:
        try:
            with open(self.log, encoding="utf-8") as handle:
                return handle.read().splitlines()
        except FileNotFoundError:
            return []
