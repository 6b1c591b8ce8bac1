"""Path templates and globs, without ``re`` or ``fnmatch`` (hook path).

A template holds ``{name}``: a variable taken from a skill's arguments, a named path of the
workflow, or ``{project}`` (the project folder). A variable not bound yet becomes ``*``, so
``.kiro/specs/{feature}/spec.json`` before any feature is named matches every feature's.
Relative templates are relative to the project folder. A glob's ``*`` matches within one
path segment, ``?`` one character, and a ``**`` segment any number of segments.
"""

from __future__ import annotations

import os

UNBOUND = "*"


def names_in(template: str) -> list[str]:
    """The ``{name}`` references of a template, in order."""
    found: list[str] = []
    rest = template
    while "{" in rest:
        start = rest.index("{")
        end = rest.find("}", start)
        if end < 0:
            break
        found.append(rest[start + 1 : end])
        rest = rest[end + 1 :]
    return found


def fill(template: str, values: dict[str, str], paths: dict[str, str] | None = None) -> str:
    """The template with every name replaced; named paths expand (once) first."""
    text = template
    for name, path in (paths or {}).items():
        text = text.replace("{" + name + "}", path)
    for name in names_in(text):
        text = text.replace("{" + name + "}", values.get(name, UNBOUND))
    return text


def absolute(pattern: str, project: str) -> str:
    path = os.path.expanduser(pattern)
    if not os.path.isabs(path):
        path = os.path.join(project, path)
    return os.path.normpath(path)


def is_glob(pattern: str) -> bool:
    return any(ch in pattern for ch in "*?[")


def _segment(pattern: str, name: str) -> bool:
    """One path segment against ``*`` and ``?`` (no character classes)."""
    p = n = 0
    star = -1
    mark = 0
    while n < len(name):
        if p < len(pattern) and (pattern[p] == "?" or pattern[p] == name[n]):
            p += 1
            n += 1
        elif p < len(pattern) and pattern[p] == "*":
            star = p
            mark = n
            p += 1
        elif star >= 0:
            p = star + 1
            mark += 1
            n = mark
        else:
            return False
    while p < len(pattern) and pattern[p] == "*":
        p += 1
    return p == len(pattern)


def matches(pattern: str, path: str) -> bool:
    """Whether absolute ``path`` matches absolute glob ``pattern``."""
    parts = [part for part in pattern.split(os.sep) if part]
    names = [part for part in path.split(os.sep) if part]
    return _match(parts, names)


def _match(parts: list[str], names: list[str]) -> bool:
    if not parts:
        return not names
    head = parts[0]
    if head == "**":
        return any(_match(parts[1:], names[i:]) for i in range(len(names) + 1))
    if not names or not _segment(head, names[0]):
        return False
    return _match(parts[1:], names[1:])


def expand(pattern: str) -> list[str]:
    """The existing files a glob names, newest first (a plain path: itself if it exists)."""
    if not is_glob(pattern):
        return [pattern] if os.path.exists(pattern) else []
    parts = [part for part in pattern.split(os.sep) if part]
    found: list[str] = []
    _walk(os.sep, parts, found)
    return sorted(found, key=_mtime, reverse=True)


def _walk(folder: str, parts: list[str], found: list[str]) -> None:
    if not parts:
        if os.path.isfile(folder):
            found.append(folder)
        return
    head = parts[0]
    if head == "**":
        _walk(folder, parts[1:], found)
        for name in _names(folder):
            child = os.path.join(folder, name)
            if os.path.isdir(child) and not os.path.islink(child):
                _walk(child, parts, found)
        return
    if not is_glob(head):
        _walk(os.path.join(folder, head), parts[1:], found)
        return
    for name in _names(folder):
        if _segment(head, name):
            _walk(os.path.join(folder, name), parts[1:], found)


def _names(folder: str) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def extract(template: str, path: str, project: str) -> dict[str, str]:
    """The variables a path gives a template (``.kiro/specs/{feature}`` and
    ``/p/.kiro/specs/greet/spec.json`` give ``feature=greet``); a template segment must be
    exactly ``{name}`` to capture, and the path may go on below the template."""
    pattern = absolute(template, project)
    parts = [part for part in pattern.split(os.sep) if part]
    names = [part for part in path.split(os.sep) if part]
    if len(names) < len(parts):
        return {}
    found: dict[str, str] = {}
    for part, name in zip(parts, names, strict=False):
        if part.startswith("{") and part.endswith("}") and part.count("{") == 1:
            found[part[1:-1]] = name
        elif part != name:
            return {}
    return found
