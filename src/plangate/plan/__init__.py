"""The plan format: one Markdown format for a plan, parsed, rendered and validated here.

See ``docs/plan-format.md``. The public surface:

* :func:`parse_plan` (text → :class:`Plan`, or :class:`PlanFormatError` naming the line and
  the remedy), :func:`render_plan` (the canonical text), :func:`validate_plan` (problems of
  a plan that parses), :func:`wrap_plain_markdown` (a free-form plan → the format, every
  byte kept);
* :func:`section_spans` and :func:`implementation_section`, which find the sections of any
  text, plan or draft;
* the values :class:`Plan`, :class:`Step`, :class:`Check`, :class:`Criterion`.

Names are loaded on first use, so ``plangate.plan.sections`` (what the phase publication
guard needs) can be imported without the parser and its ``re`` and ``dataclasses``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from plangate.plan.errors import PlanFormatError
    from plangate.plan.model import Check, Criterion, Plan, Step
    from plangate.plan.parse import parse_plan
    from plangate.plan.render import render_plan, render_step
    from plangate.plan.sections import (
        SECTION_NAMES,
        implementation_section,
        section_spans,
    )
    from plangate.plan.validate import validate_plan
    from plangate.plan.wrap import wrap_plain_markdown

_HOMES = {
    "PlanFormatError": "errors",
    "Check": "model",
    "Criterion": "model",
    "Plan": "model",
    "Step": "model",
    "parse_plan": "parse",
    "render_plan": "render",
    "render_step": "render",
    "SECTION_NAMES": "sections",
    "implementation_section": "sections",
    "section_spans": "sections",
    "validate_plan": "validate",
    "wrap_plain_markdown": "wrap",
}

__all__ = [
    "SECTION_NAMES",
    "Check",
    "Criterion",
    "Plan",
    "PlanFormatError",
    "Step",
    "implementation_section",
    "parse_plan",
    "render_plan",
    "render_step",
    "section_spans",
    "validate_plan",
    "wrap_plain_markdown",
]


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
