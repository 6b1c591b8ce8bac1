"""The demo's governed-run scene: a check fails, a fresh planner writes version 2, it passes.

``plangate run`` carries a two-line plan in a git repository of the scene's own, with the
real Claude Code CLI as its agent (one fresh ``claude -p`` session per step and per
planning) and the stand-in playing the model. Step 1 sets the value wrong, the plan's check
fails, the planner (a new session that sees only the typed re-planning request) adds a step,
and version 2 passes. Every version is kept; ``plangate demo --serve`` shows them in the
run viewer.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plangate.demo.process import plangate
from plangate.demo.say import Say

CHECK = 'python3 -B -c "import app; assert app.SIZE == 2, app.SIZE"'
PLAN_V1 = f"""# Plan: Size the cache

## Goal

Make `app.SIZE` equal 2.

## Implementation plan

### Step 1: Set SIZE
Files: `app.py`
Serves: AC1

Change `SIZE` in `app.py`.

## Checks

- AC1: `{CHECK}` (timeout 60s)

## Acceptance criteria

- AC1: `app.SIZE` is 2.

## Review record
"""
STEP_2 = """### Step 2: Fix SIZE
Files: `app.py`
Serves: AC1

Set `SIZE = 2` in `app.py`; the check says what it is now.

"""
PLAN_V2 = PLAN_V1.replace("## Checks", STEP_2 + "## Checks")


@dataclass
class RunScene:
    """What the scene leaves for the viewer: the run and the environment it lives in."""

    ok: bool
    run_id: str = ""
    environ: dict[str, str] | None = None


def run_scene(root: Path, timeout: float, say: Say) -> RunScene:
    """Runs ``plangate run`` on the stand-in; whether it re-planned once and then passed."""
    from plangate.harness.claude import ClaudeEnv
    from plangate.harness.run_player import RunPlayer
    from plangate.harness.standin import StandIn, text, tool_use

    def edit(old: str, new: str) -> list[Any]:
        return [tool_use("Edit", file_path="app.py", old_string=old, new_string=new)]

    say("\nplangate demo: a plan-governed run, re-planned when its check fails")
    repo = root / "repo"
    _new_repo(repo)
    player = RunPlayer(
        {
            "v1 s1": [[edit("SIZE = 1", "SIZE = 3"), [text("Set SIZE to 3.")]]],
            "plan v2": [[[text(f"Version 2 adds a step.\n\n```plan\n{PLAN_V2}```\n")]]],
            "v2 s2": [[edit("SIZE = 3", "SIZE = 2"), [text("Set SIZE to 2.")]]],
        }
    )
    plan = root / "plan.md"
    plan.write_text(PLAN_V1, encoding="utf-8")
    with StandIn(player) as model:
        cc = ClaudeEnv.create(root / "cc", model, project_dir=repo)
        environ = cc.environ(
            {"PLANGATE_STATE_ROOT": str(root / "state"), "PLANGATE_CLAUDE_BIN": str(cc.binary)}
        )
        environ.pop("PLANGATE_DATABASE_URL", None)
        done = plangate(
            "run", str(plan), "--repo", str(repo), env=environ, cwd=root, timeout=timeout
        )
    lines = done.stdout.splitlines()
    run_id = lines[0].split()[1].rstrip(":") if lines and lines[0].startswith("Run ") else ""
    for line in lines:
        if line.startswith(("Plan changed", "Check", "Run ")) or "failed" in line:
            # The run's own "View version N: plangate show …" names the demo's state root,
            # which the person's shell does not: the demo prints working commands at the end.
            say(f"  {line.split(' View version ', 1)[0][:96]}")
    if done.returncode != 0 or not run_id:
        say(f"  plangate run exited {done.returncode}: {done.stderr.strip()[-500:]}")
        return RunScene(False)
    shown = json.loads(plangate("show", run_id, "--json", env=environ).stdout or "{}")
    versions = [(v["number"], v["trigger"]) for v in shown.get("versions", [])]
    checks = [c["passed"] for c in shown.get("checks", [])]
    say(f"  versions kept: {', '.join(f'v{n} ({trigger})' for n, trigger in versions)}")
    say("  `plangate demo --serve` shows every version, the checks and the diffs in the viewer")
    if versions != [(1, "initial"), (2, "check")] or checks != [False, True]:
        say(f"  unexpected run: versions {versions}, checks passed {checks}")
        return RunScene(False)
    return RunScene(True, run_id, environ)


def _new_repo(repo: Path) -> None:
    from plangate.processes import run_bounded

    repo.mkdir(parents=True)
    (repo / "app.py").write_text("SIZE = 1\n", encoding="utf-8")
    identity = ["-c", "user.name=plangate demo", "-c", "user.email=demo@plangate.invalid"]
    for words in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "start"]):
        done = run_bounded(["git", *identity, *words], cwd=str(repo), timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f"git {words[0]} failed in {repo}: {done.stderr.strip()}")


def serve(environ: dict[str, str], run_id: str, say: Say) -> int:
    """Keeps the run viewer up on a free port until Ctrl+C, after printing the run's page."""
    # A server that lives until Ctrl+C, not a bounded command: the one Popen of the demo.
    viewer = subprocess.Popen(
        [sys.executable, "-m", "plangate", "serve", "--port", "0"],
        env={**environ, "PYTHONUNBUFFERED": "1"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert viewer.stdout is not None
    first = viewer.stdout.readline()
    if not first.startswith("Run viewer at "):
        viewer.kill()
        say(f"  the run viewer did not start: {first.strip()}")
        return 1
    address = first.split()[3]
    say(f"\nThe run viewer shows the run at {address}/{run_id} (Ctrl+C stops it)")
    try:
        viewer.wait()
    except KeyboardInterrupt:
        viewer.terminate()
        viewer.wait(timeout=30)
    return 0 if viewer.returncode in (0, -2, -15) else 1
