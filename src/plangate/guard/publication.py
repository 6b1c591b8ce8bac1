"""Recognising a published phase report in the session's own assistant text.

A report declares its phase on a line of its own: ``Phase 1 complete`` (also ``Phase 1 (CEO)
is complete.``, ``**Phase 2.5 DX review complete**``, ``Phase 3 done: …``). Copies that are not
a declaration do not count: lines in fenced code blocks (CommonMark's fences, by
:mod:`plangate.markdown`), indented code, block quotes, lines introduced as an example,
template or quote, and declarations hedged or negated (``Phase 1 will be complete``, ``Phase 1
complete if the reviewer agrees``, ``Phase 1 is not complete``).

A declaration line has this shape, matched case-insensitively by hand (importing :mod:`re`
would cost every guarded decision about ten milliseconds)::

    [#… ][**|__]Phase <n>[.<m>][ (<name>)| <name>][ review][ is] complete|completed|done|finished
    [**|__]<tail>

where the spaces are runs of whitespace, ``<name>`` is letters and spaces, and when several
readings fit, the one a backtracking regular expression would find is taken: the name in
brackets before a bare name before none, and the shortest bare name.
"""

from __future__ import annotations

from plangate import markdown

PHASE_NUMBERS = {"ceo": "1", "design": "2", "dx": "2.5", "eng": "3", "tasks": "4"}
_NAMES = {
    "1": ("ceo",),
    "2": ("design",),
    "2.5": ("dx", "developer experience", "devex"),
    "3": ("eng", "engineering"),
    "4": ("tasks", "task list"),
}
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
_VERBS = ("completed", "complete", "done", "finished")  # the longest first, as a regex would
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def declares(text: str, phase: str) -> bool:
    """Whether ``text`` (one assistant message's text) declares ``phase`` complete."""
    number = PHASE_NUMBERS[phase]
    return any(found == number for found in declared_numbers(text))


_WITHDRAWALS = ("withdrawn", "withdraw", "retracted", "not complete", "incomplete", "cancel")


def declared_numbers(text: str) -> list[str]:
    numbers: list[str] = []
    recaps: list[str] = []  # "with" recaps a later withdrawal line in the message cancels
    fences = markdown.Fences()
    previous = ""
    for raw in markdown.split_lines(text):
        if fences.code(raw):
            continue
        stripped = raw.strip()
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
    parsed = parse_declaration(line)
    if parsed is None:
        return None
    number, name, tail = parsed
    if number not in _NAMES:
        return None
    name = name.strip().lower()
    if name.endswith(" review"):
        name = name[: -len(" review")]
    if name and name not in _NAMES[number]:
        return None
    tail = tail.strip()
    if tail.startswith("**"):
        tail = tail[2:].strip()
    if not tail or tail in (".", "!", ":"):
        return number
    if tail[0] not in ".:!\u2014\u2013-" and not tail.lower().startswith("with "):
        return None
    if "?" in tail or tail.lstrip(".:!\u2014\u2013- ").startswith(('"', "'", ">")):
        return None
    if _words(tail.lower()) & _HEDGES:
        return None
    return number


def parse_declaration(line: str) -> tuple[str, str, str] | None:
    """``(number, name, tail)`` of a declaration-shaped line (see the module docstring)."""
    at = 0
    hashes = len(line) - len(line.lstrip("#"))
    if hashes:
        after = _spaces(line, hashes)
        if hashes > 6 or after == hashes:
            return None
        at = after
    wrap = line[at : at + 2] if line[at : at + 2] in ("**", "__") else ""
    at += len(wrap)
    if line[at : at + 5].lower() != "phase":
        return None
    start = _spaces(line, at + 5)
    end = _digits(line, start)
    if start == at + 5 or end == start:
        return None
    if line[end : end + 1] == "." and _digits(line, end + 1) > end + 1:
        end = _digits(line, end + 1)
    number = line[start:end]
    for name, rest in _name_readings(line, end):
        tail = _rest(line, rest, wrap)
        if tail is not None:
            return number, name, tail
    return None


def _name_readings(line: str, at: int) -> list[tuple[str, int]]:
    """Each way the optional name can be read after the number, in the order a regular
    expression tries them: ``(name)``, then bare names from the shortest, then none."""
    readings: list[tuple[str, int]] = []
    bracket = _spaces(line, at)
    if line[bracket : bracket + 1] == "(":
        close = line.find(")", bracket + 1)
        inside = line[bracket + 1 : close] if close > bracket + 1 else ""
        if inside and all(ch in _LETTERS or ch == " " for ch in inside):
            readings.append((inside, close + 1))
    start = _spaces(line, at)
    if start > at and line[start : start + 1] in _LETTERS:
        end = start + 1
        while True:
            readings.append((line[start:end], end))
            if end >= len(line) or not (line[end] in _LETTERS or line[end] == " "):
                break
            end += 1
    readings.append(("", at))
    return readings


def _rest(line: str, at: int, wrap: str) -> str | None:
    """The tail after ``[ review][ is] <verb>[wrap]`` from ``at``, or None."""
    for review in (True, False):
        after_review = _word(line, at, "review") if review else at
        if after_review < 0:
            continue
        for is_ in (True, False):
            after_is = _word(line, after_review, "is") if is_ else after_review
            if after_is < 0:
                continue
            start = _spaces(line, after_is)
            if start == after_is:
                continue
            for verb in _VERBS:
                end = start + len(verb)
                if line[start:end].lower() == verb and not _word_char(line, end):
                    if wrap and line.startswith(wrap, end):
                        end += len(wrap)
                    return line[end:]
    return None


def _word(line: str, at: int, word: str) -> int:
    """Past ``<whitespace><word>`` at ``at``, or -1."""
    start = _spaces(line, at)
    if start == at or line[start : start + len(word)].lower() != word:
        return -1
    return start + len(word)


def _spaces(line: str, at: int) -> int:
    while at < len(line) and line[at].isspace():
        at += 1
    return at


def _digits(line: str, at: int) -> int:
    while at < len(line) and line[at].isdecimal():
        at += 1
    return at


def _word_char(line: str, at: int) -> bool:
    return at < len(line) and (line[at].isalnum() or line[at] == "_")


def _words(text: str) -> set[str]:
    """The runs of ``a-z`` and apostrophes in ``text``."""
    words: set[str] = set()
    current: list[str] = []
    for ch in text:
        if ("a" <= ch <= "z") or ch == "'":
            current.append(ch)
        elif current:
            words.add("".join(current))
            current = []
    if current:
        words.add("".join(current))
    return words
