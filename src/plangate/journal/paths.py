"""Path spellings as Claude Code and Git Bash write them.

One folder can be spelled ``C:\\x``, ``c:\\x``, ``C:/x`` or ``/c/x``; :func:`fold` maps all of
them to ``C:\\x`` so comparisons treat them as one path. Nothing is resolved: ``.``, ``..`` and
doubled separators survive folding, so :func:`is_owned_path` still rejects them.
Standard library only (hook path).
"""

from __future__ import annotations

import os

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _drive_path(path: str) -> bool:
    return len(path) >= 3 and path[0] in _LETTERS and path[1] == ":" and path[2] in "\\/"


def _git_bash_path(path: str) -> bool:
    # /c/x or /c: a single drive letter as the first segment.
    return (
        len(path) >= 2
        and path[0] == "/"
        and path[1] in _LETTERS
        and (len(path) == 2 or path[2] == "/")
    )


def is_windows_spelling(path: str) -> bool:
    return _drive_path(path) or "\\" in path


def fold(path: str) -> str:
    """The one spelling of a path used for comparison."""
    if _drive_path(path):
        return path[0].upper() + ":" + path[2:].replace("/", "\\")
    return path


def fold_pair(first: str, second: str) -> tuple[str, str]:
    """Fold two paths; when one side is a Windows spelling, read ``/c/x`` on the other as C:."""
    if is_windows_spelling(first) or is_windows_spelling(second):
        return _fold_windows(first), _fold_windows(second)
    return first, second


def _fold_windows(path: str) -> str:
    if _git_bash_path(path):
        rest = path[2:] or "/"
        return path[1].upper() + ":" + rest.replace("/", "\\")
    return fold(path)


def same_path(first: str, second: str) -> bool:
    a, b = fold_pair(first, second)
    return a == b


def is_absolute(path: str) -> bool:
    return path.startswith("/") or _drive_path(path) or path.startswith("\\\\")


def is_owned_path(path: object) -> bool:
    """An absolute path in normal form: no ``.``, ``..``, empty segments or trailing slash."""
    if not isinstance(path, str) or not path or "\x00" in path:
        return False
    if _drive_path(path):
        body = path[3:].replace("/", "\\")
        separator = "\\"
    elif path.startswith("/"):
        body = path[1:]
        separator = "/"
    else:
        return False
    if not body:
        return True
    return all(part not in ("", ".", "..") for part in body.split(separator))


def realpath_or_none(path: str) -> str | None:
    try:
        return os.path.realpath(path, strict=True)
    except (OSError, ValueError):
        return None
