"""The contract hook entries as Claude Code runs them: the registered command, a payload on
stdin. A call no contract covers loads neither the journal reader nor ``tomllib``; a typed
command the contract refuses exits 2 with the reason on stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from plangate.hook_registry import hook_command
from tests.contracts.conftest import FEATURE, Project, project, through_requirements

__all__ = ["project"]  # the fixture, shared with tests/contracts

PROBE = (
    "import sys, json; sys.path.insert(0, sys.argv[1]); "
    "from plangate.hooks.contract_pre_tool_use import decide; "
    "out = decide(json.loads(sys.stdin.read())); "
    "print(json.dumps([out, sorted(m for m in sys.modules if m in "
    "('plangate.journal.reader', 'tomllib', 'plangate.contracts.evaluate'))]))"
)


def probe(payload: dict[str, object], env: dict[str, str]) -> tuple[object, list[str]]:
    from tests.conftest import SRC

    done = subprocess.run(
        [sys.executable, "-c", PROBE, SRC],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=True,
    )
    out, loaded = json.loads(done.stdout)
    return out, loaded


def test_calls_no_contract_covers_load_nothing_heavy(project: Project, tmp_path: Path) -> None:
    project.journal.prompt("go")
    env = project.env()
    bash = project.payload("Bash", {"command": "ls -la | grep x"})
    assert probe(bash, env) == ({}, [])
    bare = tmp_path / "bare"
    bare.mkdir()
    write = project.payload("Write", {"file_path": str(bare / "a.py"), "content": "x"})
    write["cwd"] = str(bare)
    probe(write, env)  # the first call fills the contracts cache (parses the library)
    assert probe(write, env) == ({}, [])


def test_a_refused_typed_command_exits_2_with_the_reason(project: Project) -> None:
    through_requirements(project)
    command = hook_command("plangate.hooks.prompt_expansion")
    payload = json.dumps(project.expansion("kiro-spec-design", FEATURE))
    env = {**os.environ, **project.env()}
    done = subprocess.run(
        ["/bin/sh", "-c", command], input=payload, capture_output=True, text=True, env=env
    )
    assert done.returncode == 2
    assert "contract_approval" in done.stderr and "phase requirements" in done.stderr
    project.person("approve requirements")
    payload = json.dumps(project.expansion("kiro-spec-design", FEATURE))
    done = subprocess.run(
        ["/bin/sh", "-c", command], input=payload, capture_output=True, text=True, env=env
    )
    assert (done.returncode, done.stdout.strip()) == (0, "{}")
