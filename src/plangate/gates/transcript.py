"""Reading the session (or a subagent's) transcript for a gate, until it is settled.

Claude Code can fire Stop and SubagentStop before it has written the turn's last lines, so a
gate re-reads the transcript every 50 ms until it holds the stop's ``last_assistant_message``
(as the last assistant text, after the text the previous stop of the same scope matched), for
at most 2 seconds or half the deadline, and then judges what is there: :class:`Settled`, the
gates' read and settle on the one loop every workflow waits in (:func:`plangate.engine.settle`).

Every read, every look at a file and the wait go through the deadline's world
(:mod:`plangate.journal.world`; a test injects its clock). The session transcript goes
through the world's ``read_journal`` (Codex's rollout, its ``read_rollout``). A subagent's own
transcript (``agent_transcript_path``) holds only sidechain records, which the session reader
refuses by design; :func:`read_agent` reads it line by line with the same event builder.
Hook path: standard library only.
"""

from __future__ import annotations

import os
import stat

from plangate import jsonio
from plangate.engine import AGAIN, WAIT, Workflow, settle
from plangate.gates.errors import GATE_TRANSCRIPT, GateError
from plangate.journal import codes
from plangate.journal.building import EventBuilder, clean_bash_result
from plangate.journal.events import AssistantText, Event, HumanTurn, ToolResult, ToolUse
from plangate.journal.reader import ERROR, READY
from plangate.journal.records import Record
from plangate.journal.scan import ScanRefusal, parse_line
from plangate.journal.settle import Settle
from plangate.journal.trust import Handover
from plangate.journal.world import OS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from plangate.gates.timing import Deadline
    from plangate.journal.world import World

AGENT_MAX_BYTES = 32 * 1024 * 1024


class View:
    """What one read of a transcript gave: its events, the lines of the queued prompts
    Claude Code handed over (``Verdict.handed_over``; for a subagent's transcript, found as
    it is read), and how the session was started."""

    __slots__ = (
        "path",
        "exists",
        "events",
        "handed_over",
        "version",
        "entrypoint",
        "prompt_source",
        "matched",
    )

    def __init__(self, path: str) -> None:
        self.path = path
        self.exists = False
        self.events: list[Event] = []
        self.handed_over: frozenset[int] = frozenset()
        self.version: str | None = None
        self.entrypoint: str | None = None
        self.prompt_source: str | None = None
        self.matched: int | None = None  # the record of the text that matched the stop


def _normal(text: str) -> str:
    return " ".join(text.split())


def matching_text(events: list[Event], last_message: object, after: int | None) -> int | None:
    """The record of the last assistant text when it is the stop's message, else None.

    Without a message to look for, the transcript counts as settled (record -1).
    """
    if not isinstance(last_message, str) or not last_message.strip():
        return -1
    wanted = _normal(last_message)
    for event in reversed(events):
        if isinstance(event, AssistantText) and event.text:
            have = _normal(event.text)
            if after is not None and event.record <= after:
                return None
            if have and (wanted.endswith(have) or have.endswith(wanted)):
                return event.record
            return None
    return None


def _needed(ordered: list[Record], armed: Callable[[list[Event]], bool] | None) -> Iterable[Record]:
    """The records a gate needs in full.

    Always the typed turns and the last assistant text (to see whether the transcript holds
    the stop's message). When ``armed`` finds a load in the index (the calls that load a skill
    are small, so their input is in the index), also every assistant message and Bash result.
    """
    events = [event for record in ordered for event in record.events]
    everything = armed is None or armed(events)
    bash = {e.tool_use_id for e in events if isinstance(e, ToolUse) and e.name == "Bash"}
    last_text = next(
        (r.index for r in reversed(ordered) if any(isinstance(e, AssistantText) for e in r.events)),
        None,
    )
    for record in ordered:
        if record.index == last_text or (everything and record.role == "assistant"):
            yield record
            continue
        for event in record.events:
            if isinstance(event, HumanTurn) or (
                everything and isinstance(event, ToolResult) and event.tool_use_id in bash
            ):
                yield record
                break


def read_main(
    path: str,
    session_id: str,
    armed: Callable[[list[Event]], bool] | None = None,
    world: World = OS,
) -> tuple[View, list[Record]]:
    """One read of the session transcript; ``GATE_TRANSCRIPT`` when the reader refuses it.

    ``armed`` decides from the index whether the whole run is needed (see :func:`_needed`).
    """
    view = View(path)
    captured: list[list[Record]] = []

    def select(ordered: list[Record]) -> Iterable[Record]:
        captured.append(ordered)
        return list(_needed(ordered, armed))

    verdict = world.read_journal(path, session_id=session_id, select=select)
    view.exists = verdict.exists
    view.version = verdict.claude_code_version
    if verdict.status == ERROR:
        reason = verdict.reason or "unknown"
        raise GateError(GATE_TRANSCRIPT, f"the transcript was refused ({reason}): {verdict.detail}")
    if verdict.status == READY:
        view.events = verdict.events
        view.handed_over = verdict.handed_over
    return view, captured[0] if captured else []


def _session_fields(
    path: str, ordered: list[Record], events: list[Event], world: World
) -> dict[str, object]:
    """``entrypoint`` and ``promptSource`` of the latest typed turn's record (one line read)."""
    turn = next((e for e in reversed(events) if isinstance(e, HumanTurn)), None)
    if turn is None:
        return {}
    record = next((r for r in ordered if r.index == turn.record), None)
    if record is None:
        return {}
    try:
        descriptor = world.open_journal(path)
        try:
            data = os.pread(descriptor, record.length, record.offset)
        finally:
            os.close(descriptor)
        raw = jsonio.loads(data.decode("utf-8"))
    except (OSError, UnicodeDecodeError, jsonio.JSONError):
        return {}
    return raw if isinstance(raw, dict) else {}


def read_agent(path: str, agent_id: str | None, world: World = OS) -> View:
    """One read of a subagent's transcript: its complete lines, in file order."""
    view = View(path)
    # Non-blocking (World.open_journal): a FIFO named like a transcript is refused, never
    # waited on.
    try:
        descriptor = world.open_journal(path)
    except FileNotFoundError:
        return view
    except OSError as error:
        raise GateError(
            GATE_TRANSCRIPT, f"the subagent transcript cannot be opened ({error.strerror})"
        ) from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise GateError(GATE_TRANSCRIPT, "the subagent transcript is not a regular file")
        if info.st_size > AGENT_MAX_BYTES:
            raise GateError(GATE_TRANSCRIPT, "the subagent transcript is over 32 MiB")
        chunks = []
        while True:
            chunk = os.read(descriptor, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(descriptor)
    view.exists = True
    data = b"".join(chunks)
    end = data.rfind(b"\n")
    builder = EventBuilder(full=True)
    queue = Handover()  # every line is met, the other agents' too
    events: list[Event] = []
    base = 0
    offset = 0
    for index, line in enumerate(data[: end + 1].split(b"\n")[:-1] if end >= 0 else []):
        start = offset
        offset += len(line) + 1
        if not line.strip():
            continue
        try:
            raw = parse_line(line, index)
        except ScanRefusal as refusal:
            raise GateError(GATE_TRANSCRIPT, f"the subagent transcript: {refusal.detail}") from None
        owner = raw.get("agentId")
        if agent_id is not None and owner not in (None, agent_id):
            queue.meet(raw, index, ())
            continue
        version, entrypoint = raw.get("version"), raw.get("entrypoint")
        if view.version is None and isinstance(version, str):
            view.version = version
        if view.entrypoint is None and isinstance(entrypoint, str):
            view.entrypoint = entrypoint
        clean = {key: value for key, value in raw.items() if key != "agentId"}
        record = Record(index, start, len(line), clean)
        built, slots = builder.build(clean, record, base)
        queue.meet(raw, index, built)
        base += max(slots, 1)
        events.extend(built)
    bash = {e.tool_use_id for e in events if isinstance(e, ToolUse) and e.name == "Bash"}
    for event in events:
        if isinstance(event, ToolResult) and event.tool_use_id in bash:
            clean_bash_result(event)
    view.events = events
    view.handed_over = frozenset(queue.handed)
    return view


class Settled(Workflow):
    """The gates' read and settle on the engine (:func:`plangate.engine.settle`): read until
    the transcript holds the stop's message, within the settle budget, on the deadline's
    clock. A read the reader refuses for an unknown root shape is read once more at once (a
    record being written can look like one): both reads must agree. Settles on
    ``(view, matched)``."""

    def __init__(
        self,
        read: Callable[[], View],
        last_message: object,
        after: int | None,
        deadline: Deadline,
    ) -> None:
        self.reader = read
        self.last_message = last_message
        self.after = after
        self.deadline = deadline

    def begin(self, world: World, attempt: object) -> Settle:
        return Settle.within(self.deadline.settle_budget, world.clock, world.sleep)

    def read(self, world: World, attempt: object) -> View | GateError:
        try:
            return self.reader()
        except GateError as error:
            return error

    def caught_up(self, view: View | GateError, attempt: object, wait: Settle) -> object:
        if isinstance(view, GateError):
            if codes.UNRECOGNIZED_SHAPE in view.why and wait.second_look():
                return AGAIN
            raise view
        matched = matching_text(view.events, self.last_message, self.after)
        if matched is not None:
            view.matched = matched
            return view, True
        if not wait.left():
            return self.behind(view, attempt)
        self.deadline.check("re-reading the transcript")
        return WAIT

    def behind(self, view: View, attempt: object) -> tuple[View, bool]:
        """Nothing newer came: the stop already judged at ``after``, delivered again (a
        retry, or the hook registered twice) is that stop, counted once under the lock."""
        after = self.after
        repeated = matching_text(view.events, self.last_message, None) if after else None
        if repeated is not None and repeated == after:
            view.matched = repeated
            return view, True
        return view, False


def settled(
    read: Callable[[], View],
    last_message: object,
    after: int | None,
    deadline: Deadline,
) -> tuple[View, bool]:
    """Read until the transcript holds the stop's message or the settle budget is spent
    (on the deadline's clock: :class:`Settled`)."""
    found: tuple[View, bool] = settle(
        Settled(read, last_message, after, deadline), deadline.world, None
    )
    return found


def read_session(
    path: str,
    session_id: str,
    last_message: object,
    after: int | None,
    deadline: Deadline,
    armed: Callable[[list[Event]], bool] | None = None,
) -> tuple[View, bool]:
    """The settled session transcript, with the latest typed turn's entrypoint and source.
    While the file is the one last read, unchanged (device, inode, size, modification time),
    the settle loop is given that read's view again: a read of a long journal costs a second
    or more, and the same bytes give the same verdict."""
    holder: list[list[Record]] = []
    last: list[tuple[tuple[int, int, int, int], View]] = []

    world = deadline.world

    def read() -> View:
        stamp = _stamp(path, world)
        if stamp is not None and last and last[0][0] == stamp:
            return last[0][1]
        view, ordered = read_main(path, session_id, armed, world)
        holder[:] = [ordered]
        last[:] = [(stamp, view)] if stamp is not None else []
        return view

    view, done = settled(read, last_message, after, deadline)
    if not view.exists:
        raise GateError(GATE_TRANSCRIPT, "the transcript does not exist")
    fields = _session_fields(path, holder[0] if holder else [], view.events, world)
    entrypoint, source = fields.get("entrypoint"), fields.get("promptSource")
    view.entrypoint = entrypoint if isinstance(entrypoint, str) else None
    view.prompt_source = source if isinstance(source, str) else None
    return view, done


def read_codex(
    path: str, session_id: str, last_message: object, after: int | None, deadline: Deadline
) -> tuple[View, bool]:
    """Codex CLI's settled session history (:mod:`plangate.journal.codex`), as a view: who
    answers the session is its ``session_meta`` ``source`` (``exec`` is headless, as
    ``claude -p`` is; the terminal UI is a person's)."""
    from plangate.journal.codex import started_by

    world = deadline.world

    def read() -> View:
        verdict = world.read_rollout(path, session_id=session_id)
        if verdict.status == ERROR:
            raise GateError(GATE_TRANSCRIPT, f"{verdict.reason}: {verdict.detail}")
        view = View(path)
        view.exists = verdict.exists
        view.events = verdict.events
        view.version = verdict.claude_code_version
        return view

    view, done = settled(read, last_message, after, deadline)
    if not view.exists:
        raise GateError(GATE_TRANSCRIPT, "the session history does not exist")
    view.prompt_source = "sdk" if started_by(path) == "exec" else "typed"
    return view, done


def _stamp(path: str, world: World) -> tuple[int, int, int, int] | None:
    """What tells the file apart from the one last read, taken before it is read again."""
    try:
        info = world.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def read_subagent(
    path: str,
    agent_id: str | None,
    last_message: object,
    after: int | None,
    deadline: Deadline,
) -> tuple[View, bool]:
    world = deadline.world
    return settled(lambda: read_agent(path, agent_id, world), last_message, after, deadline)
