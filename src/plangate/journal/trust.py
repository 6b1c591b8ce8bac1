"""Journal shapes Claude Code never writes, which never stand for a person.

Whoever can append to a session's journal can write any record into it, the model gating
itself included (a Bash ``>>`` while its own call runs). A person's words reach the journal
in two shapes only, each with a context Claude Code writes around it:

- a **typed prompt**, a user record that starts a turn: never between a tool call and its
  result (the model's call is answered by its result first; a prompt typed meanwhile is
  queued, the next shape);
- a **queued prompt** (``queued_command`` attachment, ``origin.kind`` human): a prompt
  typed while the model worked, given to it within the turn. Claude Code 2.1.332 writes a
  ``queue-operation`` ``enqueue`` line with the prompt when it is typed, a ``remove`` line
  (``commandUuid`` the attachment's ``source_uuid``, ``content`` its prompt) when it takes
  it, and the attachment, whose parent is the conversation line written just before it
  (the call's result or an attachment of Claude Code's), never the model's call. The remove
  is written when the prompt is taken, the conversation records when they are ready, so
  other lines may stand between the remove and the attachment: request metadata, the call's
  result, a prompt snapshot (each seen in real 2.1.332 terminal journals)
  (docs/contracts.md, "A prompt typed while the model works").

:class:`Handover` checks the second shape in the reader's one pass over the file
(:mod:`.scan`, and a subagent's transcript in :func:`plangate.gates.transcript.read_agent`),
as each queued prompt is met: the verdict carries the lines it found handed over
(``Verdict.handed_over``), and the journal index keeps its ledger for reads that parse only
what was appended (:mod:`.index`). :func:`forged` checks the first shape on the live chain's
events, and a queued prompt against that set. A forgery that copies every line of the
shape, and lands in the gap between a result and the model's next call, passes both: only a
journal the agent cannot write (Claude Code's sandbox, docs/threat-model.md) excludes it.
Standard library only (hook path).
"""

from __future__ import annotations

import zlib

from plangate.journal.codes import COMPACTION_UNREACHABLE, COMPETING_ROOT, CYCLE, unrecognized
from plangate.journal.events import ToolResult, ToolUse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Container, Sequence
    from typing import Any

    from plangate.journal.compact import Compactor
    from plangate.journal.events import Event

UNTRUSTED_REASONS = frozenset({CYCLE, COMPETING_ROOT, unrecognized(COMPACTION_UNREACHABLE)})
"""Reader refusals for shapes Claude Code never writes: parent links that loop (a compact
boundary's logical parent included), two roots or a record id used twice. Inside an active
workflow they deny (``journal_untrusted``)."""

SPLICED = "a {kind} between a tool call and its result"
UNPAIRED = "a queued prompt without Claude Code's queue operations"
_WORDS = frozenset({"human_turn", "queued_prompt"})


def forged(events: list[Event], paired: Container[int] | None) -> dict[int, str]:
    """The person's words among ``events`` (the live chain, in order) that Claude Code would
    not have written, by event order, each with what it is: a human turn or queued prompt
    between a tool call and its result, or right after a call (its result not written
    before it: a hook may read the journal between a forging call's append and its result);
    a queued prompt whose line is not in ``paired`` (``Verdict.handed_over``: the lines
    :class:`Handover` found handed over; None: none is)."""
    answered = {event.tool_use_id for event in events if isinstance(event, ToolResult)}
    found: dict[int, str] = {}
    waiting: set[str] = set()  # calls seen whose result comes later
    after_call = False
    for event in events:
        kind = event.kind
        if kind in _WORDS:
            if after_call or waiting:
                found[event.order] = SPLICED.format(kind=kind.replace("_", " "))
            elif kind == "queued_prompt" and (paired is None or event.record not in paired):
                found[event.order] = UNPAIRED
        elif isinstance(event, ToolResult):
            waiting.discard(event.tool_use_id)
        elif isinstance(event, ToolUse) and event.tool_use_id in answered:
            waiting.add(event.tool_use_id)
        after_call = kind == "tool_use"
    return found


QUEUE_OPERATION = "queue-operation"
"""The ``type`` of Claude Code's queue lines (no ``uuid``, no ``parentUuid``: metadata)."""
QUEUED_COMMAND = "queued_command"
"""The ``attachment.type`` of a queued command handed over within a turn."""
QUEUE_MAX = 256
"""At most this many enqueues (distinct texts) and as many removes wait for their prompt;
past it the oldest is forgotten (its prompt, if it ever comes, is not handed over). Claude
Code leaves some waiting for good (a background task's notification, a prompt that became
the next turn), and whoever writes the journal may write any number: the ledger the journal
index saves stays small, and a read linear."""
_NONE = ""
"""The key of a remove that can hand over nothing (its content or session is no string)."""


class Handover:
    """Claude Code's queue as the reader meets it line by line, and the queued prompts it
    handed over (:data:`handed`, line numbers in file order).

    A line is either session metadata (neither a ``uuid`` nor a ``parentUuid`` key, such as
    the queue's own lines) or a **conversation line** (either key, of any session: a record,
    a rider, a subagent's or another session's). A queued prompt is **handed over** when:

    - an ``enqueue`` of its text in its session came earlier, not yet used;
    - the last ``remove`` naming its ``source_uuid`` (``commandUuid``) came earlier, with its
      text and session, not yet used;
    - the conversation line just before it is of its session, has its ``parentUuid`` as its
      ``uuid``, and is not the model's tool call (an assistant record with a ``tool_use``).

    Each enqueue and remove hands over one prompt. Texts are kept as a digest (their session
    and text's length, CRC-32 and Adler-32): whoever could write two texts with one digest
    can write the enqueue of the very text. :meth:`judge` is given each queued prompt before
    the next line; the reader notes every other line (:meth:`note` for a queue line, and
    ``said``: the last conversation line it made a record of, with ``said_riders`` the count
    of riders then, :mod:`.compact`; a rider counted since is the line before, never a call).
    """

    __slots__ = ("handed", "enqueued", "removed", "said", "said_riders", "before")

    def __init__(self) -> None:
        self.handed: list[int] = []
        self.enqueued: dict[str, int] = {}  # digest -> enqueues not yet used
        self.removed: dict[str, str] = {}  # commandUuid -> the digest it took
        self.said: dict[str, Any] | None = None
        self.said_riders = 0
        # The conversation line before the first one this reader met (an index's, restored):
        # its uuid and session, when strings, and whether it was the model's call.
        self.before: tuple[str | None, str | None, bool] = (None, None, False)

    def note(self, raw: dict[str, Any]) -> None:
        """A queue line (``type`` :data:`QUEUE_OPERATION`)."""
        operation = raw.get("operation")
        content, session = raw.get("content"), raw.get("sessionId")
        key = _key(session, content) if type(content) is str and type(session) is str else _NONE
        if operation == "enqueue":
            if not key:
                return
            enqueued = self.enqueued
            count = enqueued.get(key, 0)
            if not count and len(enqueued) >= QUEUE_MAX:
                del enqueued[next(iter(enqueued))]
            enqueued[key] = count + 1
        elif operation == "remove":
            source = raw.get("commandUuid")
            if type(source) is not str:
                return
            removed = self.removed
            if source not in removed and len(removed) >= QUEUE_MAX:
                del removed[next(iter(removed))]
            removed[source] = key  # a later remove of the same command replaces it

    def spoke(self, raw: dict[str, Any], compactor: Compactor | None) -> None:
        """A conversation line the reader made no record of (another session's)."""
        self.said = raw
        self.said_riders = compactor.riders.count if compactor is not None else 0

    def meet(self, raw: dict[str, Any], index: int, events: Sequence[Event]) -> None:
        """Line ``index`` of a file read whole, with the events it gave (none when it was
        left out): what the scan does for each line, for a subagent's transcript."""
        if "uuid" not in raw and "parentUuid" not in raw:
            if raw.get("type") == QUEUE_OPERATION:
                self.note(raw)
            return
        self.judge(raw, index, events, None)
        self.said = raw

    def judge(
        self,
        raw: dict[str, Any],
        index: int,
        events: Sequence[Event],
        compactor: Compactor | None,
    ) -> None:
        """Line ``index`` (a conversation line, ``events`` its events) when it is a queued
        prompt: handed over, or not."""
        if not events or events[0].kind != "queued_prompt":
            return
        attachment = raw["attachment"]  # the builder made a queued prompt of it: a dict
        prompt, source = attachment.get("prompt"), attachment.get("source_uuid")
        session, parent = raw.get("sessionId"), raw.get("parentUuid")
        if type(source) is not str or type(session) is not str or type(parent) is not str:
            return
        key = _key(session, prompt)  # a string: the builder checked
        if self.removed.get(source) != key:
            return
        uuid, said_session, call = self.last(compactor)
        if uuid != parent or said_session != session or call:
            return  # not the line before it, or under the model's own call
        count = self.enqueued.get(key, 0)
        if not count:
            return
        if count == 1:
            del self.enqueued[key]
        else:
            self.enqueued[key] = count - 1
        del self.removed[source]
        self.handed.append(index)

    def last(self, compactor: Compactor | None) -> tuple[str | None, str | None, bool]:
        """The last conversation line met: its uuid, its session (each when a string), and
        whether it is the model's tool call."""
        if compactor is not None and compactor.riders.count != self.said_riders:
            owner = compactor.owner  # a rider since: it rides on the current owner
            return compactor.last, owner.session_id if owner is not None else None, False
        said = self.said
        if said is None:
            return self.before
        uuid, session = said.get("uuid"), said.get("sessionId")
        return (
            uuid if type(uuid) is str else None,
            session if type(session) is str else None,
            _calls(said),
        )

    def dump(self, compactor: Compactor | None) -> dict[str, Any]:
        """What the journal index saves (:meth:`restore` reads it back)."""
        return {
            "handed": list(self.handed),
            "enqueued": dict(self.enqueued),
            "removed": dict(self.removed),
            "before": list(self.last(compactor)),
        }

    @classmethod
    def restore(cls, saved: object) -> Handover | None:
        """The ledger :meth:`dump` gave, to read on after it; None when it is not one."""
        if not isinstance(saved, dict):
            return None
        handed, enqueued = saved.get("handed"), saved.get("enqueued")
        removed, before = saved.get("removed"), saved.get("before")
        if (
            not isinstance(handed, list)
            or not all(type(line) is int for line in handed)
            or not isinstance(enqueued, dict)
            or not all(type(k) is str and type(v) is int and v > 0 for k, v in enqueued.items())
            or not isinstance(removed, dict)
            or not all(type(k) is str and type(v) is str for k, v in removed.items())
            or not isinstance(before, list)
            or len(before) != 3
            or not all(value is None or type(value) is str for value in before[:2])
            or type(before[2]) is not bool
        ):
            return None
        handover = cls()
        handover.handed = list(handed)
        handover.enqueued = dict(enqueued)
        handover.removed = dict(removed)
        handover.before = (before[0], before[1], before[2])
        return handover


def _key(session: str, text: str) -> str:
    """The digest a text of a session is kept as (:class:`Handover`)."""
    data = f"{len(session)}:{session}{text}".encode("utf-8", "surrogatepass")
    return f"{len(data):x}:{zlib.crc32(data):08x}{zlib.adler32(data):08x}"


def _calls(record: dict[str, Any]) -> bool:
    """Whether ``record`` is the model's tool call (an assistant record with a tool_use)."""
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return (
        record.get("type") == "assistant"
        and isinstance(content, list)
        and any(isinstance(block, dict) and block.get("type") == "tool_use" for block in content)
    )
