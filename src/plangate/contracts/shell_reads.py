"""The files a shell command names, for the phase entries a command may make by reading a
skill's ``SKILL.md`` (:func:`plangate.contracts.entries.entered_by`). Standard library only
(hook path).

Codex CLI has no Skill tool: the model starts a skill by reading its ``SKILL.md`` with the
shell tool (``cat``, ``sed -n 1,200p``, ``head``, ``nl``, ``python3 -c "print(open(…)
.read())"``, ``cp`` then ``cat``…). A read cannot be told from a mention by its command's
name alone, so every word of a command counts as naming a file, and so does every piece of a
word between quotes, brackets, commas and ``=`` (a path inside ``python -c`` code); each is
taken relative to the session's folder, or to the folder of an earlier ``cd`` in the same
chain. A word with ``*`` or ``?`` names every file it matches. Only the words of commands that
show no file's text (:data:`METADATA`: ``ls``, ``stat``, ``test``…) are left out.

Not seen (docs/codex.md says so): a name built at run time (variables, string concatenation
in a script, ``find -exec`` with ``{}``, base64), a file opened by a script file the command
runs, a ``workdir`` the model gives the shell tool (Codex does not pass it to hooks), and
character classes (``[S]KILL.md``).
"""

from __future__ import annotations

import os

from plangate.contracts.bash_writes import SEPARATORS, tokens

METADATA = frozenset(
    {"ls", "stat", "test", "[", "file", "du", "wc", "realpath", "readlink", "basename", "dirname"}
)
"""Commands that show a file's name or size, never its text."""
CUTS = "'\"()[]{},;=:`<>|&$ \t\n"
"""What splits a word into the pieces that may each be a path."""


def may_name(command: str) -> bool:
    """False only for a command that cannot name a ``SKILL.md``: no ``SKILL`` in its text and
    no ``*`` or ``?``. Most commands end here."""
    return "SKILL" in command or "*" in command or "?" in command


def named(command: str, cwd: str) -> list[str]:
    """Every path the command may name (absolute, normalised; a glob stays a glob), in
    order, once each."""
    found: list[str] = []
    here = cwd
    segment: list[str] = []
    for word in [*tokens(command), ";"]:
        if word not in SEPARATORS:
            segment.append(word)
            continue
        here = _segment(segment, here, found)
        segment = []
    return list(dict.fromkeys(found))


def _segment(words: list[str], cwd: str, found: list[str]) -> str:
    """Note what one simple command names; returns the folder after it (``cd``)."""
    while words and ("=" in words[0] and not words[0].startswith("=")):
        words = words[1:]  # VAR=value prefixes
    if not words:
        return cwd
    program = os.path.basename(words[0])
    if program == "cd":
        plain = [word for word in words[1:] if not word.startswith("-")]
        return _absolute(plain[0], cwd) if plain else cwd
    if program in METADATA:
        return cwd
    for word in words:
        for piece in _pieces(word):
            found.append(_absolute(piece, cwd))
    return cwd


def _pieces(word: str) -> list[str]:
    pieces = [word]
    current: list[str] = []
    for ch in word + " ":
        if ch in CUTS:
            if current:
                pieces.append("".join(current))
                current = []
            continue
        current.append(ch)
    return [piece for piece in dict.fromkeys(pieces) if piece and not piece.startswith("-")]


def _absolute(path: str, cwd: str) -> str:
    path = os.path.expanduser(path)
    if not os.path.isabs(path):
        path = os.path.join(cwd, path)
    return os.path.normpath(path)
