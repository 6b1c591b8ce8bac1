"""plangate's protected paths as a PreToolUse hook of their own: registered when the
``workflow_contracts`` switch is off (with it on, :mod:`plangate.hooks.contract_pre_tool_use`
runs the same protection before its contract rules, in one process per call).

A Write, Edit, MultiEdit or NotebookEdit of a protected file, or a Bash command that changes
one or runs a command only the person may run, is refused (:mod:`plangate.protect.decide`);
anything else is answered ``{}``. An unexpected error is the ``installation`` denial: the
protection fails closed.
"""

from __future__ import annotations

from plangate.hook_io import runtime
from plangate.hooks import closed

TYPE_CHECKING = False
if TYPE_CHECKING:
    from plangate.hook_io.protocol import Output, Payload


def decide(payload: Payload) -> Output:
    from plangate.protect.decide import refusal

    refused = refusal(payload)
    return {} if refused is None else refused


POLICY = runtime.Policy(
    (runtime.PRE_TOOL_USE,),
    decide,
    closed=True,
    bad_input=closed("protect"),
    crash=closed("protect"),
)
"""Fails closed (``hook_input``, ``installation``, logged as ``protect``); no deadline of its
own (no journal is read)."""


def main() -> int:
    return runtime.run(POLICY)


if __name__ == "__main__":
    raise SystemExit(main())
