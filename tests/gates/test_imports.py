"""The gates' modules are on the hook path: standard library only, nothing slow at import.

``tests/hooks/test_imports.py`` checks the entry modules (``plangate.hooks.stop`` and
``plangate.hooks.subagent_stop``); this checks every module of ``plangate.gates`` too, since
the engine loads them while a gate is on.
"""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import pytest

import plangate.gates
from tests.hooks.test_imports import assert_light

GATE_MODULES = sorted(
    f"plangate.gates.{info.name}" for info in pkgutil.iter_modules(plangate.gates.__path__)
)


@pytest.mark.parametrize("module", GATE_MODULES)
def test_gate_modules_import_only_light_stdlib_and_plangate(module: str) -> None:
    assert_light(module)


def test_the_off_path_loads_no_gate_logic() -> None:
    script = (
        "import io, sys\n"
        "from plangate.hooks.stop import main\n"
        "sys.stdin = io.TextIOWrapper(io.BytesIO(b'{}'))\n"
        "main()\n"
        "sys.stderr.write(repr(sorted(m for m in sys.modules if m.startswith('plangate'))))\n"
    )
    env = {"PATH": "/usr/bin:/bin", "PLANGATE_STATE_ROOT": "/nonexistent/state"}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env
    )
    assert result.stdout == "{}\n"
    loaded = eval(result.stderr)  # noqa: S307
    assert "plangate.gates.stop_hook" not in loaded and "plangate.journal" not in loaded
