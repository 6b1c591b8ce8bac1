"""The reader's answer about one journal: :class:`Verdict`. Standard library only."""

from __future__ import annotations

from plangate.journal.events import Event, ToolResult, ToolUse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from plangate.journal.scan import Prefix
    from plangate.journal.window import Window

READY = "ready"
MISSING = "missing"
ERROR = "error"


class Verdict:
    """The reader's answer about one journal.

    ``status`` is ``ready`` (the conversation is owned and ordered), ``missing`` (nothing to
    judge yet: no file, or no owned record with content yet; ``reason`` is None) or ``error``
    (refused: ``reason`` holds the code and ``detail`` says why in words).
    """

    __slots__ = (
        "path",
        "session_id",
        "status",
        "reason",
        "detail",
        "claude_code_version",
        "records",
        "lines",
        "owned",
        "_events",
        "_deferred",
        "_event_count",
        "root_shape",
        "prefix",
        "complete",
        "record_bytes",
        "retained_bytes",
        "exists",
        "genesis",
        "owner",
        "stray_tool_uses",
        "dropped",
        "window",
        "started_by",
        "handed_over",
    )

    def __init__(self, path: str, session_id: str | None) -> None:
        self.path = path
        self.session_id = session_id
        self.status = MISSING
        self.reason: str | None = None
        self.detail = ""
        self.claude_code_version: str | None = None
        self.records = 0
        self.lines = 0
        self.owned = 0
        self._events: list[Event] = []
        self._deferred: tuple[Callable[[], list[Event]], list[Event]] | None = None
        self._event_count = 0
        self.root_shape: list[str] = []
        self.prefix: Prefix | None = None
        self.complete = True
        self.record_bytes: int | None = None
        self.retained_bytes = 0
        self.exists = False
        self.genesis = False
        self.owner: str | None = None
        # Tool calls recorded outside the owned conversation, by id: where they are
        # ("another session", "a subagent record", "unreachable" when an ancestor is missing).
        self.stray_tool_uses: dict[str, str] = {}
        # Main-session records the live chain leaves out, by reason (plangate.journal.chain).
        self.dropped: dict[str, int] = {}
        # Set when the events are a tracker's window only (plangate.journal.window).
        self.window: Window | None = None
        self.started_by: str | None = None
        """How a Codex session was started (its ``session_meta`` ``source``: ``exec`` for
        ``codex exec``); None for Claude Code's journal."""
        # The lines of the queued prompts Claude Code handed over as it writes them
        # (plangate.journal.trust.Handover), whether or not the live chain holds them. A
        # Codex rollout has no queue: none.
        self.handed_over: frozenset[int] = frozenset()

    @property
    def ready(self) -> bool:
        return self.status == READY

    @property
    def events(self) -> list[Event]:
        """The events of the owned records in causal order (unpacked on first use when they
        come from a saved index)."""
        if self._deferred is not None:
            earlier, appended = self._deferred
            self._deferred = None
            self._events = earlier() + appended
        return self._events

    @events.setter
    def events(self, events: list[Event]) -> None:
        self._events = events
        self._deferred = None

    @property
    def event_count(self) -> int:
        return self._event_count if self._deferred is not None else len(self._events)

    def defer_events(
        self, count: int, earlier: Callable[[], list[Event]], appended: list[Event]
    ) -> None:
        self._deferred = (earlier, appended)
        self._event_count = count

    def refuse(self, reason: str, detail: str) -> Verdict:
        self.status = ERROR
        self.reason = reason
        self.detail = detail
        self.events = []
        return self

    def tool_uses(self) -> dict[str, ToolUse]:
        return {e.tool_use_id: e for e in self.events if isinstance(e, ToolUse)}

    def results_for(self, tool_use_id: str) -> list[ToolResult]:
        return [
            e for e in self.events if isinstance(e, ToolResult) and e.tool_use_id == tool_use_id
        ]

    def __repr__(self) -> str:
        return (
            f"Verdict(status={self.status!r}, reason={self.reason!r}, "
            f"version={self.claude_code_version!r}, records={self.records}, "
            f"events={self.event_count})"
        )
