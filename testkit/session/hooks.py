"""Hook running for the simulated session: the real PreToolUse hook, as Claude Code runs it.

:meth:`HookRunner.hook` runs the command ``plangate setup`` registered in
``<home>/.claude/settings.json``, as a subprocess, with the payload Claude Code sends and the
environment it sets (``HOME``, ``CLAUDE_PROJECT_DIR``, ``PLANGATE_STATE_ROOT``). A call that
is not journaled yet is judged on the payload path, a journaled one on the journal path; a
denial is written into the journal as Claude Code writes it (an ``is_error`` result
``PreToolUse:<Tool> hook error: <reason>``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from testkit.journals import Record
from testkit.session.base import SessionParts
from testkit.session.calls import Call

LOG_RELATIVE = os.path.join("analytics", "autoplan-guard.jsonl")
_CODE = re.compile(r"\((?:code|journal shape) ([a-z_]+(?::[^,)]*)?), Claude Code ")


def venv_plangate() -> str:
    """The ``plangate`` executable next to the running interpreter (the installation's)."""
    return os.path.join(os.path.dirname(sys.executable), "plangate")


def clean_env() -> dict[str, str]:
    """This process's environment without plangate's, Claude Code's and ``HOME``."""
    env = dict(os.environ)
    for key in list(env):
        if key.startswith(("PLANGATE_", "CLAUDE")) or key in ("HOME",):
            del env[key]
    return env


def install(home: str | os.PathLike[str], state_root: str | os.PathLike[str]) -> str:
    """Run ``plangate setup`` with ``HOME``/``PLANGATE_STATE_ROOT`` in a throwaway place, as a
    user would; returns its stdout. The skills land in ``<home>/.claude/skills``."""
    env = clean_env()
    env["HOME"] = os.fspath(home)
    env["PLANGATE_STATE_ROOT"] = os.fspath(state_root)
    completed = subprocess.run(
        [venv_plangate(), "setup"],
        env=env,
        cwd=os.fspath(home),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"plangate setup failed: {completed.stderr}")
    return completed.stdout


class HookOutcome:
    """What the real hook answered for one call."""

    def __init__(
        self,
        output: dict[str, Any],
        log: list[dict[str, Any]],
        elapsed: float,
        returncode: int,
        stdout: str,
        stderr: str,
        payload: dict[str, Any],
    ) -> None:
        self.output = output
        self.log = log
        self.elapsed = elapsed
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.payload = payload
        specific = output.get("hookSpecificOutput")
        specific = specific if isinstance(specific, dict) else {}
        decision = specific.get("permissionDecision")
        self.decision: str | None = decision if isinstance(decision, str) else None
        reason = specific.get("permissionDecisionReason")
        self.reason: str | None = reason if isinstance(reason, str) else None
        context = specific.get("additionalContext")
        self.additional_context: str | None = context if isinstance(context, str) else None
        message = output.get("systemMessage")
        self.system_message: str | None = message if isinstance(message, str) else None

    @property
    def denied(self) -> bool:
        return self.decision == "deny"

    @property
    def approved(self) -> bool:
        """An explicit allow (the owned-read approval)."""
        return self.decision == "allow"

    @property
    def unverified(self) -> bool:
        return self.decision is None and self.system_message is not None

    @property
    def allowed(self) -> bool:
        return not self.denied

    @property
    def text(self) -> str:
        """The text the model or the person sees (denial reason or warning), else ``""``."""
        return self.reason if self.denied and self.reason else (self.system_message or "")

    @property
    def code(self) -> str | None:
        """The guard code named in the message; None for a verified allow."""
        for text in (self.reason, self.system_message):
            if text:
                found = _CODE.search(text)
                if found:
                    return found.group(1)
        return None

    @property
    def entry(self) -> dict[str, Any] | None:
        """The decision log line this hook run appended (None when it logged nothing)."""
        return self.log[-1] if self.log else None

    @property
    def path(self) -> str | None:
        entry = self.entry
        return str(entry["path"]) if entry is not None else None

    @property
    def disposition(self) -> str | None:
        entry = self.entry
        return str(entry["disposition"]) if entry is not None else None

    def __repr__(self) -> str:
        return (
            f"HookOutcome(decision={self.decision!r}, code={self.code!r}, path={self.path!r}, "
            f"text={self.text[:160]!r})"
        )


class HookRun:
    """One run of a hook command: what it is given, and (:meth:`finished`) what it gave."""

    def __init__(
        self,
        command: str,
        data: bytes,
        env: dict[str, str],
        during: Callable[[], None] | None,
        timeout: float,
        *,
        registered: bool,
    ) -> None:
        self.command = command
        self.data = data
        self.env = env
        self.during = during
        self.timeout = timeout
        self.registered = registered  # the command settings.json registers for the tool
        self.stdout = b""
        self.stderr = b""
        self.returncode = -1
        self.elapsed = 0.0

    def finished(self, stdout: bytes, stderr: bytes, returncode: int, elapsed: float) -> None:
        self.stdout, self.stderr, self.returncode, self.elapsed = (
            stdout,
            stderr,
            returncode,
            elapsed,
        )


class HookRunner(SessionParts):
    """Runs the real hook for a call, and writes what Claude Code writes for its answer."""

    def decisions(self) -> list[dict[str, Any]]:
        """Every line of the guard's decision log."""
        try:
            text = self.log_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def hook_commands(self, tool_name: str) -> list[str]:
        """Every PreToolUse command registered for ``tool_name`` in ``~/.claude/settings.json``,
        in the order Claude Code finds them."""
        settings = os.path.join(self.config_dir, "settings.json")
        with open(settings, encoding="utf-8") as handle:
            value = json.load(handle)
        return [
            str(hook["command"])
            for entry in value.get("hooks", {}).get("PreToolUse", [])
            if not entry.get("matcher", "") or re.fullmatch(entry.get("matcher", ""), tool_name)
            for hook in entry.get("hooks", [])
            if hook.get("type") == "command"
        ]

    def hook_command(self, tool_name: str) -> str:
        """The first PreToolUse command registered for ``tool_name`` (LookupError: none)."""
        commands = self.hook_commands(tool_name)
        if not commands:
            settings = os.path.join(self.config_dir, "settings.json")
            raise LookupError(f"no PreToolUse hook registered for {tool_name} in {settings}")
        return commands[0]

    def payload(
        self,
        call: Call,
        *,
        tool_input: Mapping[str, Any] | None = None,
        drop: Iterable[str] = (),
        **fields: Any,
    ) -> dict[str, Any]:
        """The PreToolUse payload Claude Code sends for ``call``."""
        sent = dict(call.input if tool_input is None else tool_input)
        for key in drop:
            sent.pop(key, None)
        payload: dict[str, Any] = {
            "session_id": self.session_id,
            "transcript_path": str(self.journal_path),
            "cwd": self.cwd,
            "prompt_id": self.prompt_id,
            "permission_mode": "default",
            "effort": {"level": "medium"},
            "hook_event_name": "PreToolUse",
            "tool_name": call.name,
            "tool_input": sent,
            "tool_use_id": call.id,
        }
        for key, value in fields.items():
            if value is None:
                payload.pop(key, None)
            else:
                payload[key] = value
        return payload

    def hook(
        self,
        call: Call,
        *,
        tool_input: Mapping[str, Any] | None = None,
        drop: Iterable[str] = (),
        env: Mapping[str, str | None] | None = None,
        payload: Mapping[str, Any] | None = None,
        raw: bytes | None = None,
        write_denial: bool = True,
        during: Callable[[], None] | None = None,
        timeout: float = 30.0,
        command: str | None = None,
    ) -> HookOutcome:
        """Run the real PreToolUse hook for ``call`` and return what it answered.

        The call is judged on the journal path if its record is written, else on the
        payload path. ``tool_input``/``drop``/``payload`` change what Claude Code sends
        (``payload`` fields set to None are left out); ``raw`` sends bytes as they are.
        ``during`` runs while the hook process runs (to write records it should find while
        it waits). A denial is written as Claude Code writes it, the call's record first when
        it was not journaled yet, unless ``write_denial=False``. ``command`` runs another
        command than the one registered for the tool (Claude Code would not run any for a
        tool no matcher names).
        """
        sent = self.payload(call, tool_input=tool_input, drop=drop, **dict(payload or {}))
        data = raw if raw is not None else json.dumps(sent).encode("utf-8")
        before = len(self.decisions())
        hook_command = command if command is not None else self.hook_command(call.name)
        ran = self.run_hook(
            HookRun(
                hook_command, data, self.environ(env), during, timeout, registered=command is None
            )
        )
        text = ran.stdout.decode("utf-8", errors="replace")
        lines = [line for line in text.splitlines() if line.strip()]
        output = json.loads(lines[-1]) if lines else {}
        outcome = HookOutcome(
            output if isinstance(output, dict) else {},
            self.decisions()[before:],
            ran.elapsed,
            ran.returncode,
            text,
            ran.stderr.decode("utf-8", errors="replace"),
            sent,
        )
        call.hook_outcome = outcome
        if outcome.denied and write_denial:
            self.write_denial(call, outcome.reason or "")
        elif not outcome.denied and call.record is not None:
            self.attachment(
                "hook_success",
                parent=call.record["uuid"],
                leaf=False,
                hookName=f"PreToolUse:{call.name}",
                toolUseID=call.id,
                hookEvent="PreToolUse",
                content="",
                stdout=text,
                stderr="",
                exitCode=ran.returncode,
                command=hook_command,
                durationMs=int(ran.elapsed * 1000),
            )
        return outcome

    def run_hook(self, run: HookRun) -> HookRun:
        """Run ``run.command`` as Claude Code does: ``bash -c``, the payload on stdin, in the
        session's cwd and ``run.env``; ``run.during`` runs while it runs. The seam a test
        replaces to decide in-process (``tests/guard/scenarios/conftest.py``)."""
        started = time.monotonic()
        process = subprocess.Popen(
            ["bash", "-c", run.command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=self.cwd,
            env=run.env,
        )
        assert process.stdin is not None
        try:
            process.stdin.write(run.data)
            process.stdin.close()
        except BrokenPipeError:
            pass
        process.stdin = None  # written and closed: communicate() only reads
        if run.during is not None:
            run.during()
        try:
            stdout, stderr = process.communicate(timeout=run.timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            raise
        run.finished(stdout, stderr, process.returncode, time.monotonic() - started)
        return run

    def write_denial(self, call: Call, reason: str) -> Record:
        """The result Claude Code writes for a call its PreToolUse hook denied."""
        if call.record is None:
            if call.message is None:
                raise ValueError(f"{call!r} belongs to no message")
            self.flush(call.message, through=call)
        text = f"PreToolUse:{call.name} hook error: {reason}"
        return self._result_record(
            call,
            text,
            True,
            f"Error: {text}",
            {
                "toolDenialKind": "permission-rule",
                "permissionDecision": {
                    "decision": "reject",
                    "source": "hook",
                    "reasonType": "hook",
                    "reasonCode": "hook:PreToolUse",
                },
            },
        )

    def guarded(
        self,
        call: Call,
        *,
        text: str | Sequence[str] | None = None,
        journal: bool = True,
        **hook_options: Any,
    ) -> HookOutcome:
        """The usual life of one phase-entry call in its own message: the message is written
        (``journal=False``: the call's record waits until after the hook, the payload path),
        the hook decides, and an allowed call runs."""
        texts = [text] if isinstance(text, str) else list(text or [])
        message = self.message(texts, [call], journal=True if journal else len(texts), run=False)
        outcome = self.hook(call, **hook_options)
        if not outcome.denied:
            self.flush(message)
            self.execute(call)
        return outcome
