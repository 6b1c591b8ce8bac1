"""Plan-governed runs: plan, change, check, re-plan (``docs/runs-design.md``).

Importing this package loads nothing heavy; the workflow and the store (DBOS, SQLAlchemy)
are imported by :mod:`plangate.runs.engine` when a command needs them.
"""
