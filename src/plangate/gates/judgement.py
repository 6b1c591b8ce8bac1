"""What a gate found at one stop, before the session record turns it into markers.

A judgement holds only facts about the transcript and the files: the run, whether the stop
is final, whether the run meets its gate, and the block text. The record decides the rest
(``fired`` once per run, the 3-block cap, nothing after ``released`` or ``exhausted``).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from plangate.gates.gate import Gate


class Context:
    """One hook call as the gates see it."""

    __slots__ = (
        "event",
        "session",
        "cwd",
        "project_dir",
        "environ",
        "state_root",
        "agent_id",
        "last_message",
        "background",
    )

    def __init__(
        self,
        *,
        event: str,
        session: str,
        cwd: str,
        project_dir: str,
        environ: dict[str, str],
        state_root: str,
        agent_id: str | None = None,
        last_message: object = None,
        background: object = None,
    ) -> None:
        self.event = event
        self.session = session
        self.cwd = cwd
        self.project_dir = project_dir
        self.environ = environ
        self.state_root = state_root
        self.agent_id = agent_id
        self.last_message = last_message
        self.background = background


class Judgement:
    """One gate's finding at one stop. ``run`` is None when the skill never loaded."""

    __slots__ = (
        "gate",
        "run",
        "agent",
        "loaded_at",
        "via",
        "final",
        "not_final",
        "met",
        "file",
        "files",
        "instructions",
        "skipped",
        "phases",
        "published",
        "missing",
        "scope",
        "stop",
    )

    def __init__(self, gate: Gate, run: str | None = None) -> None:
        self.gate = gate
        self.run = run
        self.agent: str | None = None
        self.loaded_at = ""
        self.via = ""
        self.final = False
        self.not_final = ""  # why not: question, status, ask-tool, reviewer
        self.met = False
        self.file: str | None = None
        self.files: list[str] = []
        self.instructions = ""  # the block reason after its marker line
        self.skipped: list[str] = []
        self.phases: list[str] | None = None
        self.published: list[str] | None = None
        self.missing: str | None = None
        self.scope: dict[str, bool] | None = None
        self.stop: int | None = None  # the transcript record of the stop's message

    def __repr__(self) -> str:
        return (
            f"Judgement({self.gate.switch!r}, run={self.run!r}, final={self.final!r}, "
            f"met={self.met!r}, missing={self.missing!r})"
        )
