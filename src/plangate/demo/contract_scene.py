"""The demo's workflow-contract scene: a phase started before the one it needs is refused.

The session gets the contract hooks the way a ``claude -p`` user turns them on: the settings
JSON that ``plangate settings --contracts`` prints, passed with ``--settings``. The project
holds a two-phase contract (draft, then publish; the draft must leave ``notes/draft.md``
with an ``Outline`` heading). The model starts publishing first, and the contract's
PreToolUse hook refuses it with ``contract_phase_order``; it drafts, writes the note, and the
same start is allowed (:func:`plangate.harness.contract_proof.contract_proof`).
"""

from __future__ import annotations

from pathlib import Path

from plangate.decisions.contract_codes import CONTRACT_PHASE_ORDER
from plangate.demo.say import Say


def contract_scene(root: Path, timeout: float, say: Say) -> bool:
    """Runs the session; whether the early start was refused and the proper one allowed."""
    from plangate.harness.autoplan import AutoplanProject, Player
    from plangate.harness.claude import ClaudeEnv
    from plangate.harness.contract_proof import CONTRACT_FILE, contract_proof
    from plangate.harness.proofs import Session, settings_for_gates
    from plangate.harness.standin import StandIn

    say("\nplangate demo: a workflow contract, a phase started before the one it needs")
    player = Player([])
    with StandIn(player) as model:
        root.mkdir(parents=True, exist_ok=True)
        project = AutoplanProject(ClaudeEnv.create(root, model))
        project.setup()
        settings = settings_for_gates(project, "--contracts")
        proof = contract_proof(Session(project, player, settings=settings), timeout)
        told = model.saw(CONTRACT_PHASE_ORDER)
    say(f"  the contract: {CONTRACT_FILE} (draft, then publish; draft leaves notes/draft.md)")
    for line in proof.lines:
        say(f"  {line}")
    if not proof.ok or not told:
        say(f"  {proof.detail} (the model was told why: {told})")
        return False
    say("  the model was told which phase must come first and what it must leave behind")
    say("  (`plangate explain contract_phase_order`)")
    return True
