"""``plangate autoplan init <source> <active> <restore>``: the restore point and the active plan.

Effects, all or nothing (``docs/autoplan-artifacts.md`` section 1):

1. the restore point gets the source's original bytes (immutable, 0444), and beside it the
   immutable init record ``<restore name>.init.json`` that the later commands read;
2. the active plan becomes the restore header line, LF, then the plan in the plan format;
3. ``.git/info/exclude`` gets ``/.plangate/tmp/`` unless it already has it.

Every check runs before anything is written, so a refused init writes nothing.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from typing import Any, TextIO

from plangate import files, jsonio
from plangate.autoplan import layout, plans, writes
from plangate.autoplan.scope import detect_scope
from plangate.errors import PlangateError, UsageError
from plangate.processes import run_bounded

NEW_RESTORE_REMEDY = "choose a new restore path for this plan"


def init(source: str, active: str, restore: str) -> dict[str, Any]:
    """Create (or reuse) the restore point and the active plan; return the JSON object."""
    writes.check_absolute(source, "the source plan")
    writes.check_absolute(active, "the active plan")
    writes.check_absolute(restore, "the restore point")
    source_path = layout.canonical_path(source)
    active_path = layout.canonical_path(active)
    restore_path = layout.canonical_path(restore)

    original = _read_source(source_path)
    repo, exclude_path = _project(os.path.dirname(source_path))
    folder = layout.canonical_path(layout.artifact_dir(repo))
    if os.path.dirname(restore_path) != folder or not restore_path.endswith(".md"):
        raise UsageError(
            f"the restore point {restore_path} is not a .md file directly inside the artifact "
            f"folder {folder}",
            f"use a path like {folder}/<plan>-restore-<yyyymmdd-hhmmss>.md",
        )
    if restore_path in (source_path, active_path):
        raise UsageError(
            f"the restore point {restore_path} is also the source or active plan",
            NEW_RESTORE_REMEDY,
        )
    _check_active(active_path, source_path, folder)

    record_path = layout.init_record_path(restore_path)
    if os.path.lexists(restore_path) or os.path.lexists(record_path):
        return _reuse(source_path, active_path, restore_path)

    text = plans.decode(original, source_path)
    # A source that is itself an earlier review's active plan loses its old header line.
    plain = plans.decode(layout.strip_restore_header(original), source_path).removeprefix("\ufeff")
    body = plans.to_plan_format(plain, source_path)
    header = layout.restore_header(restore_path)
    active_bytes = (header + "\n" + body).encode("utf-8")
    record: dict[str, Any] = {
        "schema": 1,
        "sourcePlan": source_path,
        "activePlan": active_path,
        "restorePath": restore_path,
        "originalSha256": layout.sha256_hex(original),
        "originalBytes": len(original),
        "scope": detect_scope(text),
    }

    # Everything is known and checked: write.
    if exclude_path is not None:
        add_exclude_line(exclude_path)
    os.makedirs(folder, exist_ok=True)
    created: list[str] = []
    try:
        try:
            writes.write_immutable(record_path, writes.json_bytes(record))
        except FileExistsError:
            raise PlangateError(
                f"another init created the restore point {restore_path} at the same time",
                "run the same init command again",
            ) from None
        created.append(record_path)
        writes.write_immutable(restore_path, original)
        created.append(restore_path)
        files.replace(active_path, active_bytes, _mode_of(active_path), durable=True)
    except BaseException:
        for path in reversed(created):
            with contextlib.suppress(OSError):
                os.unlink(path)
        raise
    return _result(record, reused=False)


def _result(record: dict[str, Any], *, reused: bool) -> dict[str, Any]:
    return {
        "sourcePlan": record["sourcePlan"],
        "activePlan": record["activePlan"],
        "restorePath": record["restorePath"],
        "originalSha256": record["originalSha256"],
        "originalBytes": record["originalBytes"],
        "reused": reused,
        "scope": record["scope"],
    }


def _read_source(path: str) -> bytes:
    if not os.path.exists(path):
        raise PlangateError(f"no plan at {path}", "check the path of the plan to review")
    if not os.path.isfile(path):
        raise UsageError(f"the source plan {path} is not a file", "pass the plan's .md file")
    try:
        size = os.path.getsize(path)
        if size > layout.MAX_ARTIFACT_BYTES:
            raise PlangateError(
                f"the plan {path} is {size} bytes, over the 32 MiB limit", "shorten the plan"
            )
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise PlangateError(
            f"the plan {path} cannot be read ({error.strerror})", "check its permissions"
        ) from None
    if not plans.decode(data, path).strip():
        raise PlangateError(f"the plan {path} is empty", "write the plan first, then review it")
    return data


def _check_active(active: str, source: str, folder: str) -> None:
    parent = os.path.dirname(active)
    if not os.path.isdir(parent):
        raise UsageError(
            f"the active plan's folder {parent} does not exist", "create it or pick another path"
        )
    if os.path.lexists(active) and not os.path.isfile(active):
        raise UsageError(f"the active plan {active} is not a file", "pick a .md file path")
    if active != source and os.path.isfile(active) and not _is_active_plan(active):
        raise UsageError(
            f"the active plan {active} already exists and is not an /autoplan active plan",
            "pass the source plan as the active plan too, or a path that does not exist yet",
        )
    if parent == folder:
        raise UsageError(
            f"the active plan {active} is inside the artifact folder",
            "keep the active plan in the project (it may be the source plan itself)",
        )


def _is_active_plan(path: str) -> bool:
    """Whether a file starts with a restore header (an earlier review's active plan)."""
    try:
        with open(path, "rb") as handle:
            return layout.restore_header_path(handle.read(64 * 1024)) is not None
    except OSError:
        return False


def _reuse(source: str, active: str, restore: str) -> dict[str, Any]:
    """Answer a repeated init: the same object with ``reused: true``, changing nothing."""
    try:
        record = writes.read_init_record(restore)
    except PlangateError:
        raise PlangateError(
            f"the restore point {restore} already exists and was not made by init",
            NEW_RESTORE_REMEDY,
        ) from None
    if record["sourcePlan"] != source or record["activePlan"] != active:
        raise PlangateError(
            f"the restore point {restore} belongs to another plan ({record['sourcePlan']} "
            f"-> {record['activePlan']})",
            NEW_RESTORE_REMEDY,
        )
    try:
        layout.read_verified(restore, record["originalSha256"], record["originalBytes"])
    except layout.ArtifactError as error:
        raise PlangateError(
            f"the restore point {restore} cannot be trusted ({error.cause})", NEW_RESTORE_REMEDY
        ) from None
    try:
        with open(active, "rb") as handle:
            head = handle.read(len(layout.restore_header(restore).encode("utf-8")) + 2)
    except OSError:
        head = b""
    if not layout.has_restore_header(head, restore):
        raise PlangateError(
            f"the active plan {active} no longer starts with the header of {restore}",
            NEW_RESTORE_REMEDY,
        )
    return _result(record, reused=True)


def _mode_of(path: str) -> int | None:
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return None


def _project(folder: str) -> tuple[str, str | None]:
    """The project root (git top level, else ``folder``) and its ``info/exclude`` path."""
    try:
        completed = run_bounded(
            ["git", "rev-parse", "--show-toplevel", "--git-path", "info/exclude"],
            cwd=folder,
            timeout=30,
        )
    except OSError:
        return folder, None
    lines = completed.stdout.splitlines()
    if completed.timed_out or completed.returncode != 0 or len(lines) != 2 or not lines[0]:
        return folder, None
    top, exclude = lines
    return layout.canonical_path(top), os.path.join(folder, exclude)


def add_exclude_line(path: str) -> bool:
    """Add ``/.plangate/tmp/`` to a git exclude file unless a line already says it."""
    try:
        with open(path, "rb") as handle:
            current = handle.read()
    except FileNotFoundError:
        current = b""
    line = layout.EXCLUDE_LINE.encode("utf-8")
    if any(existing.strip() == line for existing in current.splitlines()):
        return False
    separator = b"\n" if current and not current.endswith(b"\n") else b""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    files.replace(path, current + separator + line + b"\n", _mode_of(path), durable=True)
    return True


def init_command(source: str, active: str, restore: str, out: TextIO | None = None) -> int:
    """Print init's JSON object (one line) and return 0."""
    result = init(source, active, restore)
    (out if out is not None else sys.stdout).write(jsonio.dumps(result) + "\n")
    return 0
