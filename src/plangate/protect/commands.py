"""Which commands only read, which of plangate's commands a skill runs by design, and which
run a command only a person may run. Standard library only (hook path).

**Read-only** (:func:`reads_only`): a command whose program is in :data:`READ_ONLY` (and
none of :data:`WRITING_OPTIONS` of it is given), ``git`` with one of :data:`GIT_READ_ONLY`,
``find`` without an action that runs or deletes, or one of plangate's commands in
:data:`PLANGATE_BY_DESIGN`. Such a command may name a protected path as an argument (the
model may ``cat`` a contract or ``plangate journal inspect`` a journal); its output
redirections are still checked. Anything else that names a protected path is refused.

**Person-only** (:func:`person_only`): a command of
:data:`plangate.decisions.defence_codes.PERSON_ONLY_COMMANDS` run as ``plangate …`` (any path
to the script), ``python -m plangate …``, through a wrapper (``env``, ``sudo``, ``uv run``…)
or, in the text of an interpreter's code or a shell the command starts, as the word
``plangate`` with the command's words (``from plangate.commands import approve``).
"""

from __future__ import annotations

import os

from plangate.decisions.defence_codes import PERSON_ONLY_COMMANDS

READ_ONLY = frozenset(
    (
        "cat", "less", "more", "head", "tail", "grep", "egrep", "fgrep", "rg", "ls", "stat",
        "wc", "diff", "file", "tree", "realpath", "readlink", "basename", "dirname", "md5sum",
        "sha1sum", "sha256sum", "cksum", "jq", "cd", "pushd", "popd", "pwd", "echo", "printf",
        "test", "[", "true", "false", "which", "type", "du", "df", "id", "whoami", "date",
        "sort", "uniq", "cut", "nl", "column", "tr",
    )
)  # fmt: skip
"""Programs that only read files (and print)."""

WRITING_OPTIONS: dict[str, tuple[str, ...]] = {
    "less": ("-o", "-O", "--log-file", "--LOG-FILE"),
    "tree": ("-o",),
    "rg": ("--pre",),
    "sort": ("-o", "--output"),
}
"""Options by which a program of :data:`READ_ONLY` writes a file or runs another program."""

GIT_READ_ONLY = frozenset(("diff", "log", "status", "show", "blame", "rev-parse", "ls-files"))
FIND_ACTIONS = ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fls")

PLANGATE_BY_DESIGN: tuple[tuple[str, str | None], ...] = (
    ("autoplan", "init"),
    ("autoplan", "checkpoint"),
    ("autoplan", "prepare-close"),
    ("gate", "render"),
    ("contract", "check"),
    ("contract", "list"),
    ("contract", "status"),
    ("journal", "inspect"),
    ("log", None),
    ("report", None),
    ("explain", None),
    ("doctor", None),
    ("config", "get"),
    ("config", "list"),
)
"""plangate's commands that a skill has the model run, or that only read: their path
arguments are not judged (they change no protected file; their artifacts live in the
project's ``.plangate/tmp/``). ``doctor --live`` is judged like any command."""

WRAPPERS = frozenset(
    ("sudo", "doas", "env", "nohup", "setsid", "nice", "ionice", "timeout", "stdbuf",
     "command", "exec", "builtin", "time", "chronic", "xargs", "uvx", "flock", "chroot")
)  # fmt: skip
"""Programs that run the command their arguments name."""
RUNNERS = frozenset(("uv", "pipx", "poetry", "pdm", "hatch", "conda", "pixi"))
"""Programs whose ``run`` runs the command after it."""
_WRAPPER_VALUE_OPTIONS = frozenset(
    ("-u", "-g", "-C", "-D", "-h", "-p", "-U", "-r", "-t", "-T", "-n", "-s", "-k", "-I", "-L",
     "-P", "-E", "-d", "-a", "-i", "-o", "-e", "--signal", "--kill-after", "--chdir", "--unset")
)  # fmt: skip

INTERPRETERS = (
    "python", "pypy", "node", "nodejs", "deno", "bun", "perl", "ruby", "php", "lua", "sh",
    "bash", "zsh", "dash", "ksh", "fish", "csh", "tcsh", "eval", "source", ".", "xargs",
    "parallel", "watch", "script", "su", "busybox", "awk", "gawk", "osascript",
)  # fmt: skip
"""Programs that run code their arguments or input hold: their whole text is searched for a
person-only command spelled in any way."""

PLANGATE_MODULES = ("plangate", "plangate.cli", "plangate.__main__")


def program(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def _is_assignment(word: str) -> bool:
    name, sep, _ = word.partition("=")
    return bool(sep) and name.replace("_", "a").isalnum() and not name[:1].isdigit()


def unwrap(words: list[str]) -> tuple[list[str], list[str]]:
    """``(argv, assignments)``: the command a simple command runs, past keywords, leading
    ``NAME=value`` words and wrappers (``sudo -u x env A=1 nohup cmd …`` runs ``cmd …``)."""
    assignments: list[str] = []
    i = 0
    n = len(words)
    while i < n:
        word = words[i]
        if word in ("!", "{", "}", "(", "then", "else", "do", "if", "elif", "while", "until"):
            i += 1
        elif _is_assignment(word):
            assignments.append(word)
            i += 1
        elif program(word) in WRAPPERS:
            name = program(word)
            i += 1
            while i < n and (words[i].startswith("-") or _is_assignment(words[i])):
                if name == "env" and words[i] in ("-S", "--split-string") and i + 1 < n:
                    split = words[i + 1].split()
                    words = words[:i] + split + words[i + 2 :]
                    n = len(words)
                    break
                if _is_assignment(words[i]):
                    assignments.append(words[i])
                elif words[i] in _WRAPPER_VALUE_OPTIONS:
                    i += 1
                i += 1
            if name in ("timeout",) and i < n:
                i += 1  # the duration
            if name in ("chroot", "flock") and i < n:
                i += 1  # the root, the lock file
        elif program(word) in RUNNERS and i + 1 < n and words[i + 1] in ("run", "exec", "x"):
            i += 2
            while i < n and words[i].startswith("-"):
                i += 1
        else:
            break
    return words[i:], assignments


def _verbs(args: list[str]) -> tuple[str | None, str | None]:
    plain = [word for word in args if not word.startswith("-")]
    return (plain[0] if plain else None), (plain[1] if len(plain) > 1 else None)


def plangate_args(argv: list[str]) -> list[str] | None:
    """The arguments of a plangate command (``plangate …``, ``python -m plangate …``), None
    when ``argv`` runs no plangate command."""
    if not argv:
        return None
    name = program(argv[0])
    if name == "plangate":
        return argv[1:]
    if name.startswith(("python", "pypy")):
        i = 1
        while i < len(argv):
            word = argv[i]
            if word == "-m" and i + 1 < len(argv):
                return argv[i + 2 :] if argv[i + 1] in PLANGATE_MODULES else None
            if word.startswith("-m") and len(word) > 2:
                return argv[i + 1 :] if word[2:] in PLANGATE_MODULES else None
            if not word.startswith("-") or word == "-c":
                return None
            i += 1
    return None


def _matches(
    verb: str | None,
    sub: str | None,
    table: tuple[tuple[str, str | None], ...],
    args: list[str] | None = None,
) -> bool:
    """Whether ``verb sub`` is in ``table``; an entry whose second word is a flag
    (``("run", "--no-require-approval")``) matches when ``args`` hold the flag."""
    flags = args or []
    return any(
        verb == v and (s is None or sub == s or (s.startswith("-") and s in flags))
        for v, s in table
    )


def by_design(argv: list[str]) -> bool:
    """Whether ``argv`` is one of :data:`PLANGATE_BY_DESIGN` (``true autoplan-published …``
    is :data:`READ_ONLY`'s ``true``)."""
    args = plangate_args(argv)
    if args is None:
        return False
    verb, sub = _verbs(args)
    if verb == "doctor" and "--live" in args:
        return False
    return _matches(verb, sub, PLANGATE_BY_DESIGN) or args in ([], ["--version"], ["--help"])


def person_only(argv: list[str]) -> str | None:
    """The person-only command ``argv`` runs (``plangate approve``), None when none."""
    args = plangate_args(argv)
    if args is None:
        return None
    verb, sub = _verbs(args)
    if _matches(verb, sub, PERSON_ONLY_COMMANDS, args):
        flag = next((s for v, s in PERSON_ONLY_COMMANDS if v == verb and s and s in args), None)
        shown = sub if (verb, sub) in PERSON_ONLY_COMMANDS else flag
        return " ".join(word for word in ("plangate", verb, shown) if word)
    return None


def reads_only(argv: list[str]) -> bool:
    """Whether ``argv`` only reads the files it names (see the module's text)."""
    if not argv:
        return True
    name = program(argv[0])
    if name in READ_ONLY:
        writing = WRITING_OPTIONS.get(name, ())
        return not any(word.startswith(writing) for word in argv[1:]) if writing else True
    if name == "git":
        verb, _ = _verbs(argv[1:])
        if verb in GIT_READ_ONLY:
            return not any(word.startswith(("--output", "-o")) for word in argv[1:])
        return False
    if name == "find":
        return not any(word in FIND_ACTIONS for word in argv[1:])
    return by_design(argv)


SHELLS = frozenset(("sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "busybox"))


def shell_code(argv: list[str]) -> str | None:
    """The command text a shell runs with ``-c`` (``bash -c 'plangate approve x'``)."""
    if not argv or program(argv[0]) not in SHELLS:
        return None
    for index, word in enumerate(argv[1:-1], start=1):
        if word.startswith("-") and not word.startswith("--") and "c" in word:
            return argv[index + 1]
    return None


def runs_code(argv: list[str]) -> bool:
    """Whether ``argv`` runs code that its words or input hold (an interpreter, a shell), or
    a program the hook cannot name (a variable, a substitution)."""
    if not argv:
        return False
    name = program(argv[0])
    if "$" in argv[0] or "`" in argv[0]:
        return True
    for interpreter in INTERPRETERS:
        if name.startswith(interpreter):
            rest = name[len(interpreter) :]
            if not rest.strip("0123456789.-") or rest in ("3w", "w"):
                return True
    return name.startswith("./") or argv[0].startswith("./")


def _words(text: str) -> set[str]:
    """The identifier-like words of ``text``: ``approve`` in ``from plangate.commands import
    approve``, ``['approve', …]`` or ``commands.approve``."""
    found: set[str] = set()
    current: list[str] = []
    for ch in text:
        if ch.isalnum() or ch in "_-":
            current.append(ch)
        else:
            if current:
                found.add("".join(current))
                current = []
    if current:
        found.add("".join(current))
    return found


def person_only_in_text(text: str) -> str | None:
    """A person-only command named anywhere in code a command runs: ``plangate`` with the
    command's words (``approve``; ``config`` and ``set``)."""
    if "plangate" not in text:
        return None
    # A path counts by its last part when it is a program (``.venv/bin/plangate``); a folder
    # named plangate (``cd ~/src/plangate``, ``~/src/plangate/setup.py``) says nothing.
    spoken = []
    for token in text.replace('"', " ").replace("'", " ").split():
        folder, _, last = token.rpartition("/")
        if not folder:
            spoken.append(token)
        elif last != "plangate" or folder.endswith("bin"):
            spoken.append(last)
    words = _words(" ".join(spoken).replace(".", " "))
    if "plangate" not in words:
        return None
    for verb, sub in PERSON_ONLY_COMMANDS:
        if verb in words and (sub is None or sub in words):
            return " ".join(word for word in ("plangate", verb, sub) if word)
    return None


def home() -> str:
    return os.path.expanduser("~")
