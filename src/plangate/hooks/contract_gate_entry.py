"""The contracts' done gate's policy (Stop and SubagentStop): stdin → the gate → one JSON
line, exit 0.

The payload is read as the skill gates read theirs (up to 1 MiB whole, a larger one field by
field: :mod:`plangate.gates.entry`). Where no contract applies nothing else is loaded. The
gate fails open: an unusable payload is ``{}``, any failure the skill gates' error marker,
and the stop goes through.
"""

from __future__ import annotations

import os
import sys

from plangate.gates.entry import PAYLOAD_MAX_BYTES, alarm, fallback, read_large
from plangate.hook_io import runtime

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import BinaryIO

    from plangate.hook_io.protocol import Output, Payload


def policy(event: str, before: Callable[[Payload], runtime.Result] | None = None) -> runtime.Policy:
    """The done gate's policy for ``event`` (``before``: the Stop hook's hold)."""

    def decide(payload: Payload) -> Output:
        cwd = payload.get("cwd")
        project = os.environ.get("CLAUDE_PROJECT_DIR") or cwd
        from plangate.contracts.discovery import covered

        if not (isinstance(project, str) and os.path.isabs(project) and covered(project)):
            return {}
        from plangate.contracts import stop_gate

        return stop_gate.decide(payload, event, stderr=sys.stderr, alarm=alarm)

    def large(head: bytes, stream: BinaryIO) -> Output:
        return decide(read_large(head, stream))

    return runtime.Policy(
        (event,),
        decide,
        closed=False,
        max_bytes=PAYLOAD_MAX_BYTES,
        large=large,
        before=before,
        crash=fallback,
    )
