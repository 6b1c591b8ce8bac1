"""Every code the phase publication guard gives: its disposition, its text, its hook output.

Four dispositions (the guard's verified allow has no code and the disposition ``allow``):

    unverified   Claude Code left the call uncheckable: it runs with a visible warning and no
                 permission decision (Claude Code's own permission check still runs).
    fallback     nothing done inside this session can help: the denial carries the fallback.
    corrective   one named action must happen first: the denial names it.
    transient    something is still in progress: the denial names what to wait for.

``unrecognized_shape:<detail>`` is one code family (the reader's detail follows the colon).
Every text is written for the model and the person alike; none tells the model to simply
repeat the call, and no environment variable turns the guard off. ``plangate explain <code>``
prints the troubleshooting section of each code (``troubleshooting.md`` beside this module).

Hook path: standard library only, no ``re``/``json``/``typing`` at runtime.
"""

from __future__ import annotations

from plangate.decisions import ALLOW as ALLOW
from plangate.decisions import CORRECTIVE as CORRECTIVE
from plangate.decisions import DENY_DISPOSITIONS as DENY_DISPOSITIONS
from plangate.decisions import DISPOSITIONS as DISPOSITIONS
from plangate.decisions import FALLBACK as FALLBACK
from plangate.decisions import TRANSIENT as TRANSIENT
from plangate.decisions import UNVERIFIED as UNVERIFIED
from plangate.decisions import contract_codes, defence_codes
from plangate.hook_io import protocol

# The journal reader's codes have their home beside the reader; the guard gives each its
# disposition and text here.
from plangate.journal.codes import (
    AGENT,
    COMPACTION_UNREACHABLE,
    COMPETING_ROOT,
    CWD_SPELLING,
    CYCLE,
    FOREIGN_CWD,
    IDENTITY,
    MALFORMED,
    OVERSIZED_INVOCATION,
    REWRITTEN,
    SIDECHAIN,
    TOO_LARGE,
    UNRECOGNIZED_SHAPE,
    base_code,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from plangate.hook_io.protocol import Output


PATH_JOURNAL = "journal"
PATH_PAYLOAD = "payload"
PATH_NONE = "none"
PATHS = (PATH_JOURNAL, PATH_PAYLOAD, PATH_NONE)
"""How the current call was evaluated: from the journal, from the hook payload, or not at all."""

# Unverified allows.
JOURNAL_LAG = "journal_lag"
UNSEEN_VERSION = "unseen_version"
GUARD_TIMEOUT = "guard_timeout"
# Fallback denials.
JOURNAL_MISSING = "journal_missing"
EVENT_ORDER = "event_order"
TOOL_IDENTITY = "tool_identity"
CURRENT_MISMATCH = "current_mismatch"
AGENT_KEY = "agent_key"
CROSS_PHASE_BATCH = "cross_phase_batch"
INIT_MISMATCH = "init_mismatch"
SNAPSHOT = "snapshot"
DISPATCH_PROMPT = "dispatch_prompt"
PUBLICATION_REPEAT = "publication_repeat"
# Corrective denials.
PUBLICATION_MISSING = "publication_missing"
PUBLICATION_UNFLUSHED = "publication_unflushed"
CLOSE_REQUIRED = "close_required"
CLOSE_INCOMPLETE = "close_incomplete"
CLOSE_STALE = "close_stale"
CLOSE_EDITS = "close_edits"
INIT_REQUIRED = "init_required"
INIT_OWN = "init_own"
INIT_FAILED = "init_failed"
INIT_UNBINDABLE = "init_unbindable"
PHASE_ORDER = "phase_order"
HOOK_INPUT = "hook_input"
ENTRY_TOO_LARGE = "entry_too_large"
INSTALLATION = "installation"
FOREIGN_INSTALL = "foreign_install"
# Transient denials.
ENTRY_PENDING = "entry_pending"
MUTATION_PENDING = "mutation_pending"

INIT_FAILED_NOT_JSON = "not_json"
"""``init_failed`` detail: the init's output was not its JSON result alone."""

PUBLISH_HOW = (
    "Publish the report as your own assistant text in a message whose only "
    "tool call is the Bash no-op `true autoplan-published {phase}`, then enter the next phase "
    "in a later message."
)

LEAVE_TEXT = (
    "If the person has moved on from this /autoplan run, stop following its phase files "
    "(nothing else is guarded); to review the plan again from the start, run /autoplan "
    "<plan path>, whose init begins a new run."
)
LEAVE_CODES = frozenset({PUBLICATION_MISSING, CLOSE_REQUIRED, PHASE_ORDER})
"""Appended to the denials a phase entry gets mid-pipeline: a typed turn does not end an
/autoplan invocation (only its Final Approval Gate or a new init does), so this says how a
person who really moved on leaves it."""

FALLBACK_TEXT = (
    "Repeating this call cannot succeed in this session. Fallback: run /plan-ceo-review and "
    "finish the review by hand, or start a fresh Claude Code session in this project (a new "
    "session, not --resume) and run /autoplan <plan path> there."
)
"""Appended to every fallback denial."""

_SETUP = "Restore the installation with `plangate setup`."

# code -> (disposition, text). Texts may hold ``{phase}``, filled from ``facts``.
TABLE: dict[str, tuple[str, str]] = {
    UNRECOGNIZED_SHAPE: (
        UNVERIFIED,
        "The session journal has a layout plangate does not know, usually because Claude Code "
        "changed its journal format; two reads of it agreed.",
    ),
    JOURNAL_LAG: (
        UNVERIFIED,
        "Claude Code had not written the previous assistant message to the session journal "
        "within 2 seconds.",
    ),
    REWRITTEN: (
        UNVERIFIED,
        "Journal bytes the guard had already read changed while it was reading them.",
    ),
    TOO_LARGE: (UNVERIFIED, "One session journal record is over the 32 MiB record limit."),
    GUARD_TIMEOUT: (
        UNVERIFIED,
        "The guard could not decide within its deadline (the session journal is too large or "
        "the machine too busy to read it in time).",
    ),
    UNSEEN_VERSION: (
        UNVERIFIED,
        "A Claude Code release newer than the ones plangate has checked passed the reviewer "
        "dispatch to the hook without a key that the journal records.",
    ),
    COMPETING_ROOT: (
        FALLBACK,
        "The session journal looks written by two writers (two records share one uuid, the "
        "chain passes through another session's record, or an abandoned branch kept growing "
        "after the live chain went on), so plangate cannot tell which conversation is this "
        "session.",
    ),
    FOREIGN_CWD: (
        FALLBACK,
        "The session journal's conversation was started in another project folder.",
    ),
    SIDECHAIN: (
        FALLBACK,
        "The conversation starts in a sidechain (subagent) record, not in the parent session.",
    ),
    AGENT: (FALLBACK, "The conversation's ancestry passes through a subagent record."),
    CYCLE: (
        FALLBACK,
        "The parent links of the session journal form a loop somewhere in the file.",
    ),
    IDENTITY: (
        FALLBACK,
        "The session journal failed plangate's identity checks (a symlink, another session's "
        "file, an unexpected folder layout, a replaced file, or a journal that shrank).",
    ),
    MALFORMED: (
        FALLBACK,
        "A complete line of the session journal is not valid JSON or UTF-8, or its records "
        "contradict each other.",
    ),
    JOURNAL_MISSING: (
        FALLBACK,
        "The session journal Claude Code named did not exist within 2 seconds.",
    ),
    OVERSIZED_INVOCATION: (
        FALLBACK,
        "This /autoplan invocation needs more than 32 MiB of journal records read in full.",
    ),
    EVENT_ORDER: (
        FALLBACK,
        "The journal's events for this session cannot be put in one consistent order.",
    ),
    TOOL_IDENTITY: (FALLBACK, "Two journal records claim the same tool call id."),
    CURRENT_MISMATCH: (
        FALLBACK,
        "The journal records this call with a different tool or input than Claude Code passed "
        "to the hook.",
    ),
    AGENT_KEY: (
        FALLBACK,
        "The reviewer dispatch carries a key other than prompt, description, subagent_type "
        "(general-purpose only) and run_in_background; an /autoplan reviewer takes no model "
        "override.",
    ),
    CROSS_PHASE_BATCH: (
        FALLBACK,
        "One assistant message enters two different phases.",
    ),
    INIT_MISMATCH: (
        FALLBACK,
        "The result of `plangate autoplan init`, or its restore point or active plan header, "
        "does not match the paths of this invocation's init command.",
    ),
    SNAPSHOT: (
        FALLBACK,
        "A checkpoint file or other immutable /autoplan artifact is missing, reached through a "
        "symlink, writable or changed.",
    ),
    DISPATCH_PROMPT: (
        FALLBACK,
        "The reviewer prompt differs from the exact dispatchPrompt of the phase's checkpoint.",
    ),
    PUBLICATION_REPEAT: (
        FALLBACK,
        "The previous phase's report was already published in its own message once in this "
        "invocation and still cannot be verified: Claude Code is not writing it to the journal "
        "in time.",
    ),
    PUBLICATION_MISSING: (
        CORRECTIVE,
        "No report for the previous phase appears after its close packet was read. " + PUBLISH_HOW,
    ),
    PUBLICATION_UNFLUSHED: (
        CORRECTIVE,
        "The previous phase's report shares this call's message, or nothing journaled follows "
        "it yet. " + PUBLISH_HOW,
    ),
    CLOSE_REQUIRED: (
        CORRECTIVE,
        "The previous phase was not closed. Finish its close procedure: run `plangate autoplan "
        "prepare-close` for it and Read the close packet in full before entering the next "
        "phase.",
    ),
    CLOSE_INCOMPLETE: (
        CORRECTIVE,
        "The close packet was not read in full. Read every line of the current close packet "
        "(the readRanges that prepare-close printed cover it).",
    ),
    CLOSE_STALE: (
        CORRECTIVE,
        "The close packet or its checkpoint no longer matches the current phase input. Prepare "
        "a fresh close packet with `plangate autoplan prepare-close` and Read it in full.",
    ),
    CLOSE_EDITS: (
        CORRECTIVE,
        "The active plan changed after the close packet was read in a way the guard cannot "
        "reconstruct, or it fails its phase check. Repeat the close procedure: prepare a fresh "
        "close packet and Read it in full.",
    ),
    INIT_REQUIRED: (
        CORRECTIVE,
        "No successful `plangate autoplan init` is bound to this invocation. Run the init step "
        "of /autoplan first.",
    ),
    INIT_OWN: (
        CORRECTIVE,
        "This new /autoplan request needs its own init. Run `plangate autoplan init` with the "
        'three paths (it may answer "reused": true).',
    ),
    INIT_FAILED: (
        CORRECTIVE,
        "The most recent `plangate autoplan init` call failed. Run the same init command with "
        "the same three literal paths.",
    ),
    INIT_UNBINDABLE: (
        CORRECTIVE,
        "The init ran through a shell variable, substitution, chain, pipe or redirect. Run it "
        "as one Bash call with literal absolute paths.",
    ),
    PHASE_ORDER: (
        CORRECTIVE,
        "This call enters a phase out of order: each phase starts only after the one before "
        "it, in the order the invocation's init bound (Phase 1 CEO, then Design and DX where "
        "the scope includes them, then Eng, then the task list). Enter the phase that is due "
        "first.",
    ),
    HOOK_INPUT: (CORRECTIVE, "The guard could not read its input from Claude Code. " + _SETUP),
    ENTRY_TOO_LARGE: (
        CORRECTIVE,
        "This phase-entry call's hook input is over 64 KiB, more than the guard reads. Make "
        "the call with nothing beyond what /autoplan gives: a reviewer dispatch with exactly "
        "the phase checkpoint's dispatchPrompt, a phase Read with the file's path alone.",
    ),
    INSTALLATION: (CORRECTIVE, "The guard failed unexpectedly. " + _SETUP),
    FOREIGN_INSTALL: (
        CORRECTIVE,
        "The phase file belongs to another plangate installation than this hook. " + _SETUP,
    ),
    ENTRY_PENDING: (
        TRANSIENT,
        "A phase-entry call from an earlier message has no result yet. Wait for that result "
        "before this call.",
    ),
    MUTATION_PENDING: (
        TRANSIENT,
        "An edit to the active plan made after the close packet was read has no result yet. "
        "Wait for that edit's result before entering the next phase.",
    ),
}

TABLE.update(contract_codes.TABLE)  # workflow contracts share the table (plangate.contracts)
TABLE.update(defence_codes.TABLE)  # the gate's self-defence (docs/threat-model.md)

KNOWN_CODES: tuple[str, ...] = tuple(TABLE)

SEED_CODES_NOT_RAISED: tuple[str, ...] = ("evidence",)
"""Seed 000 codes plangate never raises (``docs/guard-deviations.md``): ``plangate explain``
still answers them, saying what plangate raises instead."""
"""Every current code, grouped by disposition; ``unrecognized_shape`` stands for its family."""

# Extra sentences for known (code, detail) pairs; any other detail is shown as it is.
DETAIL_TEXT: dict[tuple[str, str], str] = {
    (INIT_FAILED, INIT_FAILED_NOT_JSON): (
        "Its output was not its JSON result alone: run it without a leading `cd` or any other "
        "command around it."
    ),
    (UNRECOGNIZED_SHAPE, CWD_SPELLING): (
        "The journal's folder is the project folder spelled differently."
    ),
    (UNRECOGNIZED_SHAPE, COMPACTION_UNREACHABLE): (
        "Records after a Claude Code compaction hang from a compact boundary whose logical "
        "parent loops back instead of reaching the conversation's root, a layout plangate "
        "does not read yet."
    ),
}

DEFAULT_FACTS = {"phase": "<phase>", "workflow": "<workflow>"}
PHASE_DETAIL_CODES = frozenset({PUBLICATION_MISSING, PUBLICATION_UNFLUSHED, PUBLICATION_REPEAT})
"""Codes whose detail is the phase whose report is due: it fills ``{phase}`` in the text, so
the model is told the exact no-op to run (``true autoplan-published ceo``), never a
placeholder."""
_PHASE_LABELS = {
    "ceo": "Phase 1 (CEO)",
    "design": "Phase 2 (Design)",
    "dx": "Phase 2.5 (DX)",
    "eng": "Phase 3 (Eng)",
    "tasks": "Phase 4 (Tasks)",
}
"""``phase_order`` details: the phase that is due, as its sentence names it."""
_FIELD_MAX = 200


def full_code(code: str, detail: str | None = None) -> str:
    """The code as messages and the log name it: the shape family carries its detail."""
    if code == UNRECOGNIZED_SHAPE and detail:
        return f"{UNRECOGNIZED_SHAPE}:{detail}"
    return code


def is_known(code: str) -> bool:
    base = base_code(code)
    if base != code and base != UNRECOGNIZED_SHAPE:
        return False
    return base in TABLE


def disposition(code: str) -> str:
    """The disposition of a code (``unrecognized_shape:<detail>`` too); ValueError if unknown."""
    entry = TABLE.get(base_code(code))
    if entry is None or (":" in code and base_code(code) != UNRECOGNIZED_SHAPE):
        raise ValueError(f"unknown guard code: {code!r}")
    return entry[0]


def text(code: str, detail: str | None = None, facts: dict[str, str] | None = None) -> str:
    """The message text of a code, with its detail sentence and facts filled in."""
    disposition(code)
    base = base_code(code)
    if base == UNRECOGNIZED_SHAPE and base != code:
        detail = code[len(UNRECOGNIZED_SHAPE) + 1 :]
    message = TABLE[base][1]
    if base in PHASE_DETAIL_CODES and detail in _PHASE_LABELS:
        facts = {"phase": detail, **(facts or {})}
        detail = None
    if facts:
        for key, value in facts.items():
            message = message.replace("{" + key + "}", _clip(value))
    for key, value in DEFAULT_FACTS.items():
        message = message.replace("{" + key + "}", value)
    if detail:
        extra = DETAIL_TEXT.get((base, detail))
        if base == PHASE_ORDER and detail in _PHASE_LABELS:
            extra = f"The phase that is due is {_PHASE_LABELS[detail]}."
        if extra is not None:
            message = f"{message} {extra}"
        elif base != UNRECOGNIZED_SHAPE:
            message = f"{message} Detail: {_clip(detail)}."
    if base in LEAVE_CODES:
        message = f"{message} {LEAVE_TEXT}"
    return message


def _clip(value: str) -> str:
    return value if len(value) <= _FIELD_MAX else value[: _FIELD_MAX - 3] + "..."


def _agent(version: str | None) -> str:
    """The agent and its version, as a refusal names them: a Codex session's version begins
    with :data:`~plangate.journal.codex_folder.AGENT` (``codex-cli 0.171.0``); any other is
    Claude Code's."""
    from plangate.journal.codex_folder import AGENT as CODEX_AGENT

    name = "Claude Code"
    if version is not None and version.split(" ", 1)[0] == CODEX_AGENT:
        name, version = "Codex CLI", version[len(CODEX_AGENT) :].strip()
    return f"{name} {_clip(version) if version else 'version unknown'}"


def _trailer(code: str, claude_code_version: str | None, label: str = "code") -> str:
    agent = _agent(claude_code_version)
    return f"({label} {code}, {agent}). Run `plangate explain {code}` for what to do."


def deny_reason(
    code: str,
    claude_code_version: str | None,
    detail: str | None = None,
    facts: dict[str, str] | None = None,
) -> str:
    """The full text of a denial (what the model sees)."""
    code = full_code(code, detail)
    kind = disposition(code)
    if kind not in DENY_DISPOSITIONS:
        raise ValueError(f"{code} is not a denial ({kind})")
    parts = ["[plangate]", text(code, detail, facts)]
    if kind == FALLBACK:
        parts.append(FALLBACK_TEXT)
    parts.append(_trailer(code, claude_code_version))
    return " ".join(parts)


def deny_output(
    code: str,
    claude_code_version: str | None,
    detail: str | None = None,
    facts: dict[str, str] | None = None,
) -> Output:
    """The PreToolUse deny for a fallback, corrective or transient code.

    ``detail`` is a short cause (``snapshot``/``close_stale`` cause, ``init_failed``
    :data:`INIT_FAILED_NOT_JSON`, the shape detail); ``facts`` fill placeholders such as
    ``{phase}`` (the phase whose report is due). ValueError for an unknown or unverified code.
    """
    reason = deny_reason(code, claude_code_version, detail, facts)
    return protocol.pre_tool_use_decision(protocol.DENY, reason)


def unverified_notice(code: str, claude_code_version: str | None, detail: str | None = None) -> str:
    """The person's warning for an unverified allow."""
    code = full_code(code, detail)
    if disposition(code) != UNVERIFIED:
        raise ValueError(f"{code} is not an unverified allow")
    label = "journal shape" if base_code(code) == UNRECOGNIZED_SHAPE else "code"
    extra = detail if detail and base_code(code) != UNRECOGNIZED_SHAPE else None
    return (
        f"[plangate] phase publication was NOT verified for this call ({code}): "
        f"{text(code, extra)} Phase-report enforcement was skipped for this call. "
        + _trailer(code, claude_code_version, label)
    )


def unverified_output(
    code: str, claude_code_version: str | None, detail: str | None = None
) -> Output:
    """An unverified allow: no permission decision, a warning, and a reminder for the model."""
    notice = unverified_notice(code, claude_code_version, detail)
    context = (
        f"{notice} This call proceeds unverified. Publish each completed phase report as your "
        "own assistant text, in a message whose only tool call is the Bash no-op "
        "`true autoplan-published <phase>`, and enter the next phase in a later message."
    )
    return protocol.warning(notice, context=context)


def _names(values: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    if not values:
        return ()
    if isinstance(values, str):
        raise TypeError("give a sequence of names, not one string")
    names: list[str] = []
    for value in values:
        if not isinstance(value, str):
            raise TypeError(f"names must be strings, not {type(value).__name__}")
        names.append(value)
    return tuple(names)


class Decision:
    """What the guard decided for one call; the hook prints :meth:`output`, the log writes it.

    ``decision`` is ``allow`` or ``deny``. ``code`` is None only for a verified allow
    (disposition ``allow``); an allow with a code is unverified, a deny has a fallback,
    corrective or transient code. ``path`` says how the call was evaluated (``journal``,
    ``payload`` or ``none``). ``unknown_keys`` holds key names (``agent_key``) and
    ``record_shapes`` record shapes (an unrecognized shape): never values or content.
    """

    __slots__ = (
        "decision",
        "disposition",
        "code",
        "detail",
        "path",
        "claude_code_version",
        "unknown_keys",
        "record_shapes",
    )

    def __init__(
        self,
        decision: str,
        code: str | None = None,
        *,
        detail: str | None = None,
        path: str = PATH_NONE,
        claude_code_version: str | None = None,
        unknown_keys: tuple[str, ...] | list[str] = (),
        record_shapes: tuple[str, ...] | list[str] = (),
    ) -> None:
        if decision not in (protocol.ALLOW, protocol.DENY):
            raise ValueError(f"decision must be allow or deny, not {decision!r}")
        if path not in PATHS:
            raise ValueError(f"path must be journal, payload or none, not {path!r}")
        if code is None:
            if decision != protocol.ALLOW:
                raise ValueError("a denial needs a code")
            kind = ALLOW
        else:
            if code == UNRECOGNIZED_SHAPE and detail:
                code, detail = full_code(code, detail), None
            kind = disposition(code)
            if (decision == protocol.ALLOW) != (kind == UNVERIFIED):
                raise ValueError(f"{code} ({kind}) does not go with decision {decision!r}")
        self.decision = decision
        self.disposition = kind
        self.code = code
        self.detail = detail
        self.path = path
        self.claude_code_version = claude_code_version
        self.unknown_keys = _names(unknown_keys)
        self.record_shapes = _names(record_shapes)

    @classmethod
    def allow(cls, path: str = PATH_JOURNAL, claude_code_version: str | None = None) -> Decision:
        """A verified allow."""
        return cls(protocol.ALLOW, path=path, claude_code_version=claude_code_version)

    @classmethod
    def unverified(
        cls,
        code: str,
        *,
        detail: str | None = None,
        path: str = PATH_NONE,
        claude_code_version: str | None = None,
        record_shapes: tuple[str, ...] | list[str] = (),
    ) -> Decision:
        return cls(
            protocol.ALLOW,
            code,
            detail=detail,
            path=path,
            claude_code_version=claude_code_version,
            record_shapes=record_shapes,
        )

    @classmethod
    def deny(
        cls,
        code: str,
        *,
        detail: str | None = None,
        path: str = PATH_NONE,
        claude_code_version: str | None = None,
        unknown_keys: tuple[str, ...] | list[str] = (),
    ) -> Decision:
        return cls(
            protocol.DENY,
            code,
            detail=detail,
            path=path,
            claude_code_version=claude_code_version,
            unknown_keys=unknown_keys,
        )

    @property
    def allowed(self) -> bool:
        return self.decision == protocol.ALLOW

    def output(self, facts: dict[str, str] | None = None) -> Output:
        """The hook output: ``{}`` for a verified allow, else the warning or the denial."""
        if self.code is None:
            return {}
        if self.disposition == UNVERIFIED:
            return unverified_output(self.code, self.claude_code_version, self.detail)
        return deny_output(self.code, self.claude_code_version, self.detail, facts)

    def reason(self, facts: dict[str, str] | None = None) -> str:
        """A refusal's full text, as the model or the person reads it (any event's form)."""
        if self.code is None or self.allowed:
            raise ValueError("only a refusal has a reason")
        return deny_reason(self.code, self.claude_code_version, self.detail, facts)

    def notice(self) -> str:
        """An unverified allow's warning for the person (any event's form)."""
        if self.code is None or not self.allowed:
            raise ValueError("only an unverified allow has a notice")
        return unverified_notice(self.code, self.claude_code_version, self.detail)

    def as_dict(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in self.__slots__}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Decision) and self.as_dict() == other.as_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        inner = ", ".join(f"{key}={value!r}" for key, value in self.as_dict().items())
        return f"Decision({inner})"
