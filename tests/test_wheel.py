"""What ships is what users run: the built wheel holds no test support and no module that only
tests import.

The wheel is built from this tree as ``pip`` builds it for a user (hatchling, offline: no build
isolation). From its entry points (the console script's module, every ``__main__`` module
``python -m`` runs, every ``plangate.commands.*`` verb and every ``plangate.hooks.*`` module
that ``plangate setup`` registers) the import graph is followed through every ``import`` in a
module, the lazy ones inside functions included, and the names a package loads on first use
(declared in its ``if TYPE_CHECKING:`` block, as :mod:`plangate.plan` does). Imports under
``TYPE_CHECKING`` alone reach nothing. Every ``plangate/*.py`` in the wheel must be reached: a
module nothing reaches is test-only or dead, and belongs in ``testkit/`` or nowhere.
"""

from __future__ import annotations

import ast
import configparser
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ROOT_PACKAGES = ("plangate.commands.", "plangate.hooks.")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet"]
        + ["--wheel-dir", str(out), str(REPO)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, (
        f"the wheel did not build (hatchling comes with `pip install -e '.[test]'`, which "
        f"`make setup` runs):\n{done.stdout}\n{done.stderr}"
    )
    (built,) = out.glob("plangate-*.whl")
    return built


def _module_name(path: str) -> str:
    name = path.removesuffix(".py").replace("/", ".")
    return name.removesuffix(".__init__")


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class Graph:
    """The modules of the wheel and what each imports."""

    def __init__(self, sources: dict[str, str]) -> None:
        self.trees = {_module_name(path): ast.parse(text) for path, text in sources.items()}
        self.packages = {_module_name(path) for path in sources if path.endswith("__init__.py")}
        self.lazy = {package: self._lazy_names(package) for package in self.packages}

    def _absolute(self, module: str, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        base = module.split(".") if module in self.packages else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        return ".".join([*base, *([node.module] if node.module else [])])

    def _type_checking_imports(self, module: str) -> tuple[set[int], list[ast.ImportFrom]]:
        skipped: set[int] = set()
        declared: list[ast.ImportFrom] = []
        for node in ast.walk(self.trees[module]):
            if isinstance(node, ast.If) and _type_checking(node):
                for statement in node.body:
                    for inner in ast.walk(statement):
                        skipped.add(id(inner))
                        if isinstance(inner, ast.ImportFrom):
                            declared.append(inner)
        return skipped, declared

    def _lazy_names(self, package: str) -> dict[str, str]:
        """Names a package declares under TYPE_CHECKING as coming from its own modules: those
        its ``__getattr__`` loads on first use."""
        _, declared = self._type_checking_imports(package)
        names: dict[str, str] = {}
        for node in declared:
            source = self._absolute(package, node)
            if source.startswith(package + ".") and source in self.trees:
                for alias in node.names:
                    names[alias.asname or alias.name] = source
        return names

    def imports(self, module: str) -> set[str]:
        skipped, _ = self._type_checking_imports(module)
        named: set[str] = set()
        for node in ast.walk(self.trees[module]):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                named.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                source = self._absolute(module, node)
                named.add(source)
                for alias in node.names:
                    named.add(f"{source}.{alias.name}")
                    if alias.name in self.lazy.get(source, {}):
                        named.add(self.lazy[source][alias.name])
        found: set[str] = set()
        for name in named:
            parts = name.split(".")
            found.update(
                ".".join(parts[:end])
                for end in range(1, len(parts) + 1)
                if ".".join(parts[:end]) in self.trees
            )
        return found

    def reached(self, roots: set[str]) -> set[str]:
        seen: set[str] = set()
        todo = list(roots)
        while todo:
            module = todo.pop()
            if module in seen:
                continue
            seen.add(module)
            parts = module.split(".")
            todo += [".".join(parts[:end]) for end in range(1, len(parts))]  # its packages
            todo += sorted(self.imports(module) - seen)
        return seen


def _contents(wheel: Path) -> tuple[list[str], dict[str, str], str]:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        sources = {
            name: archive.read(name).decode("utf-8")
            for name in names
            if name.startswith("plangate/") and name.endswith(".py")
        }
        (entry_points,) = [name for name in names if name.endswith(".dist-info/entry_points.txt")]
        return names, sources, archive.read(entry_points).decode("utf-8")


def test_the_wheel_holds_no_test_support(wheel: Path) -> None:
    names, _, _ = _contents(wheel)
    outside = [name for name in names if not name.startswith("plangate/")]
    assert outside and all(".dist-info/" in name for name in outside), outside
    assert not [
        name for name in names if name.startswith(("plangate/testing/", "plangate/standin/"))
    ]
    assert "plangate/harness/standin/server.py" in names  # what `plangate demo` runs ships


def test_every_module_in_the_wheel_is_reached_from_an_entry_point(wheel: Path) -> None:
    _, sources, entry_points = _contents(wheel)
    graph = Graph(sources)
    parser = configparser.ConfigParser()
    parser.read_string(entry_points)
    scripts = {value.split(":")[0].strip() for value in parser["console_scripts"].values()}
    assert scripts == {"plangate.cli"}
    roots = scripts | {
        module
        for module in graph.trees
        if module.startswith(ROOT_PACKAGES) or module.endswith(".__main__")
    }
    assert {"plangate.__main__", "plangate.hooks.pre_tool_use"} <= roots
    unreached = sorted(set(graph.trees) - graph.reached(roots))
    assert not unreached, f"modules in the wheel that no entry point imports: {unreached}"
