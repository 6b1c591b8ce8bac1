"""The Claude Code agent: the run's steps, planner and review as headless ``claude -p`` sessions.

Every call is one fresh CLI session (never ``--resume`` or ``--continue``) in the request's
``workdir``, with the prompt on stdin and ``--output-format json``::

    agent = ClaudeCodeAgent()
    outcome = agent.do_step(StepRequest(run_id="r1", workdir=tree, step=step, plan_text=text))

* A **step** gets the tools ``Read, Edit, Write, Bash, Grep, Glob`` (``--tools`` and
  ``--allowedTools``) in ``--permission-mode acceptEdits``. It escalates by ending its answer
  with a line ``ESCALATE: <why>`` and cites evidence with lines ``EVIDENCE AC1: `path```.
* The **planner** and the **review** get only ``Read, Grep, Glob``: ``--tools`` offers no
  other built-in tool, ``--disallowedTools`` denies every tool that writes, runs code, fetches
  or starts other agents (:data:`DISALLOWED_READ_ONLY`), and ``--permission-mode dontAsk``
  denies whatever is not pre-approved. The CLI refuses a call such as ``Edit`` with ``No such
  tool available: Edit. Edit is disabled for this session, in subagents as well as here.``
  The planner answers with the whole plan in a fenced ``plan`` block or a line
  ``NEEDS PERSON: <why>``; the review with a line ``APPROVED`` or ``SEND BACK: <why>``.

A CLI that cannot be started, exits non-zero, reports an error, runs out of time or prints
something that is not its JSON result raises :class:`~plangate.errors.ClaudeCodeError` with
a remedy; nothing is ever taken for a silent success.

The environment: with ``env=None`` the CLI gets this process's environment (the person's own
HOME, login and API key), minus the variables that would make it believe it runs inside
another Claude Code session. With ``env`` given it gets exactly that mapping (minus the same
variables): nothing of this process's environment is added to it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from plangate.agents.base import (
    Failure,
    PlanOutcome,
    PlanRequest,
    ReviewOutcome,
    ReviewRequest,
    StepOutcome,
    StepRequest,
)
from plangate.claude_cli import find_claude
from plangate.errors import ClaudeCodeError
from plangate.plan.errors import PlanFormatError
from plangate.plan.model import Plan, Step
from plangate.plan.parse import parse_plan
from plangate.processes import RUN_TOKEN_ENV, end_marked, kill_group

__all__ = [
    "DISALLOWED_READ_ONLY",
    "READ_ONLY_TOOLS",
    "STEP_TOOLS",
    "ClaudeCodeAgent",
    "CliResult",
    "agent_environ",
    "extract_plan_block",
    "parse_cli_output",
    "parse_plan_answer",
    "parse_review_answer",
    "parse_step_answer",
    "plan_prompt",
    "review_prompt",
    "step_prompt",
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
_NESTED_SESSION_ENV = frozenset(
    {"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SSE_PORT", RUN_TOKEN_ENV}
)

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
# reading answers

_FENCE = re.compile(r"^[ ]{0,3}(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n]*?)[ \t]*$")
#: Markdown decoration a marker line may carry: quote, list bullet, emphasis, heading, code.
_DECOR = r"[>*_`#\-\s]*"


def _marker(keyword: str) -> re.Pattern[str]:
    return re.compile(rf"^{_DECOR}{keyword}{_DECOR}:{_DECOR}(?P<rest>.*?)[*_`\s]*$")


_ESCALATE = _marker("ESCALATE")
_NEEDS_PERSON = _marker("NEEDS PERSON")
_SEND_BACK = _marker("SEND BACK")
_APPROVED = re.compile(rf"^{_DECOR}(?:APPROVED?\b|(?i:approved?)[.!]?[*_`\s]*$)")
_EVIDENCE = re.compile(
    rf"^{_DECOR}EVIDENCE[ \t]+(?P<id>[A-Za-z][A-Za-z0-9_-]*){_DECOR}:[ \t]*(?P<paths>.*?)\s*$"
)


def _lines_outside_fences(text: str) -> list[str]:
    """The answer's lines that are not inside a fenced code block."""
    lines: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        match = _FENCE.match(line)
        if fence is None:
            if match:
                fence = match.group("fence")
                continue
            lines.append(line)
        elif (
            match
            and match.group("fence")[0] == fence[0]
            and len(match.group("fence")) >= len(fence)
            and not match.group("info")
        ):
            fence = None
    return lines


def _last_marker(text: str, pattern: re.Pattern[str]) -> str | None:
    """The text after the last marker line outside code fences (``""`` if it says nothing)."""
    found: str | None = None
    for line in _lines_outside_fences(text):
        match = pattern.match(line)
        if match:
            found = " ".join(match.group("rest").split())
    return found


def _evidence(text: str) -> Mapping[str, tuple[str, ...]]:
    cited: dict[str, list[str]] = {}
    for line in _lines_outside_fences(text):
        match = _EVIDENCE.match(line)
        if not match:
            continue
        paths = cited.setdefault(match.group("id"), [])
        for part in match.group("paths").split(","):
            path = part.strip().strip("`").strip()
            if path and path not in paths:
                paths.append(path)
    return {k: tuple(v) for k, v in cited.items() if v}


def parse_step_answer(text: str) -> StepOutcome:
    """A step's final answer: ``escalate`` when a line says ``ESCALATE: <why>``, else
    ``done``; ``EVIDENCE <criterion>: <path>, ...`` lines become the cited evidence."""
    reason = _last_marker(text, _ESCALATE)
    evidence = _evidence(text)
    if reason is not None:
        return StepOutcome(
            status="escalate",
            message=text,
            escalation=reason or "the agent escalated without saying why",
            evidence=evidence,
        )
    return StepOutcome(status="done", message=text, escalation=None, evidence=evidence)


def _plan_blocks(lines: Sequence[str]) -> list[tuple[int, list[int]]]:
    """Each fenced block whose info string is ``plan``: (the opening line, the lines that
    could close it, the most likely first)."""
    blocks: list[tuple[int, list[int]]] = []
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        info = opening.group("info").split() if opening else []
        if not opening or not info or info[0].lower() != "plan":
            index += 1
            continue
        fence = opening.group("fence")
        nested = 0
        likely: int | None = None
        bare: list[int] = []
        for j in range(index + 1, len(lines)):
            match = _FENCE.match(lines[j])
            if not match or match.group("fence")[0] != fence[0]:
                continue
            if match.group("info"):
                nested += 1  # a closing fence has no info string: this opens a code block
            elif len(match.group("fence")) >= len(fence):
                bare.append(j)
                if nested:
                    nested -= 1
                elif likely is None:
                    likely = j
        closes = ([likely] if likely is not None else []) + [j for j in reversed(bare)]
        blocks.append((index, list(dict.fromkeys(closes))))
        index = (likely if likely is not None else len(lines)) + 1
    return blocks


def _parses(text: str) -> bool:
    try:
        parse_plan(text)
    except PlanFormatError:
        return False
    return True


def extract_plan_block(text: str) -> tuple[str, tuple[int, int]] | None:
    """The plan in the answer's (last) fenced ``plan`` block, and the block's line range.

    A plan's own code blocks may use the same fence as the block around it; of the possible
    ends, the first that gives a plan ``parse_plan`` accepts is taken, else the most likely.
    An answer with no ``plan`` block but a plan from a ``# Plan:`` line on that parses is
    accepted too. ``None`` when there is no plan at all.
    """
    lines = text.splitlines()
    blocks = _plan_blocks(lines)
    if blocks:
        start, closes = blocks[-1]
        if not closes:  # never closed: the rest of the answer
            return _joined(lines[start + 1 :]), (start, len(lines))
        for end in closes:
            body = _joined(lines[start + 1 : end])
            if _parses(body):
                return body, (start, end + 1)
        end = closes[0]
        return _joined(lines[start + 1 : end]), (start, end + 1)
    for index, line in enumerate(lines):
        if re.match(r"^#[ \t]+Plan[ \t]*:", line):
            body = _joined(lines[index:])
            if _parses(body):
                return body, (index, len(lines))
            break
    return None


def _joined(lines: Sequence[str]) -> str:
    return "\n".join(lines).strip("\n") + "\n"


def parse_plan_answer(text: str) -> PlanOutcome:
    """The planner's answer: ``NEEDS PERSON: <why>`` (outside the plan) wins; else the plan
    in its fenced ``plan`` block; else neither (the planner wrote no usable version)."""
    found = extract_plan_block(text)
    outside = text
    if found is not None:
        lines = text.splitlines()
        start, end = found[1]
        outside = "\n".join(lines[:start] + lines[end:])
    needs = _last_marker(outside, _NEEDS_PERSON)
    if needs is not None:
        return PlanOutcome(
            plan_text=None,
            needs_person=needs or "the planner says a person must decide, without saying why",
            message=text,
        )
    return PlanOutcome(plan_text=found[0] if found else None, needs_person=None, message=text)


def parse_review_answer(text: str) -> ReviewOutcome:
    """The review's answer: sent back when a line says ``SEND BACK: <why>``, approved when a
    line says ``APPROVED``; an answer with neither is sent back (no verdict is no approval)."""
    reason = _last_marker(text, _SEND_BACK)
    if reason is not None:
        return ReviewOutcome(
            approved=False,
            reason=reason or "the review sent it back without saying why",
            message=text,
        )
    if any(_APPROVED.match(line) for line in _lines_outside_fences(text)):
        return ReviewOutcome(approved=True, reason="", message=text)
    return ReviewOutcome(
        approved=False,
        reason="the review gave no verdict (no `APPROVED` or `SEND BACK:` line)",
        message=text,
    )


# ------------------------------------------------------------------------------------------
# prompts

_PLAN_FORMAT = """\
The plan format (Markdown; sections exactly these, in this order, each once):

````markdown
# Plan: <title>

## Goal

<a few sentences: what the plan achieves and why>

## Implementation plan

### Step 1: <title>
Files: `path/one.py`, `tests/test_one.py`
Serves: AC1

<what to do in this step>

### Step 2: <title>
Files: `path/two.py`
Serves: AC1, AC2

<what to do>

## Checks

- Tests: `pytest -q` (timeout 300s)

## Acceptance criteria

- AC1: <a criterion that can be verified>
- AC2: <another>

## Review record
````

Rules: `## Implementation plan` holds only steps (`### Step <n>: <title>`, numbered in
order from 1), each with its `Files:` line (paths relative to the project, in backticks, or
`none`) and `Serves:` line (criterion ids, or `none`) right under the heading, then its
text; use `####` for headings inside a step. Each check is a list item with its command in
backticks. Every acceptance criterion is served by at least one step."""


def _fence(text: str) -> str:
    """A backtick fence longer than any run of backticks in ``text``."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _block(text: str, info: str = "") -> str:
    fence = _fence(text)
    return f"{fence}{info}\n{text.rstrip()}\n{fence}"


def _criteria_lines(plan_text: str | None, step: Step) -> list[str]:
    plan: Plan | None = None
    if plan_text:
        try:
            plan = parse_plan(plan_text)
        except PlanFormatError:
            plan = None
    lines: list[str] = []
    for criterion_id in step.serves:
        criterion = plan.criterion(criterion_id) if plan is not None else None
        lines.append(f"- {criterion_id}: {criterion.text}" if criterion else f"- {criterion_id}")
    return lines


def _failure_lines(failures: Iterable[Failure]) -> list[str]:
    lines: list[str] = []
    for number, failure in enumerate(failures, 1):
        lines.append(f"{number}. ({failure.kind}) {failure.summary}")
        if failure.output_tail.strip():
            lines.append("   The end of its output:")
            lines.append(_block(failure.output_tail, "text"))
    return lines


def step_prompt(request: StepRequest) -> str:
    """The prompt of one step (or, with no step, of the bare task)."""
    parts: list[str] = []
    step = request.step
    if step is not None:
        parts.append(
            f"You are carrying out one step of an approved plan (plan version {request.version}),"
            " in this git worktree. Carry out this step and nothing else; later steps come later."
        )
        if request.plan_text:
            parts.append("The whole plan:\n\n" + _block(request.plan_text, "markdown"))
        files = ", ".join(f"`{f}`" for f in step.files) or "none"
        step_lines = [
            f"The step to carry out now: Step {step.number}: {step.title}",
            f"Files: {files}",
        ]
        criteria = _criteria_lines(request.plan_text, step)
        if criteria:
            step_lines.append("Acceptance criteria it serves:")
            step_lines.extend(criteria)
        else:
            step_lines.append("Acceptance criteria it serves: none")
        if step.body.strip():
            step_lines.append("What to do:\n\n" + step.body.strip())
        parts.append("\n".join(step_lines))
    elif request.plan_text:
        parts.append(
            f"You are finishing the change for an approved plan (plan version {request.version})"
            " in this git worktree: its steps are carried out, and what failed is below."
        )
        parts.append("The plan:\n\n" + _block(request.plan_text, "markdown"))
    else:
        parts.append("You are carrying out this task in this git worktree:")
        parts.append(_block(request.task or "(no task was given)", "text"))
    if request.feedback:
        parts.append(
            "What failed last time, to fix now:\n\n" + "\n".join(_failure_lines(request.feedback))
        )
    if request.reply:
        parts.append("The person's reply, which starts this turn:\n\n" + _block(request.reply))
    rules = [
        "Rules:",
        "- Do not commit, branch or push: the run commits each step itself.",
        "- Run the project's tests or checks if that helps you verify your work.",
    ]
    if step is not None or request.plan_text:
        rules.insert(
            1,
            "- Only touch the files this step names. Reading other files is fine; changing "
            "them is not."
            if step is not None
            else "- Only touch files the plan names. Reading other files is fine; changing "
            "them is not.",
        )
        rules.append(
            "- If the step cannot be done as written, needs a file the plan does not name, or "
            "is too large for one context, stop and end your answer with one line "
            "`ESCALATE: <why>`, naming the file or the problem."
        )
    else:
        rules.append(
            "- If the task cannot be done, stop and end your answer with one line "
            "`ESCALATE: <why>`."
        )
    rules.append(
        "- If you created a file that is evidence for an acceptance criterion (a report, "
        "an output), cite it on a line `EVIDENCE <criterion id>: <path>` (paths relative to "
        "the worktree, separated by commas)."
    )
    rules.append("- Finish with a short summary of what you changed.")
    parts.append("\n".join(rules))
    return "\n\n".join(parts) + "\n"


def plan_prompt(request: PlanRequest) -> str:
    """The fresh planner's whole prompt: built from the typed request only."""
    parts: list[str] = []
    if request.previous_plan is not None:
        parts.append(
            f"You are the planner of a coding run. The plan below did not hold. Write version "
            f"{request.version} of it: a whole new plan. You may read the project's files "
            "(Read, Grep, Glob); you cannot change any."
        )
        parts.append("The version that did not hold:\n\n" + _block(request.previous_plan, "plan"))
    else:
        parts.append(
            "You are the planner of a coding run. Write a plan for the task below. You may "
            "read the project's files (Read, Grep, Glob); you cannot change any."
        )
    if request.task:
        parts.append("The task:\n\n" + _block(request.task, "text"))
    if request.failures:
        parts.append("What failed:\n\n" + "\n".join(_failure_lines(request.failures)))
    else:
        parts.append("What failed: nothing was reported.")
    if request.changed_files:
        parts.append(
            "Files changed so far (since the run began):\n"
            + "\n".join(f"- `{name}`" for name in request.changed_files)
        )
    else:
        parts.append("Files changed so far: none.")
    if request.diff.strip():
        parts.append("The change so far:\n\n" + _block(request.diff, "diff"))
    else:
        parts.append("The change so far: empty.")
    rules = ["Rules:"]
    if request.previous_plan is not None:
        rules += [
            "- Every step that was already carried out (its work is in the change above) "
            "must stay exactly as it is: the same number, title, `Files:`, `Serves:` and "
            "text. A version that rewrites such a step, or drops a file such a step changed, "
            "is refused.",
            "- Add at least one new step after them, numbered on; the run carries on from the "
            "first step you add. Fix what failed in the new steps.",
        ]
    rules += [
        "- Answer with the whole plan in one fenced block whose info string is `plan`. If the "
        "plan itself contains ``` code blocks, open and close the block with four backticks "
        "(````plan).",
        "- If the plan cannot be fixed without a person's decision, answer instead with one "
        "line `NEEDS PERSON: <why>` and no plan.",
    ]
    parts.append("\n".join(rules))
    parts.append(_PLAN_FORMAT)
    return "\n\n".join(parts) + "\n"


def review_prompt(request: ReviewRequest) -> str:
    """The review's prompt: the plan or task, the changed files and the diff."""
    parts = [
        "You are reviewing a change a coding agent made in this git worktree. You may read "
        "the project's files (Read, Grep, Glob); you cannot change any."
    ]
    if request.plan_text:
        parts.append("The plan it carried out:\n\n" + _block(request.plan_text, "markdown"))
    if request.task:
        parts.append("The task:\n\n" + _block(request.task, "text"))
    parts.append(
        "Files changed:\n" + "\n".join(f"- `{name}`" for name in request.changed_files)
        if request.changed_files
        else "Files changed: none."
    )
    parts.append(
        "The change:\n\n" + _block(request.diff, "diff")
        if request.diff.strip()
        else "The change: empty."
    )
    parts.append(
        "Check that the change does what the plan or task asks, and nothing it should not. "
        "End your answer with one line: `APPROVED`, or `SEND BACK: <one-line reason>`."
    )
    return "\n\n".join(parts) + "\n"


# ------------------------------------------------------------------------------------------
# the agent


class ClaudeCodeAgent:
    """The :class:`~plangate.agents.base.Agent` that runs the headless Claude Code CLI.

    ``binary`` defaults to :func:`~plangate.testing.claude.find_claude` (looked up on first
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
    ) -> list[str]:
        """The command line of one session; the prompt goes to its stdin."""
        args = [
            str(self.binary),
            "-p",
            "--output-format",
            "json",
            "--session-id",
            session_id,
            "--tools",
            ",".join(tools),
            "--allowedTools",
            ",".join(tools),
        ]
        if disallowed:
            args += ["--disallowedTools", ",".join(disallowed)]
        args += ["--permission-mode", permission_mode, "--permission-prompts", "none"]
        if self.model:
            args += ["--model", self.model]
        return args

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
        args = self.command(
            tools=tools,
            disallowed=disallowed,
            permission_mode=permission_mode,
            session_id=str(uuid.uuid4()),
        )
        self.last_args = args
        self.last_result = None
        token = uuid.uuid4().hex
        env = {**agent_environ(self._env), RUN_TOKEN_ENV: token}
        started = time.monotonic()
        try:
            proc = subprocess.Popen(
                args,
                cwd=workdir,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
                start_new_session=True,  # its own process group: a timeout ends its shells too
            )
        except OSError as error:
            raise ClaudeCodeError(
                f"cannot start Claude Code ({args[0]}) for the {purpose}: {error}",
                "check that the Claude Code CLI is installed (`make setup`) or set "
                "PLANGATE_CLAUDE_BIN to a claude executable",
            ) from error
        timed_out = False
        with proc:
            try:
                stdout, stderr = proc.communicate(prompt, timeout=self.timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                kill_group(proc)
                try:
                    stdout, stderr = proc.communicate(timeout=10)
                except subprocess.TimeoutExpired:
                    stdout, stderr = "", ""
            finally:
                if proc.poll() is None:
                    kill_group(proc)
                    proc.wait(timeout=10)
            kill_group(proc)  # whatever it left behind in its group
            end_marked(token)  # and in groups of their own (its Bash tool's)
        elapsed = time.monotonic() - started
        if timed_out:
            raise ClaudeCodeError(
                f"Claude Code did not finish the {purpose} within {self.timeout:g}s "
                f"(session ended; stderr: {_tail(stderr)})",
                "raise the agent's timeout, or split the step into smaller steps",
            )
        parsed = parse_cli_output(stdout)
        self.last_result = parsed
        if proc.returncode != 0:
            said = parsed.result if parsed is not None and parsed.result else _tail(stderr)
            raise ClaudeCodeError(
                f"Claude Code failed the {purpose} (exit {proc.returncode} after "
                f"{elapsed:.1f}s): {said or _tail(stdout) or 'no output'}",
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
