"""The coding agents sit below the runs engine: no module of plangate.agents imports
plangate.runs (at the top or inside a function), so the two packages form no cycle. What
both use (a round's :class:`~plangate.failures.Failure`) lives below both."""

from __future__ import annotations

import ast
from pathlib import Path

import plangate.agents

AGENTS = Path(plangate.agents.__file__).parent


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_no_agents_module_imports_the_runs_engine() -> None:
    modules = sorted(AGENTS.glob("*.py"))
    assert len(modules) >= 5  # the package is where this test thinks it is
    upward = {
        path.name: sorted(name for name in _imports(path) if name.startswith("plangate.runs"))
        for path in modules
    }
    assert {name: found for name, found in upward.items() if found} == {}


def test_a_failure_is_one_class_wherever_it_is_imported_from() -> None:
    from plangate.agents.base import Failure as from_agents
    from plangate.failures import Failure
    from plangate.runs.model import Failure as from_runs

    assert from_agents is Failure and from_runs is Failure
