"""How a PreToolUse hook that holds a gate fails: closed. Bad input is the ``hook_input``
denial and an unexpected error the ``installation`` denial, each logged with the hook's
``event``; the call is refused rather than let through unjudged."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from plangate.hook_io.protocol import Output
    from plangate.hook_io.runtime import HookInputError


def handlers(
    event: str,
) -> tuple[Callable[[HookInputError], Output], Callable[[BaseException], Output]]:
    """``run_hook``'s ``on_bad_input`` and ``on_crash`` for a hook logged as ``event``."""

    def bad_input(error: HookInputError) -> Output:
        return _denied("hook_input", error.detail, event)

    def crash(error: BaseException) -> Output:
        return _denied("installation", type(error).__name__, event)

    return bad_input, crash


def _denied(code: str, detail: str, event: str) -> Output:
    from plangate.decisions import log, reasons

    decision = reasons.Decision.deny(code, detail=detail)
    log.append_decision(decision, extra={"event": event})
    return decision.output()
