"""The init binding the later commands start from, and the artifact folders they create.

Every artifact is written with :func:`plangate.files.replace`, durable (fsynced, then its
folder): files a later step must trust appear whole or not at all. Immutable files
(:data:`~plangate.autoplan.layout.IMMUTABLE_MODE`, ``0444``) are created ``exclusive``: a
hard link that never replaces what is there.
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Callable
from typing import Any

from plangate import files, jsonio
from plangate.autoplan import layout
from plangate.errors import PlangateError, UsageError

REINIT_REMEDY = "run `plangate autoplan init <source> <active> <restore>` with a new restore path"


def write_immutable(path: str, data: bytes) -> None:
    """Create ``path`` (mode 0444) with ``data``, durably; ``FileExistsError`` when it exists."""
    files.replace(path, data, layout.IMMUTABLE_MODE, durable=True, exclusive=True)


def create_folder(
    parent: str, name_for: Callable[[str], str], contents_for: Callable[[str], dict[str, bytes]]
) -> str:
    """Create ``parent/<name>`` holding immutable files in one step; return its path.

    ``name_for(token)`` names the folder and ``contents_for(folder)`` returns
    ``{file name: bytes}``
    for the folder's final path (a manifest names its own path). The files are written into a
    hidden temporary folder that is renamed into place once complete.
    """
    for _ in range(20):
        name = name_for(layout.new_token())
        final = os.path.join(parent, name)
        if not os.path.lexists(final):
            break
    else:  # pragma: no cover - 36**6 names
        raise PlangateError(f"no free folder name in {parent}", "remove old autoplan folders")
    contents: dict[str, bytes] = contents_for(final)
    temp = os.path.join(parent, f".{name}.tmp")
    os.mkdir(temp, 0o755)
    try:
        for file_name, data in contents.items():
            write_immutable(os.path.join(temp, file_name), data)
        if os.path.lexists(final):  # pragma: no cover - a race for a random name
            raise FileExistsError(errno.EEXIST, "File exists", final)
        os.rename(temp, final)
        files.sync_folder(parent)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    return final


def json_bytes(value: object) -> bytes:
    """Compact JSON plus a final newline, as artifact files hold it."""
    return (jsonio.dumps(value) + "\n").encode("ascii")


# --- the init binding -------------------------------------------------------------------


class InitBinding:
    """What ``init`` bound, read back from the restore point and its record."""

    __slots__ = ("record", "restore_path", "active_plan", "active_bytes", "artifact_dir")

    def __init__(
        self, record: dict[str, Any], restore_path: str, active_plan: str, active_bytes: bytes
    ) -> None:
        self.record = record
        self.restore_path = restore_path
        self.active_plan = active_plan
        self.active_bytes = active_bytes
        self.artifact_dir = os.path.dirname(restore_path)

    @property
    def scope(self) -> dict[str, Any]:
        scope: dict[str, Any] = self.record["scope"]
        return scope

    @property
    def plan_bytes(self) -> bytes:
        """The active plan without its restore header line."""
        return layout.strip_restore_header(self.active_bytes)


def check_absolute(path: str, what: str) -> None:
    """Refuse a path the guard could not bind: relative, not normalised, or not UTF-8."""
    if not os.path.isabs(path) or "\x00" in path:
        raise UsageError(f"{what} must be an absolute path: {path}", "pass the full path")
    if os.path.normpath(path) != path:
        raise UsageError(
            f"{what} is not in normal form: {path}",
            f"write it as {os.path.normpath(path)}: no '.', '..', '//' or trailing '/'",
        )
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(f"{what} is not valid UTF-8: {path!r}", "rename it") from None


def check_restore_location(restore: str) -> None:
    """A restore point is a ``.md`` file directly inside an artifact folder."""
    parts = os.path.dirname(restore).split(os.sep)
    if not restore.endswith(".md") or tuple(parts[-3:]) != layout.ARTIFACT_PARTS:
        raise UsageError(
            f"the restore point must be a .md file directly inside "
            f"<repo>/{layout.ARTIFACT_DIR}/: {restore}",
            "use the restore path from the init step",
        )


def load_binding(restore: str) -> InitBinding:
    """Read and verify what ``init`` bound for this restore point."""
    check_absolute(restore, "the restore point")
    restore = layout.canonical_path(restore)
    check_restore_location(restore)
    record_path = layout.init_record_path(restore)
    if not os.path.lexists(restore) and not os.path.lexists(record_path):
        raise PlangateError(
            f"no autoplan init for the restore point {restore}",
            "run `plangate autoplan init <source> <active> <restore>` first",
        )
    record = read_init_record(restore)
    try:
        layout.read_verified(restore, record["originalSha256"], record["originalBytes"])
    except layout.ArtifactError as error:
        raise PlangateError(
            f"the restore point {restore} cannot be trusted ({error.cause})", REINIT_REMEDY
        ) from None
    active = record["activePlan"]
    try:
        with open(active, "rb") as handle:
            active_bytes = handle.read()
    except OSError as error:
        raise PlangateError(
            f"the active plan {active} cannot be read ({error.strerror})", REINIT_REMEDY
        ) from None
    if not layout.has_restore_header(active_bytes, restore):
        raise PlangateError(
            f"the active plan {active} no longer starts with its restore header",
            f"put back its first line {layout.restore_header(restore)}, or {REINIT_REMEDY}",
        )
    return InitBinding(record, restore, active, active_bytes)


INIT_RECORD_KEYS = (
    "schema",
    "sourcePlan",
    "activePlan",
    "restorePath",
    "originalSha256",
    "originalBytes",
    "scope",
)


def read_init_record(restore: str) -> dict[str, Any]:
    """The verified init record of a restore point (``PlangateError`` when unusable)."""
    path = layout.init_record_path(restore)
    try:
        data = layout.immutable_read(path)
        value = jsonio.loads(data.decode("utf-8"))
    except layout.ArtifactError as error:
        raise PlangateError(
            f"the restore point {restore} has no usable init record ({error.cause}: {path})",
            REINIT_REMEDY,
        ) from None
    except (UnicodeDecodeError, jsonio.JSONError):
        raise PlangateError(f"the init record {path} is not valid JSON", REINIT_REMEDY) from None
    if (
        not isinstance(value, dict)
        or tuple(value) != INIT_RECORD_KEYS
        or value["schema"] != 1
        or value["restorePath"] != restore
        or not isinstance(value["activePlan"], str)
        or not isinstance(value["sourcePlan"], str)
        or not isinstance(value["originalSha256"], str)
        or not isinstance(value["originalBytes"], int)
        or not isinstance(value["scope"], dict)
    ):
        raise PlangateError(f"the init record {path} does not belong to {restore}", REINIT_REMEDY)
    return value
