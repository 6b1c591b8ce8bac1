"""``plangate demo``: what plangate does, shown in real Claude Code sessions, offline.

Each scene runs the real Claude Code CLI against plangate's stand-in model in a folder of its
own and says, line by line, what happened:

- :mod:`plangate.demo.journal_scene`: a session's journal, judged as a hook judges it;
- :mod:`plangate.demo.guard_scene`: the phase publication guard denying /autoplan's Phase 2
  entered before Phase 1's report is published;
- :mod:`plangate.demo.gate_scene`: a skill gate holding /plan-ceo-review's stop until its top
  risks are written;
- :mod:`plangate.demo.contract_scene`: a workflow contract refusing a phase started before
  the one it needs (``contract_phase_order``), then allowing it;
- :mod:`plangate.demo.run_scene`: a plan-governed run whose check fails, re-planned to
  version 2, which passes (and the run viewer on it with ``--serve``).
"""
