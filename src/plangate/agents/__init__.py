"""Coding agents for plan-governed runs: the interface (:mod:`plangate.agents.base`) and
its implementations, chosen by an agent spec string stored with each run:

* ``claude-code``: :class:`plangate.agents.claude_code.ClaudeCodeAgent` (the default);
* ``scripted:<path>``: :class:`plangate.agents.scripted.ScriptedAgent`, a JSON script (tests).

A run keeps its spec, so a run resumed by another process builds the same agent.
"""

from __future__ import annotations

from plangate.agents.base import (
    Agent,
    PlanOutcome,
    PlanRequest,
    ReviewOutcome,
    ReviewRequest,
    StepOutcome,
    StepRequest,
)
from plangate.errors import UsageError

DEFAULT_AGENT = "claude-code"

__all__ = [
    "DEFAULT_AGENT",
    "Agent",
    "PlanOutcome",
    "PlanRequest",
    "ReviewOutcome",
    "ReviewRequest",
    "StepOutcome",
    "StepRequest",
    "agent_files",
    "load_agent",
]


def agent_files(spec: str) -> tuple[str, ...]:
    """The files an agent spec needs on the machine that carries the run (the script of
    ``scripted:<path>``; none for ``claude-code``, whose CLI each worker has of its own)."""
    if spec.startswith("scripted:"):
        return (spec.removeprefix("scripted:"),)
    return ()


def load_agent(spec: str) -> Agent:
    """The agent a spec names (``claude-code`` or ``scripted:<path>``)."""
    if spec == "claude-code":
        from plangate.agents.claude_code import ClaudeCodeAgent

        return ClaudeCodeAgent()
    if spec.startswith("scripted:"):
        from plangate.agents.scripted import ScriptedAgent

        return ScriptedAgent(spec.removeprefix("scripted:"))
    raise UsageError(
        f"unknown agent {spec!r}",
        "use `claude-code`, or `scripted:<path to a JSON script>` for tests",
    )
