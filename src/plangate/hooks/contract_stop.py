"""The workflow contracts' Stop hook: ``plangate.contracts.stop_gate`` (the definition of
done, and the files changed outside the current phase's ``editable`` paths: ``contract_drift``).

Answers ``{}`` at once where no contract applies. Always exits 0; a gate that breaks
records an error marker and lets the stop through.
"""

from __future__ import annotations

from plangate.gates.gate import STOP
from plangate.hooks.contract_gate_entry import run_contract_gate


def main() -> int:
    return run_contract_gate(STOP)


if __name__ == "__main__":
    raise SystemExit(main())
