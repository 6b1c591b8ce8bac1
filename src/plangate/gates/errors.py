"""The gates' error codes. A gate never blocks because it broke: each code is recorded,
logged, written to stderr and to the transcript, and the stop goes through."""

from __future__ import annotations

GATE_BAD_PAYLOAD = "GATE_BAD_PAYLOAD"
GATE_TRANSCRIPT = "GATE_TRANSCRIPT"
GATE_TIMEOUT = "GATE_TIMEOUT"
GATE_STATE = "GATE_STATE"
GATE_LOCKED = "GATE_LOCKED"
GATE_SLUG = "GATE_SLUG"
GATE_UNEXPECTED = "GATE_UNEXPECTED"

REMEDIES = {
    GATE_BAD_PAYLOAD: "the hook input changed shape (a Claude Code update?): update plangate",
    GATE_TRANSCRIPT: "run `plangate journal inspect <transcript>` to see why it cannot be read",
    GATE_TIMEOUT: "a very large transcript or a slow disk; PLANGATE_SKILL_GATE_DEADLINE_MS "
    "raises the deadline (at most 20000)",
    GATE_STATE: "make the state root writable (PLANGATE_STATE_ROOT, default ~/.plangate) and "
    "its folders real folders of your own (no symbolic links), or delete "
    "skill-gates/<session>/ under it",
    GATE_LOCKED: "transient: another hook held the session lock; a lock older than 30 s is "
    "taken over",
    GATE_SLUG: "set PLANGATE_PROJECT_SLUG to a plain folder name, or unset it",
    GATE_UNEXPECTED: "report it with the trace log line",
}
CODES = tuple(REMEDIES)


def anchor(code: str) -> str:
    """Where a person reads about ``code``: ``plangate explain GATE_TIMEOUT``."""
    return f"`plangate explain {code}`"


class GateError(Exception):
    """A gate could not decide; ``code`` is one of :data:`CODES`, ``why`` says why in words,
    ``refusal`` is the journal reader's code when it refused the transcript."""

    def __init__(self, code: str, why: str, refusal: str | None = None) -> None:
        super().__init__(f"{code}: {why}")
        self.code = code
        self.why = why
        self.refusal = refusal


class GateTimeout(BaseException):
    """Raised by the deadline alarm; a BaseException so no ``except Exception`` swallows it."""
