"""plangate keeps AI coding agents on their plan.

Three capabilities share this package: the phase publication guard (a Claude Code
PreToolUse hook), skill gates (Stop and SubagentStop hooks) and plan-governed runs.
Everything stands on :mod:`plangate.journal`, an exact, bounded reader of Claude Code
session journals.
"""

__version__ = "0.1.0"

import sys as _sys

if _sys.flags.no_site and _sys.argv[:1] == ["-c"]:
    # A process started as hooks are registered (`python -S -c '...' ROOT`,
    # plangate.hook_registry.hook_command): the working folder goes off `sys.path`. `-c`
    # puts it there as '', ahead of the standard library's compiled modules, and a `zlib.py`
    # in the project would otherwise run inside the guard.
    while "" in _sys.path:
        _sys.path.remove("")
