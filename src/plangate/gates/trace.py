"""The trace logs: ``<state root>/hooks/ceo-review-gate.log`` and ``hooks/autoplan-gate.log``.

One line per marker (``<time> session=<id> event=<event> key=value …``), appended with one
``os.write`` on a descriptor opened with ``O_APPEND`` (and ``O_NOFOLLOW``, in a folder
:meth:`plangate.state_root.StateRoot.folder` checked), so concurrent hooks never interleave
lines and none is written through a planted link. Past 1 MiB the file is renamed to
``<name>.log.1`` (replacing the previous one) and a new one starts, so count from the
session record, not from the log. Logging never raises.
"""

from __future__ import annotations

import os

from plangate.state_root import GATE_LOGS, StateRoot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from plangate.state_root import Folder

FOLDER = GATE_LOGS
ROTATE_BYTES = 1024 * 1024


def log_path(hook: str, state_root: str | None = None) -> str:
    return StateRoot(state_root).file(FOLDER, f"{hook}.log")


def append(hook: str, lines: list[str], state_root: str | None = None) -> bool:
    """Append ``lines`` to the gate's trace log; True when written. Never raises."""
    if not lines:
        return True
    try:
        data = "".join(line.replace("\n", " ") + "\n" for line in lines).encode("utf-8")
        folder = StateRoot(state_root).folder(FOLDER)
        name = f"{hook}.log"
        _rotate_if_full(folder, name, len(data))
        folder.append(name, data)
        return True
    except Exception:  # noqa: BLE001 - the trace log must never change a decision
        return False


def _rotate_if_full(folder: Folder, name: str, adding: int) -> None:
    try:
        size = os.lstat(folder.file(name)).st_size
    except OSError:
        return
    if size + adding <= ROTATE_BYTES:
        return
    try:  # noqa: SIM105 - contextlib would cost the hook path an import
        folder.rename(name, name + ".1")
    except OSError:
        pass
