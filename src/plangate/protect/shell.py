"""A Bash command read as the protection needs it. Standard library only, no ``shlex``/``re``.

:func:`parse` splits a command into simple commands (:class:`Simple`): their words with quotes
removed, their redirections, their here-documents, the pipeline each belongs to, and the
commands inside ``$(…)``, backquotes and ``<(…)``/``>(…)`` (each a simple command of its
own, marked ``nested``, its text also kept in the word that held it). It is a rough ``sh``
lexer on purpose: it never runs anything, and where it cannot tell (an unmatched quote, a
variable it does not know) the caller errs on the side of refusing.
"""

from __future__ import annotations

WRITE_REDIRECTS = (">", ">>", ">|", "&>", "&>>", "<>")
_OPERATOR_CHARS = ";&|()\n"
_KEYWORDS = frozenset(
    ("!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "time")
)


class Simple:
    """One simple command: ``words`` (quotes removed), ``redirects`` (operator, target),
    ``heredocs`` (their bodies), the ``pipeline`` it is part of, and ``nested`` when it
    runs inside a substitution."""

    __slots__ = ("words", "redirects", "heredocs", "pipeline", "nested", "raw")

    def __init__(self, pipeline: int, nested: bool) -> None:
        self.words: list[str] = []
        self.redirects: list[tuple[str, str]] = []
        self.heredocs: list[str] = []
        self.pipeline = pipeline
        self.nested = nested
        self.raw: list[str] = []  # the source text of its words, quotes kept

    def __repr__(self) -> str:
        return f"Simple({self.words!r}, redirects={self.redirects!r})"


def _matching(text: str, start: int, open_: str, close: str) -> int:
    """The index of the ``close`` that ends the group opened just before ``start`` (quotes
    skipped); ``len(text)`` when it never ends."""
    depth = 1
    i = start
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "'":
            end = text.find("'", i + 1)
            i = n if end < 0 else end + 1
            continue
        if ch == '"':
            i = _dquote_end(text, i + 1)
            continue
        if ch == open_:
            depth += 1
        elif ch == close:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return n


def _dquote_end(text: str, start: int) -> int:
    """The index just past the ``"`` that closes a double-quoted string begun before ``start``."""
    i = start
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == '"':
            return i + 1
        if ch == "$" and text.startswith("$(", i):
            i = _matching(text, i + 2, "(", ")") + 1
            continue
        i += 1
    return n


class _Lexer:
    def __init__(self, text: str, nested: bool, pipelines: list[int]) -> None:
        self.text = text
        self.nested = nested
        self.pipelines = pipelines  # a shared counter, so nested pipelines get their own ids
        self.found: list[Simple] = []
        self.current = self._new()
        self.word: list[str] = []
        self.word_start = -1
        self.started = False
        self.redirect: str | None = None
        self.pending_heredocs: list[tuple[str, Simple]] = []
        self.heredoc_next = False

    def _new(self) -> Simple:
        simple = Simple(self.pipelines[0], self.nested)
        self.found.append(simple)
        return simple

    def _new_pipeline(self) -> None:
        self.pipelines[0] += 1

    def flush(self, end: int) -> None:
        if not (self.word or self.started):
            return
        value = "".join(self.word)
        raw = self.text[self.word_start : end] if self.word_start >= 0 else value
        if self.heredoc_next:
            self.pending_heredocs.append((value, self.current))
            self.heredoc_next = False
        elif self.redirect is not None:
            if self.redirect == "<<<":
                self.current.heredocs.append(value)
            else:
                self.current.redirects.append((self.redirect, value))
            self.redirect = None
        else:
            self.current.words.append(value)
            self.current.raw.append(raw)
        self.word = []
        self.word_start = -1
        self.started = False

    def end_command(self, end: int, new_pipeline: bool) -> None:
        self.flush(end)
        if self.current.words or self.current.redirects or self.current.heredocs:
            self.current = self._new()
        if new_pipeline:
            self._new_pipeline()
            self.current.pipeline = self.pipelines[0]

    def begin(self, i: int) -> None:
        if self.word_start < 0:
            self.word_start = i
        self.started = True

    def substitution(self, inner: str) -> None:
        self._new_pipeline()
        nested = _Lexer(inner, True, self.pipelines)
        nested.run()
        keep = self.found.pop()  # the current command stays last, so it keeps growing
        self.found.extend(simple for simple in nested.found if _useful(simple))
        self.found.append(keep)
        self._new_pipeline()

    def heredoc_bodies(self, i: int) -> int:
        """Read the bodies of the here-documents begun on the line ending at ``i``."""
        text = self.text
        for delimiter, simple in self.pending_heredocs:
            body: list[str] = []
            while i < len(text):
                end = text.find("\n", i)
                line = text[i:] if end < 0 else text[i:end]
                i = len(text) if end < 0 else end + 1
                if line.strip() == delimiter:
                    break
                body.append(line)
            simple.heredocs.append("\n".join(body))
        self.pending_heredocs = []
        return i

    def run(self) -> list[Simple]:
        text = self.text
        n = len(text)
        i = 0
        while i < n:
            ch = text[i]
            if ch in " \t":
                self.flush(i)
                i += 1
            elif ch == "\n":
                self.end_command(i, True)
                i += 1
                if self.pending_heredocs:
                    i = self.heredoc_bodies(i)
            elif ch == "#" and not (self.word or self.started):
                end = text.find("\n", i)
                i = n if end < 0 else end
            elif ch == "\\":
                self.begin(i)
                if i + 1 < n and text[i + 1] != "\n":
                    self.word.append(text[i + 1])
                i += 2
            elif ch == "'":
                self.begin(i)
                end = text.find("'", i + 1)
                end = n if end < 0 else end
                self.word.append(text[i + 1 : end])
                i = end + 1
            elif ch == '"':
                self.begin(i)
                i = self.dquoted(i + 1)
            elif ch == "`":
                self.begin(i)
                end = text.find("`", i + 1)
                end = n if end < 0 else end
                self.substitution(text[i + 1 : end])
                self.word.append(text[i : end + 1])
                i = end + 1
            elif ch == "$" and text.startswith("$(", i):
                self.begin(i)
                end = _matching(text, i + 2, "(", ")")
                self.substitution(text[i + 2 : end])
                self.word.append(text[i : end + 1])
                i = end + 1
            elif ch in "<>" and text.startswith("(", i + 1):
                self.flush(i)
                end = _matching(text, i + 2, "(", ")")
                self.substitution(text[i + 2 : end])
                i = end + 1
            elif ch in "<>" or (ch == "&" and text.startswith(">", i + 1)):
                i = self.redirection(i)
            elif ch in _OPERATOR_CHARS:
                if ch == "|" and not text.startswith("||", i):
                    self.end_command(i, False)
                    i += 2 if text.startswith("|&", i) else 1
                else:
                    self.end_command(i, True)
                    i += 2 if text[i : i + 2] in ("&&", "||", ";;") else 1
            else:
                self.begin(i)
                self.word.append(ch)
                i += 1
        self.end_command(n, False)
        return [simple for simple in self.found if _useful(simple)]

    def dquoted(self, i: int) -> int:
        text = self.text
        n = len(text)
        while i < n:
            ch = text[i]
            if ch == "\\" and i + 1 < n:
                following = text[i + 1]
                if following in '$`"\\':
                    self.word.append(following)
                elif following != "\n":
                    self.word.append(ch + following)
                i += 2
            elif ch == '"':
                return i + 1
            elif ch == "$" and text.startswith("$(", i):
                end = _matching(text, i + 2, "(", ")")
                self.substitution(text[i + 2 : end])
                self.word.append(text[i : end + 1])
                i = end + 1
            elif ch == "`":
                end = text.find("`", i + 1)
                end = n if end < 0 else end
                self.substitution(text[i + 1 : end])
                self.word.append(text[i : end + 1])
                i = end + 1
            else:
                self.word.append(ch)
                i += 1
        return n

    def redirection(self, i: int) -> int:
        text = self.text
        if self.word and "".join(self.word).isdigit() and not self.redirect:
            self.word = []  # the descriptor number of ``2>``
            self.word_start = -1
            self.started = False
        self.flush(i)
        for op in ("&>>", "<<<", "<<-", ">>", ">|", "&>", "<<", "<>", ">&", "<&", ">", "<"):
            if text.startswith(op, i):
                break
        i += len(op)
        if op in (">&", "<&"):
            j = i
            while j < len(text) and text[j] in " \t":
                j += 1
            k = j
            while k < len(text) and (text[k].isdigit() or text[k] == "-"):
                k += 1
            if k > j and (k == len(text) or text[k] in " \t\n;&|)"):
                return k  # a descriptor copy, no file
            op = ">" if op == ">&" else "<"
        if op in ("<<", "<<-"):
            self.heredoc_next = True
        else:
            self.redirect = op
        return i


def _useful(simple: Simple) -> bool:
    return bool(simple.words or simple.redirects or simple.heredocs)


def parse(command: str) -> list[Simple]:
    """The simple commands of ``command``, in order (substitutions before the command that
    holds them), each without the reserved words that lead it (``then``, ``do``, ``{``,
    ``!``, ``time``…), so its first word is the program it runs."""
    simples = _Lexer(command, False, [0]).run()
    for simple in simples:
        while simple.words and simple.words[0] in _KEYWORDS:
            del simple.words[0]
    return simples
