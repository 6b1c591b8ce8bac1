"""The demo's skill-gate scene: /plan-ceo-review cannot stop until its top risks are written.

The session gets the gate the way a ``claude -p`` user turns it on: the settings JSON that
``plangate settings --ceo-review`` prints, passed with ``--settings``. The model writes a
review without risks and tries to stop; the Stop hook holds it and says why. The model adds
ranked top risks, and the next stop is released.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from plangate.demo.process import plangate
from plangate.demo.say import Say

REVIEW = "# Plan\n\nA review without risks.\n"
RISKS = """cat >> {plan} <<'EOF'

## Top risks

1. Payment retries can double-charge when the provider times out.
2. The orders schema change has no way back.
EOF"""
WRITTEN = "The review is written."
RANKED = "The top risks are ranked in plan.md."


def gate_scene(root: Path, timeout: float, say: Say) -> bool:
    """Runs the session; whether the first stop was held and the second released."""
    from plangate.harness.autoplan import AutoplanProject, Player
    from plangate.harness.claude import ClaudeEnv
    from plangate.harness.standin import StandIn, tool_use

    say("\nplangate demo: a skill gate, /plan-ceo-review held until its top risks are written")
    player = Player([])
    with StandIn(player) as model:
        root.mkdir(parents=True, exist_ok=True)
        project = AutoplanProject(ClaudeEnv.create(root, model))
        project.setup()
        settings = _gate_settings(project.environ())
        plan = project.plan
        player.steps = [
            tool_use("Write", file_path=str(plan), content=REVIEW),
            WRITTEN,  # the first stop: no ranked risks yet
            tool_use("Bash", command=RISKS.format(plan=plan), description="Add the top risks"),
            RANKED,
        ]
        result = project.run("/plan-ceo-review plan.md", player, settings=settings, timeout=timeout)
        told = model.saw("PLANGATE_GATE ceo-review-gate blocked")
    if not result.ok or result.session_id is None:
        say("  Claude Code did not finish cleanly:")
        say("    " + result.describe().replace("\n", "\n    "))
        return False
    counts = _counts(project.environ(), result.session_id)
    blocked, released = counts.get("blocked", 0), counts.get("released", 0)
    say(f"  stop 1 after {WRITTEN!r:40} {'held' if blocked else 'let through'}")
    say(f"  stop 2 after {RANKED!r:40} {'released' if released else 'not released'}")
    if (blocked, released) != (1, 1) or not told or result.result_text != RANKED:
        say(f"  unexpected gate counts: {counts} (the model was told why: {told})")
        return False
    say("  the model was told which file lacks its ranked top risks; `plangate report` has the")
    say(f"  count: {blocked} blocked, {released} released")
    return True


def _gate_settings(env: dict[str, str]) -> dict[str, Any]:
    """What ``plangate settings --ceo-review`` prints, as a user pipes it to ``--settings``."""
    done = plangate("settings", "--ceo-review", env=env)
    if done.returncode != 0:
        raise RuntimeError(f"plangate settings failed: {done.stderr.strip()}")
    value: dict[str, Any] = json.loads(done.stdout)
    return value


def _counts(env: dict[str, str], session: str) -> dict[str, int]:
    """The session's gate counts as ``plangate report --session ID --json`` gives them."""
    done = plangate("report", "--session", session, "--json", env=env)
    try:
        (summary,) = json.loads(done.stdout)["sessions"]
        counts: dict[str, int] = summary["counts"]
    except (ValueError, KeyError, TypeError):
        return {}
    return counts
