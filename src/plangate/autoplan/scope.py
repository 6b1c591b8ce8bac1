"""Phase 0: does a plan have a user interface (Design applies) or developer users (DX applies)?

An explicit line ``Scope: design, dx`` (or ``Scope: design``, ``Scope: dx``, ``Scope: none``)
wins. Otherwise the plan's words decide: any user-interface term makes ``design`` true, any
developer-facing term makes ``dx`` true, and ``reasons`` lists the terms found. Lines in
fenced code blocks (:mod:`plangate.markdown`) never count.
"""

from __future__ import annotations

import re
from typing import Any

from plangate import markdown

_SCOPE_LINE = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\*\*|__)?scope(?:\*\*|__)?\s*:\s*(?:\*\*|__)?(?P<value>.*?)(?:\*\*|__)?\s*$",
    re.IGNORECASE,
)
_SCOPE_TOKENS = re.compile(r"\s*(?:,|\+|&|/|\band\b|\s)\s*", re.IGNORECASE)

# (label, pattern): whole words, case-insensitive, plural allowed where it reads naturally.
UI_TERMS: tuple[tuple[str, str], ...] = (
    ("user interface", r"user[- ]interfaces?"),
    ("UI", r"UIs?"),
    ("UX", r"UX"),
    ("screen", r"screens?"),
    ("page", r"(?<!man )pages?(?! (?:cache|table|fault|size)s?\b)"),
    ("button", r"buttons?"),
    ("frontend", r"front[- ]?ends?"),
    ("web app", r"web[- ]?apps?|web applications?"),
    ("mobile", r"mobile"),
    ("form", r"forms?(?! of\b)"),
    ("dashboard", r"dashboards?"),
    ("modal", r"modals?"),
    ("dialog", r"dialogs?"),
    ("widget", r"widgets?"),
    ("menu", r"menus?"),
    ("CSS", r"CSS"),
    ("HTML", r"HTML"),
    ("React", r"React"),
    ("layout", r"layouts?"),
)
DX_TERMS: tuple[tuple[str, str], ...] = (
    ("API", r"APIs?"),
    ("CLI", r"CLIs?"),
    ("command line", r"command[- ]line"),
    ("SDK", r"SDKs?"),
    ("library", r"library|libraries"),
    ("developer", r"developers?"),
    ("endpoint", r"endpoints?"),
    ("config file", r"config(?:uration)? files?"),
    ("plugin", r"plug-?ins?"),
    ("webhook", r"webhooks?"),
    ("REST", r"REST(?:ful)?"),
    ("GraphQL", r"GraphQL"),
)


def _compile(terms: tuple[tuple[str, str], ...]) -> list[tuple[str, re.Pattern[str]]]:
    return [
        (label, re.compile(rf"(?<![\w-])(?:{pattern})(?![\w])", re.I)) for label, pattern in terms
    ]


_UI = _compile(UI_TERMS)
_DX = _compile(DX_TERMS)


def explicit_scope(text: str) -> tuple[bool, bool, str] | None:
    """``(design, dx, value)`` from the first ``Scope:`` line made only of scope words."""
    for line in markdown.prose_lines(text):
        match = _SCOPE_LINE.match(line)
        if not match:
            continue
        value = match.group("value").strip().rstrip(".")
        words = [word.lower() for word in _SCOPE_TOKENS.split(value) if word]
        if not words or any(word not in ("design", "dx", "none") for word in words):
            continue  # "Scope: the whole backend" is prose, not a declaration
        if "none" in words and len(words) > 1:
            continue
        return "design" in words, "dx" in words, value
    return None


def _found(lines: list[str], terms: list[tuple[str, re.Pattern[str]]]) -> list[str]:
    text = "\n".join(lines)
    hits = [(match.start(), label) for label, pattern in terms if (match := pattern.search(text))]
    return [label for _, label in sorted(hits)]


def detect_scope(text: str) -> dict[str, Any]:
    """``{"design": bool, "dx": bool, "reasons": [...]}`` for a plan's text."""
    explicit = explicit_scope(text)
    if explicit is not None:
        design, dx, value = explicit
        return {"design": design, "dx": dx, "reasons": [f"the plan says Scope: {value}"]}
    lines = markdown.prose_lines(text)
    ui_terms = _found(lines, _UI)
    dx_terms = _found(lines, _DX)
    reasons = [
        _reason("design", "user-interface", ui_terms),
        _reason("dx", "developer-facing", dx_terms),
    ]
    return {"design": bool(ui_terms), "dx": bool(dx_terms), "reasons": reasons}


def _reason(phase: str, kind: str, terms: list[str]) -> str:
    if not terms:
        return f"{phase}: no {kind} terms (add a line 'Scope: {phase}' to the goal to include it)"
    shown = ", ".join(f'"{term}"' for term in terms[:6])
    return f"{phase}: the plan mentions {kind} terms {shown}"
