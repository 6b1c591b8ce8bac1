"""The workflow contracts' hook on a typed skill: ``/skill args`` in Claude Code, ``$skill
args`` in Codex CLI.

A command typed in the terminal never passes PreToolUse: Claude Code 2.1.332 fires
``UserPromptExpansion`` for it (``command_name``, ``command_args``), and exit 2 blocks the
expansion before any model request, with stderr shown to the person. Codex CLI 0.171.0 fires
``UserPromptSubmit`` with the ``prompt``; a ``{"decision": "block", "reason": …}`` answer
keeps it from the model (verified: no model request is made). A phase entry the contract
refuses is blocked with the refusal; anything else is let through with ``{}``. Decisions are
logged like the PreToolUse ones. An unexpected error blocks (``installation``), as the
guard's does; a payload that is not a typed skill is left alone.
"""

from __future__ import annotations

import os
import sys

from plangate import jsonio
from plangate.hook_io.runtime import HookInputError, read_payload

BLOCK = 2
EVENT = "UserPromptExpansion"
CODEX_EVENT = "UserPromptSubmit"


def typed_skill(payload: dict[str, object]) -> tuple[str, str] | None:
    """The skill a person typed and its arguments: Claude Code's expansion, or a Codex
    prompt ``$skill args``; None for anything else."""
    event = payload.get("hook_event_name")
    if event == EVENT:
        name, args = payload.get("command_name"), payload.get("command_args")
        if not isinstance(name, str) or not name.strip():
            return None
        return name.strip().lstrip("/"), args if isinstance(args, str) else ""
    if event == CODEX_EVENT and isinstance(payload.get("prompt"), str):
        from plangate.journal.codex import skill_of

        skill, arguments = skill_of(str(payload["prompt"]))
        return (skill, arguments or "") if skill is not None else None
    return None


def decide(payload: dict[str, object]) -> str | None:
    """The refusal text, or None to let the typed skill through."""
    typed = typed_skill(payload)
    if typed is None:
        return None
    name, args = typed
    cwd = payload.get("cwd")
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        return None
    project = os.environ.get("CLAUDE_PROJECT_DIR") or cwd
    from plangate.contracts.discovery import covered

    if not covered(os.path.normpath(project)):
        return None
    from plangate.contracts import evaluate

    found = evaluate.entry_ruling(dict(payload), name, args, "typed")
    if found is None:
        return None
    ruling, version = found
    from plangate.decisions import contract_codes as codes

    if ruling.code == codes.CONTRACT_UNVERIFIED:
        evaluate.unverified(ruling.workflow, ruling.detail, version, "typed")
        return None  # the command runs; the person saw nothing blocked (logged)
    decision = evaluate.logged(ruling, "typed", version)
    if decision.allowed:
        return None
    from plangate.decisions import reasons

    assert decision.code is not None
    return reasons.deny_reason(decision.code, version, decision.detail, ruling.facts)


#: An expansion carries the whole expanded skill text; read whole up to this, else judged
#: unusable (the command runs, as for any payload plangate cannot read).
EXPANSION_MAX_BYTES = 16 * 1024 * 1024


def main() -> int:
    payload: dict[str, object] = {}
    try:
        try:
            payload = read_payload(sys.stdin.buffer, EXPANSION_MAX_BYTES)
        except HookInputError:
            return 0  # not ours to judge: Claude Code sent no usable expansion
        reason = decide(payload)
    except Exception as error:  # noqa: BLE001 - a broken hook blocks, never allows silently
        from plangate.decisions import log, reasons

        decision = reasons.Decision.deny("installation", detail=type(error).__name__)
        log.append_decision(decision, extra={"event": "typed"})
        reason = reasons.deny_reason("installation", None, type(error).__name__)
    if reason is None:
        sys.stdout.write(jsonio.dumps({}) + "\n")
        return 0
    if payload.get("hook_event_name") == CODEX_EVENT:
        sys.stdout.write(jsonio.dumps({"decision": "block", "reason": reason}) + "\n")
        return 0
    sys.stderr.write(reason + "\n")
    return BLOCK


if __name__ == "__main__":
    raise SystemExit(main())
