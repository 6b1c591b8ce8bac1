"""plangate's packages form layers that only point down, with no cycle between packages.

Each top-level module or package of ``plangate`` has a layer in :data:`LAYERS`; a module may
import plangate modules of its own layer or below, never above. Entry points sit on top: the
CLI and its commands, the hook entry modules, and every ``__main__`` (a process entry may
reach anything). A package cycle inside one layer is refused too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import plangate

PACKAGE = Path(plangate.__file__).resolve().parent

#: Lowest first. A name is a top-level module (``files``) or package (``journal``).
LAYERS: list[set[str]] = [
    # foundations: errors, files, the hook protocol and runtime, paths, processes, tables
    {
        "__init__",
        "errors",
        "files",
        "jsonio",
        "locations",
        "state_root",
        "processes",
        "markdown",
        "deferred",
        "failures",
        "hook_registry",
        "hook_io",
        "skill_names",
        "config",
        "claude_cli",
    },
    # readers and formats
    {"journal", "plan", "autoplan"},
    # what decides in a hook, and what reads many journals
    {"guard", "gates", "journal_survey", "contracts", "agent_session", "protect"},
    # the agents, and the real CLI offline
    {"agents", "harness"},
    # runs, installing, the viewer
    {"runs", "install", "web", "audit", "audit_hold"},
    # the demo's scenes
    {"demo"},
    # entry points
    {"hooks", "commands", "cli", "__main__"},
]
LAYER = {name: number for number, names in enumerate(LAYERS) for name in names}


def _top(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "plangate":
        return None
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path) -> set[str]:
    """The plangate top-level names ``path`` imports (at run time or for types alike)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "plangate":
                found |= {alias.name for alias in node.names}
            elif (top := _top(node.module)) is not None:
                found.add(top)
        elif isinstance(node, ast.Import):
            found |= {top for alias in node.names if (top := _top(alias.name)) is not None}
    return found


def _owner(path: Path) -> str:
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def _edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "__main__.py":
            continue  # a process entry
        owner = _owner(path)
        edges.setdefault(owner, set()).update(_imports(path) - {owner, "__version__"})
    return edges


def test_every_package_has_a_layer() -> None:
    names = {_owner(path) for path in PACKAGE.rglob("*.py")}
    assert names - set(LAYER) == set()


def test_no_package_imports_one_above_it() -> None:
    upward = sorted(
        f"{owner} (layer {LAYER[owner]}) imports {target} (layer {LAYER[target]})"
        for owner, targets in _edges().items()
        for target in targets
        if target in LAYER and LAYER[target] > LAYER[owner]
    )
    assert upward == []


def test_no_cycle_between_packages() -> None:
    edges = _edges()

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            name = todo.pop()
            for target in edges.get(name, ()):
                if target == goal:
                    return True
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        return False

    cycles = sorted(
        f"{owner} <-> {target}"
        for owner, targets in edges.items()
        for target in targets
        if owner < target and reaches(target, owner)
    )
    assert cycles == []
