"""The real Claude Code CLI (and Codex CLI), run offline against plangate's stand-in model: what
`plangate demo` runs, and what the end-to-end tests drive.

- :mod:`plangate.harness.claude`: a throwaway HOME and project, ``claude -p`` with a timeout
  that kills the whole process group (:class:`~plangate.harness.claude.ClaudeEnv`);
- :mod:`plangate.harness.codex`: the same for Codex CLI, a fresh CODEX_HOME whose
  ``config.toml`` points at the stand-in, ``codex exec`` and the terminal UI's command
  (:class:`~plangate.harness.codex.CodexEnv`);
- :mod:`plangate.harness.standin`: the scripted stand-in on 127.0.0.1, for the Anthropic
  Messages API and for OpenAI's Responses API (:mod:`~plangate.harness.standin.responses`),
  one script answering both;
- :mod:`plangate.harness.autoplan`: plays the model through an ``/autoplan`` run;
- :mod:`plangate.harness.run_player`: plays the model through a ``plangate run``, telling
  its step, planner and fix sessions apart.

Nothing here runs in a hook; the modules load only when the demo (or a test) asks for them.
"""

# Reached from here until `plangate doctor --live` drives Codex sessions (issue 36, item 2)
# and imports it itself: every module of the wheel is reached from an entry point.
from plangate.harness import codex as codex
