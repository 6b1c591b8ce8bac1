"""Claude Code hook entry points (their protocol and runtime: :mod:`plangate.hook_io`).
Standard library only.

A hook process starts on every matching tool call, so these modules import only the standard
library and plangate's own hook-path modules; ``tests/hooks/test_imports.py`` checks that.

In a process started as hooks are registered (``python -S -c '...' ROOT``,
:func:`plangate.hook_registry.hook_command`), importing this package first takes the
working folder off ``sys.path`` (``-c`` puts it there as ``''``, ahead of the standard
library's compiled modules: a ``zlib.py`` in the project would otherwise run inside the
guard).
"""

import sys

if sys.flags.no_site and sys.argv[:1] == ["-c"]:
    while "" in sys.path:
        sys.path.remove("")
