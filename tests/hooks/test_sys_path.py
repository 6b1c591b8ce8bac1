"""A hook process never imports from the working folder: ``-c`` puts it on ``sys.path`` ahead
of the standard library's compiled modules, and Claude Code runs hooks in the project."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from plangate import hook_registry

SHADOWS = ("__future__", "_json", "zlib")


def test_the_working_folder_is_off_the_path_of_a_hook_process(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    for name in SHADOWS:
        (project / f"{name}.py").write_text('raise SystemExit("imported from the project")\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PLANGATE"))}
    env["PLANGATE_STATE_ROOT"] = str(tmp_path / "state")
    argv = shlex.split(hook_registry.hook_command("plangate.hooks.pre_tool_use", sys.executable))
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {}}
    done = subprocess.run(
        argv, input=json.dumps(payload), capture_output=True, text=True, env=env, cwd=project
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "{}\n", "")
    # The same process goes on importing the standard library's own modules.
    probe = (
        "import sys; sys.path.insert(0, sys.argv.pop(1)); import plangate.hooks; "
        "import zlib; print('' in sys.path, zlib.__name__)"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-c", probe, hook_registry.package_root()],
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
        check=True,
    )
    assert done.stdout == "False zlib\n"
    # Without the package (the control): the folder is on the path and shadows zlib.
    done = subprocess.run(
        [sys.executable, "-S", "-c", "import zlib"], capture_output=True, text=True, cwd=project
    )
    assert "imported from the project" in done.stderr
