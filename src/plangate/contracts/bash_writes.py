"""The files a Bash command plainly writes. Standard library only, no ``shlex`` (hook path).

Seen (the class ``docs/contracts.md`` names, each member tested in
``tests/contracts/test_bash_writes.py``): output redirections (``>``, ``>>``, ``&>``,
``N>``; not ``/dev/null`` or ``>&N``), ``tee``, the destination of ``cp``, ``mv``,
``install`` and ``ln`` (for ``ln -s``, the file the link points to as well), the files
``sed`` and ``perl`` edit in place (``-i`` alone or in a cluster: ``-i.bak``, ``-Ei``,
``-ni``, ``-pi``, ``-i.bak -pe``; ``--in-place``, ``--in-place=SUFFIX``), ``touch``,
``truncate``, ``rm``, ``rmdir``, ``mkdir`` and ``dd of=``, in every command of a chain or
pipe (``;``, ``&&``, ``||``, ``|``) and after ``cd DIR`` (relative to it). A path through a
symbolic link is judged as the file it resolves to as well (:func:`plangate.contracts.rules.
written_as`). Not seen, and said so in ``docs/contracts.md``: what a program does once it
runs (a script, ``python -c``, ``node -e``, ``ed``, ``patch``, ``git apply``,
``git checkout``, ``make``, a package manager), commands run by ``sh -c``, ``eval``,
``find -exec`` or ``xargs``, paths held in variables or built by substitution, and
here-documents passed to an interpreter. Those are caught by the files
(:mod:`plangate.contracts.drift`) when the phase is left and at the final stop.
"""

from __future__ import annotations

import os

SEPARATORS = (";", "&&", "||", "|", "&", "\n")
DEST_LAST = ("cp", "mv", "install", "ln")
ALL_ARGS = ("touch", "truncate", "rm", "mkdir", "rmdir")
DEVICES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty")
WRITERS = (*DEST_LAST, *ALL_ARGS, "tee", "sed", "perl", "dd")
"""The commands :func:`_segment` notes a write of (``cd`` only moves)."""


def may_write(command: str) -> bool:
    """False only for a command :func:`written_files` finds no write in: no ``>``, no
    quote or backslash (which could spell a name), and no writing command's name anywhere
    in its text. A long session's journal holds hundreds of Bash calls; most end here."""
    if ">" in command or "'" in command or '"' in command or "\\" in command:
        return True
    return any(name in command for name in WRITERS)


def tokens(command: str) -> list[str]:
    """Words and operators, with quotes removed (a rough ``sh`` lexer)."""
    out: list[str] = []
    word: list[str] = []
    quoted = False
    i = 0
    n = len(command)

    def flush() -> None:
        nonlocal quoted
        if word or quoted:
            out.append("".join(word))
            word.clear()
        quoted = False

    while i < n:
        ch = command[i]
        if ch in "'\"":
            end = command.find(ch, i + 1)
            if end < 0:
                end = n
            word.append(command[i + 1 : end])
            quoted = True
            i = end + 1
            continue
        if ch == "\\" and i + 1 < n:
            word.append(command[i + 1])
            i += 2
            continue
        if ch == "#" and not word:
            while i < n and command[i] != "\n":
                i += 1
            continue
        if ch in " \t":
            flush()
            i += 1
            continue
        if ch in ";|&\n<>":
            flush()
            two = command[i : i + 2]
            if two in ("&&", "||", ">>", "&>", ">&", "<<"):
                out.append(two)
                i += 2
            else:
                out.append(ch)
                i += 1
            continue
        if ch.isdigit() and not word and i + 1 < n and command[i + 1] == ">":
            i += 1  # 2> file: the descriptor number is part of the operator
            continue
        word.append(ch)
        i += 1
    flush()
    return out


def strip_heredocs(command: str) -> str:
    """The command without the bodies of its here-documents (their text is data)."""
    kept: list[str] = []
    waiting: list[str] = []
    for line in command.split("\n"):
        if waiting:
            if line.strip() == waiting[0]:
                waiting.pop(0)
            continue
        kept.append(line)
        rest = line
        while "<<" in rest:
            rest = rest.split("<<", 1)[1]
            word = rest.lstrip("-").lstrip()
            end = 0
            while end < len(word) and not word[end].isspace() and word[end] not in ";|&<>)":
                end += 1
            delimiter = word[:end].strip("'\"")
            if delimiter:
                waiting.append(delimiter)
    return "\n".join(kept)


def written_files(command: str, cwd: str) -> list[str]:
    """Absolute paths the command plainly writes, in order, once each."""
    if not may_write(command):
        return []
    found: list[str] = []
    here = cwd
    words = tokens(strip_heredocs(command))
    segment: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word in (">", ">>", "&>"):
            target = words[i + 1] if i + 1 < len(words) else ""
            if target and target not in DEVICES and not target.startswith("&"):
                found.append(_absolute(target, here))
            i += 2
            continue
        if word == ">&":
            i += 2
            continue
        if word == "<<":
            i += 2  # the delimiter
            continue
        if word == "<":
            i += 2
            continue
        if word in SEPARATORS:
            here = _segment(segment, here, found)
            segment = []
            i += 1
            continue
        segment.append(word)
        i += 1
    _segment(segment, here, found)
    return list(dict.fromkeys(found))


def _segment(words: list[str], cwd: str, found: list[str]) -> str:
    """Note the files one simple command writes; returns the cwd after it (``cd``)."""
    while words and (
        ("=" in words[0] and not words[0].startswith("="))  # VAR=value prefixes
        or words[0] in ("sudo", "env", "command", "nohup", "time")
    ):
        words = words[1:]
    if not words:
        return cwd
    name = os.path.basename(words[0])
    args = words[1:]
    plain = [a for a in args if not a.startswith("-")]
    if name == "cd":
        return _absolute(plain[0], cwd) if plain else cwd
    if name == "tee":
        found.extend(_absolute(a, cwd) for a in plain)
    elif name in DEST_LAST:
        target = _target_dir(args)
        if target is not None:
            found.append(_absolute(target, cwd))
        elif len(plain) >= 2:
            found.append(_absolute(plain[-1], cwd))
            if name == "ln" and len(plain) == 2 and _symbolic(args):
                # a link made now: a later write through it writes what it points to
                link = _absolute(plain[-1], cwd)
                found.append(_absolute(plain[0], os.path.dirname(link)))
    elif name in ALL_ARGS:
        found.extend(_absolute(a, cwd) for a in _operands(args, VALUED.get(name, ())))
    elif name in IN_PLACE:
        edited = _in_place_files(name, args)
        found.extend(_absolute(a, cwd) for a in edited)
    elif name == "dd":
        found.extend(_absolute(a[3:], cwd) for a in args if a.startswith("of="))
    return cwd


VALUED = {
    "truncate": ("-s", "-r", "-o", "--size", "--reference"),
    "touch": ("-d", "-r", "-t", "--date", "--reference"),
    "mkdir": ("-m", "--mode", "--context"),
}
"""Options whose value is the next word (``truncate -s 0 f``: ``0`` is no file)."""


def _operands(args: list[str], valued: tuple[str, ...]) -> list[str]:
    found: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in valued:
            skip = True
        elif not arg.startswith("-"):
            found.append(arg)
    return found


def _symbolic(args: list[str]) -> bool:
    return any(
        a == "--symbolic" or (a.startswith("-") and not a.startswith("--") and "s" in a)
        for a in args
    )


def _target_dir(args: list[str]) -> str | None:
    for i, arg in enumerate(args):
        if arg in ("-t", "--target-directory") and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--target-directory="):
            return arg.split("=", 1)[1]
    return None


IN_PLACE = {"sed": ("ef", ""), "perl": ("eE", "IMmFxCdl0")}
"""The commands that edit files in place with ``-i``: per command, the option letters that
take the script (the rest of the word, or the next word) and those that take the rest of the
word as their value (perl's ``-Idir``, ``-Mmodule``)."""
SCRIPT_OPTIONS = ("--expression", "--file")


def _in_place_files(name: str, args: list[str]) -> list[str]:
    """The files ``sed`` or ``perl`` edits in place, or [] when it edits none.

    In place: ``-i`` in a cluster of short options (``-i``, ``-i.bak``, ``-Ei``, ``-ni``,
    ``-pi``, ``-pi.bak``, ``-i.bak -pe``) or ``--in-place`` (``--in-place=.bak``). The files are
    the words after the script: every plain word when a script came with ``-e``/``-f`` (or
    ``--expression``/``--file``), else every plain word but the first (the script).
    """
    script_letters, value_letters = IN_PLACE[name]
    in_place = False
    scripted = False
    plain: list[str] = []
    skip = False
    ended = False
    for arg in args:
        if skip:
            skip = False
            continue
        if ended or arg == "-" or not arg.startswith("-"):
            plain.append(arg)
            continue
        if arg == "--":
            ended = True
            continue
        if arg.startswith("--"):
            option = arg.split("=", 1)[0]
            if option == "--in-place":
                in_place = True
            elif option in SCRIPT_OPTIONS:
                scripted = True
                skip = "=" not in arg
            continue
        for position, letter in enumerate(arg[1:], 1):
            if letter == "i":
                in_place = True
                break  # the rest of the word is the backup suffix
            if letter in script_letters:
                scripted = True
                skip = position == len(arg) - 1  # the script is the next word
                break
            if letter in value_letters:
                break
    if not in_place:
        return []
    return plain if scripted else plain[1:]


def _absolute(path: str, cwd: str) -> str:
    path = os.path.expanduser(path)
    if not os.path.isabs(path):
        path = os.path.join(cwd, path)
    return os.path.normpath(path)
