"""The workflow contracts' UserPromptExpansion hook: a typed ``/skill args``.

A command typed in the terminal never passes PreToolUse: Claude Code 2.1.332 fires
``UserPromptExpansion`` for it (``command_name``, ``command_args``), and exit 2 blocks the
expansion before any model request, with stderr shown to the person. A phase entry the
contract refuses exits 2 with the refusal; anything else exits 0 with ``{}``. Decisions are
logged like the PreToolUse ones. An unexpected error blocks (``installation``), as the
guard's does; a payload that is not an expansion is left alone.
"""

from __future__ import annotations

import os
import sys

from plangate import jsonio
from plangate.hook_io.runtime import HookInputError, read_payload

BLOCK = 2
EVENT = "UserPromptExpansion"


def decide(payload: dict[str, object]) -> str | None:
    """The refusal text, or None to let the expansion through."""
    if payload.get("hook_event_name") != EVENT:
        return None
    name = payload.get("command_name")
    if not isinstance(name, str) or not name.strip():
        return None
    cwd = payload.get("cwd")
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        return None
    project = os.environ.get("CLAUDE_PROJECT_DIR") or cwd
    from plangate.contracts.discovery import covered

    if not covered(os.path.normpath(project)):
        return None
    from plangate.contracts import evaluate

    args = payload.get("command_args")
    found = evaluate.entry_ruling(
        dict(payload), name.strip().lstrip("/"), args if isinstance(args, str) else "", "typed"
    )
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
    sys.stderr.write(reason + "\n")
    return BLOCK


if __name__ == "__main__":
    raise SystemExit(main())
