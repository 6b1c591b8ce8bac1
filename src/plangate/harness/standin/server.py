"""A loopback stand-in for the Anthropic Messages API and OpenAI's Responses API, driven by
a script.

Standard library only. Use it as a context manager::

    with StandIn(Script(main=[[tool_use("Bash", command="ls")], "done"])) as model:
        env = {"ANTHROPIC_BASE_URL": model.base_url, ...}
        ...
        assert not model.saw("secret")

Every request is recorded (:attr:`StandIn.requests`). ``POST /v1/messages`` is answered from the
script, streamed as server-sent events when the request asks for a stream; ``count_tokens`` gets
a rough estimate; anything else gets an empty JSON object (and is recorded, so tests can see what
the CLI called). ``POST /v1/responses`` (Codex CLI) is answered from the same script and recorded
the same way (``api="responses"``); :mod:`plangate.harness.standin.responses` translates.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from plangate.harness.standin import responses
from plangate.harness.standin.classify import Classifier
from plangate.harness.standin.script import (
    JSONObject,
    ModelRequest,
    Reply,
    Script,
    ScriptLike,
    Text,
    ToolUse,
    call_script,
    new_message_id,
)

_MAX_BODY = 64 * 1024 * 1024


@dataclass(frozen=True)
class RecordedRequest:
    """One HTTP request the stand-in received, and how it was classed."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    raw: bytes
    body: JSONObject | None
    #: ``main``/``subagent``/``side`` for messages requests; ``count_tokens``; or ``other``.
    kind: str
    received_at: float
    side_reason: str | None = None
    agent_prompt: str | None = None
    #: The answer: a message object (``/v1/messages``) or a response object (``/v1/responses``).
    reply: JSONObject | None = None
    #: ``messages`` or ``responses`` for a model request; ``None`` for anything else.
    api: str | None = None

    @property
    def is_messages(self) -> bool:
        return self.api == "messages" and self.kind in ("main", "subagent", "side")

    @property
    def is_responses(self) -> bool:
        return self.api == "responses"

    def request_view(self) -> JSONObject | None:
        """The body as a script saw it: Messages-shaped for both APIs."""
        if self.body is not None and self.is_responses:
            return responses.messages_view(self.body)
        return self.body

    def text(self) -> str:
        return self.raw.decode("utf-8", "replace")


def _estimate_tokens(body: JSONObject | None) -> int:
    if not body:
        return 1
    return max(1, len(json.dumps(body)) // 4)


def _sse(event: str, data: JSONObject) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def render_message(
    reply: Reply, model: str, input_tokens: int
) -> tuple[JSONObject, list[tuple[str, JSONObject]]]:
    """The reply as a full message object and as the list of stream events."""
    message_id = new_message_id()
    blocks = [b.to_block() for b in reply.blocks]
    output_tokens = max(1, sum(len(json.dumps(b)) for b in blocks) // 4)
    stop_reason = reply.effective_stop_reason
    usage = {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
    }
    message: JSONObject = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage,
    }
    events: list[tuple[str, JSONObject]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    **message,
                    "content": [],
                    "stop_reason": None,
                    "usage": {**usage, "output_tokens": 1},
                },
            },
        )
    ]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            start: JSONObject = {"type": "text", "text": ""}
            deltas: list[JSONObject] = [
                {"type": "text_delta", "text": chunk} for chunk in _chunks(block["text"])
            ]
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            payload = json.dumps(block["input"])
            deltas = [{"type": "input_json_delta", "partial_json": c} for c in _chunks(payload)]
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
        )
        for delta in deltas:
            events.append(
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": output_tokens},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return message, events


def _chunks(value: str, size: int = 40) -> Iterator[str]:
    if not value:
        yield ""
        return
    for i in range(0, len(value), size):
        yield value[i : i + size]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass  # quiet: requests are recorded instead

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        if length <= 0:
            return b""
        return self.rfile.read(min(length, _MAX_BODY))

    def _send(self, status: int, payload: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("request-id", "req_standin")
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def _send_json(self, status: int, data: JSONObject) -> None:
        self._send(status, json.dumps(data).encode(), "application/json")

    def do_HEAD(self) -> None:
        self._record(b"", None, "other")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self._record(b"", None, "other")
        self._send_json(200, {})

    def do_POST(self) -> None:
        raw = self._read_body()
        body: JSONObject | None
        try:
            parsed = json.loads(raw) if raw else None
            body = parsed if isinstance(parsed, dict) else None
        except ValueError:
            body = None
        path = urlsplit(self.path).path.rstrip("/")
        if path.endswith("/v1/messages/count_tokens"):
            self._record(raw, body, "count_tokens")
            self._send_json(200, {"input_tokens": _estimate_tokens(body)})
            return
        if path.endswith("/v1/messages") and body is not None:
            self._answer_messages(raw, body)
            return
        if path.endswith("/v1/responses") and body is not None:
            self._answer_responses(raw, body)
            return
        self._record(raw, body, "other")
        self._send_json(200, {})

    do_PUT = do_POST
    do_PATCH = do_POST

    def do_DELETE(self) -> None:
        self._record(b"", None, "other")
        self._send_json(200, {})

    def do_CONNECT(self) -> None:
        """A proxy tunnel: refused, and recorded (``kind="connect"``), so a CLI pointed here as
        its proxy (:class:`~plangate.harness.codex.CodexEnv` does) reaches nothing outside and
        a test can see that it tried."""
        self._record(b"", None, "connect")
        self.send_response(403)
        self.send_header("Content-Length", "0")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def _record(
        self,
        raw: bytes,
        body: JSONObject | None,
        kind: str,
        *,
        side_reason: str | None = None,
        agent_prompt: str | None = None,
        reply: JSONObject | None = None,
        api: str | None = None,
    ) -> None:
        parts = urlsplit(self.path)
        tunnel = self.command == "CONNECT"  # its target is host:port, not a URL
        self.server.standin._add(
            RecordedRequest(
                method=self.command,
                path=self.path if tunnel else parts.path,
                query="" if tunnel else parts.query,
                headers={k.lower(): v for k, v in self.headers.items()},
                raw=raw,
                body=body,
                kind=kind,
                received_at=time.time(),
                side_reason=side_reason,
                agent_prompt=agent_prompt,
                reply=reply,
                api=api,
            )
        )

    def _answer_messages(self, raw: bytes, body: JSONObject) -> None:
        standin = self.server.standin
        classifier = standin.classifier
        classifier.learn_from_history(body)
        kind, side_reason, agent_prompt = classifier.classify(body)
        request = ModelRequest(
            body=body, kind=kind, agent_prompt=agent_prompt, side_reason=side_reason
        )
        model = str(body.get("model") or "claude-standin")
        try:
            reply = call_script(standin.script, request)
            message, events = render_message(reply, model, _estimate_tokens(body))
        except Exception as exc:  # a broken script must not hang the session
            standin.errors.append(exc)
            reply = Reply([Text(f"stand-in script error: {exc!r}")])
            message, events = render_message(reply, model, _estimate_tokens(body))
        classifier.learn([b for b in message["content"] if isinstance(b, dict)])
        self._record(
            raw,
            body,
            kind,
            side_reason=side_reason,
            agent_prompt=agent_prompt,
            reply=message,
            api="messages",
        )
        if body.get("stream"):
            payload = b"".join(_sse(name, data) for name, data in events)
            self._send(200, payload, "text/event-stream; charset=utf-8")
        else:
            self._send_json(200, message)

    def _answer_responses(self, raw: bytes, body: JSONObject) -> None:
        standin = self.server.standin
        headers = {k.lower(): v for k, v in self.headers.items()}
        kind, side_reason = responses.classify(headers)
        request = ModelRequest(
            body=responses.messages_view(body),
            kind=kind,
            side_reason=side_reason,
            api="responses",
            wire=body,
        )
        model = str(body.get("model") or "standin")
        try:
            reply = call_script(standin.script, request)
            answer, events = responses.render_response(reply, model, _estimate_tokens(body))
        except Exception as exc:  # a broken script must not hang the session
            standin.errors.append(exc)
            reply = Reply([Text(f"stand-in script error: {exc!r}")])
            answer, events = responses.render_response(reply, model, _estimate_tokens(body))
        self._record(raw, body, kind, side_reason=side_reason, reply=answer, api="responses")
        if body.get("stream", True):
            payload = b"".join(_sse(name, data) for name, data in events)
            self._send(200, payload, "text/event-stream; charset=utf-8")
        else:
            self._send_json(200, answer)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    standin: StandIn


class StandIn:
    """The stand-in model server. Start it with ``with StandIn(script) as model:``."""

    def __init__(
        self,
        script: ScriptLike | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        log_path: Path | str | None = None,
    ) -> None:
        self.script: ScriptLike = script if script is not None else Script()
        self.classifier = Classifier()
        self.errors: list[BaseException] = []
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._host = host
        self._port = port
        self._log_path = Path(log_path) if log_path is not None else None
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> StandIn:
        if self._server is not None:
            return self
        server = _Server((self._host, self._port), _Handler)
        server.standin = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> StandIn:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the stand-in is not running")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://{self._host}:{self.port}"

    def env(self) -> dict[str, str]:
        """Environment variables that point the Claude Code CLI at this stand-in."""
        return {
            "ANTHROPIC_BASE_URL": self.base_url,
            "ANTHROPIC_API_KEY": "sk-ant-standin-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }

    # -- recording -----------------------------------------------------------------------
    def _add(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)
            if self._log_path is not None:
                entry = {
                    "method": request.method,
                    "path": request.path,
                    "query": request.query,
                    "kind": request.kind,
                    "side_reason": request.side_reason,
                    "agent_prompt": request.agent_prompt,
                    "body": request.body,
                    "reply": request.reply,
                    "api": request.api,
                }
                with self._log_path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(entry) + "\n")

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in order."""
        with self._lock:
            return list(self._requests)

    def message_requests(self, kind: str | None = None) -> list[RecordedRequest]:
        """The ``/v1/messages`` requests, optionally only those of one kind."""
        return [r for r in self.requests if r.is_messages and (kind is None or r.kind == kind)]

    def responses_requests(self, kind: str | None = None) -> list[RecordedRequest]:
        """The ``/v1/responses`` requests (Codex CLI), optionally only those of one kind."""
        return [r for r in self.requests if r.is_responses and (kind is None or r.kind == kind)]

    def codex_base_url(self) -> str:
        """The ``base_url`` of a Codex model provider (Codex posts ``{base_url}/responses``)."""
        return f"{self.base_url}/v1"

    def saw(self, needle: str) -> bool:
        """True when any request body sent to the model contains ``needle``.

        Checks both the raw bytes and the JSON-decoded text, so escaping does not hide it.
        """
        for r in self.requests:
            if needle in r.text():
                return True
            if r.body is not None and needle in json.dumps(r.body, ensure_ascii=False):
                return True
        return False

    def outside_attempts(self) -> list[str]:
        """What a CLI using this stand-in as its proxy tried to reach elsewhere (``CONNECT``
        targets, and plain-HTTP requests for other hosts)."""
        found = []
        for r in self.requests:
            if r.kind == "connect" or "://" in r.path:
                found.append(f"{r.method} {r.path}")
        return found

    def paths(self) -> list[str]:
        return [f"{r.method} {r.path}" for r in self.requests]

    def tool_calls(self) -> list[ToolUse]:
        """Every tool call the stand-in made, in order."""
        calls: list[ToolUse] = []
        for r in self.requests:
            if r.reply and r.is_responses:
                calls.extend(responses.tool_calls_of(r.reply))
            elif r.reply:
                for b in r.reply.get("content", []):
                    if b.get("type") == "tool_use":
                        calls.append(ToolUse(name=b["name"], input=b["input"], id=b["id"]))
        return calls
