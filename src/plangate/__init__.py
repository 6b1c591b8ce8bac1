"""plangate keeps AI coding agents on their plan.

Three capabilities share this package: the phase publication guard (a Claude Code
PreToolUse hook), skill gates (Stop and SubagentStop hooks) and plan-governed runs.
Everything stands on :mod:`plangate.journal`, an exact, bounded reader of Claude Code
session journals.
"""

__version__ = "0.1.0"
