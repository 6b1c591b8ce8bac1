"""The workflow contracts' SubagentStop hook: ``plangate.contracts.stop_gate`` (definition of done).

Answers ``{}`` at once where no contract applies. Always exits 0; a gate that breaks
records an error marker and lets the stop through.
"""

from __future__ import annotations

from plangate.gates.gate import SUBAGENT_STOP
from plangate.hook_io import runtime
from plangate.hooks.contract_gate_entry import policy


def main() -> int:
    return runtime.run(policy(SUBAGENT_STOP))


if __name__ == "__main__":
    raise SystemExit(main())
