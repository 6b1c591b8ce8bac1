"""Journal writing for the simulated session, the model's side: assistant messages (one
record per content block, sharing ``message.id``), and the ``tool_result`` user records of the
calls, as Claude Code 2.1.332 writes them, on top of :class:`testkit.journals.Journal`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from testkit.journals import ACCEPTED, Record
from testkit.session.base import SessionParts
from testkit.session.calls import Call, Message, content_text, new_message_id

TOOLS = ["Read", "Bash", "Agent", "Edit", "Write"]
SYSTEM_PROMPT = ["You are Claude Code."]


class MessageWriting(SessionParts):
    """Writes the model's messages and the results of its calls."""

    def _request_metadata(self, first: bool) -> None:
        journal = self.journal
        if first:
            self.journal.metadata(
                "api-request-shape",
                shapeHash=journal.new_hash(),
                timestamp=journal.timestamp(),
                version=journal.version,
            )
            journal.api_request_blob("system", [{"type": "text", "text": "# Environment\n…"}])
        self.journal.metadata(
            "api-request",
            id=journal.new_uuid(),
            timestamp=journal.timestamp(),
            version=journal.version,
            querySource="sdk",
        )
        self.journal.metadata("tools-used", tools=TOOLS)

    # --- assistant messages ---------------------------------------------------------------

    def message(
        self,
        text: str | Sequence[str] | None = None,
        calls: Sequence[Call] = (),
        *,
        journal: bool | int = True,
        run: bool | Iterable[Call] = True,
        hooks: bool = False,
        end_turn: bool | None = None,
        message_id: str | None = None,
        blocks: Sequence[str | Call] | None = None,
    ) -> Message:
        """Write one assistant message (text blocks first, then ``calls``).

        ``journal``: True writes every block's record, False none, an int that many (the rest
        waits for :meth:`flush`). ``run``: True executes every call (after writing its
        record) and writes its result; False leaves all results unwritten; a collection of
        calls runs only those. ``hooks`` runs the real hook before each call runs; a denied
        call does not run and gets the denial result. ``end_turn`` defaults to True for a
        message without calls. ``blocks`` gives the exact block order instead.
        """
        if blocks is None:
            texts = [text] if isinstance(text, str) else list(text or [])
            blocks = [*texts, *calls]
        has_calls = any(isinstance(block, Call) for block in blocks)
        if end_turn is None:
            end_turn = not has_calls
        stop = "end_turn" if end_turn else ("tool_use" if has_calls else "end_turn")
        message = Message(message_id or new_message_id(), blocks, stop)
        for block in blocks:
            if isinstance(block, Call):
                block.message = message
                self.calls[block.id] = block
        self.messages.append(message)
        self._request_metadata(first=self._fresh_turn)
        self._fresh_turn = False
        count = len(blocks) if journal is True else (0 if journal is False else int(journal))
        self.flush(message, upto=count)
        if run is False:
            return message
        chosen = set(id(c) for c in (message.calls if run is True else run))
        for call in message.calls:
            if id(call) not in chosen:
                continue
            if hooks and call.name in ("Read", "Agent"):
                outcome = self.hook(call)
                if outcome.denied:
                    continue
            if not call.journaled:
                self.flush(message, through=call)
            self.execute(call)
        if end_turn and message.complete:
            self._end_of_turn()
        return message

    def say(self, text: str, *, end_turn: bool = True) -> Message:
        """A text-only message (by default the end of the turn)."""
        return self.message(text, end_turn=end_turn)

    def run(self, call: Call, *, text: str | None = None, hooks: bool = False) -> Call:
        """One message with ``call`` alone (after optional text); executed at once."""
        self.message(text, [call], hooks=hooks)
        return call

    def flush(
        self, message: Message, *, upto: int | None = None, through: Call | None = None
    ) -> None:
        """Write the message's unwritten block records (up to block ``upto``, or through
        ``through``)."""
        if through is not None:
            end = message.blocks.index(through) + 1
            if upto is not None:
                end = max(end, min(upto, len(message.blocks)))
        else:
            end = len(message.blocks) if upto is None else min(upto, len(message.blocks))
        while message.written < end:
            index = message.written
            block = message.blocks[index]
            content: Record
            if isinstance(block, Call):
                content = {
                    "type": "tool_use",
                    "id": block.id,
                    "name": block.name,
                    "input": block.input,
                }
            else:
                content = {"type": "text", "text": block}
            record = self.journal.assistant(
                [content],
                message_id=message.id,
                stop_reason=message.stop_reason,
                index=index,
                request_id="req_simulated",
                request={"attributionSkill": "autoplan"},
            )
            if isinstance(block, Call):
                block.record = record
            message.records.append(record)
            message.written += 1
        if message.written and message.written == end:
            self.journal.metadata("last-prompt", lastPrompt="…", leafUuid=self.journal.leaf)
            self.journal.metadata("atis-latch", atis="")

    def end_turn(self, text: str = "Done for now.") -> Message:
        """A final text message that ends the turn."""
        return self.message(text, end_turn=True)

    def _end_of_turn(self) -> None:
        self.turn_ended = True
        self.journal.metadata("last-prompt", lastPrompt="…", leafUuid=self.journal.leaf)

    # --- results -----------------------------------------------------------------------------

    def write_result(self, call: Call) -> Record:
        """Write the result of a call that already ran (see :meth:`execute`)."""
        if call.pending_result is None:
            raise ValueError(f"{call!r} has not run")
        if call.record is None:
            raise ValueError(f"{call!r} is not journaled; flush its message first")
        content, is_error, side_car, extra = call.pending_result
        call.pending_result = None
        return self._result_record(call, content, is_error, side_car, extra)

    def _result_record(
        self,
        call: Call,
        content: Any,
        is_error: bool | None,
        side_car: Any,
        extra: Mapping[str, Any],
    ) -> Record:
        assert call.record is not None
        fields = dict(extra)
        permission = fields.pop("permissionDecision", ACCEPTED)
        record = self.journal.tool_result(
            call.id,
            content,
            is_error=is_error,
            tool_use_result=side_car,
            fields=fields,
            permission=permission,
            parent=call.record["uuid"],
        )
        call.result_record = record
        call.text = content_text(content)
        call.is_error = bool(is_error)
        if not is_error:
            self.attachment("prompt_snapshot", systemPrompt=SYSTEM_PROMPT)
        return record

    def result(
        self,
        call: Call,
        content: Any,
        *,
        is_error: bool | None = False,
        tool_use_result: Any = None,
        extra: Mapping[str, Any] | None = None,
    ) -> Record:
        """Write any result for a journaled call (a forged or unusual one)."""
        call.pending_result = None
        return self._result_record(call, content, is_error, tool_use_result, extra or {})

    def error_result(self, call: Call, text: str) -> Record:
        """Write an error result for a journaled call (a failed tool)."""
        call.pending_result = None
        return self._result_record(
            call, f"<tool_use_error>{text}</tool_use_error>", True, f"Error: {text}", {}
        )
