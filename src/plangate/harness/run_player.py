"""Plays the model through a ``plangate run`` carried by the real Claude Code CLI.

The run's agent (:class:`~plangate.agents.claude_code.ClaudeCodeAgent`) starts one fresh
``claude -p`` session per step, per planning and per fix turn. A :class:`RunPlayer` tells
them apart by the prompt the session starts with (its first user message):

* a **step**: ``You are carrying out one step of an approved plan (plan version V)`` with
  ``The step to carry out now: Step N: ...``: key ``v<V> s<N>``;
* the **planner**: ``You are the planner of a coding run.`` with ``Write version V``: key
  ``plan v<V>``;
* a **fix** (a turn with no step left, e.g. after a reply): ``You are carrying out this task
  in this git worktree``: key ``fix``;
* anything else (a review): key ``other``.

Each key has a list of sessions, each a list of turns; a session's turn is chosen by how
many assistant messages its request already holds, so every request of a session gets the
next turn. A turn may be a function of the request. When a session runs out of turns it is
told ``Nothing more to do.``, which ends it. Every request is kept with its session.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from plangate.harness.standin import ModelRequest, Reply, canned_side_reply, text
from plangate.harness.standin.script import TurnLike, as_reply

Turn = TurnLike | Callable[[ModelRequest], TurnLike]

STEP_OPENING = "You are carrying out one step of an approved plan"
PLANNER_OPENING = "You are the planner of a coding run."
FIX_OPENINGS = (
    "You are carrying out this task in this git worktree",
    "You are finishing the change for an approved plan",
)


def session_key(prompt: str) -> tuple[str, str]:
    """(role, key) of the session whose first user message is ``prompt``."""
    if STEP_OPENING in prompt:
        version = re.search(r"\(plan version (\d+)\)", prompt)
        number = re.search(r"^The step to carry out now: Step (\d+):", prompt, re.M)
        v = version.group(1) if version else "?"
        n = number.group(1) if number else "?"
        return "step", f"v{v} s{n}"
    if PLANNER_OPENING in prompt:
        version = re.search(r"Write version (\d+) of it", prompt)
        return "planner", f"plan v{version.group(1) if version else '?'}"
    if any(opening in prompt for opening in FIX_OPENINGS):
        return "fix", "fix"
    return "other", "other"


@dataclass
class Session:
    """One CLI session as the model saw it."""

    role: str
    key: str
    index: int  # how many earlier sessions had this key
    requests: list[ModelRequest] = field(default_factory=list)

    @property
    def prompt(self) -> str:
        return self.requests[0].first_user_text if self.requests else ""

    @property
    def first(self) -> ModelRequest:
        return self.requests[0]


def _assistant_count(request: ModelRequest) -> int:
    return sum(1 for m in request.messages if m.get("role") == "assistant")


class RunPlayer:
    """The stand-in's script for a run: ``sessions`` maps a key to its sessions' turns."""

    def __init__(self, sessions: Mapping[str, Sequence[Sequence[Turn]]]) -> None:
        self._script = {key: [list(turns) for turns in runs] for key, runs in sessions.items()}
        self._lock = threading.Lock()
        self.sessions: list[Session] = []
        #: Requests that got the fallback answer (a session the script did not expect).
        self.unexpected: list[tuple[str, int]] = []

    def respond(self, request: ModelRequest) -> Reply:
        if request.kind == "side":
            return canned_side_reply(request)
        if request.kind != "main":
            return as_reply(text("Nothing more to do."))
        with self._lock:
            session = self._session_for(request)
            session.requests.append(request)
            runs = self._script.get(session.key, [])
            turns = runs[session.index] if session.index < len(runs) else []
            position = _assistant_count(request)
            if position >= len(turns):
                self.unexpected.append((session.key, position))
                return as_reply(text("Nothing more to do."))
            turn = turns[position]
        return as_reply(turn(request) if callable(turn) else turn)

    def _session_for(self, request: ModelRequest) -> Session:
        role, key = session_key(request.first_user_text)
        if _assistant_count(request) > 0:
            for session in reversed(self.sessions):
                if session.key == key:
                    return session
        index = sum(1 for s in self.sessions if s.key == key)
        session = Session(role, key, index)
        self.sessions.append(session)
        return session

    def of(self, key: str) -> list[Session]:
        """The sessions with this key, in order."""
        return [s for s in self.sessions if s.key == key]

    @property
    def keys(self) -> list[str]:
        """The key of every session, in the order they started."""
        return [s.key for s in self.sessions]
