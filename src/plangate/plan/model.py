"""The values of a plan: :class:`Plan`, :class:`Step`, :class:`Check`, :class:`Criterion`.

Plain frozen values. Two plans are equal when their content is equal; where a parsed plan's
sections were in its source text (:attr:`Plan.sections`, :attr:`Plan.implementation_text`)
does not take part in equality or hashing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


@dataclass(frozen=True, slots=True)
class Step:
    """One implementation step. Its identity is its ``number``.

    Re-planning compares steps with ``==``: the same number, title, files, criteria served
    and body.
    """

    number: int
    title: str
    files: tuple[str, ...] = ()
    serves: tuple[str, ...] = ()  # ids of the acceptance criteria the step serves
    body: str = ""

    @property
    def id(self) -> str:
        """``"step-<number>"``, for places that want a string key."""
        return f"step-{self.number}"


@dataclass(frozen=True, slots=True)
class Check:
    """A declared check: a shell command, with an optional name and timeout."""

    command: str
    timeout_seconds: int | None = None
    name: str | None = None


@dataclass(frozen=True, slots=True)
class Criterion:
    """An acceptance criterion."""

    id: str
    text: str


def _no_spans() -> Mapping[str, tuple[int, int]]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Plan:
    """A plan: the goal, the steps, the checks, the acceptance criteria, the review record.

    ``sections`` and ``implementation_text`` are set by :func:`~plangate.plan.parse_plan`:
    section name → ``(start, end)`` offsets into the parsed text, and the exact text of the
    ``## Implementation plan`` section (heading included). A plan built in code has none.
    """

    title: str
    goal: str = ""
    steps: tuple[Step, ...] = ()
    checks: tuple[Check, ...] = ()
    criteria: tuple[Criterion, ...] = ()
    review_record: str = ""
    sections: Mapping[str, tuple[int, int]] = field(
        default_factory=_no_spans, compare=False, repr=False
    )
    implementation_text: str = field(default="", compare=False, repr=False)

    def step(self, number: int) -> Step | None:
        """The first step with this number, or ``None``."""
        return next((step for step in self.steps if step.number == number), None)

    def criterion(self, criterion_id: str) -> Criterion | None:
        """The first acceptance criterion with this id, or ``None``."""
        return next((c for c in self.criteria if c.id == criterion_id), None)
