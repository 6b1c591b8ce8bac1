"""plangate's packages form layers that only point down, with no cycle between packages.

Each top-level module or package of ``plangate`` has a layer in :data:`LAYERS`; a module may
import plangate modules of its own layer or below, never above. Entry points sit on top: the
CLI and its commands, the hook entry modules and ``plangate/__main__.py``. A package's own
``__main__`` belongs to its package and is held to its layer like any of its modules.

The import graph between packages is read from every module's syntax tree: imports at the
top, inside functions and under ``TYPE_CHECKING`` alike, relative ones resolved, and
``importlib.import_module``/``__import__`` of a literal (or f-string) ``plangate.`` name. It
must be acyclic, inside a layer too: the test names each strongly connected set of packages.
The README's Layout lists every package and top-level module under its layer, as here.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Mapping, Set
from pathlib import Path

import plangate

PACKAGE = Path(plangate.__file__).resolve().parent
README = PACKAGE.parents[1] / "README.md"

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
        "tuning",
        "failures",
        "hook_registry",
        "hook_io",
        "skill_names",
        "config",
        "claude_cli",
    },
    # readers and formats
    {"journal", "plan", "autoplan"},
    # what every hook decides with: the code table, a decision, its hook output and log line;
    # the one driver every workflow's decision runs on
    {"decisions", "engine"},
    # what decides in a hook, and what reads many journals
    {"guard", "gates", "journal_survey", "contracts", "agent_session", "protect"},
    # the agents, and the real CLI offline
    {"agents", "harness"},
    # runs, installing, the viewer
    {"runs", "install", "web", "audit", "audit_codex", "audit_hold"},
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


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(node: ast.ImportFrom, path: Path) -> str | None:
    """The module an ``import from`` names, a relative one resolved against ``path``."""
    if node.level == 0:
        return node.module
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]  # a module's package
    if node.level > 1:
        package = package[: -(node.level - 1)]
    return ".".join([*package, *([node.module] if node.module else [])])


def _dynamic(node: ast.Call) -> str | None:
    """The plangate module a call to ``import_module``/``__import__`` names, when its first
    argument is a string (or an f-string beginning with one)."""
    function = node.func
    name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
    if name not in ("import_module", "__import__") or not node.args:
        return None
    argument = node.args[0]
    if isinstance(argument, ast.JoinedStr) and argument.values:
        argument = argument.values[0]
    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        return argument.value.rstrip(".")
    return None


def _imports(path: Path) -> set[str]:
    """The plangate top-level names ``path`` imports (at run time or for types alike)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            module = _absolute(node, path)
            if module == "plangate":
                # A module or package by name; anything else (__version__) is the root's.
                found |= {alias.name if alias.name in LAYER else "__init__" for alias in node.names}
            elif module is not None and (top := _top(module)) is not None:
                found.add(top)
        elif isinstance(node, ast.Import):
            found |= {top for alias in node.names if (top := _top(alias.name)) is not None}
        elif isinstance(node, ast.Call) and (top := _top(_dynamic(node) or "")) is not None:
            found.add(top)
    return found


def _owner(path: Path) -> str:
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def _modules() -> list[Path]:
    """Every module of the package, ``__main__`` files included."""
    return sorted(PACKAGE.rglob("*.py"))


@functools.cache
def _edges() -> dict[str, frozenset[str]]:
    """Every top-level name, and the others its modules import."""
    edges: dict[str, set[str]] = {}
    for path in _modules():
        owner = _owner(path)
        edges.setdefault(owner, set()).update(_imports(path) - {owner})
    return {owner: frozenset(targets) for owner, targets in edges.items()}


def _cycles(edges: Mapping[str, Set[str]]) -> list[list[str]]:
    """The strongly connected sets of more than one name (Tarjan's algorithm, iterative),
    each sorted: an acyclic graph has none."""
    number: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in number:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        number[root] = low[root] = len(number)
        stack.append(root)
        on_stack.add(root)
        while work:
            name, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in number:
                    number[target] = low[target] = len(number)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(edges.get(target, ())))))
                elif target in on_stack:
                    low[name] = min(low[name], number[target])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[name])
            if low[name] == number[name]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == name:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def test_every_package_has_a_layer() -> None:
    names = {_owner(path) for path in PACKAGE.rglob("*.py")}
    assert names - set(LAYER) == set()


def test_main_files_are_read_with_their_package() -> None:
    mains = [path for path in _modules() if path.name == "__main__.py"]
    assert {str(path.relative_to(PACKAGE)) for path in mains} >= {
        "__main__.py",
        "journal/__main__.py",
    }
    for path in mains:
        assert _imports(path) - {_owner(path)} <= _edges()[_owner(path)]


def test_no_package_imports_one_above_it() -> None:
    upward = sorted(
        f"{owner} (layer {LAYER[owner]}) imports {target} (layer {LAYER[target]})"
        for owner, targets in _edges().items()
        for target in targets
        if target in LAYER and LAYER[target] > LAYER[owner]
    )
    assert upward == []


def test_the_package_graph_is_acyclic() -> None:
    assert _cycles(_edges()) == []


def test_a_cycle_is_found() -> None:
    # The check itself: the cycle journal/__main__.py once made (journal -> hooks -> guard
    # -> journal) and a self-contained pair, beside names that only point down.
    edges = {
        "journal": {"files", "hooks"},
        "hooks": {"guard", "hook_io"},
        "guard": {"journal", "files"},
        "__init__": {"hook_io"},
        "hook_io": {"__init__", "files"},
        "files": set(),
    }
    assert _cycles(edges) == [["__init__", "hook_io"], ["guard", "hooks", "journal"]]
    assert _cycles({name: targets - {"hooks", "__init__"} for name, targets in edges.items()}) == []


def _readme_layout() -> dict[str, int | None]:
    """The names the README's Layout lists under ``src/plangate/``, each with its layer
    (None under "no Python")."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Layout") :]
    block = section[section.index("```\n") + 4 :]
    block = block[: block.index("```")]
    listed: dict[str, int | None] = {}
    layer: int | None = None
    for line in block.splitlines():
        if (heading := re.match(r" layer (\d+):", line)) is not None:
            layer = int(heading.group(1))
        elif line.startswith(" no Python"):
            layer = None
        elif (entry := re.match(r"  (\w+)(?:/|\.py) ", line)) is not None:
            assert entry.group(1) not in listed, line
            listed[entry.group(1)] = layer
    return listed


def test_the_readme_layout_lists_every_package_in_its_layer() -> None:
    folders = {path.name for path in PACKAGE.iterdir() if path.is_dir()} - {"__pycache__"}
    listed = _readme_layout()
    assert set(listed) == set(LAYER) | folders
    assert {name: listed[name] for name in LAYER} == LAYER
