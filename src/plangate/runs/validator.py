"""Whether a new plan version may replace the one that did not hold. Pure.

A version is accepted only if it keeps every executed step unchanged (same number, title,
files, serves and text: ``Step.__eq__``, which holds exactly when the steps'
:func:`~plangate.plan.render_step` texts are equal, and needs no rendering), puts
no new step among them, adds at least one step after them, still names every file the run
has changed, and is a plan :func:`~plangate.plan.validate_plan` has nothing against. A
refused version counts as no new plan.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from plangate.plan.model import Plan
from plangate.plan.validate import validate_plan

RefusalCode = Literal[
    "dropped_step",
    "rewritten_step",
    "inserted_step",
    "no_added_step",
    "dropped_file",
    "unchanged",
    "invalid_plan",
    "changed_sandbox",
]


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a version is refused: a stable ``code`` and one line for a person."""

    code: RefusalCode
    message: str

    def __str__(self) -> str:
        return self.message


def normalize_path(path: str) -> str:
    """A project-relative path compared the way git reports it (``./a//b`` → ``a/b``)."""
    cleaned = posixpath.normpath(path.replace("\\", "/"))
    return "" if cleaned == "." else cleaned


def named_files(plan: Plan) -> set[str]:
    """Every path some step of ``plan`` names, normalised."""
    return {normalize_path(path) for step in plan.steps for path in step.files}


def validate_version(
    previous: Plan,
    executed: Sequence[int],
    changed_files: Iterable[str],
    proposed: Plan,
) -> Refusal | None:
    """``None`` if ``proposed`` may replace ``previous``, else the first reason it may not.

    ``executed`` are the numbers of the steps of ``previous`` already carried out, in order
    (a prefix of its steps); ``changed_files`` the paths the run has changed so far.
    """
    done = [number for number in executed]
    last = max(done) if done else None
    for number in done:
        old = previous.step(number)
        new = proposed.step(number)
        if new is None:
            return Refusal(
                "dropped_step",
                f"it drops step {number}, which was already carried out",
            )
        if old is None or old != new:
            return Refusal(
                "rewritten_step",
                f"it rewrites step {number}, which was already carried out",
            )
    if last is not None:
        executed_set = set(done)
        for step in proposed.steps:
            if step.number <= last and step.number not in executed_set:
                return Refusal(
                    "inserted_step",
                    f"it adds step {step.number} before step {last}, which was already "
                    "carried out; new steps go after the steps carried out",
                )
    added = [step for step in proposed.steps if last is None or step.number > last]
    if not added:
        where = f"after step {last}" if last is not None else "at all"
        return Refusal("no_added_step", f"it adds no step {where}")
    names = named_files(proposed)
    for path in sorted({normalize_path(path) for path in changed_files}):
        if path and path not in names:
            return Refusal(
                "dropped_file",
                f"it drops `{path}`, a file the run has already changed",
            )
    if proposed == previous:
        return Refusal("unchanged", "it is the same as the previous version")
    problems = validate_plan(proposed)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return Refusal("invalid_plan", f"it is not a plan that can run: {problems[0]}{more}")
    return None
