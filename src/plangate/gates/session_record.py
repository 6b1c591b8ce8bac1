"""The session record: ``<state root>/skill-gates/<session>/record.json``.

The count source for ``plangate report``. One JSON object per session, mode 0600, replaced
atomically (a temporary file in the same folder, then a rename) and only under the session
lock, so concurrent hook processes of one session never lose each other's update and a
reader never sees half a file::

    {"schema": 1, "session": "…", "updated_at": "…",
     "gates": {"ceo_review_gate": {"runs": {"<run>": {…}}, "errors": […], "error_count": 0,
                                   "skipped": ["no-git"], }},
     "stops": {"main": 41, "agent:a4d1": 17},
     "markers": ["PLANGATE_GATE ceo-review-gate fired session=… skill=plan-ceo-review …"]}

The lock is :class:`plangate.files.Lock` on ``record.lock`` beside the record. A hook waits
for it at most 3 seconds (``GATE_LOCKED``); a lock held for over 30 seconds belongs to a hook
that hung, and is taken over.

An error that cannot reach the record (the lock stayed busy, the record cannot be written) is
appended to ``errors.pending.jsonl`` beside it instead: one line per error, written with one
``O_APPEND`` write, so no lock is needed and concurrent hooks never interleave lines. The next
update merges what it has not merged yet (the record keeps the byte offset it merged to, so
nothing is lost or counted twice), and :func:`load` merges it in memory for ``plangate
report`` when no update came since. Hook path: standard library only.
"""

from __future__ import annotations

import errno
import os
import time

from plangate import files, jsonio
from plangate.gates import record_shape, space_reserve
from plangate.gates.errors import GATE_LOCKED, GATE_STATE, GateError
from plangate.state_root import SKILL_GATES, StateRoot, UnsafeFolder

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from plangate.state_root import Folder

SCHEMA = record_shape.SCHEMA
FOLDER = SKILL_GATES
RECORD = "record.json"
LOCK = "record.lock"
PENDING = "errors.pending.jsonl"
PENDING_MAX_BYTES = 1024 * 1024
LOCK_WAIT_S = 3.0
LOCK_STALE_S = 30.0
LOCK_POLL_S = 0.01
RETENTION_S = 7 * 24 * 3600
RECORD_MAX_BYTES = 8 * 1024 * 1024
MARKERS_KEPT = 1000
ERRORS_KEPT = 100


def gates_root(state_root: str | None = None) -> str:
    return StateRoot(state_root).file(FOLDER)


def session_folder(session: str, state_root: str | None = None) -> str:
    return os.path.join(gates_root(state_root), session)


def record_path(session: str, state_root: str | None = None) -> str:
    return os.path.join(session_folder(session, state_root), RECORD)


def new_record(session: str) -> dict[str, Any]:
    return {"schema": SCHEMA, "session": session, "gates": {}, "stops": {}, "markers": []}


def read_record(path: str) -> dict[str, Any] | None:
    """The record at ``path``; None when there is none; ``GATE_STATE`` when unusable."""
    try:
        data = files.read_nofollow(path, RECORD_MAX_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise GateError(GATE_STATE, f"cannot read the session record: {why(error)}") from None
    if len(data) > RECORD_MAX_BYTES:
        raise GateError(GATE_STATE, "the session record is over 8 MiB")
    try:
        value = jsonio.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, jsonio.JSONError):
        raise GateError(GATE_STATE, "the session record is not valid JSON") from None
    return record_shape.check(value)


def gate_entry(record: dict[str, Any], switch: str) -> dict[str, Any]:
    """The record's part for one gate, created on first use (its parts too). The record
    was checked when read (:func:`plangate.gates.record_shape.check`): nothing is replaced."""
    entry: dict[str, Any] = record["gates"].setdefault(switch, {})
    entry.setdefault("runs", {})
    entry.setdefault("errors", [])
    entry.setdefault("skipped", [])
    entry.setdefault("error_count", len(entry["errors"]))
    return entry


def add_error(entry: dict[str, Any], error: dict[str, Any]) -> None:
    entry["errors"].append(error)
    del entry["errors"][:-ERRORS_KEPT]
    entry["error_count"] += 1


def add_markers(record: dict[str, Any], lines: list[str]) -> None:
    record["markers"].extend(lines)
    del record["markers"][:-MARKERS_KEPT]


def why(error: OSError) -> str:
    """An OS error in words: a refused folder says so, and what to do."""
    if isinstance(error, UnsafeFolder):
        return str(error)
    if error.errno == errno.ELOOP:
        return f"{error.filename or 'it'} is a symbolic link (remove it)"
    return error.strerror or str(error)


def _write(folder: Folder, record: dict[str, Any]) -> None:
    data = (jsonio.dumps(record) + "\n").encode("ascii")
    try:
        folder.replace(RECORD, data, 0o600, durable=True)
    except OSError as error:
        raise GateError(GATE_STATE, f"cannot write the session record: {why(error)}") from None


def checked_folder(session: str, state_root: str | None = None) -> Folder:
    """The session folder, created, and checked from the state root down
    (:meth:`plangate.state_root.StateRoot.folder`); ``GATE_STATE`` when refused."""
    try:
        return StateRoot(state_root).folder(FOLDER, session)
    except OSError as error:
        raise GateError(GATE_STATE, f"cannot use the session folder: {why(error)}") from None


class SessionLock(files.Lock):
    """The per-session lock (:class:`plangate.files.Lock` on ``record.lock``, made by
    :func:`session_lock`) that fails with ``GATE_LOCKED`` or ``GATE_STATE``."""

    __slots__ = ()

    def acquire(self) -> None:
        try:
            super().acquire()
        except TimeoutError:
            raise GateError(
                GATE_LOCKED, f"another hook held the session lock for over {self.timeout:g} s"
            ) from None
        except OSError as error:
            raise GateError(GATE_STATE, f"cannot create the session lock: {why(error)}") from None


def session_lock(folder: Folder, wait: float | None = None) -> files.Lock:
    """The session lock: waited for ``wait`` seconds (``GATE_LOCKED`` after), taken over once
    held for :data:`LOCK_STALE_S` seconds."""
    return folder.lock(
        LOCK,
        timeout=LOCK_WAIT_S if wait is None else wait,
        stale=LOCK_STALE_S,
        poll=LOCK_POLL_S,
        kind=SessionLock,
    )


def update(
    session: str,
    change: Callable[[dict[str, Any]], None],
    *,
    state_root: str | None = None,
    wait: float | None = None,
) -> dict[str, Any]:
    """Read the record under the session lock, apply ``change``, write it back; the new record.

    ``GATE_LOCKED`` when the lock stays busy for ``wait`` seconds, ``GATE_STATE`` when the
    record cannot be read or written.
    """
    folder = checked_folder(session, state_root)
    from plangate.gates.timing import utc_timestamp

    with session_lock(folder, wait=wait):
        record = read_record(folder.file(RECORD)) or new_record(session)
        merge_pending(folder.path, record)
        change(record)
        record["updated_at"] = utc_timestamp()
        _write(folder, record)
    space_reserve.keep(state_root)
    return record


def append_pending(
    session: str, switch: str, error: dict[str, Any], state_root: str | None = None
) -> None:
    """Keep an error the record could not take (see the module docstring). Raises OSError.

    On a full disk the space reserve (:mod:`plangate.gates.space_reserve`) is given up for
    the line, which then starts with a newline: a line the full disk cut short before it
    stays apart from it (the merge skips what does not parse)."""
    line = (jsonio.dumps({"gate": switch, **error}) + "\n").encode("ascii")
    try:
        _append(session, state_root, line)
    except OSError as failure:
        if not space_reserve.is_full(failure) or not space_reserve.release(state_root):
            raise
        _append(session, state_root, b"\n" + line)


def _append(session: str, state_root: str | None, line: bytes) -> None:
    StateRoot(state_root).folder(FOLDER, session).append(PENDING, line)


def merge_pending(folder: str, record: dict[str, Any]) -> None:
    """Add the pending errors after the record's merged offset to its gates' error counts."""
    merged = record.get("pending_merged")
    start = merged if isinstance(merged, int) and merged >= 0 else 0
    try:
        data = files.read_nofollow(os.path.join(folder, PENDING), PENDING_MAX_BYTES, start)
    except OSError:
        return
    end = data.rfind(b"\n") + 1
    for line in data[:end].splitlines():
        try:
            value = jsonio.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, jsonio.JSONError):
            continue
        if isinstance(value, dict) and isinstance(value.get("gate"), str):
            switch = value.pop("gate")
            add_error(gate_entry(record, switch), value)
    record["pending_merged"] = start + end


def load(session: str, state_root: str | None = None) -> dict[str, Any] | None:
    """The record with its pending errors merged (in memory), for reporting; None when the
    session has neither."""
    folder = session_folder(session, state_root)
    record = read_record(os.path.join(folder, RECORD))
    if record is None:
        if not os.path.exists(os.path.join(folder, PENDING)):
            return None
        record = new_record(session)
    merge_pending(folder, record)
    return record


def snapshot(session: str, state_root: str | None = None) -> dict[str, Any] | None:
    """The record as it is now, read without the lock (it is only ever replaced whole)."""
    try:
        return read_record(record_path(session, state_root))
    except GateError:
        return None


def sessions(state_root: str | None = None) -> list[str]:
    """The sessions with a folder under ``skill-gates/``, oldest change first."""
    root = gates_root(state_root)
    try:
        names = os.listdir(root)
    except OSError:
        return []
    found: list[tuple[float, str]] = []
    for name in names:
        path = os.path.join(root, name)
        if name.startswith(".") or not os.path.isdir(path):
            continue
        try:
            found.append((os.stat(os.path.join(path, RECORD)).st_mtime, name))
        except OSError:
            found.append((0.0, name))
    return [name for _, name in sorted(found)]


def _newest_change(folder: str) -> float:
    newest = os.stat(folder).st_mtime
    for name in os.listdir(folder):
        try:
            newest = max(newest, os.stat(os.path.join(folder, name)).st_mtime)
        except OSError:
            continue
    return newest


def clean_old(
    keep: str, state_root: str | None = None, now: float | None = None, age: float = RETENTION_S
) -> list[str]:
    """Delete session folders untouched for ``age`` seconds (never ``keep``); their names.

    Never raises: a folder that cannot be inspected or removed is left alone.
    """
    current = time.time() if now is None else now
    removed: list[str] = []
    try:
        root = StateRoot(state_root).folder(FOLDER, create=False)  # never through a link
        names = root.names()
    except OSError:
        return removed
    for name in names:
        folder = root.file(name)
        if name == keep or name.startswith(".") or os.path.islink(folder):
            continue
        try:
            if not os.path.isdir(folder) or current - _newest_change(folder) < age:
                continue
            root.remove_folder(name)
            removed.append(name)
        except OSError:
            continue
    return removed
