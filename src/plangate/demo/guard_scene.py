"""The demo's guard scene: /autoplan with ``plangate setup`` in a fresh HOME, in a real session.

The model enters Phase 2 before Phase 1's report is published, and the guard denies it; once
the report is published, the same entry is allowed.
"""

from __future__ import annotations

from pathlib import Path

from plangate.demo.say import Say


def guard_scene(root: Path, timeout: float, say: Say) -> bool:
    """/autoplan with plangate set up: entering Phase 2 before Phase 1's report is published
    is denied; after publishing, it is allowed."""
    from plangate.harness.autoplan import AutoplanProject, Player, decisions
    from plangate.harness.claude import ClaudeEnv
    from plangate.harness.standin import StandIn

    say("\nplangate demo: the phase publication guard, with `plangate setup` in a fresh HOME")
    player = Player([])
    with StandIn(player) as model:
        root.mkdir(parents=True, exist_ok=True)
        project = AutoplanProject(ClaudeEnv.create(root, model))
        project.setup()
        player.steps = [
            project.init(),
            project.read_driver("ceo"),
            project.checkpoint("ceo"),
            project.dispatch("ceo"),
            project.prepare_close("ceo"),
            project.read_close("ceo"),
            project.read_driver("design"),  # too early: Phase 1's report is not published
            project.publish("ceo"),
            project.read_driver("design"),
            "Phase 2 (Design) started.",
        ]
        result = project.run("/autoplan plan.md", player, timeout=timeout)
    if not result.ok:
        say("  Claude Code did not finish cleanly:")
        say("    " + result.describe().replace("\n", "\n    "))
        return False
    logged = decisions(project.state_root)
    names = ["enter CEO", "CEO reviewer", "enter Design (too early)", "enter Design"]
    for name, entry in zip(names, logged, strict=False):
        verdict = entry["decision"] + (f" {entry['code']}" if entry["code"] else "")
        say(f"  {name:26} {verdict} (read on the {entry['path']} path)")
    expected = [("allow", None), ("allow", None), ("deny", "publication_missing"), ("allow", None)]
    got = [(entry["decision"], entry["code"]) for entry in logged]
    if got != expected:
        say(f"  unexpected guard decisions: {got}")
        return False
    say("  the model was told: publish the Phase 1 report in a message whose only tool call is")
    say(
        "  `true autoplan-published ceo`, then enter the next phase (`plangate explain "
        "publication_missing`)"
    )
    return True
