"""A failure of a run's round: the one value both the runs engine (:mod:`plangate.runs`) and
the coding agents (:mod:`plangate.agents`, which get failures as feedback and as the
planner's reasons) use. It lives below both, so that neither package imports the other's
upward; :mod:`plangate.runs.model` re-exports it. Standard library only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

FailureKind = Literal["check", "gate", "escalation", "review"]


@dataclass(frozen=True, slots=True)
class Failure:
    """One failure of a round: a declared check, the evidence gate, an escalation, a review.

    ``summary`` is one line (``check `pytest -q` failed (exit 1)``, ``AC2 has no evidence``,
    ``step 2 needs `src/x.py`, which the plan does not name``). ``output_tail`` is the end
    of a check's output (the last 40 lines, at most 4 KiB), empty for the other kinds.
    """

    kind: FailureKind
    summary: str
    output_tail: str = ""


# DBOS records step results with pickle, which names a class by its module. Failures were
# recorded as plangate.runs.model.Failure before this module existed; keeping that name
# (plangate.runs.model re-exports the class) keeps the recorded bytes the same, so workers
# of the versions before and after this move read each other's turns.
Failure.__module__ = "plangate.runs.model"
