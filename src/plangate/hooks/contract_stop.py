"""The workflow contracts' Stop hook: ``plangate.contracts.stop_gate`` (the definition of
done, and the files changed outside the current phase's ``editable`` paths: ``contract_drift``).

Answers ``{}`` at once where no contract applies. A session whose calls went unguarded
has its stop held once first (:mod:`plangate.audit_hold`). Always exits 0; a gate that breaks
records an error marker and lets the stop through.
"""

from __future__ import annotations

from plangate.gates.gate import STOP
from plangate.hook_io import runtime
from plangate.hooks.contract_gate_entry import policy


def main() -> int:
    from plangate.audit_hold import CONTRACT, hold

    return runtime.run(policy(STOP, before=hold(CONTRACT)))


if __name__ == "__main__":
    raise SystemExit(main())
