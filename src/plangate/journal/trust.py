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
  it, and the attachment, whose parent is the conversation record written just before it
  (the call's result or an attachment of Claude Code's), never the model's call. The remove
  is written when the prompt is taken, the conversation records when they are ready, so
  other lines may stand between the remove and the attachment: request metadata, the call's
  result, a prompt snapshot (each seen in real 2.1.332 terminal journals)
  (docs/contracts.md, "A prompt typed while the model works").

:func:`queued_pairs` checks the second shape against the file (only when a queued prompt is
in the run a decision reads: one pass over the bytes before it, parsing only the lines it
needs); :mod:`plangate.contracts.state` checks the first on the live chain's events. A
forgery that copies every line of the shape, and lands in the gap between a result and the
model's next call, passes both: only a journal the agent cannot write (Claude Code's
sandbox, docs/threat-model.md) excludes it. Standard library only (hook path).
"""

from __future__ import annotations

from plangate import jsonio
from plangate.journal.codes import COMPACTION_UNREACHABLE, COMPETING_ROOT, CYCLE, unrecognized
from plangate.journal.events import ToolResult, ToolUse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Container

    from plangate.journal.events import Event

UNTRUSTED_REASONS = frozenset({CYCLE, COMPETING_ROOT, unrecognized(COMPACTION_UNREACHABLE)})
"""Reader refusals for shapes Claude Code never writes: parent links that loop (a compact
boundary's logical parent included), two roots or a record id used twice. Inside an active
workflow they deny (``journal_untrusted``)."""

_QUEUE = b'"queue-operation"'
_CHAIN = b'"parentUuid"'


SPLICED = "a {kind} between a tool call and its result"
UNPAIRED = "a queued prompt without Claude Code's queue operations"
_WORDS = frozenset({"human_turn", "queued_prompt"})


def forged(events: list[Event], paired: Container[int] | None) -> dict[int, str]:
    """The person's words among ``events`` (the live chain, in order) that Claude Code would
    not have written, by event order, each with what it is: a human turn or queued prompt
    between a tool call and its result, or right after a call (its result not written
    before it: a hook may read the journal between a forging call's append and its result);
    a queued prompt whose line is not in ``paired`` (:func:`queued_pairs`; None: none is)."""
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


def queued_pairs(path: str, lines: Collection[int]) -> set[int]:
    """Of ``lines`` (0-based line numbers of ``queued_command`` attachments in the journal at
    ``path``), those written as Claude Code writes a prompt it hands over: an earlier
    ``enqueue`` of the same text and an earlier ``remove`` of it naming the attachment's
    ``source_uuid`` (each used once), and the conversation record before it in the file as
    the attachment's parent. A file that cannot be read pairs none."""
    wanted = set(lines)
    paired: set[int] = set()
    if not wanted:
        return paired
    last = max(wanted)
    enqueued: dict[str, int] = {}
    removed: dict[str, bytes] = {}  # commandUuid -> its remove line, not yet handed over
    chain = b""  # the last conversation record (a line with a parent link) before it
    try:
        with open(path, "rb") as handle:
            for number, line in enumerate(handle):
                if number in wanted and _handed_over(line, chain, enqueued, removed):
                    paired.add(number)
                if number >= last:
                    break
                if _QUEUE in line:
                    _note_queue(line, enqueued, removed)
                if _CHAIN in line:
                    chain = line
    except OSError:
        return set()
    return paired


def _load(line: bytes) -> dict[str, object] | None:
    try:
        value = jsonio.loads(line.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError and JSON errors alike
        return None
    return value if isinstance(value, dict) else None


def _calls(record: dict[str, object]) -> bool:
    """Whether ``record`` is the model's tool call (an assistant record with a tool_use)."""
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return (
        record.get("type") == "assistant"
        and isinstance(content, list)
        and any(isinstance(block, dict) and block.get("type") == "tool_use" for block in content)
    )


def _note_queue(line: bytes, enqueued: dict[str, int], removed: dict[str, bytes]) -> None:
    record = _load(line)
    if record is None or record.get("type") != "queue-operation":
        return
    content = record.get("content")
    operation = record.get("operation")
    if operation == "enqueue" and isinstance(content, str):
        enqueued[content] = enqueued.get(content, 0) + 1
    elif operation == "remove" and isinstance(record.get("commandUuid"), str):
        removed[str(record["commandUuid"])] = line


def _handed_over(
    line: bytes, chain: bytes, enqueued: dict[str, int], removed: dict[str, bytes]
) -> bool:
    record = _load(line)
    attachment = record.get("attachment") if record is not None else None
    if record is None or not isinstance(attachment, dict):
        return False
    prompt = attachment.get("prompt")
    source = attachment.get("source_uuid")
    if not isinstance(prompt, str) or not isinstance(source, str):
        return False
    taken = _load(removed.get(source, b""))
    if (
        taken is None
        or taken.get("content") != prompt
        or taken.get("sessionId") != record.get("sessionId")
    ):
        return False
    before = _load(chain)
    if before is None or before.get("uuid") != record.get("parentUuid"):
        return False
    if _calls(before):
        return False  # handed over after a result, never under the model's own call
    if not enqueued.get(prompt):
        return False
    enqueued[prompt] -= 1
    del removed[source]
    return True
