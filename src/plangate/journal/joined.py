"""A set of strings kept as one string, for state that a hook loads on every run.

A session's thousands of tool call ids cost a hook process milliseconds to load as a set
(one object each) and microseconds as one string. :class:`Joined` keeps them as
``"\\nfirst\\nsecond\\n"``, in the order they came; membership is a search of that string,
quick for the few ids a run asks about. An id holding the separator is never added:
:meth:`Joined.add` says so, and the caller stops trusting the set (or, where a wrong "yes"
only costs a full read, ignores it). Standard library only (hook path).
"""

from __future__ import annotations

SEPARATOR = "\n"
SEARCHES = 16


class Joined:
    """The ids as one string; after :data:`SEARCHES` lookups (a full read's fold asks
    thousands) it also keeps them as a set, so that many lookups stay linear. Ids added are
    gathered in a list and joined to the string once it is asked for (adding to a long
    string one id at a time would copy it each time)."""

    __slots__ = ("_text", "added", "searches", "seen")

    def __init__(self, text: str = SEPARATOR) -> None:
        self._text = text
        self.added: list[str] = []
        self.searches = 0
        self.seen: set[str] | None = None

    @classmethod
    def of(cls, items: list[str]) -> Joined:
        joined = cls()
        for item in items:
            joined.add(item)
        return joined

    @property
    def text(self) -> str:
        if self.added:
            self._text += SEPARATOR.join(self.added) + SEPARATOR
            self.added = []
        return self._text

    def __contains__(self, item: object) -> bool:
        if not isinstance(item, str):
            return False
        if self.seen is None:
            self.searches += 1
            if self.searches <= SEARCHES:
                return SEPARATOR + item + SEPARATOR in self._text or item in self.added
            self.seen = set(self.items())
        return item in self.seen

    def add(self, item: str) -> bool:
        """Add ``item`` unless it is there; False when it cannot be kept."""
        if SEPARATOR in item:
            return False
        if item not in self:
            self.added.append(item)
            if self.seen is not None:
                self.seen.add(item)
        return True

    def items(self) -> list[str]:
        text = self.text
        return text[1:-1].split(SEPARATOR) if len(text) > 1 else []
