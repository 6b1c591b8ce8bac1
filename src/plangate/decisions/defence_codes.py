"""The self-defence codes: what plangate answers when the agent it gates reaches for a
shortcut past the gate (``docs/threat-model.md``).

:mod:`plangate.decisions.reasons` merges :data:`TABLE` into its one code table, so each of these
is a :class:`plangate.decisions.reasons.Decision` like any other: the decision log, the
dispositions, and ``plangate explain <code>`` (its section of the troubleshooting page).

Hook path: standard library only.
"""

from __future__ import annotations

from plangate.decisions import CORRECTIVE

AGENT_COMMAND = "agent_command"
PROTECTED_PATH = "protected_path"
PROTECTED_COMMAND = "protected_command"
SANDBOX_BYPASS = "sandbox_bypass"
CONTRACT_DRIFT = "contract_drift"
JOURNAL_UNTRUSTED = "journal_untrusted"
UNGUARDED_CALLS = "unguarded_calls"
CONTRACT_TIMEOUT = "contract_timeout"

#: The plangate commands only a person may run, as (verb, sub-verb or None): each opens or
#: weakens a gate. The commands refuse inside an agent session (``agent_command``); the hooks
#: refuse a Bash command that runs one (``protected_command``). One list for both.
PERSON_ONLY_COMMANDS: tuple[tuple[str, str | None], ...] = (
    ("approve", None),
    ("config", "set"),
    ("setup", None),
    ("run", "--no-require-approval"),  # a flag: it turns off the config's require_approval
    ("contract", "end"),
    ("contract", "reset"),
)

ASK_PERSON = (
    "Only the person may do this. Finish your turn, say what you need, and ask them to do it "
    "in their own terminal."
)

TABLE: dict[str, tuple[str, str]] = {
    AGENT_COMMAND: (
        CORRECTIVE,
        "This plangate command opens or weakens a gate, and it was run from inside an agent "
        "session, so it was refused. " + ASK_PERSON,
    ),
    PROTECTED_PATH: (
        CORRECTIVE,
        "This call would change a file plangate protects (its state, Claude Code's settings, a "
        "workflow contract, plangate's installation or a session journal). " + ASK_PERSON,
    ),
    PROTECTED_COMMAND: (
        CORRECTIVE,
        "This command runs a plangate command that opens or weakens a gate (approve, config "
        "set, setup). " + ASK_PERSON,
    ),
    SANDBOX_BYPASS: (
        CORRECTIVE,
        "This Bash call asks to run outside Claude Code's sandbox, which plangate's hardened "
        "set-up keeps on. Run the command inside the sandbox; if it cannot work there, ask the "
        "person.",
    ),
    CONTRACT_DRIFT: (
        CORRECTIVE,
        "Files outside the paths phase {phase} of workflow {workflow} may change were changed "
        "while it ran (the detail names them). Restore those files as they were, or finish your "
        "turn and ask the person to review them: only they can accept the change.",
    ),
    JOURNAL_UNTRUSTED: (
        CORRECTIVE,
        "The session journal holds records Claude Code would not write (a loop, a repeated "
        "record id, or a record spliced into the conversation), so plangate cannot tell the "
        "person's turns from forged ones while this workflow is active. Finish your turn and tell "
        "the person: "
        "`plangate audit` shows the session, and a fresh session continues the workflow.",
    ),
    CONTRACT_TIMEOUT: (
        CORRECTIVE,
        "plangate could not check this call against workflow {workflow} within its deadline, "
        "and the workflow is active, so the call is refused rather than let through unchecked. "
        "Finish your turn and tell the person: the machine may be too busy or the session "
        "journal too large (`plangate journal inspect`).",
    ),
    UNGUARDED_CALLS: (
        CORRECTIVE,
        "Calls in this session ran without plangate's hooks deciding them (hooks switched off, "
        "crashed or timed out; the detail names them). Finish your turn and tell the person: "
        "`plangate audit` lists them.",
    ),
}

CODES: tuple[str, ...] = tuple(TABLE)
