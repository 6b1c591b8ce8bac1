"""The guard's decision log: one content-free JSON line per guarded decision.

File: ``<state root>/analytics/autoplan-guard.jsonl``. A line is

    {"schema":1,"ts":"2026-11-29T20:01:02.345Z","decision":"deny","disposition":"corrective",
     "code":"publication_missing","path":"journal","claude_code_version":"2.1.332"}

plus ``unknown_keys`` (key names, for ``agent_key``) and ``record_types`` (record shapes, for
an unrecognized shape) when non-empty. A workflow contract's decision adds ``workflow``,
``phase``, ``event`` (``entry``, ``edit``, ``approval``) and ``via`` (how an approval was given:
``human`` or ``command``), names from the contract. Never content, paths or prompts.

Each line is appended with one ``os.write`` on a descriptor opened with ``O_APPEND`` (and
``O_NOFOLLOW``, in a folder :meth:`plangate.state_root.StateRoot.folder` checked), so lines
from concurrent hook processes never interleave. Once the file passes 256 KiB it is rewritten
to its newest 1,000 lines through a temporary file in the same folder and a rename (a line
appended by another process during the rewrite can be lost; the log is diagnostics). Every
failure is swallowed: logging never changes a decision.

Hook path: standard library only, no ``json``/``typing`` at runtime.
"""

from __future__ import annotations

import os
import time

from plangate import jsonio
from plangate.state_root import ANALYTICS, DECISION_LOG, StateRoot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from plangate.decisions.reasons import Decision
    from plangate.state_root import Folder

SCHEMA = 1
LOG_DIR = ANALYTICS
LOG_NAME = DECISION_LOG
ROTATE_BYTES = 256 * 1024
"""Past this size the file is trimmed to :data:`KEEP_LINES`."""
KEEP_LINES = 1000
TAIL_READ_BYTES = 4 * 1024 * 1024
"""A trim reads at most this much of the file's end (1,000 lines fit many times over)."""
NAME_MAX = 64
NAMES_MAX = 32
"""Key names and record shapes are clipped to this length and count."""


def log_path(state_root: str | None = None) -> str:
    """Where the decision log lives (under ``state_root``, default :func:`locations.state_root`)."""
    return StateRoot(state_root).file(LOG_DIR, LOG_NAME)


def utc_timestamp(now: float | None = None) -> str:
    """``2026-11-29T20:01:02.345Z`` (ISO 8601, UTC, milliseconds)."""
    seconds = time.time() if now is None else now
    whole = int(seconds)
    millis = int((seconds - whole) * 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{millis:03d}Z"


def _clip_names(names: tuple[str, ...]) -> list[str]:
    return [name[:NAME_MAX] for name in names[:NAMES_MAX]]


CONTRACT_FIELDS = ("workflow", "phase", "event", "via")
"""The extra fields a workflow contract's decision may carry (:mod:`plangate.contracts`)."""


def entry(
    decision: Decision, now: float | None = None, extra: dict[str, str] | None = None
) -> dict[str, object]:
    """The log object for one decision (``extra``: :data:`CONTRACT_FIELDS` only)."""
    version = decision.claude_code_version
    line: dict[str, object] = {
        "schema": SCHEMA,
        "ts": utc_timestamp(now),
        "decision": decision.decision,
        "disposition": decision.disposition,
        "code": decision.code,
        "path": decision.path,
        "claude_code_version": version[:NAME_MAX] if version else None,
    }
    if decision.unknown_keys:
        line["unknown_keys"] = _clip_names(decision.unknown_keys)
    if decision.record_shapes:
        line["record_types"] = _clip_names(decision.record_shapes)
    for key, value in (extra or {}).items():
        if key in CONTRACT_FIELDS and isinstance(value, str):
            line[key] = value[:NAME_MAX]
    return line


def append_decision(
    decision: Decision,
    *,
    state_root: str | None = None,
    now: float | None = None,
    extra: dict[str, str] | None = None,
) -> bool:
    """Append one line for ``decision``; True when written. Never raises."""
    try:
        data = (jsonio.dumps(entry(decision, now, extra)) + "\n").encode("ascii")
        folder = StateRoot(state_root).folder(LOG_DIR)
        if folder.append(LOG_NAME, data) > ROTATE_BYTES:
            trim(folder)
        return True
    except Exception:  # noqa: BLE001 - the log must never change a decision
        return False


def trim(folder: Folder, name: str = LOG_NAME, keep: int = KEEP_LINES) -> bool:
    """Rewrite the log ``name`` in ``folder`` to its newest ``keep`` non-empty lines; True
    when done. Never raises."""
    try:
        start = max(0, os.lstat(folder.file(name)).st_size - TAIL_READ_BYTES)
        tail = folder.read(name, TAIL_READ_BYTES, start)
        lines = tail.split(b"\n")
        if start > 0:
            lines = lines[1:]  # the first piece may be the end of a cut line
        kept = [line for line in lines if line.strip()][-keep:]
        data = b"".join(line + b"\n" for line in kept)
        folder.replace(name, data, 0o600)  # not durable: a summary, trimmed again when it grows
        return True
    except Exception:  # noqa: BLE001 - the log must never change a decision
        return False
