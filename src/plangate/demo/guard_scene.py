"""The demo's guard scene: /autoplan with ``plangate setup`` in a fresh HOME, in a real session.

The model enters Phase 2 before Phase 1's report is published, and the guard denies it; once
the report is published, the same entry is allowed (:func:`plangate.harness.proofs.guard_proof`).
"""

from __future__ import annotations

from pathlib import Path

from plangate.demo.say import Say


def guard_scene(root: Path, timeout: float, say: Say) -> bool:
    """Runs the session; whether the guard denied the early entry and allowed the proper one."""
    from plangate.harness.autoplan import AutoplanProject, Player
    from plangate.harness.claude import ClaudeEnv
    from plangate.harness.proofs import Session, guard_proof
    from plangate.harness.standin import StandIn

    say("\nplangate demo: the phase publication guard, with `plangate setup` in a fresh HOME")
    player = Player([])
    with StandIn(player) as model:
        root.mkdir(parents=True, exist_ok=True)
        project = AutoplanProject(ClaudeEnv.create(root, model))
        project.setup()
        proof = guard_proof(Session(project, player), timeout)
    for line in proof.lines:
        say(f"  {line}")
    if not proof.ok:
        say(f"  {proof.detail}")
        return False
    say("  the model was told: publish the Phase 1 report in a message whose only tool call is")
    say(
        "  `true autoplan-published ceo`, then enter the next phase (`plangate explain "
        "publication_missing`)"
    )
    return True
