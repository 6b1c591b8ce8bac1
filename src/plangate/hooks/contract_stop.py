"""The workflow contracts' Stop hook: ``plangate.contracts.stop_gate`` (the definition of
done, and the files changed outside the current phase's ``editable`` paths: ``contract_drift``).

Answers ``{}`` at once where no contract applies. A session whose calls went unguarded
has its stop held once first (:mod:`plangate.audit_hold`). Always exits 0; a gate that breaks
records an error marker and lets the stop through.
"""

from __future__ import annotations

from plangate.gates.gate import STOP
from plangate.hooks.contract_gate_entry import run_contract_gate


def main() -> int:
    from plangate.audit_hold import CONTRACT, run_with_hold

    return run_with_hold(CONTRACT, lambda: run_contract_gate(STOP))


if __name__ == "__main__":
    raise SystemExit(main())
