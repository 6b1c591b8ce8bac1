"""Benchmarks that print tables; run them as modules from the repository root
(``python -m benchmarks.journal_decision``, ``python -m benchmarks.guard_decision``)."""
