"""The phase entries a broken contract file still names, for when no earlier version of it
parsed: its ``reads`` and ``agents`` lists, its named ``paths`` and its phase names.

A contract that does not parse keeps refusing its workflow's skill starts
(``contract_invalid``), and a Read or an Agent call its last good version made a phase entry
is refused too (:func:`plangate.contracts.evaluate.call_entry`). With no good version known
(the file never parsed where plangate saw it), the entries are read from the file itself,
leniently: the whole document when it is valid TOML (a bad field, a missing key), else line
by line, each ``reads = [...]``, ``agents = [...]`` and ``paths = {...}`` line that is valid
TOML on its own (a syntax error elsewhere in the file). Only strings are taken; anything
else is left out. What it finds only ever refuses a call, never allows one.
"""

from __future__ import annotations

from plangate.contracts import model

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ENTRY_KEYS = ("reads", "agents")


def salvage(path: str) -> model.Contract | None:
    """A contract holding only the entries ``path`` names (None: it names none, or it
    cannot be read)."""
    import tomllib

    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    try:
        raw: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        raw = _by_line(text)
    return _entries(raw, path)


def _by_line(text: str) -> dict[str, Any]:
    """The ``[workflow]`` name and paths and each ``[[phase]]``'s name, reads and agents,
    from the lines that parse on their own."""
    import tomllib

    workflow: dict[str, Any] = {}
    phases: list[dict[str, Any]] = []
    table: dict[str, Any] | None = None
    for raw_line in text.splitlines():
        line = raw_line.strip()
        if line.startswith("["):
            header = line.split("#", 1)[0].strip()
            if header == "[workflow]":
                table = workflow
            elif header == "[[phase]]":
                table = {}
                phases.append(table)
            else:
                table = None  # [[phase.artifact]], [done] and the like: nothing to take
            continue
        if table is None or "=" not in line:
            continue
        key = line.split("=", 1)[0].strip()
        wanted = ("name", "paths") if table is workflow else ("name", *ENTRY_KEYS)
        if key not in wanted:
            continue
        try:
            table.update(tomllib.loads(line))
        except tomllib.TOMLDecodeError:
            continue  # this line is the broken one (or spans several lines)
    return {"workflow": workflow, "phase": phases}


def _strings(value: object) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    return tuple(item.strip() for item in items if isinstance(item, str) and item.strip())


def _entries(raw: dict[str, Any], path: str) -> model.Contract | None:
    workflow = raw.get("workflow")
    workflow = workflow if isinstance(workflow, dict) else {}
    name = workflow.get("name")
    paths_raw = workflow.get("paths")
    paths = (
        {str(k): v for k, v in paths_raw.items() if isinstance(v, str)}
        if isinstance(paths_raw, dict)
        else {}
    )
    phases: list[model.Phase] = []
    phases_raw = raw.get("phase")
    for index, value in enumerate(phases_raw if isinstance(phases_raw, list) else []):
        if not isinstance(value, dict):
            continue
        reads, agents = _strings(value.get("reads")), _strings(value.get("agents"))
        if not reads and not agents:
            continue
        label = value.get("name")
        phase_name = label.strip() if isinstance(label, str) and label.strip() else None
        phases.append(model.Phase(phase_name or f"phase {index + 1}", reads=reads, agents=agents))
    if not phases:
        return None
    workflow_name = name.strip() if isinstance(name, str) and name.strip() else None
    return model.Contract(
        workflow_name or _stem(path), skills=(), phases=tuple(phases), paths=paths, source=path
    )


def _stem(path: str) -> str:
    import os

    base = os.path.basename(path)
    if base == "plangate.toml":  # beside a skill: the skill's folder names it
        return os.path.basename(os.path.dirname(path)) or base
    return base.rsplit(".", 1)[0]
