"""The skill gates' Stop hook: ``python -m plangate.hooks.stop``.

Holds the final stop of a session that loaded /plan-ceo-review or /autoplan until the run
meets its gate (``docs/skill-gates.md``); an /autoplan session whose calls went
unguarded has its stop held once first (:mod:`plangate.audit_hold`). Reads the switches on
every call: with both gates off it prints ``{}`` and loads nothing else. Always exits 0; a
gate that breaks records an error marker and lets the stop through
(:func:`plangate.gates.entry.policy`).
"""

from __future__ import annotations

from plangate.gates.entry import policy
from plangate.gates.gate import STOP
from plangate.hook_io import runtime


def main() -> int:
    from plangate.audit_hold import AUTOPLAN, hold

    return runtime.run(policy(STOP, before=hold(AUTOPLAN)))


if __name__ == "__main__":
    raise SystemExit(main())
