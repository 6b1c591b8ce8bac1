"""What every hook decides with, below the guard, the skill gates and the contracts.

- :mod:`.reasons`: the one code table (every code once, with its disposition, its text and
  its ``plangate explain`` section in ``troubleshooting.md`` beside it), :class:`.reasons.Decision`
  and the hook output a decision becomes;
- :mod:`.contract_codes` and :mod:`.defence_codes`: the workflow contracts' codes and the
  self-defence codes (protected paths, person-only commands, an untrusted journal);
- :mod:`.log`: the decision log, one line per decision.

The journal reader's own codes live with the reader (:mod:`plangate.journal.codes`); the
table here gives each its disposition. Standard library and plangate's foundations only
(hook path).
"""
