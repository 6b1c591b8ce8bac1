"""Claude Code hook entry points (their protocol and runtime: :mod:`plangate.hook_io`).
Standard library only.

A hook process starts on every matching tool call, so these modules import only the standard
library and plangate's own hook-path modules; ``tests/hooks/test_imports.py`` checks that.

In a process started as hooks are registered (``python -S -c '...' ROOT``,
:func:`plangate.hook_registry.hook_command`), importing ``plangate`` first takes the working
folder off ``sys.path`` (``plangate/__init__.py``).
"""
