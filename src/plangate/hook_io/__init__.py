"""What every hook speaks and runs on, below the guard and the gates. Standard library only.

- :mod:`.protocol`: Claude Code's hook payloads and the one JSON line a hook answers with;
- :mod:`.runtime`: the one hook runner, a policy per event (:func:`~.runtime.run`), the
  payload parse, deadlines, and the process's life and end (:func:`~.runtime.run_process`);
- :mod:`.payload_scan`: reading only the fields a decision needs from a payload too large
  to parse whole;
- :mod:`.trace`: the one line each hook call leaves for ``plangate audit``.

The entry modules that Claude Code starts, each a policy, live in :mod:`plangate.hooks`, on
top.
"""
