"""The hook path imports only the standard library and plangate's own hook-path modules.

A hook process starts on every matching tool call; the heavy standard-library modules below
cost a two-core machine tens of milliseconds each, so they are kept off the hook path too.
"""

from __future__ import annotations

import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import plangate.contracts
import plangate.guard
import plangate.hook_io
import plangate.hooks
import plangate.journal
import plangate.protect
from plangate.journal.fast import OPTIONAL
from tests.conftest import SRC

HOOK_PATH_MODULES = sorted(
    [
        "plangate.files",
        "plangate.hook_registry",
        "plangate.jsonio",
        "plangate.locations",
        "plangate.state_root",
    ]
    + [
        f"{package.__name__}.{info.name}"
        for package in (
            plangate.hooks,
            plangate.hook_io,
            plangate.guard,
            plangate.journal,
            plangate.contracts,
            plangate.protect,
        )
        for info in pkgutil.iter_modules(package.__path__)
    ]
)
# Standard library, but too slow to import on every tool call.
HEAVY_STDLIB = {"re", "json", "typing", "dataclasses", "enum", "argparse", "subprocess", "asyncio"}


def _loaded_by(module: str) -> list[str]:
    # Site start-up modules are loaded before the probe; judge only what the module adds.
    script = (
        "import sys\n"
        "before = set(sys.modules)\n"
        f"__import__({module!r})\n"
        "added = sorted(set(sys.modules) - before)\n"
        "sys.stdout.write(repr(added))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    loaded: list[str] = eval(result.stdout)  # noqa: S307 - repr of a list of str from our probe
    return loaded


def assert_light(module: str) -> None:
    """``module`` loads only the standard library and plangate, and none of the slow modules."""
    loaded = _loaded_by(module)
    foreign = [
        name
        for name in loaded
        if name.split(".")[0] not in sys.stdlib_module_names and name.split(".")[0] != "plangate"
    ]
    assert foreign == [], f"{module} imports non-stdlib modules: {foreign}"
    heavy = sorted(set(loaded) & HEAVY_STDLIB)
    assert heavy == [], f"{module} imports slow standard-library modules: {heavy}"


@pytest.mark.parametrize("module", HOOK_PATH_MODULES)
def test_hook_path_imports_only_stdlib_and_plangate(module: str) -> None:
    assert_light(module)


def test_probe_sees_imports() -> None:
    # The probe itself must notice a heavy import, or the test above proves nothing.
    assert "re" in _loaded_by("re")
    assert "json" in _loaded_by("json")


def test_module_list_is_not_empty() -> None:
    assert "plangate.hook_io.runtime" in HOOK_PATH_MODULES
    assert {"plangate.guard.evaluate", "plangate.journal.index"} <= set(HOOK_PATH_MODULES)
    assert {
        "plangate.hooks.contract_pre_tool_use",
        "plangate.hooks.prompt_expansion",
        "plangate.contracts.evaluate",
    } <= set(HOOK_PATH_MODULES)
    assert json.loads("[]") == []


LAZY_READ = """\
import os, sys
before = set(sys.modules)
from plangate.journal.reader import read_journal
os.environ["PLANGATE_TUNING"] = "fast_min_bytes=" + sys.argv[2]
read_journal(sys.argv[1])
added = sorted(set(sys.modules) - before)
sys.stdout.write(repr(added))
"""


def _foreign(names: list[str]) -> set[str]:
    tops = {name.split(".")[0] for name in names}
    return {top for top in tops if top not in sys.stdlib_module_names and top != "plangate"}


def test_the_one_module_from_outside_is_the_fast_parser_loaded_lazily(tmp_path: Path) -> None:
    """Over the fast parser's threshold a read imports msgspec (the ``fast`` extra) and,
    besides what msgspec itself imports, nothing from outside the standard library; below it,
    nothing at all."""
    from plangate.journal.fast import MODULE

    journal = tmp_path / "journal.jsonl"
    journal.write_text('{"type": "user", "message": {"role": "user", "content": "hi"}}\n')

    def added(threshold: str) -> list[str]:
        result = subprocess.run(
            [sys.executable, "-c", LAZY_READ, str(journal), threshold],
            capture_output=True,
            text=True,
            check=True,
        )
        loaded: list[str] = eval(result.stdout)  # noqa: S307 - repr of a list of str from our probe
        return loaded

    alone = subprocess.run(
        [sys.executable, "-c", f"import sys; import {MODULE}; print(repr(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    )
    its_own = _foreign(eval(alone.stdout)) - {MODULE}  # noqa: S307 - our probe's repr
    assert _foreign(added(str(10**12))) == set()
    over = _foreign(added("0"))
    assert MODULE in over
    assert over - {MODULE} <= its_own, f"plangate imported more than {MODULE}: {over}"
    assert OPTIONAL in its_own and OPTIONAL not in over  # msgspec's optional helper is not


def test_the_fast_parser_reads_the_same_without_its_optional_helper(tmp_path: Path) -> None:
    """msgspec loaded without typing_extensions (as hooks load it) decodes a long line as
    the standard library does, with the keys the header table names."""
    journal = tmp_path / "journal.jsonl"
    line = {"type": "user", "uuid": "u1", "toolUseResult": {"stdout": "x" * 9000, "isAsync": True}}
    journal.write_text(json.dumps(line) + "\n")
    probe = (
        f"import json, sys; sys.path.insert(0, {SRC!r}); from plangate.journal import fast; "
        "decode = fast.fast_parser(10**9); "
        f"assert {OPTIONAL!r} not in sys.modules; "
        "print(json.dumps(decode(open(sys.argv[1], 'rb').read().rstrip())))"
    )
    result = subprocess.run(
        [sys.executable, "-S", "-c", probe, str(journal)],  # as hooks start
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(result.stdout) == {
        "type": "user",
        "uuid": "u1",
        "toolUseResult": {"isAsync": True},
    }


def test_a_read_below_the_fast_parser_threshold_does_not_import_its_module(
    tmp_path: Path,
) -> None:
    """The threshold lives in plangate.journal.codes: a hook's read of a small journal
    learns it without importing plangate.journal.fast; over it, the module is loaded."""
    from plangate import tuning

    journal = tmp_path / "journal.jsonl"
    journal.write_text('{"type": "user", "message": {"role": "user", "content": "hi"}}\n')
    probe = (
        "import sys; from plangate.journal.reader import read_journal; "
        "read_journal(sys.argv[1]); print('plangate.journal.fast' in sys.modules)"
    )

    def loaded(threshold: str) -> str:
        env = {**os.environ, tuning.ENV: tuning.joined(fast_min_bytes=int(threshold))}
        result = subprocess.run(
            [sys.executable, "-c", probe, str(journal)],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
        return result.stdout.strip()

    assert loaded(str(10**12)) == "False"
    assert loaded("0") == "True"
