"""docs/runs-design.md names only what exists: every ``plangate.…`` path, every file, every
backticked symbol, and the interface's fields; and it has a row for every module of
``plangate.runs`` and ``plangate.agents``."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import re
import sys
import typing
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import plangate.agents
import plangate.runs
from plangate import config
from plangate.agents import base
from plangate.runs import schema
from plangate.runs.model import RUN_STATES, FailureKind, Trigger

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "plangate"
DOC = (ROOT / "docs" / "runs-design.md").read_text("utf-8")
PROSE = re.sub(r"```.*?```", "", DOC, flags=re.S)  # the text outside code blocks
TICKED = re.findall(r"`([^`\n]+)`", PROSE)
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
ROW = re.compile(r"^\| `((?:runs|agents)/\w+\.py)` \|(.*)\|$", re.M)

# Backticked words that are values, not symbols: states, kinds, triggers, tables, settings,
# an answer's marker, a schema's name, a placeholder.
VALUES = (
    set(RUN_STATES)
    | set(typing.get_args(FailureKind))
    | set(typing.get_args(Trigger))
    | set(schema.metadata.tables)
    | set(config.BY_NAME)
    | {"interrupted", "plan", "dbos", "None", "setsid", "recv", "APPROVED", "x"}
)
STATE_FILE = re.compile(r"[\w-]+\.(db|log)")  # files in the state root, not in the repository
SOURCES = ["plangate.errors", "plangate.processes", "plangate.config", "plangate.plan"]


def _modules() -> list[ModuleType]:
    names = list(SOURCES)
    for package in (plangate.runs, plangate.agents):
        names += [
            f"{package.__name__}.{info.name}" for info in pkgutil.iter_modules(package.__path__)
        ]
    return [importlib.import_module(name) for name in names]


def _members(module: ModuleType) -> set[str]:
    """What a module offers: its names, and its classes' attributes and fields."""
    found = set(dir(module))
    for value in vars(module).values():
        if inspect.isclass(value) and value.__module__ == module.__name__:
            found |= set(dir(value))
            if dataclasses.is_dataclass(value):
                found |= {field.name for field in dataclasses.fields(value)}
    return found


INDEX = set().union(*(_members(module) for module in _modules()))


def _resolve(dotted: str) -> object:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value: Any = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            value = getattr(value, name)
        return value
    raise ModuleNotFoundError(dotted)


@pytest.mark.parametrize("dotted", sorted(set(re.findall(r"\bplangate(?:\.\w+)+", DOC))))
def test_every_plangate_path_exists_at_its_home(dotted: str) -> None:
    value = _resolve(dotted)
    owner, _, _name = dotted.rpartition(".")
    parent = sys.modules.get(owner)
    module = parent is not None and not hasattr(parent, "__path__")  # a package may re-export
    if module and (inspect.isfunction(value) or inspect.isclass(value)):
        assert value.__module__ == owner, f"{dotted} lives in {value.__module__}"


@pytest.mark.parametrize(
    "path", sorted({t for t in TICKED if re.fullmatch(r"[\w/.-]+\.(py|md)", t)})
)
def test_every_file_exists(path: str) -> None:
    assert (PACKAGE / path).exists() or (ROOT / path).exists(), path


def test_no_file_outside_the_repository() -> None:
    assert "../" not in DOC and "issues show" not in DOC


def _symbols() -> list[str]:
    found = set()
    for text in TICKED:
        token = text.removesuffix("()")
        if STATE_FILE.fullmatch(token):
            assert token in ("runs.db", "runs-dbos.db", "errors.log"), token
            continue
        if IDENTIFIER.fullmatch(token) and not token.startswith("plangate."):
            found.add(token)
    return sorted(found - VALUES)


@pytest.mark.parametrize("symbol", _symbols())
def test_every_backticked_symbol_exists(symbol: str) -> None:
    head, _, rest = symbol.partition(".")
    if rest:
        owners = [m for m in _modules() if hasattr(m, head)]
        assert owners, symbol
        _resolve(f"{owners[0].__name__}.{symbol}")
    else:
        assert symbol in INDEX, f"`{symbol}` is in the doc but nowhere in plangate.runs/agents"


@pytest.mark.parametrize(("path", "cells"), ROW.findall(DOC), ids=lambda v: str(v)[:30])
def test_each_module_row_names_what_that_module_has(path: str, cells: str) -> None:
    module = importlib.import_module("plangate." + path.removesuffix(".py").replace("/", "."))
    offered = _members(module)
    for text in re.findall(r"`([^`\n]+)`", cells):
        token = text.removesuffix("()")
        if IDENTIFIER.fullmatch(token) and token not in VALUES and "." not in token:
            assert token in offered, f"`{token}` is not in {module.__name__}"


def test_every_module_has_a_row() -> None:
    rows = {path for path, _cells in ROW.findall(DOC)}
    for package, folder in ((plangate.runs, "runs"), (plangate.agents, "agents")):
        for info in pkgutil.iter_modules(package.__path__):
            assert f"{folder}/{info.name}.py" in rows, f"{folder}/{info.name}.py has no row"


def test_every_state_is_in_the_table() -> None:
    for state in RUN_STATES:
        assert f"| `{state}` |" in DOC, state


def _interface() -> dict[str, list[str]]:
    block = DOC.split("```python\n", 1)[1].split("```", 1)[0]
    classes: dict[str, list[str]] = {}
    current = ""
    for line in block.splitlines():
        match = re.match(r"class (\w+)", line)
        if match:
            current = match.group(1)
            classes[current] = []
            continue
        code = line.split("#", 1)[0]
        method = re.match(r"\s*def (\w+)", code)
        classes[current] += [method.group(1)] if method else re.findall(r"(\w+):", code)
    return classes


@pytest.mark.parametrize(("name", "fields"), sorted(_interface().items()))
def test_the_interface_block_is_the_code(name: str, fields: list[str]) -> None:
    value = getattr(base, name)
    if dataclasses.is_dataclass(value):
        assert fields == [field.name for field in dataclasses.fields(value)]
    else:
        members = [n for n, _ in inspect.getmembers(value) if not n.startswith("_")]
        assert sorted(fields) == sorted(members)
