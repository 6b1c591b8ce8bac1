"""Synthetic main-session journals as Claude Code 2.1.332 writes them, for the benchmarks.

:class:`SyntheticJournal` builds on :class:`testkit.journals.Journal` (the one journal writer
of the tests, which lays out every record), and streams the records to a file as it writes
them, counting bytes and lines and keeping none. The content is random but deterministic for
one seed and Python version: a null-parent user prompt, chained ``attachment`` records
(environment, skill listing, ``prompt_snapshot`` …), assistant records with one content block
each, user ``tool_result`` records with ``toolUseResult`` side-cars (Read, Bash, Edit, Grep),
parallel tool calls, stop-hook summaries, and the metadata lines without uuid between them.

:mod:`benchmarks.generated` keeps generated journals and continues them.
"""

from __future__ import annotations

import json
import random
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any, BinaryIO

from benchmarks.content import Block, Call, tool_call, tool_shapes
from benchmarks.corpus import MB, Corpus, sha
from testkit.envelope import MODEL, format_time
from testkit.journals import ACCEPTED, Journal, bash_side_car

START = datetime(2026, 11, 29, 19, 37, 45, 690000, tzinfo=UTC)


class SyntheticJournal(Journal):
    """Writes one main-session journal to ``out``; ``state`` continues an earlier writer's."""

    def __init__(
        self,
        out: BinaryIO,
        rng: random.Random,
        corpus: Corpus,
        session_id: str,
        cwd: str,
        state: dict[str, Any] | None = None,
        max_file: int = MB,
    ) -> None:
        self.stream = out
        self.rng = rng
        self.corpus = corpus
        self.max_file = max_file
        self.bytes = 0
        self.line_count = 0
        self.largest = 0
        state = state or {}
        self.clock_ms = int(state.get("clock_ms", 0))
        self.prompt_index = int(state.get("prompt_index", -1))
        self.counter = int(state.get("counter", 0))
        self.prompt_text: str = state.get("prompt_text", "")
        self.request_id: str = state.get("request_id", "")
        self.cost = float(state.get("cost", 0.0))
        super().__init__(session_id=session_id, cwd=cwd, out=self._emit, keep=False)
        self.leaf = state.get("parent")
        self.prompt_id = state.get("prompt_id") or None

    def state(self) -> dict[str, Any]:
        return {
            "parent": self.leaf,
            "clock_ms": self.clock_ms,
            "prompt_index": self.prompt_index,
            "counter": self.counter,
            "prompt_id": self.prompt_id,
            "prompt_text": self.prompt_text,
            "request_id": self.request_id,
            "cost": self.cost,
        }

    # -- ids, clock and output --------------------------------------------------------------

    def _emit(self, line: bytes) -> None:
        self.stream.write(line)
        self.bytes += len(line)
        self.line_count += 1
        self.largest = max(self.largest, len(line) - 1)

    def new_uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def hex_id(self, digits: int) -> str:
        self.counter += 1
        return f"{self.rng.getrandbits(digits * 4):0{digits}x}{self.counter:08d}"

    def new_tool_use_id(self) -> str:
        return f"toolu_01{self.hex_id(18)}"

    def new_message_id(self) -> str:
        return f"msg_01{self.hex_id(16)}"

    def now(self, low: int = 1, high: int = 40) -> str:
        self.clock_ms += self.rng.randint(low, high)
        return format_time(START + timedelta(milliseconds=self.clock_ms))

    def timestamp(self) -> str:
        return self.now()

    def attach(self, attachment: dict[str, Any], rendered: str | None) -> None:
        fields = dict(attachment)
        self.attachment(str(fields.pop("type")), rendered=rendered, **fields)

    # -- turns ------------------------------------------------------------------------------

    def begin_turn(self, text: str) -> None:
        """The queue operations of a new human turn."""
        self.prompt_index += 1
        self.prompt_text = text
        self.metadata("queue-operation", operation="enqueue", timestamp=self.now(), content=text)
        self.metadata("queue-operation", operation="dequeue", timestamp=self.now(1, 5))

    def turn_fields(self) -> dict[str, Any]:
        """What 2.1.332 writes after ``promptSource`` for a ``claude -p`` prompt."""
        sent = int((START + timedelta(milliseconds=self.clock_ms)).timestamp() * 1000)
        return {
            "sentAtMs": sent,
            "rowSource": "local",
            "turnOrigin": "sdk",
            "turnPosition": {"promptIndex": self.prompt_index, "turnIndex": 1},
        }

    def human_turn(self, first: bool) -> None:
        rng = self.rng
        text = self.corpus.prose(rng, rng.randint(6, 60))
        self.begin_turn(text)
        self.prompt(text, fields=self.turn_fields())
        if first:
            self.attach(
                {
                    "type": "environment",
                    "snapshot": {
                        "workingDirectory": self.cwd,
                        "isWorktree": False,
                        "isGitRepo": True,
                        "additionalWorkingDirectories": [],
                        "platform": "linux",
                        "shell": "bash",
                        "osVersion": "Linux 6.18.44",
                    },
                },
                "# Environment\n" + self.corpus.prose(rng, 150),
            )
            self.attach(
                {
                    "type": "model",
                    "identity": {
                        "modelId": MODEL,
                        "marketingName": "Opus 5.5",
                        "knowledgeCutoff": "June 2026",
                    },
                    "text": self.corpus.prose(rng, 25),
                },
                self.corpus.prose(rng, 25),
            )
            names = sorted(rng.sample(self.corpus.words, 11))
            self.attach(
                {
                    "type": "deferred_tools_delta",
                    "addedNames": names,
                    "addedLines": names,
                    "removedNames": [],
                    "wireHiddenNames": [],
                    "readdedNames": [],
                    "pendingMcpServers": [],
                    "needsAuthMcpServers": [],
                    "failedMcpServers": [],
                },
                self.corpus.prose(rng, 60) + "\n" + "\n".join(names),
            )
            lines = [
                f"- {w}: {self.corpus.prose(rng, 60)}" for w in rng.sample(self.corpus.words, 5)
            ]
            self.attach(
                {
                    "type": "agent_listing_delta",
                    "addedTypes": [line[2:12] for line in lines],
                    "addedLines": lines,
                },
                "\n".join(lines),
            )
            skills = self.corpus.prose(rng, 900)
            self.attach(
                {
                    "type": "skill_listing",
                    "content": skills,
                    "skillCount": 13,
                    "isInitial": True,
                    "names": rng.sample(self.corpus.words, 13),
                    "digests": [f"{rng.getrandbits(64):016x}" for _ in range(13)],
                },
                skills,
            )
            self.metadata("atis-latch", atis="")
        self.attach({"type": "session_context", "context": {}}, None)
        self.attach({"type": "date", "date": "2026-11-29"}, "Today's date is 2026-11-29.")
        self.attach(
            {
                "type": "remote_session_change",
                "url": None,
                "commit": "Co-Authored-By: Claude Opus 5.5 <noreply@anthropic.com>",
                "pr": "\U0001f916 Generated with [Claude Code](https://claude.com/claude-code)",
                "sendUserFileHint": False,
                "managedCommit": False,
                "managedPr": False,
            },
            self.corpus.prose(rng, 80),
        )
        self.prompt_snapshot(small=True)
        shape_hash = sha(self.session_id)
        if first or rng.random() < 0.1:
            self.metadata(
                "api-request-shape",
                shapeHash=shape_hash,
                timestamp=self.now(),
                version=self.version,
                shape=tool_shapes(self.rng, self.corpus, 38_000),
            )
        reminder = self.corpus.prose(rng, 80)
        self.metadata(
            "api-request-blob",
            hash=sha(reminder + self.prompt_text),
            message={
                "role": "user",
                "content": [
                    {"type": "text", "text": reminder},
                    {"type": "text", "text": self.prompt_text},
                ],
            },
        )
        if first:
            system = self.corpus.prose(rng, 1300)
            self.metadata(
                "api-request-blob",
                hash=sha(system),
                message={"role": "system", "content": [{"type": "text", "text": system}]},
            )

    def prompt_snapshot(self, small: bool) -> None:
        rng = self.rng
        prompt = [self.corpus.prose(rng, rng.randint(20, 120)) for _ in range(14)]
        attachment: dict[str, Any] = {"type": "prompt_snapshot", "systemPrompt": prompt}
        if not small:
            attachment["tools"] = tool_shapes(self.rng, self.corpus, 48_000)["tools"]
            attachment["cliPrefix"] = (
                "You are a Claude agent, built on Anthropic's Claude Agent SDK."
            )
        attachment.update(
            {"reminderFold": False, "echoWireToolInputs": False, "contextRendering": "announced"}
        )
        self.attach(attachment, None)

    def api_request(self) -> None:
        self.request_id = self.new_uuid()
        rng = self.rng
        self.metadata(
            "api-request",
            id=self.request_id,
            timestamp=self.now(5, 300),
            version=self.version,
            querySource="sdk",
            shapeHash=sha(self.session_id),
            params={
                "model": MODEL,
                "betas": [
                    "claude-code-20250219",
                    "interleaved-thinking-2025-05-14",
                    "context-management-2025-06-27",
                    "effort-2025-11-24",
                ],
                "max_tokens": 128000,
                "thinking": {"type": "adaptive", "display": "omitted"},
                "context_management": {
                    "edits": [{"type": "clear_thinking_20251015", "keep": "all"}]
                },
                "output_config": {"effort": "medium"},
            },
            thread={"type": "none"},
            echoWireToolInputs=False,
            keep=rng.randint(0, 400),
            tail=[f"{rng.getrandbits(256):064x}" for _ in range(2)],
            cacheControl=[
                {"path": ["system", 0], "value": {"type": "ephemeral"}},
                {
                    "path": ["messages", rng.randint(1, 400), "content", 0],
                    "value": {"type": "ephemeral"},
                },
            ],
            requestDigest=f"{rng.getrandbits(256):064x}",
        )

    def random_call(self) -> Call:
        return tool_call(self.rng, self.corpus, self.new_tool_use_id(), self.cwd, self.max_file)

    def tool_cycle(self, forced: Call | None = None) -> None:
        """One API round trip that calls tools: request, assistant blocks, results."""
        rng = self.rng
        self.api_request()
        message_id = self.new_message_id()
        calls = [forced] if forced else [self.random_call()]
        if forced is None and rng.random() < 0.12:
            calls += [self.random_call() for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.15:
            self.metadata("tools-used", tools=sorted({c[0]["name"] for c in calls}))
        index = 0
        if forced is None and rng.random() < 0.3:
            preamble = {"type": "text", "text": self.corpus.prose(rng, rng.randint(5, 120))}
            self.assistant_record(preamble, message_id, index, "tool_use")
            index += 1
        uses: list[str] = []
        for block, _, _ in calls:
            uses.append(self.assistant_record(block, message_id, index, "tool_use"))
            index += 1
        self.metadata("last-prompt", lastPrompt=self.prompt_text[:200], leafUuid=self.leaf)
        self.metadata("atis-latch", atis="")
        for use, call in zip(uses, calls, strict=True):
            self.result(use, call, is_error=rng.random() < 0.03)

    def result(self, use: str, call: Call, *, is_error: bool = False) -> None:
        """A call's result, hanging from its assistant record ``use``."""
        block, text, side = call
        self.tool_result(
            block["id"],
            text,
            is_error=is_error,
            tool_use_result=side,
            fields={"sandboxed": False} if block["name"] == "Bash" else None,
            permission=ACCEPTED,
            parent=use,
            timestamp=self.now(20, 3000),
        )

    def call(self, block: Block) -> str:
        """One API round trip whose message is one tool call, before the call has run (what
        the journal holds when Claude Code runs the PreToolUse hook). Returns its uuid."""
        self.api_request()
        use = self.assistant_record(block, self.new_message_id(), 0, "tool_use")
        self.metadata("last-prompt", lastPrompt=self.prompt_text[:200], leafUuid=self.leaf)
        self.metadata("atis-latch", atis="")
        return use

    def assistant_record(self, block: Block, message_id: str, index: int, stop: str) -> str:
        rng = self.rng
        usage = {
            "input_tokens": rng.randint(2000, 180000),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": rng.randint(0, 150000),
            "output_tokens": rng.randint(8, 4000),
            "output_tokens_details": {"thinking_tokens": 0},
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
            "service_tier": "standard",
            "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
            "inference_geo": "",
            "iterations": [],
            "speed": "standard",
            "fallback_credit": None,
        }
        record = self.assistant(
            [block],
            message_id=message_id,
            stop_reason=stop,
            index=index,
            request_id="req_" + self.hex_id(16),
            request={"requestRef": self.request_id},
            usage=usage,
            stream_ms=rng.randint(1, 30),
            timestamp=self.now(200, 9000),
        )
        return str(record["uuid"])

    def slash_turn(self, name: str, arguments: str) -> None:
        """A ``/name arguments`` human turn, as Claude Code writes a slash command."""
        self.begin_turn(f"/{name} {arguments}")
        self.slash_command(name, arguments, fields=self.turn_fields())

    def end_turn(self) -> None:
        rng = self.rng
        self.api_request()
        message_id = self.new_message_id()
        text = {"type": "text", "text": self.corpus.prose(rng, rng.randint(10, 400))}
        self.assistant_record(text, message_id, 0, "end_turn")
        self.node(
            "system",
            {
                "subtype": "stop_hook_summary",
                "hookCount": 1,
                "hookInfos": [
                    {
                        "command": "python3 /home/dev/.claude/hooks/stop.py",
                        "durationMs": rng.randint(20, 200),
                    }
                ],
                "hookErrors": [],
                "failedHookErrorIndexes": [],
                "hookAdditionalContext": [],
                "preventedContinuation": False,
                "stopReason": "",
                "hasOutput": False,
                "level": "suggestion",
            },
            extra={"toolUseID": self.new_uuid()},
        )
        self.metadata("last-prompt", lastPrompt=self.prompt_text[:200], leafUuid=self.leaf)
        if rng.random() < 0.5:
            self.metadata("mode", mode="normal")
        self.cost += rng.uniform(0.05, 2.0)
        self.metadata(
            "cost-state",
            totalCostUSD=round(self.cost, 6),
            totalAPIDuration=rng.randint(1000, 10**7),
            totalAPIDurationWithoutRetries=0,
            totalToolDuration=rng.randint(100, 10**6),
            totalLinesAdded=rng.randint(0, 5000),
            totalLinesRemoved=rng.randint(0, 5000),
            totalDuration=rng.randint(1000, 10**8),
            startTime=1795981065006,
            modelUsage={
                MODEL: {
                    "inputTokens": rng.randint(10**4, 10**8),
                    "outputTokens": rng.randint(10**3, 10**6),
                    "costUSD": round(self.cost, 6),
                }
            },
            hasUnknownModelCost=False,
        )

    def generate(self, target: int) -> None:
        """Whole human turns of tool cycles until ``target`` bytes; ends mid-turn after a result."""
        rng = self.rng
        first = True
        while True:
            self.human_turn(first)
            first = False
            cycles = max(1, int(rng.expovariate(1 / 20)))
            for cycle in range(cycles):
                self.tool_cycle()
                if self.bytes >= target:
                    return
                if cycle == 0 or rng.random() < 0.02:
                    self.prompt_snapshot(small=False)
            self.end_turn()

    def progress_flood(self, records: int) -> None:
        """A first turn whose one Bash call streams ``records`` short progress records, each
        hanging from the one before (the first from the call, the call's result from the
        last, as Claude Code 2.1.3x hung results from progress records); ends after the
        result, mid-turn. The progress lines are laid out here, not through the writer: a
        million of them through it would take minutes."""
        self.human_turn(first=True)
        use_id = self.new_tool_use_id()
        block = {
            "type": "tool_use",
            "id": use_id,
            "name": "Bash",
            "input": {"command": "make soak", "description": "Run the soak test"},
        }
        parent = self.call(block)
        head = (
            '{"parentUuid":"%s","isSidechain":false,"type":"progress",'
            '"data":{"type":"bash_progress"},"uuid":"%s","timestamp":"%s","cwd":'
            + json.dumps(self.cwd)
            + ',"sessionId":"'
            + self.session_id
            + '"}\n'
        )
        for _ in range(records):
            uuid_ = self.new_uuid()
            self._emit((head % (parent, uuid_, self.now(1, 3))).encode())
            parent = uuid_
        self.leaf = parent
        stdout = "soak: ok"
        self.tool_result(
            use_id,
            stdout,
            tool_use_result=bash_side_car(stdout),
            fields={"sandboxed": False},
            permission=ACCEPTED,
            parent=parent,
            timestamp=self.now(20, 3000),
        )

    def append_cycle(self, budget: int) -> None:
        """About ``budget`` bytes: one Bash call and its result, continuing the chain."""
        rng = self.rng
        stdout = self.corpus.snippet(rng, max(100, (budget - 3800) // 2)).rstrip("\n")
        use_id = self.new_tool_use_id()
        block = {
            "type": "tool_use",
            "id": use_id,
            "name": "Bash",
            "input": {"command": "pytest -q tests", "description": "Run the tests"},
        }
        self.tool_cycle(forced=(block, stdout, bash_side_car(stdout)))
