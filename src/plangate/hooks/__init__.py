"""Claude Code hook entry points and their shared runtime. Standard library only.

A hook process starts on every matching tool call, so these modules import only the standard
library and plangate's own hook-path modules; ``tests/hooks/test_imports.py`` checks that.
"""
