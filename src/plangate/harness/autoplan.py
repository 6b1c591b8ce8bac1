"""Plays the model through an /autoplan run against the real Claude Code CLI.

A :class:`Player` answers the stand-in's requests: the main conversation from a list of
steps (each a turn, or a function of the request that returns one, so a step can use what
the previous tool printed), subagents with a reviewer's answer, side requests canned.
:class:`AutoplanProject` knows the paths of one project with plangate set up in a fresh HOME.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from plangate.harness.claude import ClaudeEnv, ClaudeResult
from plangate.harness.standin import ModelRequest, Reply, canned_side_reply, text, tool_use
from plangate.harness.standin.script import ToolUse, TurnLike, as_reply
from plangate.processes import run_bounded

Step = TurnLike | Callable[[ModelRequest], TurnLike]

PLAN = """# Plan: Notes search

## Goal
Let people find a note by a word in it. Scope: design

## Implementation plan
### Step 1: Index the notes
Files: `notes/index.py`
Serves: AC1
Build a word index when a note is saved.

### Step 2: Search page
Files: `web/search.html`
Serves: AC1
A search box and a results list.

## Checks
- `pytest -q`

## Acceptance criteria
- AC1: Searching a word lists every note that contains it.

## Review record
"""

REPORT = """Findings are applied to the plan and each decision has its reason in the review record.

Phase 1 complete

Top risks: the index can go stale when a note is edited outside the app."""


REVIEWER_ANSWER = "INPUT: reviewed\n1. No blockers."


class Player:
    """A scripted model: main steps in order, a fixed reviewer answer for subagents."""

    def __init__(self, steps: Sequence[Step], reviewer: str = REVIEWER_ANSWER) -> None:
        self.steps = list(steps)
        self.reviewer = reviewer
        self.requests: list[ModelRequest] = []

    def respond(self, request: ModelRequest) -> Reply:
        if request.kind == "side":
            return canned_side_reply(request)
        if request.kind == "subagent":
            return as_reply(self.reviewer)
        self.requests.append(request)
        if not self.steps:
            return as_reply("Done.")
        step = self.steps.pop(0)
        return as_reply(step(request) if callable(step) else step)


def last_result_json(request: ModelRequest) -> dict[str, Any]:
    """The JSON the previous Bash call printed (the last tool result of the request)."""
    results = request.tool_results()
    assert results, "the previous step made no tool call"
    content = results[-1].get("content")
    if isinstance(content, list):
        content = "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
    value = json.loads(str(content))
    assert isinstance(value, dict)
    return value


class AutoplanProject:
    """One git project with a plan, plangate set up in the session's HOME."""

    def __init__(self, env: ClaudeEnv, skills: Path | None = None) -> None:
        """``skills``: the folder Claude Code loads the /autoplan skill from (default: the
        HOME's ``.claude/skills``, where ``plangate setup`` puts it)."""
        self.env = env
        self.project = env.project_dir
        self.plan = self.project / "plan.md"
        self.plan.write_text(PLAN, encoding="utf-8")
        done = run_bounded(["git", "init", "-q", str(self.project)], timeout=60)
        assert done.returncode == 0 and not done.timed_out, done.stderr
        self.restore = self.project / ".plangate" / "tmp" / "autoplan" / "plan-restore-1.md"
        self.skill = (skills or env.home / ".claude" / "skills") / "autoplan"
        self.plangate = os.path.join(os.path.dirname(sys.executable), "plangate")
        self.state_root = env.home / ".plangate"
        self.outputs: dict[str, dict[str, Any]] = {}

    def environ(self) -> dict[str, str]:
        env = self.env.environ()
        env["PLANGATE_STATE_ROOT"] = str(self.state_root)
        return env

    def setup(self, *args: str) -> str:
        result = run_bounded([self.plangate, "setup", *args], env=self.environ(), timeout=60)
        assert result.returncode == 0 and not result.timed_out, result.stderr
        return result.stdout

    def run(self, prompt: str, player: Player, **options: Any) -> ClaudeResult:
        options.setdefault("allowed_tools", ["Read", "Bash", "Agent", "Edit", "Write"])
        options.setdefault("timeout", 180)
        env = options.pop("env", {})
        env.setdefault("PLANGATE_STATE_ROOT", str(self.state_root))
        return self.env.run(prompt, env=env, **options)

    # --- steps ---------------------------------------------------------------------------

    def bash(self, *words: str) -> TurnLike:
        command = " ".join(f'"{w}"' if (" " in w or not w) else w for w in words)
        return tool_use("Bash", command=command, description="plangate")

    def init(self) -> TurnLike:
        return self.bash(
            self.plangate, "autoplan", "init", str(self.plan), str(self.plan), str(self.restore)
        )

    def read_driver(self, phase: str) -> ToolUse:
        name = "tasks-aggregator.md" if phase == "tasks" else f"{phase}-phase.md"
        return tool_use("Read", file_path=str(self.skill / "sections" / name))

    def checkpoint(self, phase: str) -> TurnLike:
        return self.bash(self.plangate, "autoplan", "checkpoint", str(self.restore), phase)

    def dispatch(self, phase: str, **extra: Any) -> Step:
        def step(request: ModelRequest) -> TurnLike:
            manifest = last_result_json(request)
            self.outputs[f"checkpoint:{phase}"] = manifest
            return tool_use(
                "Agent",
                description=f"{phase} review",
                prompt=extra.pop("prompt", manifest["dispatchPrompt"]),
                subagent_type="general-purpose",
                run_in_background=False,
                **extra,
            )

        return step

    def prepare_close(self, phase: str) -> TurnLike:
        return self.bash(self.plangate, "autoplan", "prepare-close", str(self.restore), phase)

    def read_close(self, phase: str) -> Step:
        def step(request: ModelRequest) -> TurnLike:
            packet = last_result_json(request)
            self.outputs[f"close:{phase}"] = packet
            return tool_use("Read", file_path=packet["closePacketPath"])

        return step

    def publish(self, phase: str, report: str = REPORT) -> TurnLike:
        return [
            text(report),
            tool_use(
                "Bash",
                command=f"true autoplan-published {phase}",
                description="Publish the phase report",
            ),
        ]


def decisions(state_root: Path) -> list[dict[str, Any]]:
    path = state_root / "analytics" / "autoplan-guard.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
