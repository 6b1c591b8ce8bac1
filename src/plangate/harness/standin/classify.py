"""Tells the stand-in's requests apart: the main conversation, subagents, side requests.

Standard library only.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

from plangate.harness.standin.script import JSONObject, RequestKind, message_text, system_text

#: Names the CLI has used for the subagent tool.
AGENT_TOOL_NAMES = frozenset({"Agent", "Task"})

#: The CLI marks a subagent's requests in the billing header, the first system block.
SUBAGENT_HEADER = "cc_is_subagent=true"

_TITLE_MARKERS = ("title", "topic")
#: The compaction instruction (2.1.x: "Your task is to create a detailed summary of the
#: conversation so far, ..."), matched in the request's last user message only.
_COMPACT_MARKERS = ("your task is to create a detailed summary of the conversation",)


def _last_user_text(body: JSONObject) -> str:
    messages = body.get("messages")
    if isinstance(messages, list):
        for m in reversed(messages):
            if isinstance(m, dict) and m.get("role") == "user":
                return message_text(m)
    return ""


def _user_texts(body: JSONObject) -> list[str]:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return []
    return [message_text(m) for m in messages if isinstance(m, dict) and m.get("role") == "user"]


def _last_text_of_first_user(body: JSONObject) -> str | None:
    """The last non-reminder text block of the first user message (a subagent's prompt)."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return None
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "user":
            content = m.get("content")
            if isinstance(content, str):
                return _strip_reminders(content) or None
            if isinstance(content, list):
                for block in reversed(content):
                    if isinstance(block, dict) and block.get("type") == "text":
                        value = _strip_reminders(str(block.get("text", "")))
                        if value:
                            return value
            return None
    return None


def _strip_reminders(value: str) -> str:
    return re.sub(r"<system-reminder>.*?</system-reminder>", "", value, flags=re.S).strip()


@dataclass
class Classifier:
    """Tells main-conversation, subagent and side requests apart.

    * **side**: the CLI's own helper calls: the compaction request (its last user message is
      the "create a detailed summary of the conversation" instruction; it carries the full
      history and tools) and any request without tools (title or topic generation).
    * **subagent**: the first system block (the billing header) says ``cc_is_subagent=true``;
      or, for CLIs without that marker, the first user message's prompt is exactly a prompt an
      Agent/Task tool call carried (learned from this server's replies and from histories).
      ``agent_prompt`` is that Agent prompt when one is found in the request's user messages,
      else the last text block of the first user message (where the CLI puts the prompt).
    * **main**: everything else.
    """

    agent_prompts: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def learn(self, blocks: list[JSONObject]) -> None:
        """Remembers the prompts of Agent/Task tool calls."""
        with self.lock:
            for block in blocks:
                if block.get("type") == "tool_use" and block.get("name") in AGENT_TOOL_NAMES:
                    tool_input = block.get("input")
                    if isinstance(tool_input, dict):
                        prompt = tool_input.get("prompt")
                        new = isinstance(prompt, str) and prompt not in self.agent_prompts
                        if new and isinstance(prompt, str) and prompt.strip():
                            self.agent_prompts.append(prompt)

    def learn_from_history(self, body: JSONObject) -> None:
        messages = body.get("messages")
        if not isinstance(messages, list):
            return
        for m in messages:
            if isinstance(m, dict) and m.get("role") == "assistant":
                content = m.get("content")
                if isinstance(content, list):
                    self.learn([b for b in content if isinstance(b, dict)])

    def _known_prompt_in(self, body: JSONObject) -> str | None:
        texts = _user_texts(body)
        with self.lock:
            prompts = sorted(self.agent_prompts, key=len, reverse=True)
        for text_value in texts:
            for prompt in prompts:
                if prompt.strip() in text_value:
                    return prompt
        return None

    def classify(self, body: JSONObject) -> tuple[RequestKind, str | None, str | None]:
        """Returns (kind, side_reason, agent_prompt)."""
        last_user = _strip_reminders(_last_user_text(body)).lower()
        if any(marker in last_user for marker in _COMPACT_MARKERS):
            return "side", "compact", None
        if not body.get("tools"):
            system = system_text(body).lower()
            if any(marker in system for marker in _TITLE_MARKERS):
                return "side", "title", None
            if "json" in system:
                return "side", "json", None
            return "side", "no-tools", None
        first_prompt = _last_text_of_first_user(body)
        if SUBAGENT_HEADER in system_text(body):
            return "subagent", None, self._known_prompt_in(body) or first_prompt
        if first_prompt is not None:
            with self.lock:
                for prompt in self.agent_prompts:
                    if prompt.strip() == first_prompt:
                        return "subagent", None, prompt
        return "main", None, None
