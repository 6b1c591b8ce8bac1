"""Test support, not shipped in the wheel: what only tests (and benchmarks) use.

- :mod:`testkit.journals`: the one Claude Code 2.1.332 journal writer (:class:`Journal`);
- :mod:`testkit.session`: a simulated session that writes its journal, runs its tools for real
  and runs the real hooks;
- :mod:`testkit.postgres`: a throwaway PostgreSQL server.

Importable from the repository root (pytest's ``pythonpath``; ``python -m benchmarks…``).
"""
