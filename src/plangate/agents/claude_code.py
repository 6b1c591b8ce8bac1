"""The Claude Code agent: the run's steps, planner and review as headless ``claude -p`` sessions.

Every call is one fresh CLI session (never ``--resume`` or ``--continue``) in the request's
``workdir``, with the prompt on stdin and ``--output-format json``::

    agent = ClaudeCodeAgent()
    outcome = agent.do_step(StepRequest(run_id="r1", workdir=tree, step=step, plan_text=text))

The prompts are :mod:`plangate.agents.prompts`, the answers are read by
:mod:`plangate.agents.answers`; this module is the process: its flags, its environment, its
bounds (:func:`plangate.processes.run_bounded`) and its JSON result.

* A **step** gets the tools ``Read, Edit, Write, Bash, Grep, Glob`` (``--tools`` and
  ``--allowedTools``) in ``--permission-mode acceptEdits``. It escalates by ending its answer
  with a line ``ESCALATE: <why>`` and cites evidence with lines ``EVIDENCE AC1: `path```.
* The **planner** and the **review** get only ``Read, Grep, Glob``: ``--tools`` offers no
  other built-in tool, ``--disallowedTools`` denies every tool that writes, runs code, fetches
  or starts other agents (:data:`DISALLOWED_READ_ONLY`), and ``--permission-mode dontAsk``
  with nothing pre-approved allows reads inside the worktree only. The CLI refuses a call
  such as ``Edit`` with ``No such tool available: Edit. Edit is disabled for this session,
  in subagents as well as here.`` They run confined
  (:func:`plangate.agents.confinement.confined`): a HOME and config folder of their own, no
  settings, hooks, plugins or MCP servers but plangate's, and the bubblewrap sandbox where
  it works;
  :attr:`ClaudeCodeAgent.last_isolation` says how the last one ran.
  The planner answers with the whole plan in a fenced ``plan`` block or a line
  ``NEEDS PERSON: <why>``; the review with a line ``APPROVED`` or ``SEND BACK: <why>``.

A CLI that cannot be started, exits non-zero, reports an error, runs out of time or prints
something that is not its JSON result raises :class:`~plangate.errors.ClaudeCodeError` (an
:class:`~plangate.errors.AgentError`: the run waits on a person) with a remedy; nothing is
ever taken for a silent success. When the session ends, everything it started is killed,
its Bash tool's processes in their own process groups too.

The environment: with ``env=None`` the CLI gets this process's environment (the person's own
HOME, login and API key), minus the variables that would make it believe it runs inside
another Claude Code session. With ``env`` given it gets exactly that mapping (minus the same
variables): nothing of this process's environment is added to it. A read-only session's HOME,
CLAUDE_CONFIG_DIR and TMPDIR are then replaced by its own folder's.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from plangate.agents.answers import parse_plan_answer, parse_review_answer, parse_step_answer
from plangate.agents.base import (
    PlanOutcome,
    PlanRequest,
    ReviewOutcome,
    ReviewRequest,
    StepOutcome,
    StepRequest,
)
from plangate.agents.confinement import confined
from plangate.agents.prompts import plan_prompt, review_prompt, step_prompt
from plangate.claude_cli import find_claude
from plangate.errors import ClaudeCodeError
from plangate.processes import run_bounded

__all__ = [
    "DISALLOWED_READ_ONLY",
    "READ_ONLY_TOOLS",
    "STEP_TOOLS",
    "ClaudeCodeAgent",
    "CliResult",
    "agent_environ",
    "parse_cli_output",
]

#: The tools a step may use.
STEP_TOOLS: tuple[str, ...] = ("Read", "Edit", "Write", "Bash", "Grep", "Glob")
#: The only tools the planner and the review get.
READ_ONLY_TOOLS: tuple[str, ...] = ("Read", "Grep", "Glob")
#: Denied outright to the planner and the review: every tool that writes a file, runs code,
#: fetches, loads more tools, starts or messages other agents, or schedules work. (Names the
#: CLI does not know are accepted and ignored, so the list can name tools of other versions.)
DISALLOWED_READ_ONLY: tuple[str, ...] = (
    "Edit",
    "MultiEdit",
    "Write",
    "NotebookEdit",
    "Bash",
    "BashOutput",
    "KillShell",
    "PowerShell",
    "WebFetch",
    "WebSearch",
    "Agent",
    "Task",
    "TaskStop",
    "Workflow",
    "Skill",
    "ToolSearch",
    "TodoWrite",
    "SendMessage",
    "ListAgents",
    "ReportFindings",
    "ScheduleWakeup",
    "Monitor",
    "CronCreate",
    "CronDelete",
    "CronList",
    "EnterWorktree",
    "ExitWorktree",
    "ExitPlanMode",
)

#: Variables that would make the CLI believe it runs inside another Claude Code session.
_NESTED_SESSION_ENV = frozenset({"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SSE_PORT"})

_CHECK_CLI_REMEDY = (
    "check that `claude -p hello` works in this shell (logged in, or ANTHROPIC_API_KEY set) "
    "and read the CLI's message above"
)

Purpose = Literal["step", "planner", "review"]

# ------------------------------------------------------------------------------------------
# the CLI's result


@dataclass(frozen=True, slots=True)
class CliResult:
    """The parts of ``claude -p --output-format json``'s result object plangate uses."""

    result: str
    is_error: bool
    session_id: str | None
    subtype: str | None
    raw: Mapping[str, Any]


def parse_cli_output(stdout: str) -> CliResult | None:
    """The result object printed by ``--output-format json``, or ``None`` if there is none.

    Accepts the object alone or as the last JSON line among others.
    """
    candidates: list[Any] = []
    text = stdout.strip()
    if not text:
        return None
    try:
        candidates.append(json.loads(text))
    except ValueError:
        for line in reversed(text.splitlines()):
            line = line.strip()
            if line.startswith("{"):
                try:
                    candidates.append(json.loads(line))
                except ValueError:
                    continue
                break
    for data in candidates:
        if isinstance(data, list):  # a stream of events: take the result event
            data = next(
                (e for e in reversed(data) if isinstance(e, dict) and e.get("type") == "result"),
                None,
            )
        if not isinstance(data, dict) or ("result" not in data and "is_error" not in data):
            continue
        result = data.get("result")
        session_id = data.get("session_id")
        subtype = data.get("subtype")
        return CliResult(
            result=result if isinstance(result, str) else "",
            is_error=bool(data.get("is_error")),
            session_id=session_id if isinstance(session_id, str) else None,
            subtype=subtype if isinstance(subtype, str) else None,
            raw=dict(data),
        )
    return None


def agent_environ(
    env: Mapping[str, str] | None, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The CLI's environment: ``env`` exactly when given, else ``base`` (``os.environ``);
    either way without the variables of an enclosing Claude Code session."""
    source = env if env is not None else (base if base is not None else os.environ)
    environ = {k: v for k, v in source.items() if k not in _NESTED_SESSION_ENV}
    # Python run by the agent's shell must not leave bytecode caches in the worktree, where
    # they would count as files the step changed.
    environ["PYTHONDONTWRITEBYTECODE"] = "1"
    return environ


# ------------------------------------------------------------------------------------------
# the agent


class ClaudeCodeAgent:
    """The :class:`~plangate.agents.base.Agent` that runs the headless Claude Code CLI.

    ``binary`` defaults to :func:`~plangate.claude_cli.find_claude` (looked up on first
    use); ``env`` is the CLI's whole environment (default: this process's); ``timeout`` is
    the limit of one session in seconds; ``model`` is passed as ``--model``.
    """

    def __init__(
        self,
        binary: Path | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 600,
        model: str | None = None,
    ) -> None:
        self._binary = binary
        self._env = dict(env) if env is not None else None
        self.timeout = timeout
        self.model = model
        #: The command line of the last session (for diagnostics and tests).
        self.last_args: list[str] | None = None
        #: The parsed result of the last session.
        self.last_result: CliResult | None = None
        #: How the last planner or review session was confined (``None`` after a step).
        self.last_isolation: str | None = None

    @property
    def binary(self) -> Path:
        if self._binary is None:
            self._binary = find_claude()
        return self._binary

    # -- the interface ---------------------------------------------------------------------
    def do_step(self, request: StepRequest) -> StepOutcome:
        result = self._run(
            "step",
            step_prompt(request),
            request.workdir,
            tools=STEP_TOOLS,
            disallowed=(),
            permission_mode="acceptEdits",
        )
        return parse_step_answer(result.result)

    def plan(self, request: PlanRequest) -> PlanOutcome:
        result = self._run(
            "planner",
            plan_prompt(request),
            request.workdir,
            tools=READ_ONLY_TOOLS,
            disallowed=DISALLOWED_READ_ONLY,
            permission_mode="dontAsk",
        )
        return parse_plan_answer(result.result)

    def review(self, request: ReviewRequest) -> ReviewOutcome:
        result = self._run(
            "review",
            review_prompt(request),
            request.workdir,
            tools=READ_ONLY_TOOLS,
            disallowed=DISALLOWED_READ_ONLY,
            permission_mode="dontAsk",
        )
        return parse_review_answer(result.result)

    # -- running the CLI -------------------------------------------------------------------
    def command(
        self,
        *,
        tools: Sequence[str],
        disallowed: Sequence[str],
        permission_mode: str,
        session_id: str,
        approved: Sequence[str] | None = None,
        extra: Sequence[str] = (),
    ) -> list[str]:
        """The command line of one session; the prompt goes to its stdin. ``approved`` are
        the pre-approved tools (default: ``tools``), ``extra`` more flags at the end."""
        approved = tools if approved is None else approved
        args = [
            str(self.binary),
            "-p",
            "--output-format",
            "json",
            "--session-id",
            session_id,
            "--tools",
            ",".join(tools),
        ]
        if approved:
            args += ["--allowedTools", ",".join(approved)]
        if disallowed:
            args += ["--disallowedTools", ",".join(disallowed)]
        args += ["--permission-mode", permission_mode, "--permission-prompts", "none"]
        if self.model:
            args += ["--model", self.model]
        return [*args, *extra]

    def _run(
        self,
        purpose: Purpose,
        prompt: str,
        workdir: Path,
        *,
        tools: Sequence[str],
        disallowed: Sequence[str],
        permission_mode: str,
    ) -> CliResult:
        if not Path(workdir).is_dir():
            raise ClaudeCodeError(
                f"cannot start the {purpose}: the worktree {workdir} does not exist",
                "check that the run's worktree was created and not removed",
            )
        environ = agent_environ(self._env)
        self.last_isolation = None
        if purpose == "step":
            args = self.command(
                tools=tools,
                disallowed=disallowed,
                permission_mode=permission_mode,
                session_id=str(uuid.uuid4()),
            )
            return self._call(purpose, args, prompt, workdir, environ)
        # The planner and the review: confined (plangate.agents.confinement). No tool is
        # pre-approved, so dontAsk mode allows reads inside the worktree and refuses others.
        with confined(Path(workdir), environ, self.binary) as confinement:
            self.last_isolation = confinement.note
            args = self.command(
                tools=tools,
                disallowed=disallowed,
                permission_mode=permission_mode,
                session_id=str(uuid.uuid4()),
                approved=(),
                extra=confinement.cli_flags,
            )
            return self._call(
                purpose, args, prompt, workdir, confinement.environ, confinement.prefix
            )

    def _call(
        self,
        purpose: Purpose,
        args: list[str],
        prompt: str,
        workdir: Path,
        environ: Mapping[str, str],
        prefix: Sequence[str] = (),
    ) -> CliResult:
        self.last_args = [*prefix, *args]
        self.last_result = None
        try:
            done = run_bounded(
                self.last_args, cwd=workdir, env=environ, input=prompt, timeout=self.timeout
            )
        except OSError as error:
            raise ClaudeCodeError(
                f"cannot start Claude Code ({args[0]}) for the {purpose}: {error}",
                "check that the Claude Code CLI is installed (`make setup`) or set "
                "PLANGATE_CLAUDE_BIN to a claude executable",
            ) from error
        stdout, stderr = done.stdout, done.stderr
        if done.timed_out:
            raise ClaudeCodeError(
                f"Claude Code did not finish the {purpose} within {self.timeout:g}s "
                f"(session ended; stderr: {_tail(stderr)})",
                "raise the agent's timeout, or split the step into smaller steps",
            )
        parsed = parse_cli_output(stdout)
        self.last_result = parsed
        if done.returncode != 0:
            said = parsed.result if parsed is not None and parsed.result else _tail(stderr)
            raise ClaudeCodeError(
                f"Claude Code failed the {purpose} (exit {done.returncode} after "
                f"{done.duration:.1f}s): {said or _tail(stdout) or 'no output'}",
                _CHECK_CLI_REMEDY,
            )
        if parsed is None:
            raise ClaudeCodeError(
                f"Claude Code's output for the {purpose} is not its JSON result: "
                f"{_tail(stdout) or 'no output'} (stderr: {_tail(stderr) or 'empty'})",
                "check that the CLI is a Claude Code version that supports "
                "`--output-format json` (`claude --version`)",
            )
        if parsed.is_error:
            raise ClaudeCodeError(
                f"Claude Code reported an error in the {purpose} "
                f"({parsed.subtype or 'error'}): {parsed.result or 'no message'}",
                _CHECK_CLI_REMEDY,
            )
        return parsed


def _tail(text: str | None, limit: int = 800) -> str:
    text = (text or "").strip()
    return text if len(text) <= limit else "…" + text[-limit:]
