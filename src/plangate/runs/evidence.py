"""The evidence gate: every acceptance criterion needs evidence that can be verified.

A criterion has evidence when at least one of these holds:

* a **passing check names it**: the check's name or command contains the criterion's id as
  a word (``- AC1: `pytest tests/test_limits.py` ``, ``pytest -k AC1``);
* a **step serving it changed a file it names**: an executed step lists the criterion under
  ``Serves:`` and one of the step's ``Files:`` is among the files the run changed;
* the agent **cited an artifact that exists**: a path, relative to the sandbox and inside
  it, given for the criterion in a step's outcome (``StepOutcome.evidence``).

Pure apart from the ``exists`` callback, which the caller points at the sandbox.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from plangate.plan.model import Criterion, Plan, Step
from plangate.runs.model import CheckRecord, Failure
from plangate.runs.validator import normalize_path


def _names(text: str, criterion_id: str) -> bool:
    pattern = rf"(?<![A-Za-z0-9_-]){re.escape(criterion_id)}(?![A-Za-z0-9_-])"
    return re.search(pattern, text) is not None


def _inside(path: str) -> bool:
    normal = normalize_path(path)
    return bool(normal) and not normal.startswith(("../", "/")) and normal != ".."


def evidence_for(
    criterion: Criterion,
    executed: Sequence[Step],
    changed_files: Iterable[str],
    checks: Sequence[CheckRecord],
    cited: Mapping[str, Sequence[str]],
    exists: Callable[[str], bool],
) -> str | None:
    """A one-line description of the evidence for ``criterion``, or ``None`` if it has none."""
    for record in checks:
        if record.passed and (
            _names(record.command, criterion.id)
            or (record.name is not None and _names(record.name, criterion.id))
        ):
            return f"check {record.label} passed"
    changed = {normalize_path(path) for path in changed_files}
    for step in executed:
        if criterion.id in step.serves:
            touched = sorted(normalize_path(path) for path in step.files)
            hit = [path for path in touched if path in changed]
            if hit:
                return f"step {step.number} changed `{hit[0]}`"
    for path in cited.get(criterion.id, ()):
        if _inside(path) and exists(normalize_path(path)):
            return f"artifact `{normalize_path(path)}`"
    return None


def gate(
    plan: Plan | None,
    executed: Sequence[Step],
    changed_files: Iterable[str],
    checks: Sequence[CheckRecord],
    cited: Mapping[str, Sequence[str]],
    exists: Callable[[str], bool],
) -> list[Failure]:
    """The gate's failing items, one per criterion without evidence (``[]``: it passes).

    A run without a plan has no acceptance criteria, so its gate always passes.
    """
    if plan is None:
        return []
    changed = list(changed_files)
    failures = []
    for criterion in plan.criteria:
        if evidence_for(criterion, executed, changed, checks, cited, exists) is None:
            failures.append(
                Failure(
                    "gate",
                    f"{criterion.id} has no evidence: no passing check names it, no step "
                    "serving it changed a file it names, and no cited artifact exists",
                )
            )
    return failures
