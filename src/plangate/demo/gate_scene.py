"""The demo's skill-gate scene: /plan-ceo-review cannot stop until its top risks are written.

The session gets the gate the way a ``claude -p`` user turns it on: the settings JSON that
``plangate settings --ceo-review`` prints, passed with ``--settings``. The model writes a
review without risks and tries to stop; the Stop hook holds it and says why. The model adds
ranked top risks, and the next stop is released
(:func:`plangate.harness.proofs.ceo_gate_proof`).
"""

from __future__ import annotations

from pathlib import Path

from plangate.demo.say import Say


def gate_scene(root: Path, timeout: float, say: Say) -> bool:
    """Runs the session; whether the first stop was held and the second released."""
    from plangate.harness.autoplan import AutoplanProject, Player
    from plangate.harness.claude import ClaudeEnv
    from plangate.harness.proofs import Session, ceo_gate_proof, settings_for_gates
    from plangate.harness.standin import StandIn

    say("\nplangate demo: a skill gate, /plan-ceo-review held until its top risks are written")
    player = Player([])
    with StandIn(player) as model:
        root.mkdir(parents=True, exist_ok=True)
        project = AutoplanProject(ClaudeEnv.create(root, model))
        project.setup()
        settings = settings_for_gates(project, "--ceo-review")
        proof = ceo_gate_proof(Session(project, player, settings=settings), timeout)
        told = model.saw("PLANGATE_GATE ceo-review-gate blocked")
    for line in proof.lines:
        say(f"  {line}")
    if not proof.ok or not told:
        say(f"  {proof.detail} (the model was told why: {told})")
        return False
    say("  the model was told which file lacks its ranked top risks; the session's gate record")
    say("  counts the block and the release (`plangate report`)")
    return True
