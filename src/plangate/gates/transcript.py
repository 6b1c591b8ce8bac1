"""Reading the session (or a subagent's) transcript for a gate, until it is settled.

Claude Code can fire Stop and SubagentStop before it has written the turn's last lines, so a
gate re-reads the transcript every 50 ms until it holds the stop's ``last_assistant_message``
(as the last assistant text, after the text the previous stop of the same scope matched), for
at most 2 seconds or half the deadline, and then judges what is there: :class:`Stop`, the
gates' workflow on the one driver every workflow decides in (:func:`plangate.engine.decide`).

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

from plangate.engine import AGAIN, WAIT, Workflow, decide
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
    from typing import Any

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
) -> View:
    """One read of the session transcript; ``GATE_TRANSCRIPT`` when the reader refuses it.

    ``armed`` decides from the index whether the whole run is needed (see :func:`_needed`).
    """
    view = View(path)

    def select(ordered: list[Record]) -> Iterable[Record]:
        return list(_needed(ordered, armed))

    verdict = world.read_journal(path, session_id=session_id, select=select)
    view.exists = verdict.exists
    view.version = verdict.claude_code_version
    if verdict.status == ERROR:
        reason = verdict.reason or "unknown"
        why = f"the transcript was refused ({reason}): {verdict.detail}"
        raise GateError(GATE_TRANSCRIPT, why, verdict.reason)
    if verdict.status == READY:
        view.events = verdict.events
        view.handed_over = verdict.handed_over
    return view


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


class Stop(Workflow):
    """A final stop, judged by the gates on the engine (:func:`plangate.engine.decide`).

    - **read**: one read of the transcript (:meth:`view`: the session's journal, Codex's
      rollout or a subagent's own transcript) through the deadline's world;
    - **settle**: caught up when the transcript holds the stop's message after the text the
      previous stop of the same scope matched (:func:`matching_text`), within the settle
      budget on the deadline's clock; a read the reader refuses for an unknown root shape is
      read once more at once (a record being written can look like one: both reads must
      agree); at the bound, a stop already judged and delivered again is that stop;
    - **fold**: the settled view, with how its session was started (:meth:`finish`);
    - **rules**: ``judge``, the gates' judgements on that view (the seed-001 gates one per
      gate, the contracts' done gate one per contract);
    - no second pass.

    What the judgements become (the session record's markers under its lock, the hold, the
    trace) is the caller's, as a ruling's decision is for every workflow."""

    def __init__(
        self,
        path: str,
        owner: str | None,
        last_message: object,
        after: int | None,
        deadline: Deadline,
        judge: Callable[[View], Any],
    ) -> None:
        self.path = path
        self.owner = owner
        """Whose transcript it is: the session's id, or the subagent's (None: any)."""
        self.last_message = last_message
        self.after = after
        self.deadline = deadline
        self.judge = judge
        self.matched: int | None = None
        """The record of the text the settled read matched to the stop (None: none)."""

    def view(self, world: World) -> View:
        """One read of the transcript; ``GATE_TRANSCRIPT`` when it is refused."""
        raise NotImplementedError

    def finish(self, view: View, world: World) -> View:
        """The settled view, with what the session says of how it was started."""
        return view

    def begin(self, world: World, attempt: object) -> Settle:
        return Settle.within(self.deadline.settle_budget, world.clock, world.sleep)

    def read(self, world: World, attempt: object) -> View | GateError:
        try:
            return self.view(world)
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
            return view
        if not wait.left():
            return self.behind(view, attempt)
        self.deadline.check("re-reading the transcript")
        return WAIT

    def behind(self, view: View, attempt: object) -> View:
        """Nothing newer came: the stop already judged at ``after``, delivered again (a
        retry, or the hook registered twice) is that stop, counted once under the lock."""
        after = self.after
        repeated = matching_text(view.events, self.last_message, None) if after else None
        if repeated is not None and repeated == after:
            view.matched = repeated
        return view

    def fold(self, view: View, attempt: object) -> View:
        world = self.deadline.world
        view = self.finish(view, world)
        self.deadline.check("reading the transcript")
        self.matched = view.matched
        return view

    def rules(self, view: View, seen: View, attempt: object) -> Any:
        return self.judge(view)

    def again(self, ruling: Any, seen: View, attempt: object) -> None:
        return None


def judged(stop: Stop) -> Any:
    """What ``stop``'s gates judged, on the transcript once it settled."""
    ruling, _ = decide(stop, stop.deadline.world)
    return ruling


class SessionStop(Stop):
    """A stop of the session, read from its journal (:func:`read_main`). While the file is
    the one last read, unchanged (device, inode, size, modification time), the settle loop
    is given that read's view again: a read of a long journal costs a second or more, and
    the same bytes give the same verdict."""

    def __init__(
        self,
        path: str,
        session_id: str,
        last_message: object,
        after: int | None,
        deadline: Deadline,
        judge: Callable[[View], Any],
        armed: Callable[[list[Event]], bool] | None = None,
    ) -> None:
        super().__init__(path, session_id, last_message, after, deadline, judge)
        self.armed = armed
        self.last: tuple[tuple[int, int, int, int], View] | None = None

    def view(self, world: World) -> View:
        stamp = _stamp(self.path, world)
        if stamp is not None and self.last is not None and self.last[0] == stamp:
            return self.last[1]
        view = read_main(self.path, str(self.owner), self.armed, world)
        self.last = (stamp, view) if stamp is not None else None
        return view

    def finish(self, view: View, world: World) -> View:
        """The latest typed turn's entrypoint and prompt source, as the reader gave them."""
        if not view.exists:
            raise GateError(GATE_TRANSCRIPT, "the transcript does not exist")
        turn = next((e for e in reversed(view.events) if isinstance(e, HumanTurn)), None)
        if turn is not None:
            view.entrypoint, view.prompt_source = turn.entrypoint, turn.source
        return view


class CodexStop(Stop):
    """A stop of a Codex CLI session, read from its rollout (:mod:`plangate.journal.codex`):
    who answers the session is its ``session_meta`` ``source`` (``exec`` is headless, as
    ``claude -p`` is; the terminal UI is a person's)."""

    started_by: str | None = None

    def view(self, world: World) -> View:
        verdict = world.read_rollout(self.path, session_id=self.owner)
        if verdict.status == ERROR:
            raise GateError(GATE_TRANSCRIPT, f"{verdict.reason}: {verdict.detail}")
        view = View(self.path)
        view.exists = verdict.exists
        view.events = verdict.events
        view.version = verdict.claude_code_version
        self.started_by = verdict.started_by
        return view

    def finish(self, view: View, world: World) -> View:
        if not view.exists:
            raise GateError(GATE_TRANSCRIPT, "the session history does not exist")
        view.prompt_source = "sdk" if self.started_by == "exec" else "typed"
        return view


class AgentStop(Stop):
    """A subagent's stop, read from its own transcript (:func:`read_agent`)."""

    def view(self, world: World) -> View:
        return read_agent(self.path, self.owner, world)


def _stamp(path: str, world: World) -> tuple[int, int, int, int] | None:
    """What tells the file apart from the one last read, taken before it is read again."""
    try:
        info = world.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns
