"""Recognising a published phase report in the session's own assistant text.

A report declares its phase on a line of its own: ``Phase 1 complete`` (also ``Phase 1 (CEO)
is complete.``, ``**Phase 2.5 DX review complete**``, ``Phase 3 done: …``). Copies that are not
a declaration do not count: lines in fenced code blocks, indented code, block quotes, lines
introduced as an example, template or quote, and declarations hedged or negated (``Phase 1
will be complete``, ``Phase 1 complete if the reviewer agrees``, ``Phase 1 is not complete``).
Only called for guarded decisions, so it may import :mod:`re`.
"""

from __future__ import annotations

import re

PHASE_NUMBERS = {"ceo": "1", "design": "2", "dx": "2.5", "eng": "3", "tasks": "4"}
_NAMES = {
    "1": ("ceo",),
    "2": ("design",),
    "2.5": ("dx", "developer experience", "devex"),
    "3": ("eng", "engineering"),
    "4": ("tasks", "task list"),
}
_DECLARATION = re.compile(
    r"""^(?:\#{1,6}\s+)?                 # an optional heading marker
        (?P<wrap>\*\*|__)?               # optional bold
        phase\s+(?P<number>\d+(?:\.\d+)?)
        (?:\s*\((?P<paren>[a-z ]+)\)|\s+(?P<name>[a-z][a-z ]*?))?
        (?:\s+review)?
        (?:\s+is)?
        \s+(?P<verb>completed|complete|done|finished)\b
        (?P=wrap)?
        (?P<tail>.*)$""",
    re.IGNORECASE | re.VERBOSE,
)
_HEDGES = frozenset(
    {
        *("if", "unless", "when", "once", "pending", "maybe", "perhaps", "would", "could"),
        *("will", "should", "not", "no", "never", "example", "sample", "quote", "quoted"),
        *("template", "placeholder", "incomplete", "unfinished", "withdrawn", "retracted"),
        *("cancelled", "canceled", "superseded", "hypothetical", "earlier", "previous"),
        "previously",
    }
)
_INTRODUCERS = ("example", "sample", "template", "quote", "instruction", "expected output")
_WORD = re.compile(r"[a-z']+")


def declares(text: str, phase: str) -> bool:
    """Whether ``text`` (one assistant message's text) declares ``phase`` complete."""
    number = PHASE_NUMBERS[phase]
    return any(found == number for found in declared_numbers(text))


_WITHDRAWALS = ("withdrawn", "withdraw", "retracted", "not complete", "incomplete", "cancel")


def declared_numbers(text: str) -> list[str]:
    numbers: list[str] = []
    recaps: list[str] = []  # "with" recaps a later withdrawal line in the message cancels
    fence: str | None = None
    previous = ""
    for raw in text.splitlines():
        stripped = raw.strip()
        if fence is not None:
            if stripped.startswith(fence) and stripped.strip(fence[0]) == "":
                fence = None
            continue
        if stripped.startswith(("```", "~~~")):
            marker = stripped[0]
            fence = stripped[: len(stripped) - len(stripped.lstrip(marker))]
            continue
        indented = raw.startswith(("    ", "\t"))
        introduced = previous.endswith(":") and any(
            word in previous.lower() for word in _INTRODUCERS
        )
        if stripped and not indented and not stripped.startswith(">") and not introduced:
            number = _declaration(stripped)
            if number is not None:
                numbers.append(number)
                if " with " in stripped.lower():
                    recaps.append(number)
            elif recaps and any(word in stripped.lower() for word in _WITHDRAWALS):
                for withdrawn in recaps:
                    numbers.remove(withdrawn)
                recaps = []
        if stripped:
            previous = stripped
    return numbers


def _declaration(line: str) -> str | None:
    match = _DECLARATION.match(line)
    if match is None:
        return None
    number = match.group("number")
    if number not in _NAMES:
        return None
    name = (match.group("paren") or match.group("name") or "").strip().lower()
    if name.endswith(" review"):
        name = name[: -len(" review")]
    if name and name not in _NAMES[number]:
        return None
    tail = match.group("tail").strip()
    if tail.startswith("**"):
        tail = tail[2:].strip()
    if not tail or tail in (".", "!", ":"):
        return number
    if tail[0] not in ".:!\u2014\u2013-" and not tail.lower().startswith("with "):
        return None
    if "?" in tail or tail.lstrip(".:!\u2014\u2013- ").startswith(('"', "'", ">")):
        return None
    words = set(_WORD.findall(tail.lower()))
    if words & _HEDGES:
        return None
    return number
