"""A simulated Claude Code 2.1.332 session for guard tests: real journal records, real tools,
the real hook. :class:`SimulatedSession` is put together from one module per job:

- :mod:`~testkit.session.writing`: the journal, written on top of :class:`testkit.journals.Journal`;
- :mod:`~testkit.session.tools`: the tool calls, run for real;
- :mod:`~testkit.session.hooks`: the PreToolUse hook ``plangate setup`` registered, as Claude
  Code runs it;
- :mod:`~testkit.session.calls`: the calls and messages a test makes the model send.
"""

from testkit.journals import DEDUP_REPLY, VERSION
from testkit.session.calls import Call, Message, new_tool_use_id, reviewer_answer
from testkit.session.hooks import HookOutcome, install
from testkit.session.simulator import SimulatedSession

__all__ = [
    "DEDUP_REPLY",
    "VERSION",
    "Call",
    "HookOutcome",
    "Message",
    "SimulatedSession",
    "install",
    "new_tool_use_id",
    "reviewer_answer",
]
