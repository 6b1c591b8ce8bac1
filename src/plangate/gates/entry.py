"""stdin → the gates → one JSON line on stdout, exit 0. Never a traceback, never a block
because something broke.

Like :func:`plangate.hook_io.runtime.run_hook`, but a Stop payload carries the turn's last
message, so up to 1 MiB is read whole (not 64 KiB). A larger one is read field by field
(:mod:`plangate.hook_io.payload_scan`): the gates need every field but only the end of the
last message (to find it in the transcript and to see whether it asks the user something),
so it keeps the last 64 KiB of ``last_assistant_message`` and is judged like any other. An
unusable payload is ``GATE_BAD_PAYLOAD``. While both gates are off the hook reads its
switches, prints ``{}`` and loads nothing else (nor reads more of a large payload). With a
gate on, a ``SIGALRM`` timer backs up the gate's own deadline.
"""

from __future__ import annotations

import os
import sys

from plangate import jsonio
from plangate.hook_io import runtime

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import BinaryIO, TextIO

    from plangate.hook_io.protocol import Output

PAYLOAD_MAX_BYTES = 1024 * 1024
TAIL_KEYS = ("last_assistant_message",)
FALLBACK = {"systemMessage": "PLANGATE_GATE skill-gates error session=unknown code=GATE_UNEXPECTED"}


def _parse(data: bytes) -> dict[str, object] | str:
    """The payload object, or why it is unusable."""
    try:
        return runtime.parse_payload(data)
    except runtime.HookInputError as error:
        return error.detail


def read_large(head: bytes, stream: BinaryIO) -> dict[str, object] | str:
    """A payload over :data:`PAYLOAD_MAX_BYTES` (see the module docstring), or why it is
    unusable."""
    from plangate.hook_io import payload_scan

    try:
        seen = payload_scan.scan(head, stream, lambda _: False, TAIL_KEYS)
    except runtime.HookInputError as error:
        return error.detail
    if seen.gave_up:
        return "the hook payload is too large to read"
    return seen.fields


def read_payload(stream: BinaryIO) -> dict[str, object] | str:
    """The whole payload: read whole up to :data:`PAYLOAD_MAX_BYTES`, else by
    :func:`read_large`; or why it is unusable."""
    head = stream.read(PAYLOAD_MAX_BYTES + 1)
    if len(head) <= PAYLOAD_MAX_BYTES:
        return _parse(head)
    return read_large(head, stream)


def _alarm(seconds: float) -> Callable[[], None] | None:
    """Raise :class:`GateTimeout` after ``seconds`` (plus a little); returns the cancel."""
    from plangate.gates.errors import GateTimeout

    return runtime.alarm(seconds + 0.25, GateTimeout)


def _bad_payload(event: str, why: str, stderr: TextIO) -> Output:
    """A payload that cannot be read: an error marker for every gate that is on."""
    from plangate.gates import markers as mk
    from plangate.gates import stop_hook
    from plangate.gates.errors import GATE_BAD_PAYLOAD, GateError

    env = dict(os.environ)
    state_root = stop_hook.state_root_of(env)
    on, broken = stop_hook.switches(event, env, state_root)
    outcome = stop_hook.Outcome()
    error = GateError(GATE_BAD_PAYLOAD, why)
    for gate in on + [gate for gate, _ in broken]:
        marker = mk.Marker(
            gate.hook,
            mk.ERROR,
            stop_hook.UNKNOWN_SESSION,
            [("code", error.code), ("why", error.why)],
        )
        outcome.markers.append((gate, marker))
        outcome.errors.append((marker, error.code))
    return stop_hook.finish(outcome, state_root, stderr)


def run_gate_hook(
    event: str,
    *,
    stdin: BinaryIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run one Stop or SubagentStop call; always returns 0 (the exit code)."""
    source = stdin if stdin is not None else sys.stdin.buffer
    sink = stdout if stdout is not None else sys.stdout
    errors = stderr if stderr is not None else sys.stderr
    try:
        head = source.read(PAYLOAD_MAX_BYTES + 1)
        payload: dict[str, object] | str | None = None
        if len(head) <= PAYLOAD_MAX_BYTES:
            payload = _parse(head)
        if isinstance(payload, str):
            output = _bad_payload(event, payload, errors)
        else:
            quick = _quick(event)
            if quick is None and payload is None:
                payload = read_large(head, source)
                if isinstance(payload, str):
                    quick = _bad_payload(event, payload, errors)
            if quick is None:
                from plangate.gates.stop_hook import decide

                assert isinstance(payload, dict)
                quick = decide(payload, event, stderr=errors, alarm=_alarm)
            output = quick
        line = jsonio.dumps(output)
    except BaseException:  # noqa: BLE001 - a broken gate lets the stop through
        line = jsonio.dumps(FALLBACK)
    try:
        sink.write(line + "\n")
        sink.flush()
    except (OSError, ValueError):
        pass
    return 0


def _quick(event: str) -> Output | None:
    """``{}`` when every gate this event serves is switched off; None to go on."""
    from plangate import config
    from plangate.errors import ConfigError
    from plangate.gates.gate import gates_for

    try:
        for gate in gates_for(event):
            if config.gate_switch(gate.switch)[0]:
                return None
    except ConfigError:
        return None  # the engine records the broken switch
    return {}
