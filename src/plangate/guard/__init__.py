"""The phase publication guard: a PreToolUse hook for ``/autoplan`` phase boundaries.

Before a phase-entry Read or a reviewer Agent dispatch runs, the guard reads the session's own
Claude Code journal and checks that the previous phase's report was published.
:mod:`plangate.decisions.reasons` holds every code it can give (code → disposition → text) and
builds the hook outputs; :mod:`plangate.decisions.log` appends the content-free decision log.

The guard runs on the hook path: this package and its modules import only the standard
library and plangate's own hook-path modules (``tests/hooks/test_imports.py`` checks that), so
this ``__init__`` imports nothing.
"""
