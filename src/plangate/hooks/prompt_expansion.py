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

from plangate.hook_io import runtime
from plangate.hooks import closed

EVENT = runtime.PROMPT_EXPANSION
CODEX_EVENT = runtime.PROMPT_SUBMIT


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


def decide(payload: dict[str, object]) -> runtime.Answer | None:
    """The refusal, or None to let the typed skill through."""
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
    return runtime.Answer(decision, ruling.facts)


#: An expansion carries the whole expanded skill text; read whole up to this, else judged
#: unusable (the command runs, as for any payload plangate cannot read).
EXPANSION_MAX_BYTES = 16 * 1024 * 1024


def _unusable(error: BaseException) -> runtime.Result:
    """Not ours to judge: Claude Code sent no usable expansion. Nothing is printed."""
    return runtime.SILENT


POLICY = runtime.Policy(
    (EVENT, CODEX_EVENT),
    decide,
    closed=True,
    max_bytes=EXPANSION_MAX_BYTES,
    bad_input=_unusable,
    crash=closed("typed"),
)
"""A refusal blocks (Claude Code: the reason on stderr, exit 2; Codex: ``{"decision":
"block"}``) and so does a crash (``installation``, logged as ``typed``); an unusable payload
prints nothing and lets the command run. No deadline of its own."""


def main() -> int:
    return runtime.run(POLICY)


if __name__ == "__main__":
    raise SystemExit(main())
