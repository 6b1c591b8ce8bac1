"""Reason codes the journal reader gives when it refuses a journal, and its size limits.

Each code's one home: the guard (seed 000) imports them from here and gives each its
disposition and text (:mod:`plangate.decisions.reasons`).
"""

from __future__ import annotations

from plangate.tuning import setting

TOO_LARGE = "too_large"
"""One complete record is over the 32 MiB record limit."""
OVERSIZED_INVOCATION = "oversized_invocation"
"""Reloading the records a decision needs in full would pass the 32 MiB retained-data budget."""
REWRITTEN = "rewritten"
"""Bytes already read during this hook run changed."""
IDENTITY = "identity"
"""The journal path, its folders or the file failed the identity checks, or the journal shrank."""
MALFORMED = "malformed"
"""A complete line is not JSON, not a JSON object, or not UTF-8."""
COMPETING_ROOT = "competing_root"
"""Two conversation roots, or two records with one uuid."""
CYCLE = "cycle"
"""Parent links form a loop."""
SIDECHAIN = "sidechain"
"""The first turn or its ancestry is a sidechain (subagent) record."""
AGENT = "agent"
"""The ancestry passes through a subagent record."""
FOREIGN_CWD = "foreign_cwd"
"""The conversation root was written in another project directory."""
UNRECOGNIZED_SHAPE = "unrecognized_shape"
"""The root has a shape this reader does not know; a detail follows after a colon."""
COMPACTION_UNREACHABLE = "compaction_unreachable"
"""The detail of a loop only a compact boundary's logical parent closes (:mod:`.compaction`)."""
CWD_SPELLING = "cwd_spelling"
"""The detail of a journal whose folder is the project folder spelled differently."""

ERROR_STATUS_REASONS = frozenset(
    {
        TOO_LARGE,
        OVERSIZED_INVOCATION,
        REWRITTEN,
        IDENTITY,
        MALFORMED,
        COMPETING_ROOT,
        CYCLE,
        SIDECHAIN,
        AGENT,
        FOREIGN_CWD,
    }
)

RECORD_MAX_BYTES = 32 * 1024 * 1024
RETAINED_MAX_BYTES = 32 * 1024 * 1024

FAST_MIN_BYTES_SETTING = "fast_min_bytes"
"""Its name in ``PLANGATE_TUNING`` (:mod:`plangate.tuning`)."""
FAST_MIN_BYTES = 16 * 1024 * 1024
"""Below this the compiled parser's import (about 15-30 ms: msgspec brings `typing` and
more) costs more than the parse saves (about 1.5 ms per megabyte): :mod:`.fast`."""


def fast_min_bytes() -> int:
    """How many bytes a read must parse to use the compiled parser: ``fast_min_bytes`` of
    ``$PLANGATE_TUNING``, else :data:`FAST_MIN_BYTES`. Kept here, so that a read of a
    smaller journal does not import :mod:`.fast` to learn it."""
    return setting(FAST_MIN_BYTES_SETTING, FAST_MIN_BYTES)


def unrecognized(detail: str) -> str:
    return f"{UNRECOGNIZED_SHAPE}:{detail}"


def base_code(reason: str) -> str:
    """``unrecognized_shape:preamble:x`` → ``unrecognized_shape``; other codes unchanged."""
    return reason.split(":", 1)[0]
