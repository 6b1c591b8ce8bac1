"""Diffs as rows a page can draw: two texts compared with :mod:`difflib`, or the output of
``git diff`` read into files and hunks. Pure.

A row is a dict, so the JSON twin of a page carries exactly what the page draws:

* unified: ``{"kind": "add"|"del"|"context"|"hunk", "old": n|None, "new": n|None,
  "text": str, "parts": [[text, changed], …]}``; ``parts`` marks what changed inside a line
  that was replaced (present on ``add`` and ``del`` rows that have a partner);
* split: ``{"kind": "hunk"|"row", "left": side|None, "right": side|None}`` where a side is
  ``{"kind", "no", "text", "parts"}``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from typing import Any

Row = dict[str, Any]

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
PART_LIMIT = 2000  # characters; longer lines are not compared character by character


def _parts(old: str, new: str) -> tuple[list[list[Any]], list[list[Any]]]:
    """What changed inside a replaced line: ``[[text, changed], …]`` for each side."""
    if len(old) > PART_LIMIT or len(new) > PART_LIMIT:
        return [[old, True]], [[new, True]]
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    left: list[list[Any]] = []
    right: list[list[Any]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if i2 > i1:
            left.append([old[i1:i2], tag != "equal"])
        if j2 > j1:
            right.append([new[j1:j2], tag != "equal"])
    # A line that changed almost everywhere reads better marked whole.
    if matcher.ratio() < 0.4:
        return [[old, True]], [[new, True]]
    return left, right


def _pair(dels: list[Row], adds: list[Row]) -> None:
    """Mark what changed inside the lines of a block that replaced another."""
    for old, new in zip(dels, adds, strict=False):
        old["parts"], new["parts"] = _parts(old["text"], new["text"])


def unified_rows(lines: Iterable[Row]) -> list[Row]:
    """Rows in order, with each run of removed lines paired with the added run after it."""
    rows = list(lines)
    i = 0
    while i < len(rows):
        if rows[i]["kind"] != "del":
            i += 1
            continue
        j = i
        while j < len(rows) and rows[j]["kind"] == "del":
            j += 1
        k = j
        while k < len(rows) and rows[k]["kind"] == "add":
            k += 1
        _pair(rows[i:j], rows[j:k])
        i = max(k, i + 1)
    return rows


def _side(row: Row, number: str) -> Row:
    return {
        "kind": row["kind"],
        "no": row[number],
        "text": row["text"],
        "parts": row["parts"],
    }


def split_rows(rows: Sequence[Row]) -> list[Row]:
    """Side-by-side rows from unified rows: removed lines left, added lines right."""
    out: list[Row] = []
    i = 0
    while i < len(rows):
        row = rows[i]
        if row["kind"] == "hunk":
            out.append({"kind": "hunk", "text": row["text"], "left": None, "right": None})
            i += 1
        elif row["kind"] == "context":
            out.append({"kind": "row", "left": _side(row, "old"), "right": _side(row, "new")})
            i += 1
        else:
            dels: list[Row] = []
            adds: list[Row] = []
            while i < len(rows) and rows[i]["kind"] == "del":
                dels.append(rows[i])
                i += 1
            while i < len(rows) and rows[i]["kind"] == "add":
                adds.append(rows[i])
                i += 1
            if not dels and not adds:  # pragma: no cover - every kind is handled above
                i += 1
            for index in range(max(len(dels), len(adds))):
                left = _side(dels[index], "old") if index < len(dels) else None
                right = _side(adds[index], "new") if index < len(adds) else None
                out.append({"kind": "row", "left": left, "right": right})
    return out


def text_diff(
    old: str, new: str, *, old_name: str, new_name: str, context: int = 3
) -> dict[str, Any]:
    """Two texts compared: the unified diff's text, its rows, and its counts."""
    old_lines = old.splitlines()
    new_lines = new.splitlines()
    unified = list(
        difflib.unified_diff(
            old_lines, new_lines, fromfile=old_name, tofile=new_name, n=context, lineterm=""
        )
    )
    rows = parse_hunks(unified[2:]) if unified else []
    return {
        "unified": "\n".join(unified) + ("\n" if unified else ""),
        "rows": rows,
        "split": split_rows(rows),
        "added": sum(1 for row in rows if row["kind"] == "add"),
        "removed": sum(1 for row in rows if row["kind"] == "del"),
        "same": old == new,
    }


def parse_hunks(lines: Iterable[str]) -> list[Row]:
    """Unified diff lines from the first ``@@`` on, as rows with line numbers."""
    rows: list[Row] = []
    old_no = new_no = 0
    for line in lines:
        match = _HUNK.match(line)
        if match:
            old_no, new_no = int(match.group(1)), int(match.group(3))
            rows.append({"kind": "hunk", "old": None, "new": None, "text": line, "parts": None})
        elif line.startswith("+"):
            rows.append(
                {"kind": "add", "old": None, "new": new_no, "text": line[1:], "parts": None}
            )
            new_no += 1
        elif line.startswith("-"):
            rows.append(
                {"kind": "del", "old": old_no, "new": None, "text": line[1:], "parts": None}
            )
            old_no += 1
        elif line.startswith("\\"):
            rows.append({"kind": "note", "old": None, "new": None, "text": line, "parts": None})
        else:
            text = line[1:] if line.startswith(" ") else line
            rows.append(
                {"kind": "context", "old": old_no, "new": new_no, "text": text, "parts": None}
            )
            old_no += 1
            new_no += 1
    return unified_rows(rows)


def parse_git_diff(text: str) -> list[dict[str, Any]]:
    """The files of a ``git diff`` (``--no-renames``): path, status, counts and rows."""
    files: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    body: list[str] = []

    def close() -> None:
        if current is None:
            return
        rows = parse_hunks(body)
        current["rows"] = rows
        current["split"] = split_rows(rows)
        current["added"] = sum(1 for row in rows if row["kind"] == "add")
        current["removed"] = sum(1 for row in rows if row["kind"] == "del")
        files.append(current)

    in_header = False
    for line in text.splitlines():
        if line.startswith("diff --git "):
            close()
            body = []
            current = {"path": _git_path(line), "status": "modified", "binary": False}
            in_header = True
            continue
        if current is None:
            continue
        if in_header:
            if line.startswith("new file mode"):
                current["status"] = "added"
            elif line.startswith("deleted file mode"):
                current["status"] = "deleted"
            elif line.startswith("Binary files"):
                current["binary"] = True
            elif line.startswith("+++ ") and line[4:] != "/dev/null":
                current["path"] = line[4:].removeprefix("b/")
            elif line.startswith("--- ") and current["status"] == "deleted":
                current["path"] = line[4:].removeprefix("a/")
            elif line.startswith("@@"):
                in_header = False
                body.append(line)
            continue
        body.append(line)
    close()
    return files


def _git_path(header: str) -> str:
    """The path in ``diff --git a/<path> b/<path>`` (both halves are the same path)."""
    rest = header.removeprefix("diff --git ")
    half = len(rest) // 2
    if rest[half : half + 3] == " b/" and rest.startswith("a/"):
        return rest[2:half]
    return rest.split(" b/", 1)[-1]
