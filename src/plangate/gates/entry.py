"""The skill gates' hook policy (Stop and SubagentStop): never a traceback, never a block
because something broke.

A Stop payload carries the turn's last message, so up to 1 MiB is read whole (not 64 KiB).
A larger one is read field by field (:mod:`plangate.hook_io.payload_scan`): the gates need
every field but only the end of the last message (to find it in the transcript and to see
whether it asks the user something), so it keeps the last 64 KiB of
``last_assistant_message`` and is judged like any other. An unusable payload is
``GATE_BAD_PAYLOAD``. While both gates are off the hook reads its switches, prints ``{}``
and loads nothing else (nor reads more of a large payload). With a gate on, a ``SIGALRM``
timer backs up the gate's own deadline. The runner is :mod:`plangate.hook_io.runtime`;
the contracts' done gate uses the same reading (:mod:`plangate.hooks.contract_gate_entry`).
"""

from __future__ import annotations

import os
import sys

from plangate.hook_io import runtime

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import BinaryIO, TextIO

    from plangate.hook_io.protocol import Output, Payload

PAYLOAD_MAX_BYTES = 1024 * 1024
TAIL_KEYS = ("last_assistant_message",)
FALLBACK = {"systemMessage": "PLANGATE_GATE skill-gates error session=unknown code=GATE_UNEXPECTED"}


def read_large(head: bytes, stream: BinaryIO) -> Payload:
    """A payload over :data:`PAYLOAD_MAX_BYTES` (see the module docstring);
    :class:`~plangate.hook_io.runtime.HookInputError` when it is unusable."""
    from plangate.hook_io import payload_scan

    seen = payload_scan.scan(head, stream, lambda _: False, TAIL_KEYS)
    if seen.gave_up:
        raise runtime.HookInputError("the hook payload is too large to read")
    return seen.fields


def alarm(seconds: float) -> Callable[[], None] | None:
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


def policy(
    event: str,
    stderr: TextIO | None = None,
    before: Callable[[Payload], runtime.Result] | None = None,
) -> runtime.Policy:
    """The skill gates' policy for ``event``: fails open (an unusable payload is
    ``GATE_BAD_PAYLOAD`` for every gate that is on, a crash :data:`FALLBACK`); ``before``
    may answer first (the Stop hook's hold, :mod:`plangate.audit_hold`); the gates' errors
    go to ``stderr`` (default: the process's)."""

    def judged(payload: Payload) -> Output:
        from plangate.gates.stop_hook import decide

        return decide(payload, event, stderr=_errors(stderr), alarm=alarm)

    def decide(payload: Payload) -> Output:
        quick = _quick(event)
        return quick if quick is not None else judged(payload)

    def large(head: bytes, stream: BinaryIO) -> Output:
        quick = _quick(event)
        if quick is not None:
            return quick  # every gate is off: the rest of the payload is not read
        return judged(read_large(head, stream))  # unusable: the runner's bad_input

    def bad_input(error: BaseException) -> Output:
        detail = error.detail if isinstance(error, runtime.HookInputError) else str(error)
        return _bad_payload(event, detail, _errors(stderr))

    return runtime.Policy(
        (event,),
        decide,
        closed=False,
        max_bytes=PAYLOAD_MAX_BYTES,
        large=large,
        before=before,
        bad_input=bad_input,
        crash=fallback,
    )


def fallback(error: BaseException) -> Output:
    """A crash: the skill gates' error marker, and the stop goes through."""
    return FALLBACK


def _errors(stderr: TextIO | None) -> TextIO:
    return stderr if stderr is not None else sys.stderr


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
