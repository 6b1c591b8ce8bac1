"""What one plan changed relative to another: steps kept, added, removed and edited (compared
by number, through :func:`plangate.plan.render_step`), and the other sections that differ.

Used to say what an edit after approval changed, and what each version of a run changed
relative to the approved one::

    delta = compare_plans(approved, current)
    delta.describe()   # "step 2 edited; step 3 added; the checks changed"
"""

from __future__ import annotations

from dataclasses import dataclass

from plangate.plan import Plan, render_step

_SECTIONS = (
    ("title", "the title"),
    ("goal", "the goal"),
    ("checks", "the checks"),
    ("criteria", "the acceptance criteria"),
    ("review_record", "the review record"),
)


@dataclass(frozen=True, slots=True)
class PlanDelta:
    """Step numbers kept unchanged, added, removed and edited; the sections that changed."""

    kept: tuple[int, ...] = ()
    added: tuple[int, ...] = ()
    removed: tuple[int, ...] = ()
    edited: tuple[int, ...] = ()
    sections: tuple[str, ...] = ()  # "the goal", "the checks", …

    @property
    def unchanged(self) -> bool:
        return not (self.added or self.removed or self.edited or self.sections)

    def describe(self) -> str:
        """One line: ``step 2 edited; step 3 added; the checks changed`` (or ``no change``)."""
        parts: list[str] = []
        for numbers, verb in ((self.edited, "edited"), (self.added, "added")):
            if numbers:
                parts.append(f"{_steps(numbers)} {verb}")
        if self.removed:
            parts.append(f"{_steps(self.removed)} removed")
        if self.sections:
            parts.append(f"{_join(self.sections)} changed")
        if not parts:
            return "no change to the steps or sections (only the file's bytes differ)"
        return "; ".join(parts)

    def as_json(self) -> dict[str, object]:
        return {
            "kept": list(self.kept),
            "added": list(self.added),
            "removed": list(self.removed),
            "edited": list(self.edited),
            "sections": list(self.sections),
            "summary": self.describe(),
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> PlanDelta:
        def numbers(key: str) -> tuple[int, ...]:
            value = data.get(key)
            return tuple(int(n) for n in value) if isinstance(value, list) else ()

        sections = data.get("sections")
        return cls(
            numbers("kept"),
            numbers("added"),
            numbers("removed"),
            numbers("edited"),
            tuple(str(s) for s in sections) if isinstance(sections, list) else (),
        )


def _steps(numbers: tuple[int, ...]) -> str:
    words = [str(n) for n in numbers]
    return ("step " if len(words) == 1 else "steps ") + _join(tuple(words))


def _join(words: tuple[str, ...]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def compare_plans(base: Plan, other: Plan) -> PlanDelta:
    """What ``other`` changed relative to ``base``."""
    before = {step.number: render_step(step) for step in base.steps}
    after = {step.number: render_step(step) for step in other.steps}
    kept = tuple(n for n in after if n in before and before[n] == after[n])
    edited = tuple(n for n in after if n in before and before[n] != after[n])
    added = tuple(n for n in after if n not in before)
    removed = tuple(n for n in before if n not in after)
    sections = tuple(
        label for name, label in _SECTIONS if getattr(base, name) != getattr(other, name)
    )
    return PlanDelta(kept, added, removed, edited, sections)
