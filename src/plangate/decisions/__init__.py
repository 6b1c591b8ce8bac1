"""What every hook decides with, below the guard, the skill gates and the contracts.

- :mod:`.reasons`: the one code table (every code once, with its disposition, its text and
  its ``plangate explain`` section in ``troubleshooting.md`` beside it), :class:`.reasons.Decision`
  and the hook output a decision becomes;
- :mod:`.contract_codes` and :mod:`.defence_codes`: the workflow contracts' codes and the
  self-defence codes (protected paths, person-only commands, an untrusted journal);
- :mod:`.log`: the decision log, one line per decision.

Here: the four dispositions a code can have (and the verified allow's), defined once for
the three code tables.

Every code is a named constant defined once (``tests/decisions/test_codes.py``).

The journal reader's own codes live with the reader (:mod:`plangate.journal.codes`); the
table here gives each its disposition. Standard library and plangate's foundations only
(hook path).
"""

ALLOW = "allow"
UNVERIFIED = "unverified"
FALLBACK = "fallback"
CORRECTIVE = "corrective"
TRANSIENT = "transient"
DISPOSITIONS = (UNVERIFIED, FALLBACK, CORRECTIVE, TRANSIENT)
"""The dispositions a code can have (a verified allow is :data:`ALLOW` and has no code)."""
DENY_DISPOSITIONS = (FALLBACK, CORRECTIVE, TRANSIENT)
