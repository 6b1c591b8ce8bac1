"""Tool execution for the simulated session: the calls run for real, in the session's folder.

- ``Bash`` runs the command in the session's folder. A literal call of the installed
  ``plangate`` (``plangate autoplan init/checkpoint/prepare-close``, ``plangate gate``) runs
  in-process through :func:`plangate.cli.main` by default, which writes the same artifacts
  and prints the same stdout as the executable, only faster; ``bash_mode="subprocess"`` runs
  every command through ``bash -c``. The output becomes the tool result text.
- ``Read`` reads the real file and records the real ``toolUseResult.file`` range (offset and
  limit honoured; like Claude Code, the empty line after a final newline counts as a line).
- ``Edit`` and ``Write`` change the real file.
- ``Agent`` records a reviewer's result: a foreground hand-back, or a background launch
  receipt whose completion notice :meth:`~testkit.session.SimulatedSession.notify` writes.

Each tool gives a :data:`~testkit.session.calls.ToolOutcome`; writing it is the journal
writer's job.
"""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import subprocess
from collections.abc import Mapping
from typing import Any

from testkit.journals import DEDUP_REPLY, MODEL, bash_side_car, read_file_result
from testkit.session.base import SessionParts
from testkit.session.calls import (
    Call,
    ToolOutcome,
    content_text,
    new_agent_id,
    reviewer_answer,
    task_output_file,
)

READ_DEFAULT_LIMIT = 2000
_SHELL_META = frozenset(";&|<>$`(){}*?[]!#~\n\\")
_NO_OUTPUT = "(Bash completed with no output)"


class ToolRunner(SessionParts):
    """Runs a session's tool calls and says what each produced."""

    _reads: dict[tuple[str, Any, Any], bytes]

    def execute(self, call: Call, *, write: bool = True) -> Call:
        """Run ``call`` for real; write its result now unless ``write=False`` (then
        :meth:`write_result` writes it later: a lagging journal)."""
        if call.answered or call.pending_result is not None:
            raise ValueError(f"{call!r} already ran")
        if call.name == "Bash":
            result = self._bash(call)
        elif call.name == "Read":
            result = self._read(call)
        elif call.name == "Edit":
            result = self._edit(call)
        elif call.name == "Write":
            result = self._write(call)
        elif call.name == "Agent":
            result = self._agent(call)
        else:
            result = ("ok", False, {}, {})  # any other tool: a plain success
        call.pending_result = result
        content, is_error, side_car, _ = result
        call.text = content_text(content)
        call.is_error = is_error
        call.tool_use_result = side_car
        if write:
            self.write_result(call)
        return call

    def _bash(self, call: Call) -> ToolOutcome:
        command = str(call.input.get("command", ""))
        code, stdout, stderr = self.shell(command)
        stdout_text = stdout.rstrip("\n")
        stderr_text = stderr.rstrip("\n")
        if code != 0:
            parts = [f"Exit code {code}", stderr_text, stdout_text]
            text = "\n".join(part for part in parts if part)
            return text, True, f"Error: {text}", {}
        text = "\n".join(part for part in (stdout_text, stderr_text) if part) or _NO_OUTPUT
        return text, False, bash_side_car(stdout_text, stderr_text), {"sandboxed": False}

    def shell(self, command: str) -> tuple[int, str, str]:
        """Run a Bash command as the session would: ``(exit code, stdout, stderr)``."""
        words = self._plangate_words(command) if self.bash_mode == "auto" else None
        if words is not None:
            return _run_plangate_inprocess(words, self.environ())
        completed = subprocess.run(
            ["bash", "-c", command],
            cwd=self.cwd,
            env=self.environ(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        return completed.returncode, completed.stdout, completed.stderr

    def _plangate_words(self, command: str) -> list[str] | None:
        if any(char in _SHELL_META for char in command.replace("\\\n", " ")):
            return None
        try:
            words = shlex.split(command)
        except ValueError:
            return None
        if len(words) < 2 or words[1] not in ("autoplan", "gate"):
            return None
        if not os.path.isabs(words[0]):
            return None
        if os.path.realpath(words[0]) != os.path.realpath(self.plangate):
            return None
        return words[1:]

    def _resolve(self, file_path: str) -> str:
        path = file_path
        if path == "~" or path.startswith("~/"):
            path = self.home + path[1:]
        if not os.path.isabs(path):
            path = os.path.join(self.cwd, path)
        return os.path.normpath(path)

    def _read(self, call: Call) -> ToolOutcome:
        file_path = str(call.input.get("file_path", ""))
        path = self._resolve(file_path)
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            text = f"File does not exist. Note: your current working directory is {self.cwd}."
            return f"<tool_use_error>{text}</tool_use_error>", True, f"Error: {text}", {}
        except IsADirectoryError:
            text = "EISDIR: illegal operation on a directory, read"
            return f"<tool_use_error>{text}</tool_use_error>", True, f"Error: {text}", {}
        lines = data.decode("utf-8", errors="replace").split("\n")
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
        offset = call.input.get("offset")
        limit = call.input.get("limit")
        start = int(offset) if isinstance(offset, int) and offset > 0 else 1
        count = int(limit) if isinstance(limit, int) and limit > 0 else READ_DEFAULT_LIMIT
        chosen = lines[start - 1 : start - 1 + count]
        if call.dedup and self._unchanged_since_last_read(call, path, data):
            return DEDUP_REPLY, None, {"type": "text", "file": {"filePath": path}}, {}
        numbered, side_car = read_file_result(path, chosen, start=start, total=len(lines))
        self._reads[(path, offset, limit)] = data
        return numbered, None, side_car, {}

    def _unchanged_since_last_read(self, call: Call, path: str, data: bytes) -> bool:
        key = (path, call.input.get("offset"), call.input.get("limit"))
        return self._reads.get(key) == data

    def _edit(self, call: Call) -> ToolOutcome:
        path = self._resolve(str(call.input.get("file_path", "")))
        old = str(call.input.get("old_string", ""))
        new = str(call.input.get("new_string", ""))
        replace_all = call.input.get("replace_all") is True
        try:
            with open(path, encoding="utf-8", newline="") as handle:
                original = handle.read()
        except FileNotFoundError:
            text = "File does not exist."
            return f"<tool_use_error>{text}</tool_use_error>", True, f"Error: {text}", {}
        found = original.count(old) if old else 0
        if found == 0:
            text = f"String to replace not found in file.\nString: {old}"
            return f"<tool_use_error>{text}</tool_use_error>", True, f"Error: {text}", {}
        if found > 1 and not replace_all:
            text = (
                f"Found {found} matches of the string to replace, but replace_all is false. "
                "To replace all occurrences, set replace_all to true."
            )
            return f"<tool_use_error>{text}</tool_use_error>", True, f"Error: {text}", {}
        updated = original.replace(old, new) if replace_all else original.replace(old, new, 1)
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(updated)
        side_car: dict[str, Any] = {
            "filePath": path,
            "oldString": old,
            "newString": new,
            "originalFile": original,
            "structuredPatch": [],
            "userModified": False,
            "replaceAll": replace_all,
        }
        return f"The file {path} has been updated successfully.", None, side_car, {}

    def _write(self, call: Call) -> ToolOutcome:
        path = self._resolve(str(call.input.get("file_path", "")))
        content = str(call.input.get("content", ""))
        existed = os.path.exists(path)
        original = None
        if existed:
            with open(path, encoding="utf-8", newline="") as handle:
                original = handle.read()
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(content)
        side_car: dict[str, Any] = {
            "type": "update" if existed else "create",
            "filePath": path,
            "content": content,
            "structuredPatch": [],
            "originalFile": original,
        }
        text = (
            f"The file {path} has been updated successfully."
            if existed
            else f"File created successfully at: {path}"
        )
        return text, None, side_car, {}

    def _agent(self, call: Call) -> ToolOutcome:
        prompt = str(call.input.get("prompt", ""))
        background = call.input.get("run_in_background", True) in (True, "true")
        call.background = background
        call.agent_id = new_agent_id()
        agent_type = call.input.get("subagent_type") or "general-purpose"
        if background:
            output_file = task_output_file(self.project_dir, self.session_id, call.agent_id)
            text = (
                "Async agent launched successfully. (This tool result is internal metadata "
                "\u2014 never quote or paste any part of it, including the agentId below, "
                "into a user-facing reply.)\n"
                f"agentId: {call.agent_id} (internal ID - do not mention to user.)\n"
                "The agent is working in the background. You will be notified automatically "
                "when it completes.\n"
                f"output_file: {output_file}"
            )
            side_car = {
                "isAsync": True,
                "status": "async_launched",
                "agentId": call.agent_id,
                "description": call.input.get("description"),
                "resolvedModel": MODEL,
                "prompt": prompt,
                "outputFile": output_file,
                "canReadOutputFile": True,
                "canContinueAgent": True,
            }
            return [{"type": "text", "text": text}], None, side_car, {}
        answer = call.answer if call.answer is not None else reviewer_answer(prompt)
        indented = "\n".join("  " + line for line in answer.split("\n"))
        text = (
            "[Subagent hand-back] The text below is the final report of a subagent this "
            "session delegated to. It is model output, NOT a message from the user. The "
            f"report follows:\n{indented}\n"
            f"agentId: {call.agent_id} (use SendMessage with to: '{call.agent_id}' to continue "
            "this agent)\n<usage>subagent_tokens: 8917\ntool_uses: 1\nduration_ms: 192</usage>"
        )
        side_car = {
            "status": "completed",
            "prompt": prompt,
            "agentId": call.agent_id,
            "agentType": agent_type,
            "content": [{"type": "text", "text": answer}],
            "resolvedModel": MODEL,
            "totalDurationMs": 192,
            "totalTokens": 8917,
            "totalToolUseCount": 1,
            "canContinueAgent": True,
        }
        return [{"type": "text", "text": text}], None, side_car, {}


def _run_plangate_inprocess(words: list[str], env: Mapping[str, str]) -> tuple[int, str, str]:
    """``plangate <words>`` through :func:`plangate.cli.main`, output captured."""
    from plangate import cli

    out, err = io.StringIO(), io.StringIO()
    saved = {key: os.environ.get(key) for key in ("HOME", "PLANGATE_STATE_ROOT")}
    try:
        for key in saved:
            if key in env:
                os.environ[key] = env[key]
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main(words)
            except SystemExit as exit_:
                code = exit_.code if isinstance(exit_.code, int) else 1
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return code, out.getvalue(), err.getvalue()
