"""The /plan-ceo-review gate's SubagentStop hook: ``python -m plangate.hooks.subagent_stop``.

Gates a subagent only when its own transcript (``agent_transcript_path``) loaded
/plan-ceo-review; every other subagent, and a payload without that path, is left alone
(``docs/skill-gates.md``). Always exits 0 (:func:`plangate.gates.entry.policy`).
"""

from __future__ import annotations

from plangate.gates.entry import policy
from plangate.gates.gate import SUBAGENT_STOP
from plangate.hook_io import runtime


def main() -> int:
    return runtime.run(policy(SUBAGENT_STOP))


if __name__ == "__main__":
    raise SystemExit(main())
