"""Skill gates: Stop and SubagentStop hooks that hold /plan-ceo-review and /autoplan to
their contract (``docs/skill-gates.md``).

A gate is off unless its switch is on, never changes a skill's text, and leaves a marker for
every decision it makes. The entry points are :mod:`plangate.hooks.stop` and
:mod:`plangate.hooks.subagent_stop`; :mod:`plangate.gates.stop_hook` decides, and the modules
below it each own one rule:

    gates.gate        the two gates: switch, hook name, skill
    gates.errors      the GATE_* error codes
    gates.markers     ``PLANGATE_GATE <hook> <event> session=<id> …`` lines
    gates.timing      the deadline and journal timestamps
    gates.session_record       the session record and its lock
    gates.trace       the trace logs
    gates.transcript  reading the session (or subagent) transcript until it is settled
                      (on the engine's read-and-settle loop, plangate.engine.settle)
    gates.skill_loads        loads of a skill, runs, and which stops are final
    gates.findings    a Markdown file that ranks the top risks
    gates.ceo_review  the /plan-ceo-review gate
    gates.autoplan    the /autoplan gate

Hook path: every module imported while the gates are off is standard library only and cheap
(no ``re``, ``json``, ``typing``, ``dataclasses``, ``enum``, ``subprocess``);
``tests/gates/test_imports.py`` checks it.
"""
