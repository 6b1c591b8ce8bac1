"""Safe edits of a Claude Code ``settings.json``.

Rules, in the order they matter to the person whose file it is:

* **Never destroy what we cannot read.** A file that is not UTF-8, not JSON, not a JSON
  object, has a duplicate key, or whose ``hooks`` (or a hooks event plangate must write) has
  the wrong type is refused with a :class:`~plangate.errors.ConfigError` that names it and
  says "fix or move it, then run plangate setup again"; the file is not touched. A missing
  file, or one holding only whitespace, is empty settings.
* **Only our entries.** plangate's handlers are recognised by their command (see
  :data:`plangate.hook_registry.MARKER`). A merge removes every one of them and puts the
  wanted ones back at the place the first of ours stood (else at the end of the event);
  other handlers, matcher groups, events and top-level keys keep their content and order.
  A matcher group or event left empty by the removal of ours is dropped, and so is a
  ``hooks`` object left empty that way.
* **No needless writes.** When the result equals what the file holds, nothing is written,
  whatever the file's formatting: ``setup`` run twice leaves the file byte-identical.
* **Atomic, with a backup of the person's own file.** A write goes to a temporary file in
  the same folder and replaces the file with ``os.replace``, fsynced
  (:func:`plangate.files.replace`, durable), keeping its permission bits (a new file gets the
  umask's). Before the first change, while the file holds none of plangate's handlers, its
  bytes are saved (atomically too) to ``settings.json.plangate-backup``; later changes keep
  that backup, so it always holds the file as it was before plangate, whatever sequence of
  setups followed. A symlinked settings file is edited at its target, so the link stays a
  link. A read-only file (no owner write bit) is refused, never replaced.
* **One writer at a time.** An exclusive ``flock`` on ``settings.json.plangate-lock``
  beside it (:class:`plangate.files.Lock`), waited for up to 10 seconds; the holder deletes
  the lock file as it leaves.
* **Uninstall restores, and leaves no trace.** When the result of removing our entries
  equals the backup's content (an empty ``hooks`` object or event list counts as absent),
  the backup's bytes are written back, so the original formatting returns byte for byte;
  otherwise, when nothing at all remains (``{}``), the file is deleted: plangate created it,
  or it configured nothing; otherwise what the person changed since is kept. Then the
  backup is removed.

Output is JSON with two-space indentation, non-ASCII characters as they are, and a trailing
newline (the format Claude Code itself writes).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from typing import Any

from plangate.config import FileLock, display_path, write_atomic
from plangate.errors import ConfigError
from plangate.hook_registry import is_plangate_handler

BACKUP_SUFFIX = ".plangate-backup"
LOCK_SUFFIX = ".plangate-lock"
REFUSAL_REMEDY = "fix or move it, then run plangate setup again"

UNCHANGED = "unchanged"
CREATED = "created"
WRITTEN = "written"
RESTORED = "restored"
DELETED = "deleted"


class SettingsFile:
    """A settings file as read: its parsed content and the exact bytes it held."""

    __slots__ = ("path", "target", "data", "original")

    def __init__(
        self, path: str, target: str, data: dict[str, Any], original: bytes | None
    ) -> None:
        self.path = path  # as given
        self.target = target  # the file actually edited (symlinks followed)
        self.data = data
        self.original = original  # None: the file does not exist

    @property
    def exists(self) -> bool:
        return self.original is not None

    @property
    def display(self) -> str:
        return display_path(self.path)


class WriteResult:
    __slots__ = ("action", "backup")

    def __init__(self, action: str, backup: str | None = None) -> None:
        self.action = action
        self.backup = backup  # the backup written, if any

    def __repr__(self) -> str:
        return f"WriteResult({self.action!r}, backup={self.backup!r})"


def target_of(path: str) -> str:
    """The file an edit of ``path`` must replace: a symlink's target, so the link survives."""
    return os.path.realpath(os.path.abspath(path))


def locked(path: str, *, create_folder: bool = True) -> FileLock:
    """The exclusive lock for editing ``path`` (use as a context manager)."""
    target = target_of(path)
    if create_folder:
        folder = os.path.dirname(target)
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as error:
            raise ConfigError(
                f"cannot create {display_path(folder)}: {error.strerror or error}",
                "check the folder's permissions, then run plangate setup again",
            ) from None
    return FileLock(
        target + LOCK_SUFFIX,
        message=f"another plangate setup is changing {display_path(path)}",
        remedy="wait for it to finish, then run plangate setup again",
        error=ConfigError,
    )


def _refuse(path: str, problem: str) -> ConfigError:
    return ConfigError(
        f"{display_path(path)} {problem}; plangate leaves it as it is", REFUSAL_REMEDY
    )


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise _DuplicateKey(key)
        data[key] = value
    return data


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse(path: str, raw: bytes) -> dict[str, Any]:
    """The settings object in ``raw``; a :class:`ConfigError` naming ``path`` otherwise."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _refuse(path, "is not UTF-8 text") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(
            text, object_pairs_hook=_object_without_duplicates, parse_constant=_reject_constant
        )
    except _DuplicateKey as duplicate:
        raise _refuse(path, f"has the key {duplicate.key!r} twice in one object") from None
    except (ValueError, RecursionError) as error:
        raise _refuse(path, f"does not parse as JSON ({error})") from None
    if not isinstance(data, dict):
        raise _refuse(path, "does not hold a JSON object")
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise _refuse(path, 'has a "hooks" entry that is not a JSON object')
    return data


def read(path: str) -> SettingsFile:
    """Read a settings file (missing: empty). Refuses one it cannot parse; never writes."""
    target = target_of(path)
    try:
        with open(target, "rb") as stream:
            raw: bytes | None = stream.read()
    except FileNotFoundError:
        raw = None
    except OSError as error:
        raise _refuse(path, f"cannot be read ({error.strerror or error})") from None
    data = {} if raw is None else parse(path, raw)
    return SettingsFile(path, target, data, raw)


def render(data: Mapping[str, Any]) -> bytes:
    """Two-space indentation, characters as they are, a trailing newline."""
    try:
        text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)
    except ValueError as error:  # a number too large for a float became infinity
        raise ConfigError(
            f"the settings cannot be written back as JSON ({error})", REFUSAL_REMEDY
        ) from None
    return (text + "\n").encode("utf-8")


def _is_group_with_handlers(group: object) -> bool:
    return isinstance(group, dict) and isinstance(group.get("hooks"), list)


def plangate_groups(data: Mapping[str, Any]) -> dict[str, list[tuple[int, Any]]]:
    """Per event, each matcher group holding a plangate handler, with its position."""
    found: dict[str, list[tuple[int, Any]]] = {}
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return found
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            continue
        for position, group in enumerate(groups):
            if _is_group_with_handlers(group) and any(
                is_plangate_handler(handler) for handler in group["hooks"]
            ):
                found.setdefault(event, []).append((position, group))
    return found


def merge_hooks(
    data: Mapping[str, Any], block: Mapping[str, list[dict[str, Any]]], *, path: str = ""
) -> dict[str, Any]:
    """``data`` with every plangate handler removed and ``block``'s groups put in.

    ``block`` maps an event to the matcher groups plangate wants there
    (:func:`plangate.hook_registry.hook_settings`); an empty block removes all of ours.
    The input is not modified.
    """
    hooks = data.get("hooks")
    if hooks is None:
        hooks = {}
    if not isinstance(hooks, dict):
        if not block:
            return dict(data)  # nothing of ours can be in it
        raise _refuse(path, 'has a "hooks" entry that is not a JSON object')
    touched = False
    new_hooks: dict[str, Any] = {}
    for event, groups in hooks.items():
        wanted = block.get(event)
        if not isinstance(groups, list):
            if wanted is not None:
                raise _refuse(path, f'has a "hooks" entry {event!r} that is not a JSON array')
            new_hooks[event] = groups
            continue
        kept: list[Any] = []
        place: int | None = None
        removed = False
        for group in groups:
            if _is_group_with_handlers(group):
                others = [handler for handler in group["hooks"] if not is_plangate_handler(handler)]
                if len(others) != len(group["hooks"]):
                    removed = True
                    if not others:
                        if place is None:
                            place = len(kept)
                        continue
                    group = {**group, "hooks": others}
            kept.append(group)
        if wanted is not None:
            at = len(kept) if place is None else place
            kept[at:at] = wanted
        touched = touched or removed or wanted is not None
        if kept or not removed:
            new_hooks[event] = kept
    for event, wanted in block.items():
        if event not in new_hooks and event not in hooks:
            new_hooks[event] = list(wanted)
            touched = True
    result = dict(data)
    if new_hooks or not touched:
        if "hooks" in data or new_hooks:
            result["hooks"] = new_hooks
    else:
        result.pop("hooks", None)
    return result


def _backup(settings: SettingsFile) -> str | None:
    """Save the file as it is, unless it already holds plangate's handlers: then the backup
    of the person's own file, made before plangate's first change, is kept."""
    if settings.original is None or plangate_groups(settings.data):
        return None
    backup = settings.target + BACKUP_SUFFIX
    mode = stat.S_IMODE(os.stat(settings.target).st_mode)
    write_atomic(backup, settings.original, mode=mode, error=ConfigError)
    return backup


def _read_backup(settings: SettingsFile) -> tuple[bytes, dict[str, Any]] | None:
    try:
        with open(settings.target + BACKUP_SUFFIX, "rb") as stream:
            raw = stream.read()
        return raw, parse(settings.target + BACKUP_SUFFIX, raw)
    except (OSError, ConfigError):
        return None


def normalized(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` without empty hook containers, which configure nothing: an event with an
    empty list, and a ``hooks`` object left empty."""
    result = dict(data)
    hooks = result.get("hooks")
    if isinstance(hooks, dict):
        hooks = {event: groups for event, groups in hooks.items() if groups != []}
        if hooks:
            result["hooks"] = hooks
        else:
            del result["hooks"]
    return result


def write(
    settings: SettingsFile, data: Mapping[str, Any], *, restore_backup: bool = False
) -> WriteResult:
    """Make the file hold ``data``; call under :func:`locked`.

    Nothing is written when ``data`` equals the content. Otherwise the old bytes go to the
    backup first. With ``restore_backup`` (uninstall): a result equal to the backup's
    content (empty hook containers aside) is written as the backup's bytes, and a result of
    ``{}`` otherwise deletes the file.
    """
    if data == settings.data and (settings.exists or not data):
        if restore_backup and not plangate_groups(data):
            _remove_backup(settings)
        return WriteResult(UNCHANGED)
    _check_writable(settings)
    content: bytes | None = None
    action = WRITTEN if settings.exists else CREATED
    if restore_backup:
        previous = _read_backup(settings)
        if previous is not None and normalized(previous[1]) == normalized(data):
            if previous[0] == settings.original:
                _remove_backup(settings)
                return WriteResult(UNCHANGED)
            content, action = previous[0], RESTORED
        elif not data:
            result = _delete(settings)
            _remove_backup(settings)
            return result
    if content is None:
        content = render(data)
    mode: int | None = None  # a new file gets the umask's bits, as open() gives them
    if settings.original is not None:
        mode = stat.S_IMODE(os.stat(settings.target).st_mode)
    backup = None if restore_backup else _backup(settings)
    write_atomic(settings.target, content, mode=mode, error=ConfigError)
    if restore_backup:
        _remove_backup(settings)
    return WriteResult(action, backup)


def _check_writable(settings: SettingsFile) -> None:
    """A file its owner made read-only is the owner's decision: refuse, never replace it."""
    if settings.original is None:
        return
    if not os.stat(settings.target).st_mode & stat.S_IWUSR:
        raise ConfigError(
            f"{settings.display} is read-only",
            f"make it writable (chmod u+w {settings.display}) if plangate may edit it, "
            "then run plangate setup again",
        )


def _remove_backup(settings: SettingsFile) -> None:
    try:
        os.unlink(settings.target + BACKUP_SUFFIX)
    except FileNotFoundError:
        pass
    except OSError as error:
        raise ConfigError(
            f"cannot remove {settings.display}{BACKUP_SUFFIX}: {error.strerror or error}",
            "check the folder's permissions, then run plangate setup --uninstall again",
        ) from None


def _delete(settings: SettingsFile) -> WriteResult:
    backup = None
    try:
        os.unlink(settings.target)
    except FileNotFoundError:
        pass
    except OSError as error:
        raise ConfigError(
            f"cannot delete {settings.display}: {error.strerror or error}",
            "check the folder's permissions, then run plangate setup --uninstall again",
        ) from None
    return WriteResult(DELETED, backup)
