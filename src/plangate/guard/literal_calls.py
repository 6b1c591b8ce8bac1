"""Binding the skill's Bash calls without running a shell.

The guard trusts an ``init`` (and notes ``checkpoint`` and ``prepare-close``) only when the
Bash command is one literal call: words that are plain, single-quoted, or double-quoted
without ``$``, backticks or escapes a shell would interpret; no variables, substitutions,
``;``, ``&&``, pipes or redirects. A command that clearly tried to run ``plangate autoplan
init`` some other way is *unbindable*, and the denial says how to run it instead.
"""

from __future__ import annotations

from plangate.guard.world import OS, World

_BARE_FORBIDDEN = frozenset(" \t\n'\"\\$`;&|<>(){}*?[]!#~")
_UNBINDABLE_MARKS = ("$", "`", "|", ";", "&&", ">", "<", "$(")


class LiteralCall:
    """A Bash command that is exactly one literal ``plangate autoplan <sub> …`` call."""

    __slots__ = ("executable", "subcommand", "arguments")

    def __init__(self, executable: str, subcommand: str, arguments: list[str]) -> None:
        self.executable = executable
        self.subcommand = subcommand
        self.arguments = arguments

    def __repr__(self) -> str:
        return f"LiteralCall({self.executable!r}, {self.subcommand!r}, {self.arguments!r})"


def split_literal(command: str) -> list[str] | None:
    """The words of ``command`` when it is literal, else None."""
    text = command.replace("\\\n", " ").strip()
    words: list[str] = []
    index = 0
    length = len(text)
    while index < length:
        char = text[index]
        if char in " \t":
            index += 1
            continue
        word = []
        while index < length and text[index] not in " \t":
            char = text[index]
            if char == "'":
                end = text.find("'", index + 1)
                if end < 0 or "\n" in text[index:end]:
                    return None
                word.append(text[index + 1 : end])
                index = end + 1
            elif char == '"':
                end = index + 1
                chunk = []
                while end < length and text[end] != '"':
                    inner = text[end]
                    if inner in "$`\n":
                        return None
                    if inner == "\\":
                        following = text[end + 1 : end + 2]
                        if following in ('"', "\\", "$", "`", "\n", ""):
                            return None
                        chunk.append("\\")  # a backslash before an ordinary character stays
                    else:
                        chunk.append(inner)
                    end += 1
                if end >= length:
                    return None
                word.append("".join(chunk))
                index = end + 1
            elif char in _BARE_FORBIDDEN:
                return None
            else:
                word.append(char)
                index += 1
        words.append("".join(word))
    return words or None


def literal_plangate_call(
    command: str, executable: str, group: str = "autoplan", world: World = OS
) -> LiteralCall | None:
    """The ``plangate <group> <sub> …`` call ``command`` makes (``autoplan`` unless told),
    when it is literal and runs ``executable`` (this installation's plangate, compared by
    real path in ``world``)."""
    if group not in command:
        return None  # the cheap test first: most Bash commands are not plangate's
    words = split_literal(command)
    if words is None or len(words) < 3 or words[1] != group:
        return None
    if not world.same_file(words[0], executable):
        return None
    return LiteralCall(words[0], words[2], words[3:])


def init_arguments(command: object, executable: str, world: World = OS) -> list[str] | None:
    """The three paths of a literal ``plangate autoplan init`` call, else None: the one
    answer to "is this Bash command an init the guard can bind?"."""
    if not isinstance(command, str):
        return None
    call = literal_plangate_call(command, executable, world=world)
    if call is None or call.subcommand != "init" or len(call.arguments) != 3:
        return None
    return call.arguments


def kept_in_full(command: object) -> bool:
    """A Bash call the invocation's window keeps with its results: it names ``autoplan``
    (every command /autoplan runs does: its path or its restore point) or it was too large
    for the index (``None``: it is reloaded, and decided then)."""
    return command is None or "autoplan" in str(command)


def is_gate_render(command: object, executable: str, world: World = OS) -> bool:
    """A literal ``plangate gate render <restore>`` call: the Final Approval Gate's write,
    which ends the /autoplan invocation once it succeeds."""
    if not isinstance(command, str):
        return False
    call = literal_plangate_call(command, executable, "gate", world)
    return call is not None and call.subcommand == "render" and len(call.arguments) == 1


def looks_like_unbindable_init(command: str) -> bool:
    """A command that runs ``plangate autoplan init`` through shell features the guard cannot
    bind (variables, substitutions, chains, pipes, redirects)."""
    if "autoplan" not in command or " init " not in command.replace("\n", " ") + " ":
        return False
    if "plangate" not in command and "$" not in command:
        return False
    return any(mark in command for mark in _UNBINDABLE_MARKS)
