"""The workflow contracts' PreToolUse hook: the phase entries (``Skill``, and a ``Read`` or
``Agent`` call a phase's ``reads``/``agents`` name, a Bash command naming an entry skill's
``SKILL.md``: Codex CLI's start of a skill) and the writes (``Write``, ``Edit``,
``MultiEdit``, ``NotebookEdit``, a Bash command that plainly writes).

Before any contract rule, a write or a Bash command goes through plangate's protected paths
(:mod:`plangate.protect`), in the same process: a call that changes a file holding the gate,
or runs a command only the person may run, is refused whether or not a contract applies.
With the ``workflow_contracts`` switch off the protection runs alone, from
:mod:`plangate.hooks.protect`.

Most calls are answered at once with ``{}`` and load nothing but the standard library: a
Bash command that writes no file, and any call in a folder where no contract applies (a
few ``stat`` calls and the contracts cache, :mod:`plangate.contracts.compiled`). A call a
contract may cover loads the journal reader and the rules (:mod:`plangate.contracts.evaluate`).
An unexpected error is the ``installation`` denial, as for the /autoplan guard; a decision
not made within the guard's deadline (``PLANGATE_GUARD_DEADLINE_MS``) runs unverified
(``contract_unverified``), logged, unless a workflow is active in the session: then it is
refused (``contract_timeout``), since a decision cut short must not open the gate.
"""

from __future__ import annotations

import os

from plangate.hook_io import runtime
from plangate.hooks import closed

TYPE_CHECKING = False
if TYPE_CHECKING:
    from plangate.hook_io.protocol import Output, Payload

WRITE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit", "apply_patch")  # the last: Codex's
ENTRY_TOOLS = ("Read", "Agent")  # registered with ``if`` conditions (hook_registry)
TOOLS = ("Skill", "Bash") + WRITE_TOOLS + ENTRY_TOOLS
DEADLINE_ENV = "PLANGATE_GUARD_DEADLINE_MS"
DEFAULT_DEADLINE_MS = 10_000
MAX_DEADLINE_MS = 20_000


def paths_of(tool: str, tool_input: dict[str, object], cwd: str) -> list[str] | None:
    """The files a write call names ([] for none); None for a phase entry (Skill, Read,
    Agent)."""
    if tool == "Skill" or tool in ENTRY_TOOLS:
        return None
    if tool == "Bash":
        from plangate.contracts import bash_writes

        command = tool_input.get("command")
        return bash_writes.written_files(command, cwd) if isinstance(command, str) else []
    if tool == "apply_patch":
        from plangate.contracts import patch_writes

        patch = tool_input.get("command")
        return patch_writes.written_files(patch, cwd) if isinstance(patch, str) else []
    path = tool_input.get("file_path") or tool_input.get("notebook_path")
    if not isinstance(path, str) or not path:
        return []
    path = os.path.expanduser(path)
    return [os.path.normpath(path if os.path.isabs(path) else os.path.join(cwd, path))]


def _may_read_skill(command: str) -> bool:
    from plangate.contracts.shell_reads import may_name

    return may_name(command)


def decide(payload: Payload) -> Output:
    tool = payload.get("tool_name")
    if payload.get("hook_event_name") != "PreToolUse" or tool not in TOOLS:
        return {}
    tool_input = payload.get("tool_input")
    cwd = payload.get("cwd")
    if not isinstance(tool_input, dict) or not isinstance(cwd, str) or not os.path.isabs(cwd):
        return {}
    if tool == "Bash" or tool in WRITE_TOOLS:
        from plangate.protect.decide import refusal

        refused = refusal(payload)
        if refused is not None:
            return refused
    paths = paths_of(str(tool), tool_input, cwd)
    command = tool_input.get("command")
    reads = tool == "Bash" and isinstance(command, str) and _may_read_skill(command)
    if paths == [] and not reads:
        return {}  # a Bash command that writes no file, or a write naming none
    from plangate.journal.codex_folder import hook_project

    project = hook_project(payload) or cwd  # a Codex hook's cwd may be a workdir
    from plangate.contracts.discovery import covered

    if not covered(os.path.normpath(project)):
        return {}
    from plangate.contracts import evaluate

    if tool in ENTRY_TOOLS:
        return evaluate.call_entry(payload)
    if reads:  # a skill's SKILL.md read with the shell: Codex's start of a phase
        return evaluate.shell_call(payload, paths or [])
    return evaluate.pre_tool_use(payload, paths)


def timed_out(payload: Payload, detail: str) -> runtime.Result:
    """A decision past the deadline: refused inside an active workflow (``contract_timeout``,
    since a decision cut short must not open the gate), else the unverified
    ``contract_unverified``; logged either way."""
    from plangate.contracts import evaluate, untrusted

    workflow = untrusted.active_workflow(payload.get("session_id"))
    if workflow is not None:
        from plangate.decisions import defence_codes, log, reasons

        decision = reasons.Decision.deny(defence_codes.CONTRACT_TIMEOUT, detail=detail)
        log.append_decision(decision, extra={"event": "contract", "workflow": workflow})
        return runtime.Answer(decision, {"workflow": workflow})
    entry = payload.get("tool_name") == "Skill" or payload.get("tool_name") in ENTRY_TOOLS
    return evaluate.unverified("?", detail, None, "entry" if entry else "edit")


POLICY = runtime.Policy(
    (runtime.PRE_TOOL_USE,),
    decide,
    closed=True,
    bad_input=closed("contract"),
    crash=closed("contract"),
    deadline=(DEADLINE_ENV, DEFAULT_DEADLINE_MS, MAX_DEADLINE_MS, 0),
    on_deadline=timed_out,
)
"""Fails closed (``hook_input``, ``installation``, logged as ``contract``); a payload over
64 KiB is unusable input; past the deadline, :func:`timed_out`."""


def main() -> int:
    return runtime.run(POLICY)


if __name__ == "__main__":
    raise SystemExit(main())
