"""Hook-style decision time of the journal reader, beside floors measured in the same run.

Run: ``python benchmarks/journal_decision.py [--sizes 1,10,100] [--repeat N] [--json]``.

For each journal size this times ``<python> -S -c '<journal main>' ROOT PATH SESSION PROJECT
CONFIG`` (process start to verdict, as a hook runs it; ROOT is plangate's folder) and the
child's peak memory (max RSS, from one extra run under GNU ``time -f %M``), next to three
floors: a bare ``python -c pass`` with the same interpreter, ``cat`` of the journal to
/dev/null, and a naive script that ``json.loads`` every line.

Journals are synthetic but shaped like what Claude Code 2.1.332 writes (see
``benchmarks/README.md``); they are generated once per size into ``--workdir`` and reused.
The driver uses the standard library only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, BinaryIO

GENERATOR = "cc-2.1.332-synthetic/1"
CC_VERSION = "2.1.332"
MODEL = "claude-opus-5-5"
MB = 1_000_000
APPEND_BYTES = 10_000
START = datetime(2026, 11, 29, 19, 37, 45, 690000, tzinfo=UTC)
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

NAIVE_SCRIPT = """\
import json, sys
with open(sys.argv[1], "rb") as handle:
    for line in handle:
        if line.strip():
            json.loads(line)
"""
IMPORT_SCRIPT = "import plangate.journal.reader, plangate.jsonio"
# The way plangate's hooks start (as `plangate setup` registers them): `-c`, since `-m` would
# add runpy's imports to every run, and `-S` with plangate's folder as the first argument,
# since hooks need no `site`.
DECISION_SCRIPT = (
    "import sys; sys.path.insert(0, sys.argv.pop(1)); "
    "from plangate.journal.__main__ import main; raise SystemExit(main(sys.argv[1:]))"
)
ROOT_SCRIPT = "import os, plangate; print(os.path.dirname(os.path.dirname(plangate.__file__)))"


# --------------------------------------------------------------------------------------------
# Synthetic journals
# --------------------------------------------------------------------------------------------


class Corpus:
    """Text to fill records with: the interpreter's own standard library sources.

    Real tool results are mostly source code and command output, with tabs, quotes and
    backslashes that JSON must escape; stdlib sources have the same mix. Deterministic for
    one Python version.
    """

    def __init__(self, limit: int = 8 * MB) -> None:
        lib = os.path.dirname(os.__file__)
        texts: list[str] = []
        self.names: list[str] = []
        total = 0
        for name in sorted(os.listdir(lib)):
            if not name.endswith(".py"):
                continue
            try:
                with open(os.path.join(lib, name), encoding="utf-8") as handle:
                    text = handle.read()
            except (OSError, UnicodeDecodeError):
                continue
            texts.append(text)
            self.names.append(name)
            total += len(text)
            if total >= limit:
                break
        self.text = "".join(texts)
        words = sorted(set(re.findall(r"\b[a-z]{3,12}\b", self.text)))
        self.words = words or ["word"]

    def snippet(self, rng: random.Random, size: int) -> str:
        """About ``size`` characters of whole lines."""
        size = max(1, min(size, len(self.text) // 2))
        start = rng.randrange(0, len(self.text) - size)
        newline = self.text.find("\n", start)
        start = newline + 1 if 0 <= newline < start + 200 else start
        end = self.text.rfind("\n", start, start + size)
        return self.text[start : end + 1] if end > start else self.text[start : start + size]

    def prose(self, rng: random.Random, words: int) -> str:
        out: list[str] = []
        sentence = 0
        for _ in range(words):
            word = rng.choice(self.words)
            if sentence == 0:
                word = word.capitalize()
            out.append(word)
            sentence += 1
            if sentence > 6 and rng.random() < 0.15:
                out[-1] += "."
                sentence = 0
            elif rng.random() < 0.02:
                out.append("\u2014")
        return " ".join(out) + "."


def _lognormal_int(rng: random.Random, median: float, sigma: float, low: int, high: int) -> int:
    return int(min(high, max(low, rng.lognormvariate(math.log(median), sigma))))


def _log_uniform_int(rng: random.Random, low: int, high: int) -> int:
    return int(math.exp(rng.uniform(math.log(low), math.log(high))))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class SessionWriter:
    """Writes one main-session journal the way Claude Code 2.1.332 lays it out.

    Conversation records (user prompt, attachments, one assistant record per content block,
    user tool results with ``toolUseResult`` side-cars, system records) form one parent chain
    from a null-parent user prompt; metadata lines without uuid (``queue-operation``,
    ``api-request``, ``api-request-blob``, ``api-request-shape``, ``last-prompt``,
    ``atis-latch``, ``tools-used``, ``mode``, ``cost-state``) sit between them.
    """

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
        self.out = out
        self.rng = rng
        self.corpus = corpus
        self.session_id = session_id
        self.cwd = cwd
        self.max_file = max_file
        self.bytes = 0
        self.lines = 0
        self.largest = 0
        state = state or {}
        self.parent: str | None = state.get("parent")
        self.clock_ms = int(state.get("clock_ms", 0))
        self.prompt_index = int(state.get("prompt_index", -1))
        self.counter = int(state.get("counter", 0))
        self.prompt_id: str = state.get("prompt_id", "")
        self.prompt_text: str = state.get("prompt_text", "")
        self.request_id: str = state.get("request_id", "")
        self.cost = float(state.get("cost", 0.0))

    def state(self) -> dict[str, Any]:
        return {
            "parent": self.parent,
            "clock_ms": self.clock_ms,
            "prompt_index": self.prompt_index,
            "counter": self.counter,
            "prompt_id": self.prompt_id,
            "prompt_text": self.prompt_text,
            "request_id": self.request_id,
            "cost": self.cost,
        }

    # -- primitives ------------------------------------------------------------------------

    def new_uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def hex_id(self, digits: int) -> str:
        self.counter += 1
        return f"{self.rng.getrandbits(digits * 4):0{digits}x}{self.counter:08d}"

    def now(self, low: int = 1, high: int = 40) -> str:
        self.clock_ms += self.rng.randint(low, high)
        moment = START + timedelta(milliseconds=self.clock_ms)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"

    def emit(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        self.out.write(line + b"\n")
        self.bytes += len(line) + 1
        self.lines += 1
        self.largest = max(self.largest, len(line))

    def tail(self) -> dict[str, Any]:
        return {
            "userType": "external",
            "entrypoint": "sdk-cli",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": CC_VERSION,
            "gitBranch": "main",
        }

    def chained(
        self,
        head: dict[str, Any],
        body: dict[str, Any],
        parent: str | None = None,
        stamp: str | None = None,
    ) -> str:
        """Emit a conversation record; returns its uuid (the new chain tail)."""
        record_uuid = self.new_uuid()
        record: dict[str, Any] = {
            "parentUuid": self.parent if parent is None else parent,
            "isSidechain": False,
        }
        record.update(head)
        record["uuid"] = record_uuid
        record["timestamp"] = stamp or self.now()
        record.update(body)
        record.update(self.tail())
        self.emit(record)
        self.parent = record_uuid
        return record_uuid

    def meta(self, record_type: str, **fields: object) -> None:
        record: dict[str, Any] = {"type": record_type}
        record.update(fields)
        record.setdefault("sessionId", self.session_id)
        self.emit(record)

    def attachment(self, attachment: dict[str, Any], rendered: str | None) -> str:
        body: dict[str, Any] = {}
        if rendered is not None:
            body["rendered"] = [{"content": f"<system-reminder>\n{rendered}\n</system-reminder>"}]
            body["renderedRole"] = "system"
        return self.chained({"attachment": attachment, "type": "attachment"}, body)

    # -- turns -----------------------------------------------------------------------------

    def human_turn(self, first: bool) -> None:
        rng = self.rng
        self.prompt_index += 1
        self.prompt_id = self.new_uuid()
        self.prompt_text = self.corpus.prose(rng, rng.randint(6, 60))
        self.meta(
            "queue-operation", operation="enqueue", timestamp=self.now(), content=self.prompt_text
        )
        self.meta("queue-operation", operation="dequeue", timestamp=self.now(1, 5))
        sent = int((START + timedelta(milliseconds=self.clock_ms)).timestamp() * 1000)
        self.chained(
            {
                "promptId": self.prompt_id,
                "type": "user",
                "message": {"role": "user", "content": self.prompt_text},
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
        if first:
            self.attachment(
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
            self.attachment(
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
            self.attachment(
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
            self.attachment(
                {
                    "type": "agent_listing_delta",
                    "addedTypes": [line[2:12] for line in lines],
                    "addedLines": lines,
                },
                "\n".join(lines),
            )
            skills = self.corpus.prose(rng, 900)
            self.attachment(
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
            self.meta("atis-latch", atis="")
        self.attachment({"type": "session_context", "context": {}}, None)
        self.attachment({"type": "date", "date": "2026-11-29"}, "Today's date is 2026-11-29.")
        self.attachment(
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
        shape_hash = _sha(self.session_id)
        if first or rng.random() < 0.1:
            self.meta(
                "api-request-shape",
                shapeHash=shape_hash,
                timestamp=self.now(),
                version=CC_VERSION,
                shape=self.tool_shapes(38_000),
            )
        reminder = self.corpus.prose(rng, 80)
        self.meta(
            "api-request-blob",
            hash=_sha(reminder + self.prompt_text),
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
            self.meta(
                "api-request-blob",
                hash=_sha(system),
                message={"role": "system", "content": [{"type": "text", "text": system}]},
            )

    def prompt_snapshot(self, small: bool) -> None:
        rng = self.rng
        prompt = [self.corpus.prose(rng, rng.randint(20, 120)) for _ in range(14)]
        attachment: dict[str, Any] = {"type": "prompt_snapshot", "systemPrompt": prompt}
        if not small:
            attachment["tools"] = self.tool_shapes(48_000)["tools"]
            attachment["cliPrefix"] = (
                "You are a Claude agent, built on Anthropic's Claude Agent SDK."
            )
        attachment.update(
            {"reminderFold": False, "echoWireToolInputs": False, "contextRendering": "announced"}
        )
        self.attachment(attachment, None)

    def tool_shapes(self, size: int) -> dict[str, Any]:
        rng = self.rng
        tools: list[dict[str, Any]] = []
        used = 0
        while used < size:
            name = rng.choice(self.corpus.words).capitalize()
            description = self.corpus.prose(rng, rng.randint(40, 400))
            properties = {
                w: {"description": self.corpus.prose(rng, rng.randint(5, 40)), "type": "string"}
                for w in rng.sample(self.corpus.words, rng.randint(1, 5))
            }
            tools.append(
                {
                    "name": name,
                    "description": description,
                    "input_schema": {
                        "$schema": "https://json-schema.org/draft/2020-12/schema",
                        "type": "object",
                        "properties": properties,
                        "required": list(properties)[:1],
                        "additionalProperties": False,
                    },
                }
            )
            used += len(description) + sum(len(p["description"]) + 40 for p in properties.values())
        return {"system": [{"type": "text", "text": self.corpus.prose(rng, 600)}], "tools": tools}

    def api_request(self) -> None:
        self.request_id = self.new_uuid()
        rng = self.rng
        self.meta(
            "api-request",
            id=self.request_id,
            timestamp=self.now(5, 300),
            version=CC_VERSION,
            querySource="sdk",
            shapeHash=_sha(self.session_id),
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

    def tool_call(self, rng: random.Random) -> tuple[dict[str, Any], str, dict[str, Any]]:
        """A tool_use block, the tool_result text and the ``toolUseResult`` side-car."""
        use_id = f"toolu_01{self.hex_id(18)}"
        roll = rng.random()
        path = f"{self.cwd}/src/{rng.choice(self.corpus.names)}"
        if roll < 0.40:
            size = _lognormal_int(rng, 600, 1.6, 0, 120_000)
            stdout = self.corpus.snippet(rng, size).rstrip("\n") if size else ""
            stderr = "" if rng.random() < 0.85 else self.corpus.snippet(rng, 300).rstrip("\n")
            command = f"grep -rn {rng.choice(self.corpus.words)} src | head -{rng.randint(5, 400)}"
            block = {
                "type": "tool_use",
                "id": use_id,
                "name": "Bash",
                "input": {"command": command, "description": self.corpus.prose(rng, 5)},
            }
            text = stdout + ("\n" + stderr if stderr else "")
            side = {
                "stdout": stdout,
                "stderr": stderr,
                "interrupted": False,
                "isImage": False,
                "noOutputExpected": False,
            }
            return block, text, side
        if roll < 0.72:
            if rng.random() < 0.03:
                size = _log_uniform_int(rng, 10_000, self.max_file)
            else:
                size = _lognormal_int(rng, 2500, 1.0, 100, 60_000)
            content = self.corpus.snippet(rng, min(size, self.max_file))
            return read_blocks(use_id, path, content)
        if roll < 0.87:
            original = self.corpus.snippet(rng, _lognormal_int(rng, 5000, 1.0, 200, 80_000))
            old = self.corpus.snippet(rng, rng.randint(40, 600))
            new = self.corpus.snippet(rng, rng.randint(40, 900))
            block = {
                "type": "tool_use",
                "id": use_id,
                "name": "Edit",
                "input": {
                    "file_path": path,
                    "old_string": old,
                    "new_string": new,
                    "replace_all": False,
                },
            }
            text = f"The file {path} has been updated successfully."
            start = rng.randint(1, 400)
            patch = [
                {
                    "oldStart": start,
                    "oldLines": old.count("\n") + 1,
                    "newStart": start,
                    "newLines": new.count("\n") + 1,
                    "lines": ["-" + x for x in old.split("\n")]
                    + ["+" + x for x in new.split("\n")],
                }
            ]
            side = {
                "filePath": path,
                "oldString": old,
                "newString": new,
                "originalFile": original,
                "structuredPatch": patch,
                "userModified": False,
                "replaceAll": False,
            }
            return block, text, side
        matches = self.corpus.snippet(rng, _lognormal_int(rng, 1200, 1.3, 50, 40_000))
        found = [
            f"src/{rng.choice(self.corpus.names)}:{n}:{line}"
            for n, line in enumerate(matches.split("\n")[:-1], 1)
        ]
        pattern = rng.choice(self.corpus.words)
        block = {
            "type": "tool_use",
            "id": use_id,
            "name": "Grep",
            "input": {"pattern": pattern, "path": self.cwd, "output_mode": "content", "-n": True},
        }
        text = "\n".join(found)
        side = {
            "mode": "content",
            "numFiles": len({f.split(":", 1)[0] for f in found}),
            "filenames": [],
            "content": text,
            "numLines": len(found),
        }
        return block, text, side

    def tool_cycle(self, forced: tuple[dict[str, Any], str, dict[str, Any]] | None = None) -> None:
        """One API round trip that calls tools: request, assistant blocks, results."""
        rng = self.rng
        self.api_request()
        message_id = f"msg_01{self.hex_id(16)}"
        calls = [forced] if forced else [self.tool_call(rng)]
        if forced is None and rng.random() < 0.12:
            calls += [self.tool_call(rng) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.15:
            self.meta("tools-used", tools=sorted({c[0]["name"] for c in calls}))
        index = 0
        if forced is None and rng.random() < 0.3:
            preamble = {"type": "text", "text": self.corpus.prose(rng, rng.randint(5, 120))}
            self.assistant_record(preamble, message_id, index, "tool_use")
            index += 1
        uses: list[str] = []
        for block, _, _ in calls:
            uses.append(self.assistant_record(block, message_id, index, "tool_use"))
            index += 1
        self.meta("last-prompt", lastPrompt=self.prompt_text[:200], leafUuid=self.parent)
        self.meta("atis-latch", atis="")
        for use_uuid, (block, text, side) in zip(uses, calls, strict=True):
            body: dict[str, Any] = {"toolUseResult": side}
            if block["name"] == "Bash":
                body["sandboxed"] = False
            body["sourceToolAssistantUUID"] = use_uuid
            body["permissionDecision"] = {
                "decision": "accept",
                "source": "config",
                "reasonType": "rule",
                "ruleSource": "cliArg",
            }
            result = {
                "tool_use_id": block["id"],
                "type": "tool_result",
                "content": text,
                "is_error": rng.random() < 0.03,
            }
            self.chained(
                {
                    "promptId": self.prompt_id,
                    "type": "user",
                    "message": {"role": "user", "content": [result]},
                },
                body,
                parent=use_uuid,
                stamp=self.now(20, 3000),
            )

    def assistant_record(
        self, block: dict[str, Any], message_id: str, index: int, stop: str
    ) -> str:
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
        head: dict[str, Any] = {
            "message": {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": [block],
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": usage,
                "stop_details": None,
            },
        }
        if block["type"] == "tool_use":
            head["toolInputStreamMs"] = rng.randint(1, 30)
        head.update(
            {
                "apiBlockIndex": index,
                "requestId": "req_" + self.hex_id(16),
                "requestRef": self.request_id,
                "requestedModel": MODEL,
                "promptCacheRequested": "5m",
                "type": "assistant",
            }
        )
        body = {"effort": "medium", "perTurnEffort": "medium", "madeBy": "model"}
        return self.chained(head, body, stamp=self.now(200, 9000))

    def end_turn(self) -> None:
        rng = self.rng
        self.api_request()
        message_id = f"msg_01{self.hex_id(16)}"
        text = {"type": "text", "text": self.corpus.prose(rng, rng.randint(10, 400))}
        self.assistant_record(text, message_id, 0, "end_turn")
        self.chained(
            {
                "type": "system",
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
            {"toolUseID": self.new_uuid()},
        )
        self.meta("last-prompt", lastPrompt=self.prompt_text[:200], leafUuid=self.parent)
        if rng.random() < 0.5:
            self.meta("mode", mode="normal")
        self.cost += rng.uniform(0.05, 2.0)
        self.meta(
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

    def session(self, target: int) -> None:
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

    def append_cycle(self, budget: int) -> None:
        """About ``budget`` bytes: one Bash call and its result, continuing the chain."""
        rng = self.rng
        stdout = self.corpus.snippet(rng, max(100, (budget - 3800) // 2)).rstrip("\n")
        use_id = f"toolu_01{self.hex_id(18)}"
        block = {
            "type": "tool_use",
            "id": use_id,
            "name": "Bash",
            "input": {"command": "pytest -q tests", "description": "Run the tests"},
        }
        side = {
            "stdout": stdout,
            "stderr": "",
            "interrupted": False,
            "isImage": False,
            "noOutputExpected": False,
        }
        self.tool_cycle(forced=(block, stdout, side))


def read_blocks(use_id: str, path: str, content: str) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """A whole-file Read and its result as Claude Code 2.1.332 writes them: the tool use, the
    numbered text the model sees, and the ``toolUseResult`` side-car. Claude Code counts the
    empty line after a final newline as a line of the file."""
    lines = content.split("\n")
    numbered = "\n".join(f"{n}\t{line}" for n, line in enumerate(lines, 1))
    block = {"type": "tool_use", "id": use_id, "name": "Read", "input": {"file_path": path}}
    side = {
        "type": "text",
        "file": {
            "filePath": path,
            "content": content,
            "numLines": len(lines),
            "startLine": 1,
            "totalLines": len(lines),
        },
    }
    return block, numbered, side


def case_rows(cases: list[Case]) -> list[str]:
    """The timing table's rows: size, case, median and min ms, runs, peak MiB."""
    return [
        f"| {case.size} | {case.name} | {case.median_ms:.1f} | {case.min_ms:.1f} | "
        f"{len(case.samples)} | {'-' if case.peak_mib is None else f'{case.peak_mib:.1f}'} |"
        for case in cases
    ]


def _slug(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def _label(size: float) -> str:
    return f"{size * 1000:g} KB" if size < 1 else f"{size:g} MB"


class Journal:
    """One generated journal and where it lives."""

    def __init__(self, root: str, size: float) -> None:
        self.size = size
        self.label = _label(size)
        self.folder = os.path.join(root, f"journal-{size:g}")
        self.project = os.path.join(root, "project")
        self.session = str(
            uuid.UUID(int=random.Random(f"session-{size}").getrandbits(128), version=4)
        )
        self.config = os.path.join(self.folder, "config")
        self.path = self.path_in(self.config)
        self.meta_path = os.path.join(self.folder, "meta.json")
        self.meta: dict[str, Any] = {}

    def path_in(self, config: str) -> str:
        return os.path.join(config, "projects", _slug(self.project), self.session + ".jsonl")

    def expected_meta(self) -> dict[str, Any]:
        return {
            "generator": GENERATOR,
            "python": sys.version.split()[0],
            "size": self.size,
            "project": self.project,
            "session": self.session,
        }

    def ensure(self, corpus_factory: Callable[[], Corpus], regenerate: bool) -> bool:
        """Generate unless a matching cached copy exists; True when generated."""
        os.makedirs(self.project, exist_ok=True)
        if not regenerate and os.path.exists(self.meta_path) and os.path.exists(self.path):
            with open(self.meta_path, encoding="utf-8") as handle:
                meta = json.load(handle)
            if all(meta.get(k) == v for k, v in self.expected_meta().items()) and meta.get(
                "bytes"
            ) == os.path.getsize(self.path):
                self.meta = meta
                return False
        shutil.rmtree(self.folder, ignore_errors=True)
        os.makedirs(os.path.dirname(self.path))
        corpus = corpus_factory()
        rng = random.Random(f"{GENERATOR}-{self.size}")
        target = int(self.size * MB)
        with open(self.path, "wb", buffering=1 << 20) as out:
            writer = SessionWriter(
                out,
                rng,
                corpus,
                self.session,
                self.project,
                max_file=min(MB, max(12_000, target // 8)),
            )
            writer.session(target)
        meta = self.expected_meta()
        meta.update(
            {
                "bytes": writer.bytes,
                "lines": writer.lines,
                "largest_line": writer.largest,
                "state": writer.state(),
            }
        )
        with open(self.meta_path, "w", encoding="utf-8") as handle:
            json.dump(meta, handle, indent=1)
        self.meta = meta
        return True


def copy_tree(journal: Journal, folder: str) -> tuple[str, str]:
    """A fresh ``<folder>/config/projects/<slug>/<session>.jsonl`` copy, flushed to disk."""
    shutil.rmtree(folder, ignore_errors=True)
    config = os.path.join(folder, "config")
    path = journal.path_in(config)
    os.makedirs(os.path.dirname(path))
    shutil.copyfile(journal.path, path)
    _fsync(path)
    for name in ("cache", "state", "tmp"):
        os.makedirs(os.path.join(folder, name))
    return config, path


def _fsync(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def append_records(
    path: str, journal: Journal, state: dict[str, Any], seed: str, corpus: Corpus
) -> tuple[dict[str, Any], int]:
    with open(path, "ab") as out:
        writer = SessionWriter(
            out, random.Random(seed), corpus, journal.session, journal.project, state=state
        )
        writer.append_cycle(APPEND_BYTES)
        out.flush()
        os.fsync(out.fileno())
    return writer.state(), writer.bytes


# --------------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------------


class Sample:
    __slots__ = ("seconds", "returncode", "output", "peak_kib")

    def __init__(
        self, seconds: float, returncode: int, output: bytes, peak_kib: int | None
    ) -> None:
        self.seconds = seconds
        self.returncode = returncode
        self.output = output
        self.peak_kib = peak_kib


GNU_TIME = "/usr/bin/time"


def gnu_time_works() -> bool:
    if not os.path.exists(GNU_TIME):
        return False
    with tempfile.NamedTemporaryFile("r", suffix=".peak") as report:
        try:
            done = subprocess.run(
                [GNU_TIME, "-f", "%M", "-o", report.name, "true"], capture_output=True, check=False
            )
        except OSError:
            return False
        return done.returncode == 0 and report.read().strip().isdigit()


def run(
    argv: list[str],
    *,
    env: dict[str, str],
    cwd: str | None = None,
    capture: bool = True,
    peak: bool = False,
) -> Sample:
    """Run ``argv`` to completion, timing spawn to reap with ``perf_counter``.

    With ``peak`` the command runs under GNU ``time -f %M`` instead, for the child's max RSS
    (such runs are not timed: the wrapper adds a process). The driver cannot read a child's
    peak itself: on Linux a child's ``ru_maxrss`` also counts the driver's own memory, which
    the child shares between fork and exec.
    """
    report = None
    if peak:
        fd, report = tempfile.mkstemp(suffix=".peak")
        os.close(fd)
        argv = [GNU_TIME, "-f", "%M", "-o", report, *argv]
    start = time.perf_counter()
    process = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
        stderr=subprocess.STDOUT if capture else subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    )
    output = b""
    if process.stdout is not None:
        output = process.stdout.read()
        process.stdout.close()
    _, status, _usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    peak_kib = None
    if report is not None:
        with open(report, encoding="utf-8") as handle:
            lines = handle.read().split()
        os.unlink(report)
        peak_kib = int(lines[-1]) if lines and lines[-1].isdigit() else None
    return Sample(seconds, process.returncode, output, peak_kib)


class Case:
    """Timed samples of one measurement, and the peak RSS of separate runs."""

    def __init__(self, size: str, name: str) -> None:
        self.size = size
        self.name = name
        self.samples: list[Sample] = []
        self.peaks: list[int] = []
        self.verdict: dict[str, Any] | None = None

    def add(self, sample: Sample) -> None:
        if sample.peak_kib is not None:
            self.peaks.append(sample.peak_kib)
        else:
            self.samples.append(sample)

    @property
    def median_ms(self) -> float:
        return statistics.median(s.seconds for s in self.samples) * 1000

    @property
    def min_ms(self) -> float:
        return min(s.seconds for s in self.samples) * 1000

    @property
    def peak_mib(self) -> float | None:
        return max(self.peaks) / 1024 if self.peaks else None

    def as_dict(self) -> dict[str, Any]:
        peak = self.peak_mib
        return {
            "size": self.size,
            "case": self.name,
            "median_ms": round(self.median_ms, 2),
            "min_ms": round(self.min_ms, 2),
            "peak_mib": None if peak is None else round(peak, 1),
            "runs": len(self.samples),
            "samples_ms": [round(s.seconds * 1000, 2) for s in self.samples],
            "verdict": self.verdict,
        }


def _met(met: bool) -> str:
    return "met" if met else "not met"


def _load() -> str:
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "?"


def _source_state() -> str:
    """Which reader was measured: the commit, and how many files under src/ differ from it."""
    try:
        head = subprocess.run(
            ["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", REPO, "status", "--porcelain", "--", "src"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head}" + (f" with {len(dirty)} changed file(s) under src/" if dirty else "")


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
        self.bare = Case("-", "floor: bare `python -c pass`")
        self.imports = Case("-", "info: start-up + `import plangate.journal.reader`")
        self.cases: list[Case] = []
        self.journals: list[tuple[Journal, dict[str, Any]]] = []
        self.peaks = gnu_time_works()
        if not self.peaks:
            log(f"{GNU_TIME} (GNU time) is missing: peak memory is not measured")
        # The children's environment: no PYTHON* variables (PYTHONDONTWRITEBYTECODE would make
        # every hook run recompile changed modules; a hook runs with its .pyc files).
        self.base_env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        self.load_start = _load()

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
        self, journal: Journal, path: str, config: str, folder: str | None, peak: bool = False
    ) -> tuple[Sample, dict[str, Any]]:
        argv = [
            self.python,
            "-S",
            "-c",
            DECISION_SCRIPT,
            self.package_root,
            path,
            journal.session,
            journal.project,
            config,
        ]
        sample = run(argv, env=self.env(folder), cwd=journal.project, peak=peak)
        text = sample.output.decode("utf-8", "replace").strip()
        try:
            verdict = json.loads(text.splitlines()[-1])
        except (ValueError, IndexError):
            raise SystemExit(f"the reader printed no verdict for {path}:\n{text}") from None
        if verdict.get("status") != "ready" or sample.returncode != 0:
            raise SystemExit(f"the reader did not give `ready` for {path}: {text}")
        return sample, verdict

    def floor(self, case: Case, argv: list[str], peak: bool = False, capture: bool = True) -> None:
        sample = run(argv, env=self.base_env, cwd=self.workdir, peak=peak, capture=capture)
        if sample.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed:\n{sample.output.decode(errors='replace')}")
        case.add(sample)

    def start_up(self, peak: bool = False) -> None:
        self.floor(self.bare, [self.python, "-c", "pass"], peak=peak)
        self.floor(self.imports, [self.python, "-c", IMPORT_SCRIPT], peak=peak)

    def measure(self, size: float) -> None:
        journal = Journal(self.workdir, size)
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
        rounds = self.repeat * (4 if size <= 1 else 1)
        for round_ in range(rounds):
            log(f"{label}: round {round_ + 1}/{rounds}")
            self.start_up()
            self.floor(cat, cat_argv, capture=False)
            self.floor(naive, naive_argv)
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
                path, journal, state, f"append-{size}-{round_}", self.corpus()
            )
            added.append(written)
            appended.add(self.decide(journal, path, config, folder, peak=round_ == self.repeat)[0])
        shutil.rmtree(folder)
        appended.verdict = {"appended_bytes_each": added}
        cold.verdict = verdict
        self.cases += [cold, appended, cat, naive]
        self.journals.append((journal, verdict))

    def table(self) -> str:
        lines = [
            f"Hook-style decision: `{os.path.relpath(self.python, REPO)} -S -c '<journal main>' "
            "ROOT PATH SESSION PROJECT CONFIG`, process start to verdict; reader at "
            f"{_source_state()}; {os.cpu_count()} CPUs; Python {sys.version.split()[0]}.",
            f'{self.repeat} timed runs per case after one warm-up run. "cold" means no state '
            "from an earlier hook run (a fresh copy of the journal in a fresh config folder); "
            'the file is in the page cache. "after append": an earlier hook run read the '
            f"journal, then ~{APPEND_BYTES // 1000} KB of records were appended before each "
            "timed run. Peak = max RSS of the child (one extra run under GNU time). "
            f"1-minute load average {self.load_start} at start, {_load()} at end "
            "(other work on the machine shows up as noise).",
            "",
            "| size | case | median ms | min ms | runs | peak MiB |",
            "|---|---|---:|---:|---:|---:|",
        ]
        lines += case_rows([self.bare, self.imports, *self.cases])
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
        lines += [f"- {line}" for line in self.targets()]
        busy = self.busy()
        if busy:
            lines += ["", f"Warning: {busy}"]
        return "\n".join(lines)

    def find(self, label: str, name: str) -> Case | None:
        return next((c for c in self.cases if c.size == label and c.name.startswith(name)), None)

    def busy(self) -> str:
        """Why the numbers may be noisy, or ''."""
        loads = [self.load_start, _load()]
        cpus = os.cpu_count() or 1
        if any(load != "?" and float(load) > 0.5 * cpus for load in loads):
            return (
                f"the machine was busy (load average {loads[0]} at start, {loads[1]} at end on "
                f"{cpus} CPUs): medians are noisy, the minimums are closer to the truth."
            )
        return ""

    def targets(self) -> list[str]:
        out = []
        big = _label(100)
        cold = self.find(big, "decision, cold")
        cat = self.find(big, "floor: `cat`")
        if cold and cat:
            out.append(cold_target("", cold, self.bare, cat))
        else:
            out.append("100 MB cold: not measured (add 100 to --sizes)")
        appended = self.find(big, "decision, after")
        if appended:
            out.append(append_target("", appended, self.bare))
        else:
            out.append("100 MB after a 10 KB append: not measured (add 100 to --sizes)")
        small_journal = self.find(_label(0.1), "decision, cold")
        if small_journal:
            out.append(startup_target("", small_journal, self.bare))
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "python": self.python,
            "cpus": os.cpu_count(),
            "repeat": self.repeat,
            "load_average": [self.load_start, _load()],
            "reader": _source_state(),
            "cases": [c.as_dict() for c in [self.bare, self.imports, *self.cases]],
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


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def cold_target(what: str, cold: Case, bare: Case, cat: Case) -> str:
    """The issue's cold target, judged on medians and (in brackets) on minimums."""
    peak = cold.peak_mib
    small = peak is not None and peak < 200
    limit, limit_min = 2 * (bare.median_ms + cat.median_ms), 2 * (bare.min_ms + cat.min_ms)
    fast, fast_min = cold.median_ms <= limit, cold.min_ms <= limit_min
    peak_text = "not measured" if peak is None else f"{peak:.0f} MiB"
    return (
        f"{what}100 MB cold within 2x (bare start-up + cat) and under 200 MiB peak: "
        f"**{_met(fast and small)}**. Time {_met(fast)}: {cold.median_ms:.0f} ms vs "
        f"2 x ({bare.median_ms:.1f} + {cat.median_ms:.1f}) = {limit:.0f} ms "
        f"[min: {cold.min_ms:.0f} vs {limit_min:.0f} ms, {_met(fast_min)}]. "
        f"Peak {_met(small)}: {peak_text} vs 200 MiB."
    )


def append_target(what: str, appended: Case, bare: Case) -> str:
    """The issue's after-append target."""
    met = appended.median_ms <= bare.median_ms + 50
    met_min = appended.min_ms <= bare.min_ms + 50
    return (
        f"{what}100 MB after an append (see the table) within bare start-up + 50 ms: "
        f"**{_met(met)}**: {appended.median_ms:.0f} ms vs {bare.median_ms:.1f} + 50 = "
        f"{bare.median_ms + 50:.0f} ms [min: {appended.min_ms:.0f} vs "
        f"{bare.min_ms + 50:.0f} ms, {_met(met_min)}]."
    )


def startup_target(what: str, small_journal: Case, bare: Case) -> str:
    """The issue's start-up target for a 100 KB journal."""
    met = small_journal.median_ms <= 1.3 * bare.median_ms
    met_min = small_journal.min_ms <= 1.3 * bare.min_ms
    return (
        f"{what}100 KB journal within 1.3x bare start-up: **{_met(met)}**: "
        f"{small_journal.median_ms:.1f} ms vs 1.3 x {bare.median_ms:.1f} = "
        f"{1.3 * bare.median_ms:.1f} ms [min: {small_journal.min_ms:.1f} vs "
        f"{1.3 * bare.min_ms:.1f} ms, {_met(met_min)}]."
    )


def default_python() -> str:
    venv = os.path.join(REPO, ".venv", "bin", "python")
    return venv if os.path.exists(venv) else sys.executable


def parse_sizes(text: str) -> list[float]:
    sizes = sorted({float(part) for part in text.split(",") if part.strip()})
    if any(size <= 0 for size in sizes):
        raise argparse.ArgumentTypeError("sizes are positive numbers of MB")
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        type=parse_sizes,
        default=[1.0, 10.0, 100.0],
        help="journal sizes in MB (10^6 bytes), comma separated; a 100 KB "
        "journal is always added for the start-up target (default 1,10,100)",
    )
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per case (default 5)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    parser.add_argument(
        "--workdir", help="where journals are generated and cached (default: <tmp>/plangate-bench)"
    )
    parser.add_argument(
        "--python",
        default=default_python(),
        help="interpreter that runs the reader (default: the project's .venv)",
    )
    parser.add_argument("--regenerate", action="store_true", help="ignore cached journals")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    workdir = os.path.realpath(
        args.workdir or os.path.join(tempfile.gettempdir(), "plangate-bench")
    )
    os.makedirs(workdir, exist_ok=True)
    python = os.path.abspath(args.python)  # not resolved: a venv python is a symlink
    sizes = sorted({0.1, *args.sizes})
    bench = Bench(python, workdir, args.repeat, args.regenerate)
    started = time.perf_counter()
    for _ in range(2):  # warm-up
        bench.start_up()
    bench.bare.samples.clear()
    bench.imports.samples.clear()
    if bench.peaks:
        bench.start_up(peak=True)
    for size in sizes:
        bench.measure(size)
    log(f"done in {time.perf_counter() - started:.0f} s")
    if args.json:
        print(json.dumps(bench.as_dict(), indent=1))
    else:
        print(bench.table())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
