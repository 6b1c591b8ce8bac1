"""What the stand-in model says: content blocks, replies and the scripts that choose them.

A script is anything with a ``respond(request) -> Reply | None`` method, or a plain callable
with that signature. :class:`Script` is the declarative one most tests use::

    Script(
        main=[
            [tool_use("Read", file_path="notes.txt")],
            [tool_use("Bash", command="echo hi")],
            [text("All done.")],
        ],
        subagents={"count the files": [[tool_use("Bash", command="ls")], [text("3 files")]]},
    )

Each entry of ``main`` is one assistant turn, used for the next request of the main
conversation; a subagent request (recognised by the prompt that the Agent tool was given) takes
the next turn of the first matching ``subagents`` queue. Side requests (title generation,
compaction summaries and the like) get a canned reply. When a queue runs out, the reply is a
short text that ends the turn, so that a session never hangs waiting for the model.
"""

from __future__ import annotations

import itertools
import json
import secrets
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias

JSONObject: TypeAlias = dict[str, Any]
RequestKind: TypeAlias = Literal["main", "subagent", "side"]
#: The wire API a request came in on: Anthropic's Messages (Claude Code) or OpenAI's
#: Responses (Codex CLI).
WireApi: TypeAlias = Literal["messages", "responses"]
StopReason: TypeAlias = Literal["end_turn", "tool_use", "max_tokens", "stop_sequence"]

_counter = itertools.count(1)


def _new_id(prefix: str) -> str:
    # Shaped like the real ones (prefix + 24 base62-ish characters); unique within a process.
    return f"{prefix}{secrets.token_hex(8)}{next(_counter):08d}"


def new_tool_use_id() -> str:
    return _new_id("toolu_01")


def new_message_id() -> str:
    return _new_id("msg_01")


@dataclass(frozen=True)
class Text:
    """A ``text`` content block."""

    text: str

    def to_block(self) -> JSONObject:
        return {"type": "text", "text": self.text}


@dataclass(frozen=True)
class ToolUse:
    """A ``tool_use`` content block. ``id`` is generated (``toolu_...``) when not given."""

    name: str
    input: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None

    def to_block(self) -> JSONObject:
        return {
            "type": "tool_use",
            "id": self.id or new_tool_use_id(),
            "name": self.name,
            "input": dict(self.input),
        }


Block: TypeAlias = Text | ToolUse


def text(value: str) -> Text:
    """A text block."""
    return Text(value)


def tool_use(name: str, /, _id: str | None = None, **tool_input: Any) -> ToolUse:
    """A tool_use block: ``tool_use("Bash", command="ls")``."""
    return ToolUse(name=name, input=tool_input, id=_id)


@dataclass(frozen=True)
class Reply:
    """One assistant message: its blocks and why it stopped.

    ``stop_reason`` defaults to ``tool_use`` when a block is a tool call, else ``end_turn``.
    """

    blocks: Sequence[Block]
    stop_reason: StopReason | None = None

    @property
    def effective_stop_reason(self) -> StopReason:
        if self.stop_reason is not None:
            return self.stop_reason
        if any(isinstance(b, ToolUse) for b in self.blocks):
            return "tool_use"
        return "end_turn"


TurnLike: TypeAlias = Reply | Block | Sequence[Block | str] | str


def as_reply(turn: TurnLike) -> Reply:
    """Accepts a Reply, a single block, a list of blocks, or a bare string (one text block)."""
    if isinstance(turn, Reply):
        return turn
    if isinstance(turn, str):
        return Reply([Text(turn)])
    if isinstance(turn, Text | ToolUse):
        return Reply([turn])
    blocks: list[Block] = []
    for item in turn:
        if isinstance(item, str):
            blocks.append(Text(item))
        elif isinstance(item, Text | ToolUse):
            blocks.append(item)
        else:
            raise TypeError(f"not a content block: {item!r}")
    return Reply(blocks)


@dataclass(frozen=True)
class ModelRequest:
    """A parsed model request, as a script sees it.

    ``body`` is always Messages-shaped (``system``, ``messages``, ``tools``), so one script
    answers Claude Code and Codex alike: a ``POST /v1/responses`` request is translated
    (:func:`plangate.harness.standin.responses.messages_view`) and its body as Codex sent it
    is ``wire``.
    """

    body: JSONObject
    kind: RequestKind
    #: For a subagent request: the prompt that the Agent tool was given (when known).
    agent_prompt: str | None = None
    #: Why the request was classed as a side request (e.g. ``"title"``, ``"compact"``).
    side_reason: str | None = None
    api: WireApi = "messages"
    #: The request body as it came over the wire, when ``body`` was translated from it.
    wire: JSONObject | None = None

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def messages(self) -> list[JSONObject]:
        msgs = self.body.get("messages")
        return [m for m in msgs if isinstance(m, dict)] if isinstance(msgs, list) else []

    @property
    def system(self) -> str:
        return system_text(self.body)

    @property
    def tools(self) -> list[JSONObject]:
        tools = self.body.get("tools")
        return [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []

    @property
    def tool_names(self) -> list[str]:
        return [str(t.get("name")) for t in self.tools]

    @property
    def first_user_text(self) -> str:
        for m in self.messages:
            if m.get("role") == "user":
                return message_text(m)
        return ""

    @property
    def last_user_text(self) -> str:
        for m in reversed(self.messages):
            if m.get("role") == "user":
                return message_text(m)
        return ""

    def tool_results(self) -> list[JSONObject]:
        """The ``tool_result`` blocks of the last user message."""
        for m in reversed(self.messages):
            if m.get("role") == "user":
                content = m.get("content")
                if isinstance(content, list):
                    return [
                        b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"
                    ]
                return []
        return []


def block_text(block: Any) -> str:
    """The text inside a content block (text, tool_result content, nested lists)."""
    if isinstance(block, str):
        return block
    if isinstance(block, list):
        return "\n".join(block_text(b) for b in block)
    if isinstance(block, dict):
        if block.get("type") == "text":
            return str(block.get("text", ""))
        if block.get("type") == "tool_result":
            return block_text(block.get("content", ""))
    return ""


def message_text(message: Mapping[str, Any]) -> str:
    return block_text(message.get("content", ""))


def system_text(body: Mapping[str, Any]) -> str:
    system = body.get("system")
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        return "\n".join(block_text(b) for b in system)
    return ""


class ScriptProtocol(Protocol):
    def respond(self, request: ModelRequest) -> Reply | None: ...


ScriptFn: TypeAlias = Callable[[ModelRequest], "Reply | TurnLike | None"]
ScriptLike: TypeAlias = ScriptProtocol | ScriptFn

DEFAULT_FALLBACK = "Nothing more to do."


def canned_side_reply(request: ModelRequest) -> Reply:
    """A sensible answer to the CLI's own side requests."""
    reason = request.side_reason or ""
    if reason == "compact":
        return Reply(
            [
                Text(
                    "<analysis>The conversation so far was short.</analysis>\n<summary>\n"
                    "1. Primary Request and Intent: the user asked for a short task, "
                    "which was carried out.\n2. Pending Tasks: none.\n3. Current Work: "
                    "finished.\n</summary>"
                )
            ]
        )
    if reason == "title":
        if request.api == "responses":  # Codex takes the whole text for the thread's title
            return Reply([Text("Stand-in session")])
        return Reply([Text(json.dumps({"title": "Stand-in session"}))])
    if reason == "json":
        return Reply([Text("{}")])
    return Reply([Text("OK")])


class Script:
    """Queues of scripted turns for the main conversation and for subagents.

    * ``main``: turns for the main conversation, used in order.
    * ``subagents``: prompt substring (case-insensitive) -> turns for the subagent whose Agent
      prompt contains it. A subagent whose prompt matches no key uses ``default_subagent``.
    * ``side``: optional function answering side requests; the default is
      :func:`canned_side_reply`.
    * ``fallback``: the text used when a queue has run out.

    Thread-safe: foreground and background subagents may ask at the same time.
    """

    def __init__(
        self,
        main: Iterable[TurnLike] = (),
        subagents: Mapping[str, Iterable[TurnLike]] | None = None,
        *,
        default_subagent: Iterable[TurnLike] = (),
        side: Callable[[ModelRequest], Reply] | None = None,
        fallback: str = DEFAULT_FALLBACK,
    ) -> None:
        self._lock = threading.Lock()
        self._main = [as_reply(t) for t in main]
        self._subagents = {k: [as_reply(t) for t in v] for k, v in (subagents or {}).items()}
        self._default_subagent = [as_reply(t) for t in default_subagent]
        self._side = side or canned_side_reply
        self.fallback = fallback

    @property
    def remaining_main(self) -> int:
        with self._lock:
            return len(self._main)

    def add_main(self, *turns: TurnLike) -> None:
        with self._lock:
            self._main.extend(as_reply(t) for t in turns)

    def _queue_for(self, request: ModelRequest) -> list[Reply]:
        if request.kind == "main":
            return self._main
        haystack = (request.agent_prompt or request.first_user_text).lower()
        for key, queue in self._subagents.items():
            if key.lower() in haystack:
                return queue
        return self._default_subagent

    def respond(self, request: ModelRequest) -> Reply | None:
        if request.kind == "side":
            return self._side(request)
        with self._lock:
            queue = self._queue_for(request)
            if queue:
                return queue.pop(0)
        return Reply([Text(self.fallback)])


def call_script(script: ScriptLike, request: ModelRequest) -> Reply:
    """Asks a script for a reply; never fails to produce one."""
    respond = getattr(script, "respond", None)
    result: Any = respond(request) if callable(respond) else script(request)  # type: ignore[operator]
    if result is None:
        if request.kind == "side":
            return canned_side_reply(request)
        return Reply([Text(DEFAULT_FALLBACK)])
    return as_reply(result)
