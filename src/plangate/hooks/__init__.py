"""Claude Code hook entry points: each a policy for the one hook runner
(:func:`plangate.hook_io.runtime.run`), and :func:`closed`, the outcome of those that fail
closed. Standard library only.

A hook process starts on every matching tool call, so these modules import only the standard
library and plangate's own hook-path modules; ``tests/hooks/test_imports.py`` checks that.

In a process started as hooks are registered (``python -S -c '...' ROOT``,
:func:`plangate.hook_registry.hook_command`), importing ``plangate`` first takes the working
folder off ``sys.path`` (``plangate/__init__.py``).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from plangate.hook_io.runtime import Answer


def closed(log_event: str | None) -> Callable[[BaseException], Answer]:
    """The outcome of a hook that holds a gate, for an unusable payload and a crash alike:
    ``hook_input`` or ``installation``, logged with ``log_event`` (no event field when
    None), refused in the event's form; the call is refused rather than let through
    unjudged. Here, in the package every hook imports, so that it costs a call no module of
    its own; the code table and the log are loaded only when a hook fails."""

    def outcome(error: BaseException) -> Answer:
        from plangate.decisions import log, reasons
        from plangate.hook_io.runtime import Answer, HookInputError

        if isinstance(error, HookInputError):
            decision = reasons.Decision.deny(reasons.HOOK_INPUT, detail=error.detail)
        else:
            decision = reasons.Decision.deny(reasons.INSTALLATION, detail=type(error).__name__)
        log.append_decision(decision, extra={"event": log_event} if log_event else None)
        return Answer(decision)

    return outcome
