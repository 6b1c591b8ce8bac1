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

The lock is a file created exclusively beside the record (``record.lock``, holding its
owner's token). A hook waits for it at most 3 seconds (``GATE_LOCKED``); a lock file older
than 30 seconds belongs to a hook that died or hung, and is taken over by renaming it away
(one contender wins the rename). Hook path: standard library only.
"""

from __future__ import annotations

import os
import time

from plangate import jsonio, locations
from plangate.gates.errors import GATE_LOCKED, GATE_STATE, GateError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

SCHEMA = 1
FOLDER = "skill-gates"
RECORD = "record.json"
LOCK = "record.lock"
LOCK_WAIT_S = 3.0
LOCK_STALE_S = 30.0
LOCK_POLL_S = 0.01
RETENTION_S = 7 * 24 * 3600
RECORD_MAX_BYTES = 8 * 1024 * 1024
MARKERS_KEPT = 1000
ERRORS_KEPT = 100


def gates_root(state_root: str | None = None) -> str:
    return os.path.join(state_root if state_root is not None else locations.state_root(), FOLDER)


def session_folder(session: str, state_root: str | None = None) -> str:
    return os.path.join(gates_root(state_root), session)


def record_path(session: str, state_root: str | None = None) -> str:
    return os.path.join(session_folder(session, state_root), RECORD)


def new_record(session: str) -> dict[str, Any]:
    return {"schema": SCHEMA, "session": session, "gates": {}, "stops": {}, "markers": []}


def read_record(path: str) -> dict[str, Any] | None:
    """The record at ``path``; None when there is none; ``GATE_STATE`` when unusable."""
    try:
        with open(path, "rb") as stream:
            data = stream.read(RECORD_MAX_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise GateError(GATE_STATE, f"cannot read the session record: {error.strerror}") from None
    if len(data) > RECORD_MAX_BYTES:
        raise GateError(GATE_STATE, "the session record is over 8 MiB")
    try:
        value = jsonio.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, jsonio.JSONError):
        raise GateError(GATE_STATE, "the session record is not valid JSON") from None
    if not isinstance(value, dict) or value.get("schema") != SCHEMA:
        raise GateError(GATE_STATE, "the session record has an unknown shape")
    for key, kind in (("gates", dict), ("stops", dict), ("markers", list)):
        if not isinstance(value.setdefault(key, kind()), kind):
            raise GateError(GATE_STATE, f"the session record's {key} has an unknown shape")
    record: dict[str, Any] = value
    return record


def gate_entry(record: dict[str, Any], switch: str) -> dict[str, Any]:
    """The record's part for one gate, created on first use."""
    gates = record["gates"]
    found = gates.get(switch)
    entry: dict[str, Any] = found if isinstance(found, dict) else {}
    gates[switch] = entry
    for key, kind in (("runs", dict), ("errors", list), ("skipped", list)):
        if not isinstance(entry.get(key), kind):
            entry[key] = kind()
    for key in ("error_count",):
        if not isinstance(entry.get(key), int):
            entry[key] = 0
    return entry


def add_error(entry: dict[str, Any], error: dict[str, Any]) -> None:
    entry["errors"].append(error)
    del entry["errors"][:-ERRORS_KEPT]
    entry["error_count"] += 1


def add_markers(record: dict[str, Any], lines: list[str]) -> None:
    record["markers"].extend(lines)
    del record["markers"][:-MARKERS_KEPT]


def _write(path: str, record: dict[str, Any]) -> None:
    from plangate.config import write_atomic
    from plangate.errors import StateError

    data = (jsonio.dumps(record) + "\n").encode("ascii")
    try:
        write_atomic(path, data, mode=0o600, error=StateError)
    except StateError as error:
        raise GateError(GATE_STATE, error.message) from None


def _make_folder(folder: str) -> None:
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    except OSError as error:
        raise GateError(
            GATE_STATE, f"cannot create the session folder: {error.strerror or error}"
        ) from None
    if not os.path.isdir(folder):
        raise GateError(GATE_STATE, "the session folder is not a folder")


class SessionLock:
    """The per-session lock file; a context manager."""

    __slots__ = ("path", "wait", "stale", "token", "held")

    def __init__(self, folder: str, wait: float | None = None, stale: float | None = None):
        self.path = os.path.join(folder, LOCK)
        self.wait = LOCK_WAIT_S if wait is None else wait
        self.stale = LOCK_STALE_S if stale is None else stale
        self.token = f"{os.getpid()}-{os.urandom(6).hex()}".encode("ascii")
        self.held = False

    def __enter__(self) -> SessionLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def acquire(self) -> None:
        until = time.monotonic() + self.wait
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
        while True:
            try:
                descriptor = os.open(self.path, flags, 0o600)
            except FileExistsError:
                self._take_over_if_stale()
            except OSError as error:
                raise GateError(
                    GATE_STATE, f"cannot create the session lock: {error.strerror or error}"
                ) from None
            else:
                try:
                    os.write(descriptor, self.token)
                finally:
                    os.close(descriptor)
                self.held = True
                return
            if time.monotonic() >= until:
                raise GateError(
                    GATE_LOCKED, f"another hook held the session lock for over {self.wait:g} s"
                )
            time.sleep(LOCK_POLL_S)

    def _take_over_if_stale(self) -> None:
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            return
        if time.time() - info.st_mtime < self.stale:
            return
        grave = f"{self.path}.stale-{self.token.decode('ascii')}"
        try:
            os.rename(self.path, grave)
        except OSError:
            return  # another contender took it over first
        try:
            moved = os.stat(grave)
            if (moved.st_dev, moved.st_ino) != (info.st_dev, info.st_ino):
                # A fresh lock was created between our look and our rename: give it back.
                try:  # noqa: SIM105 - contextlib would cost the hook path an import
                    os.link(grave, self.path)
                except OSError:
                    pass
        finally:
            try:  # noqa: SIM105
                os.unlink(grave)
            except OSError:
                pass

    def release(self) -> None:
        if not self.held:
            return
        self.held = False
        try:
            with open(self.path, "rb") as stream:
                owner = stream.read(64)
        except OSError:
            return
        if owner == self.token:
            try:  # noqa: SIM105
                os.unlink(self.path)
            except OSError:
                pass


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
    folder = session_folder(session, state_root)
    _make_folder(folder)
    path = os.path.join(folder, RECORD)
    from plangate.gates.timing import utc_timestamp

    with SessionLock(folder, wait=wait):
        record = read_record(path) or new_record(session)
        change(record)
        record["updated_at"] = utc_timestamp()
        _write(path, record)
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
    root = gates_root(state_root)
    current = time.time() if now is None else now
    removed: list[str] = []
    try:
        names = os.listdir(root)
    except OSError:
        return removed
    for name in names:
        folder = os.path.join(root, name)
        if name == keep or name.startswith(".") or os.path.islink(folder):
            continue
        try:
            if not os.path.isdir(folder) or current - _newest_change(folder) < age:
                continue
            for entry in os.listdir(folder):
                os.unlink(os.path.join(folder, entry))
            os.rmdir(folder)
            removed.append(name)
        except OSError:
            continue
    return removed
