"""stdin → the contracts' done gate → one JSON line, exit 0 (Stop and SubagentStop).

The payload is read as the skill gates read theirs (up to 1 MiB). Where no contract
applies nothing else is loaded. Any failure lets the stop through.
"""

from __future__ import annotations

import os
import sys

from plangate import jsonio
from plangate.gates.entry import FALLBACK, read_payload
from plangate.hook_io import runtime


def _alarm(seconds: float) -> object:
    from plangate.gates.errors import GateTimeout

    return runtime.alarm(seconds + 0.25, GateTimeout)


def run_contract_gate(event: str) -> int:
    try:
        payload = read_payload(sys.stdin.buffer)
        output: dict[str, object] = {}
        if isinstance(payload, dict):
            cwd = payload.get("cwd")
            project = os.environ.get("CLAUDE_PROJECT_DIR") or cwd
            from plangate.contracts.discovery import covered

            if isinstance(project, str) and os.path.isabs(project) and covered(project):
                from plangate.contracts import stop_gate

                output = stop_gate.decide(payload, event, stderr=sys.stderr, alarm=_alarm)
        line = jsonio.dumps(output)
    except BaseException:  # noqa: BLE001 - a broken gate lets the stop through
        line = jsonio.dumps(FALLBACK)
    try:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    return 0
