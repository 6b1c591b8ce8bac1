"""Whether a person's words that match a phase's approval say the approval: the phrasing rule.

A match of an approval's ``words`` or ``pattern`` in a person's turn counts only when it is
said plainly. Each match is judged on its own, on what surrounds it (the match's own text is
never judged: it is the contract's), and the turn approves when one match counts. A match
does not count when:

1. **quoted**: its first or last character lies inside a quotation: ``"…"``, ``'…'``, a
   backtick span, a fenced code block, ``“…”``, ``‘…’``, ``„…“``, ``«…»``, or a line that
   starts with ``>``. A double quote, backtick or typographic quote left open quotes to the
   end of its line; a single quote left open quotes nothing (``'cause``, ``don't``);
2. **negated**: its clause holds a negation (``no``, ``not``, ``never``, ``nor``,
   ``neither``, ``cannot``, any ``…n't``, ``dont``, ``cant``…, ``un-``);
3. **questioned**: its sentence ends with ``?``, or its clause opens with a question word
   (``do``, ``is``, ``are``, ``should``, ``can``, ``why``, ``how``…);
4. **hedged or reported**: its clause, before it, holds a modal or a verb of wanting or of
   saying (``will``, ``I'll``, ``would``, ``I'd``, ``could``, ``might``, ``may``,
   ``should``, ``can``, ``must``, ``going to``, ``need to``, ``want``, ``type``, ``said``,
   ``tell``, ``ask``…), or anywhere ``maybe``, ``perhaps``, ``probably``, ``possibly``;
5. **conditional or deferred**: a condition (``if``, ``unless``, ``until``, ``once``,
   ``when``, ``after``, ``before``, ``whether``, ``as soon as``…) or a deferral (``later``,
   ``tomorrow``, ``soon``, ``yet``, ``not now``…) stands earlier in its sentence, in its
   clause after it, or opens the clause right after it (``approve X, once the tests
   pass``). ``before`` counts only ahead of the match (``approve X before design`` is an
   approval);
6. **taken back**: a clause after it, in its sentence or a later one of the turn, is a
   retraction (``wait``, ``no``, ``nope``, ``never mind``, ``hold on``, ``actually no``…) or
   opens with one that cannot mean anything else (``scratch that``, ``just kidding``,
   ``on second thought``, ``not yet``…).

Sentences end at a line break, ``?``, ``!`` and ``.``/``…`` followed by a space or the end
(``spec.md`` and ``1.5`` do not end one). Clauses end there and at ``,``, ``;``, ``:``, a
bracket, a dash, and the words ``but``, ``so``, ``then``, ``however``, ``although``,
``though``, ``whereas``; never at ``and`` (``don't go ahead and approve X``). Quoted text is
blanked before sentences and clauses are read: it neither holds a marker nor ends anything.

The rule is deterministic and fails closed: a phrasing it refuses costs the person one more
plain sentence ("approve requirements"), a phrasing it wrongly took would approve what the
person did not. It reads only the turn's text (no model, no dictionary beyond the word sets
below) and runs only on a match, so a turn without one costs nothing more. A match's line is
read at most :data:`WINDOW` characters either side of it, and a turn's first
:data:`MOST_MATCHES` matches are judged (:func:`plangate.contracts.approvals.words_match`),
so no turn makes it slow. Standard library only, no ``re`` (hook path).
"""

from __future__ import annotations

CLAUSE = ","
SENTENCE = "."
QUESTION = "?"
_BREAKS = (CLAUSE, SENTENCE, QUESTION)
_ENDS = (SENTENCE, QUESTION)


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


NEGATIONS = _set(
    "no not never nor neither cannot nope nah un non "
    "dont doesnt didnt cant wont wouldnt shouldnt couldnt isnt arent wasnt werent "
    "havent hasnt hadnt mustnt neednt shant aint"
)
"""Words that negate the clause they stand in (and every word ending in ``n't``)."""

HEDGES = _set(
    "will would could might may should shall can must gonna wanna gotta "
    "want wants wanted "
    "type types typed typing say says said saying reply replies replied replying "
    "respond responds responded answer answered tell tells told telling "
    "ask asks asked asking quote quoted quoting expect expects expected"
)
"""Words that, ahead of the match in its clause, make it a wish, a plan or a report."""
HEDGE_PHRASES = frozenset(
    (first, "to")
    for first in _set(
        "going need needs have has about plan planning intend ought supposed meant like trying"
    )
)
"""Two-word hedges (``going to``, ``need to``…), ahead of the match in its clause."""
MAYBES = _set("maybe perhaps probably possibly")
"""Hedges anywhere in the match's clause."""

CONDITIONS = _set(
    "if iff unless until till til once when whenever after provided providing assuming "
    "suppose supposing whether pending lest"
)
CONDITION_PHRASES = frozenset({("in", "case"), ("as", "long", "as"), ("as", "soon", "as")})
DEFERRALS = _set("later tomorrow tonight eventually afterwards afterward soon yet someday sometime")
DEFERRAL_PHRASES = frozenset(
    {("not", "now"), ("not", "today"), ("next", "time"), ("next", "week"), ("for", "later")}
    | {("in", "a", unit) for unit in _set("bit while minute moment sec second few")}
    | {("at", "some", "point")}
)
NOT_CONDITIONS = (("as", "soon", "as", "possible"), ("at", "once"))
"""Phrases that hold a condition's word but say "now"."""
AHEAD_ONLY = frozenset({"before"})
"""Conditions that count only ahead of the match."""

QUESTION_WORDS = _set(
    "do does did is are am was were should shall can could would will may might must "
    "want wanna why what how where who whom whose which whether"
)
"""Words that make the match's clause a question when they open it."""

FILLERS = _set(
    "oh ah um uh er erm hmm hm sorry actually well ok okay alright yes yeah yep sure please hey"
)
"""Words skipped where a clause's opening is read."""
OPENING_SKIPS = _set("only just even or")
"""Also skipped where the clause after the match is read (``…, but only if …``)."""
_FOLLOWING_SKIPS = FILLERS | OPENING_SKIPS
_LEADING = FILLERS - {"actually"}
"""Skipped where a retraction is read (``actually no`` is one)."""

RETRACTIONS = frozenset(
    {
        ("wait",),
        ("no",),
        ("nope",),
        ("nah",),
        ("never", "mind"),
        ("nevermind",),
        ("hold", "on"),
        ("hold", "off"),
        ("hang", "on"),
        ("cancel", "that"),
        ("forget", "it"),
        ("forget", "that"),
        ("undo", "that"),
        ("not", "really"),
        ("don't",),
        ("do", "not"),
        ("jk",),
    }
)
"""Clauses that take back what came before when they are the whole clause."""
RETRACTION_OPENINGS = (
    ("scratch", "that"),
    ("just", "kidding"),
    ("on", "second", "thought"),
    ("no", "wait"),
    ("wait", "no"),
    ("wait", "wait"),
    ("hold", "on"),
    ("hang", "on"),
    ("not", "yet"),
    ("not", "now"),
    ("actually", "no"),
    ("cancel", "that"),
    ("forget", "that"),
)
"""Openings that take back what came before whatever follows them in the clause."""

_CLAUSE_WORDS = _set("but so then however although though whereas")
_CLAUSE_MARKS = frozenset(",;:()[]{}–—")
_TERMINATORS = frozenset(".!?…？！")
_DOUBLE = {'"': '"', "`": "`", "“": "”", "„": "“”", "«": "»"}
"""Opening marks whose closing mark is never an apostrophe, and their closing marks."""
_SINGLE = frozenset("'‘’")
_MARKS = "\"`“„«'‘’>"


WINDOW = 1000
"""How far a match's line is read on either side of it, in characters."""
MOST_MATCHES = 100
"""How many matches of a turn are judged (the first ones, in order): a turn longer than any
person types costs a bounded time, and a match past them does not count."""

QUOTED = "quoted"
QUESTIONED = "questioned"
NEGATED = "negated"
HEDGED = "hedged"
CONDITIONAL = "conditional"
TAKEN_BACK = "taken back"
RULES = (QUOTED, NEGATED, QUESTIONED, HEDGED, CONDITIONAL, TAKEN_BACK)
"""The rule's parts, in the order they are tried (the first that holds is the answer)."""


def approves(text: str, start: int, end: int) -> bool:
    """Whether the match ``text[start:end]`` is said plainly (the module's rule)."""
    return Reading(text).refusal(start, end) is None


def refusal(text: str, start: int, end: int) -> str | None:
    """Which part of the rule (one of :data:`RULES`) keeps the match ``text[start:end]``
    from counting, or None when it counts."""
    return Reading(text).refusal(start, end)


class Reading:
    """One turn's text, read once for all its matches: its quotations, found when it is
    made, and the lines that take something back, found when a match first needs them. A
    match then costs at most :data:`WINDOW` characters either side of it."""

    __slots__ = ("text", "regions", "firsts", "masked", "_lines", "_breaks", "_later", "_known")

    def __init__(self, text: str) -> None:
        self.text = text
        self.regions = quotations(text)
        self.firsts = [first for first, _ in self.regions]
        self.masked = _mask(text, self.regions)
        self._lines: list[str] | None = None  # read when a match first needs them
        self._breaks: list[int] = []  # where the line breaks are
        self._later: list[bool] = []  # per line: whether a later line takes back
        self._known = 0  # the lowest line whose ``_later`` is known

    def quoted(self, at: int) -> bool:
        from bisect import bisect_right

        region = bisect_right(self.firsts, at) - 1
        return region >= 0 and at <= self.regions[region][1]

    def refusal(self, start: int, end: int) -> str | None:
        """Which part of the rule keeps the match ``text[start:end]`` from counting, or None
        when it counts."""
        if self.quoted(start) or self.quoted(max(start, end - 1)):
            return QUOTED
        masked = self.masked
        line_start = masked.rfind("\n", 0, start) + 1
        line_end = _line_end(masked, end)
        ahead = _items(masked[max(line_start, start - WINDOW) : start])
        cut = max((i for i, item in enumerate(ahead) if item in _ENDS), default=-1)
        ahead = ahead[cut + 1 :]  # its sentence up to it (a line break ends a sentence)
        behind = _items(masked[end : min(line_end, end + WINDOW)])  # its line after it
        stop = next((i for i, item in enumerate(behind) if item in _ENDS), len(behind))
        own_ahead = _clauses(ahead)[-1]
        rest = _clauses(behind[:stop])  # its sentence after it
        own = own_ahead + rest[0]
        if any(word in NEGATIONS or word.endswith("n't") for word in own):
            return NEGATED
        ended = behind[stop] if stop < len(behind) else SENTENCE
        if ended == QUESTION or _opening(own_ahead, QUESTION_WORDS):
            return QUESTIONED
        if _hedged(own_ahead) or any(word in MAYBES for word in own):
            return HEDGED
        following = next((clause for clause in rest[1:] if clause), [])
        if (
            _conditional(_words(ahead), ahead=True)
            or _conditional(rest[0], ahead=False)
            or _opens_conditional(_skip(following, _FOLLOWING_SKIPS))
        ):
            return CONDITIONAL
        if (
            _starts_with(_skip(rest[0], FILLERS), RETRACTION_OPENINGS)
            or any(_retracts(clause) for clause in _clauses(behind)[1:])
            or self._later_lines_take_back(line_end)
        ):
            return TAKEN_BACK
        return None

    def _later_lines_take_back(self, line_end: int) -> bool:
        """Whether a line after the one ending at ``line_end`` holds a retraction. The lines
        are read from the last one up, each once, and no higher than a match needs."""
        from bisect import bisect_left

        if self._lines is None:
            self._lines = self.masked.split("\n")
            self._breaks = _places(self.masked, "\n")
            self._later = [False] * len(self._lines)
            self._known = len(self._lines) - 1
        line = bisect_left(self._breaks, line_end)
        while self._known > line:
            known = self._known
            self._later[known - 1] = self._later[known] or any(
                _retracts(clause) for clause in _clauses(_items(self._lines[known]))
            )
            self._known = known - 1
        return self._later[line]


def quotations(text: str) -> list[tuple[int, int]]:
    """The quoted regions of ``text``, each as the indexes of its first and last character
    (its marks included), in order."""
    from bisect import bisect_right

    marks = sorted(at for mark in _MARKS for at in _places(text, mark))
    closers = [at for at in marks if text[at] in _SINGLE and _may_close(text, at)]
    found: list[tuple[int, int]] = []
    done = -1  # the last index of the last region
    for at in marks:
        if at <= done:
            continue
        char = text[at]
        if char == ">":
            if text[text.rfind("\n", 0, at) + 1 : at].strip(" \t"):
                continue  # not the first mark of its line
            last = _line_end(text, at) - 1
        elif text.startswith("```", at):
            close = text.find("```", at + 3)
            last = len(text) - 1 if close < 0 else close + 2
        elif char in _DOUBLE:
            close = _find_any(text, _DOUBLE[char], at + 1)
            last = _line_end(text, at) - 1 if close < 0 else close
        else:  # a single quote
            later = bisect_right(closers, at)
            if not _may_open(text, at) or later == len(closers):
                continue
            last = closers[later]
        found.append((at, last))
        done = last
    return found


def _places(text: str, mark: str) -> list[int]:
    places: list[int] = []
    at = text.find(mark)
    while at >= 0:
        places.append(at)
        at = text.find(mark, at + 1)
    return places


def _line_end(text: str, at: int) -> int:
    end = text.find("\n", at)
    return len(text) if end < 0 else end


def _find_any(text: str, marks: str, at: int) -> int:
    places = [place for mark in marks if (place := text.find(mark, at)) >= 0]
    return min(places, default=-1)


def _may_open(text: str, at: int) -> bool:
    """A single quote that may open a quotation: not inside a word, text after it."""
    before = text[at - 1] if at else " "
    after = text[at + 1] if at + 1 < len(text) else " "
    return not before.isalnum() and not after.isspace()


def _may_close(text: str, at: int) -> bool:
    """A single quote that may close a quotation: after a word or a mark, not inside a word."""
    if not at:
        return False
    before = text[at - 1]
    after = text[at + 1] if at + 1 < len(text) else " "
    return not before.isspace() and not after.isalnum()


def _mask(text: str, regions: list[tuple[int, int]]) -> str:
    if not regions:
        return text
    parts: list[str] = []
    done = 0
    for first, last in regions:
        parts.append(text[done:first])
        parts.append(" " * (last + 1 - first))
        done = last + 1
    parts.append(text[done:])
    return "".join(parts)


def _items(text: str) -> list[str]:
    """The words of ``text`` (lowered, ``’`` read as ``'``) and its breaks: :data:`CLAUSE`,
    :data:`SENTENCE` and :data:`QUESTION` (a sentence ended by ``?``)."""
    items: list[str] = []
    for line in text.split("\n"):
        for chunk in line.split():
            if chunk.isalnum():
                word = chunk.lower()
                items.append(CLAUSE if word in _CLAUSE_WORDS else word)
            elif not chunk.strip("-"):  # a dash between spaces
                items.append(CLAUSE)
            else:
                _chunk_items(chunk, items)
        items.append(SENTENCE)
    items.pop()  # the end of the text is no break
    return items


def _chunk_items(chunk: str, items: list[str]) -> None:
    """:func:`_items` of a run of characters without white space that is not one word."""
    size = len(chunk)
    at = 0
    while at < size:
        char = chunk[at]
        if char.isalnum():
            start = at
            at += 1
            while at < size and (
                chunk[at].isalnum()
                or (chunk[at] in "'’" and at + 1 < size and chunk[at + 1].isalnum())
            ):
                at += 1
            word = chunk[start:at].lower().replace("’", "'")
            items.append(CLAUSE if word in _CLAUSE_WORDS else word)
            continue
        if char in _TERMINATORS:
            start = at
            while at < size and chunk[at] in _TERMINATORS:
                at += 1
            run = chunk[start:at]
            if "?" in run or "？" in run:
                items.append(QUESTION)
            elif "!" in run or "！" in run or at >= size or not chunk[at].isalnum():
                items.append(SENTENCE)
            continue
        if char in _CLAUSE_MARKS:
            items.append(CLAUSE)
        at += 1


def _clauses(items: list[str]) -> list[list[str]]:
    """``items`` split at every break: the first and last clause may be empty."""
    clauses: list[list[str]] = [[]]
    for item in items:
        if item in _BREAKS:
            clauses.append([])
        else:
            clauses[-1].append(item)
    return clauses


def _skip(words: list[str], skipped: frozenset[str]) -> list[str]:
    at = 0
    while at < len(words) and words[at] in skipped:
        at += 1
    return words[at:]


def _opening(words: list[str], openers: frozenset[str]) -> bool:
    rest = _skip(words, FILLERS)
    return bool(rest) and rest[0] in openers


def _words(items: list[str]) -> list[str]:
    return [item for item in items if item not in _BREAKS]


def _holds(words: list[str], phrases: frozenset[tuple[str, ...]]) -> bool:
    return any(
        tuple(words[at : at + len(phrase)]) == phrase
        for phrase in phrases
        for at in range(len(words) - len(phrase) + 1)
    )


def _without(words: list[str], phrases: tuple[tuple[str, ...], ...]) -> list[str]:
    """``words`` with every occurrence of ``phrases`` taken out."""
    kept: list[str] = []
    at = 0
    while at < len(words):
        phrase = next((p for p in phrases if tuple(words[at : at + len(p)]) == p), None)
        if phrase is None:
            kept.append(words[at])
            at += 1
        else:
            at += len(phrase)
    return kept


def _hedged(words: list[str]) -> bool:
    if any(word in HEDGES or word.endswith(("'ll", "'d")) for word in words):
        return True
    return _holds(words, HEDGE_PHRASES)


def _conditional(words: list[str], *, ahead: bool) -> bool:
    """Whether ``words`` hold a condition or a deferral (``ahead``: they stand ahead of the
    match, where ``before`` counts too)."""
    words = _without(words, NOT_CONDITIONS)
    if any(word in CONDITIONS or word in DEFERRALS for word in words):
        return True
    if ahead and any(word in AHEAD_ONLY for word in words):
        return True
    return _holds(words, CONDITION_PHRASES | DEFERRAL_PHRASES)


def _opens_conditional(words: list[str]) -> bool:
    """Whether ``words`` open with a condition or a deferral."""
    words = _without(words, NOT_CONDITIONS)
    if words and (words[0] in CONDITIONS or words[0] in DEFERRALS):
        return True
    return _starts_with(words, tuple(CONDITION_PHRASES | DEFERRAL_PHRASES))


def _starts_with(words: list[str], openings: tuple[tuple[str, ...], ...]) -> bool:
    return any(tuple(words[: len(opening)]) == opening for opening in openings)


def _retracts(clause: list[str]) -> bool:
    rest = _skip(clause, _LEADING)
    if tuple(_skip(rest, FILLERS)) in RETRACTIONS:
        return True
    return _starts_with(rest, RETRACTION_OPENINGS)
