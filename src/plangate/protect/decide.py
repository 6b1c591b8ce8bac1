"""The protection's decision for one PreToolUse call, its hook output and its log line.

:func:`refusal` answers None (nothing protected is touched) or the hook output of a denial:

- **Write, Edit, MultiEdit, NotebookEdit**: the path (``~`` expanded, relative to the
  payload's ``cwd``, symlinks followed) inside a protected place (:mod:`.places`):
  ``protected_path``;
- **Bash**: a person-only command in any spelling (:func:`.commands.person_only`, and in the
  code an interpreter or a shell runs): ``protected_command``; else a protected path named by
  an output redirection, by a command that is not read-only (:func:`.commands.reads_only`) or
  by any command in a pipeline with one, a command that is not read-only run inside a protected
  folder, a removal or move of a folder holding a protected place, or, in a pipeline that is
  not read-only, a plain mention of one (:data:`MARKERS`): ``protected_path``.

Words are expanded as far as the hook can know them: ``~``, ``$HOME``, ``${VAR}`` of the
hook's environment (the one Claude Code gives its hooks and its Bash tool) and of the
command's own assignments, ``cd DIR`` before a command. A word the hook cannot expand (a
substitution, an unknown variable) is checked through its markers only.

Each refusal is logged (:func:`plangate.decisions.log.append_decision`, ``event`` ``protect``).
"""

from __future__ import annotations

import os

from plangate.protect import commands, places, shell

TYPE_CHECKING = False
if TYPE_CHECKING:
    from plangate.hook_io.protocol import Output, Payload

WRITE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")
TOOLS = ("Bash", *WRITE_TOOLS, "apply_patch")
SHELL_DEPTH_MAX = 4
"""How deep ``sh -c "sh -c …"`` is read as commands (deeper, as text)."""
SCRIPT_MAX = 64 * 1024
"""How much of a script an interpreter runs is read (its text is judged like the command's)."""
SCRIPTS_MAX = 16
"""How many scripts of one command are read (past that, the command is judged without them)."""
CANDIDATES_MAX = 4096
"""Distinct path candidates looked at in one command: a command that holds more, in a
pipeline that is not read-only, is refused (padding must not hide a path)."""
_SEPARATORS = frozenset(" \t\n\r'\"`()[]{},;:=<>|&+!#%^@")
_GLOB = "*?["
DESTRUCTIVE = frozenset(
    ("rm", "rmdir", "mv", "unlink", "shred", "chmod", "chown", "chgrp", "chattr", "truncate")
)
"""Programs for which a folder that holds a protected place counts as that place."""

MARKERS: tuple[tuple[str, str], ...] = (
    (".claude/settings", places.SETTINGS),
    ("settings.local.json", places.SETTINGS),
    (".claude.json", places.SETTINGS),
    ("managed-settings", places.SETTINGS),
    ("disableAllHooks", places.SETTINGS),
    ("plangate.toml", places.CONTRACT),
    ("contract-approvals", places.STATE),
    ("site-packages/plangate", places.PACKAGE),
    ("dist-packages/plangate", places.PACKAGE),
    (".claude/projects", places.JOURNALS),
)
"""Text that plainly names a protected place, wherever a pipeline that is not read-only holds
it; with ``.plangate`` not followed by ``/tmp`` or a ``ceo-plans`` folder, and ``.claude``
with ``settings`` anywhere in one pipeline (:func:`_marker`)."""


class Found:
    """A refusal: its code, the path or command it names, and what that is."""

    __slots__ = ("code", "subject", "what")

    def __init__(self, code: str, subject: str, what: str) -> None:
        self.code = code
        self.subject = subject
        self.what = what

    @property
    def detail(self) -> str:
        from plangate.decisions.defence_codes import PROTECTED_COMMAND

        if self.code == PROTECTED_COMMAND:
            return f"the command runs `{self.subject}` ({self.what})"
        return f"{self.subject} is {self.what}"

    def __repr__(self) -> str:
        return f"Found({self.code!r}, {self.subject!r}, {self.what!r})"


def _absolute(path: str, cwd: str) -> str:
    return os.path.normpath(path if os.path.isabs(path) else os.path.join(cwd, path))


def write_path(tool_input: dict[str, object], cwd: str) -> str | None:
    path = tool_input.get("file_path") or tool_input.get("notebook_path")
    if not isinstance(path, str) or not path:
        return None
    return _absolute(os.path.expanduser(path), cwd)


class _Vars:
    """Variables the hook can know: its environment, then the command's assignments."""

    def __init__(self) -> None:
        self.values: dict[str, str] = dict(os.environ)
        self.values.setdefault("HOME", commands.home())

    def expand(self, text: str) -> str:
        if "$" not in text and "~" not in text:
            return text
        out: list[str] = []
        i = 0
        n = len(text)
        while i < n:
            ch = text[i]
            if ch == "$" and i + 1 < n:
                if text[i + 1] == "{":
                    end = text.find("}", i + 2)
                    name = text[i + 2 : end] if end > 0 else ""
                    if name in self.values:
                        out.append(self.values[name])
                        i = end + 1
                        continue
                else:
                    j = i + 1
                    while j < n and (text[j].isalnum() or text[j] == "_"):
                        j += 1
                    name = text[i + 1 : j]
                    if name in self.values:
                        out.append(self.values[name])
                        i = j
                        continue
            if (
                ch == "~"
                and (i == 0 or text[i - 1] in _SEPARATORS)
                and (i + 1 == n or text[i + 1] == "/" or text[i + 1] in _SEPARATORS)
            ):
                out.append(self.values["HOME"])
                i += 1
                continue
            out.append(ch)
            i += 1
        return "".join(out)

    def assign(self, word: str) -> None:
        name, _, value = word.partition("=")
        self.values[name] = self.expand(value)


def pieces(text: str) -> list[str]:
    """The path-like pieces of ``text``: runs of characters a path is written with, holding
    a ``/``, a ``.`` or a leading ``~``."""
    found: list[str] = []
    current: list[str] = []
    for ch in text + " ":
        if ch in _SEPARATORS:
            if current:
                piece = "".join(current)
                if "/" in piece or "." in piece:
                    found.append(piece)
                current = []
        else:
            current.append(ch)
    return found


def _glob_match(pattern: str, name: str) -> bool:
    """``*``, ``?`` and ``[…]`` (any one character: wider than the shell, on purpose), in
    time linear in ``len(pattern) * len(name)`` whatever the stars."""
    if name.startswith(".") and not pattern.startswith("."):
        return False
    tokens: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern[i] == "[" and pattern.find("]", i + 1) > 0:
            tokens.append("?")
            i = pattern.find("]", i + 1) + 1
        else:
            tokens.append(pattern[i])
            i += 1
    reach = [True] + [False] * len(name)  # reach[k]: the tokens so far match name[:k]
    for token in tokens:
        if token == "*":
            for k in range(1, len(name) + 1):
                reach[k] = reach[k] or reach[k - 1]
        else:
            reach = [False] + [
                reach[k] and (token == "?" or token == name[k]) for k in range(len(name))
            ]
    return reach[-1]


class Judge:
    """The protected places of one call, and the checks of paths and commands against them."""

    def __init__(self, cwd: str, project: str | None, transcript: str | None = None) -> None:
        self.cwd = cwd
        self.places = places.Places(cwd, project, transcript)

    def path(self, path: str) -> str | None:
        return self.places.what(path)

    def candidate(self, piece: str, cwd: str, destructive: bool) -> str | None:
        if "$" in piece or "`" in piece:
            return None  # not known: judged by its markers
        if any(ch in piece for ch in _GLOB):
            return self._glob(piece, cwd)
        path = _absolute(piece, cwd)
        found = self.places.what(path)
        if found is None and destructive:
            found = self.places.holds_below(path)
        return found

    def _glob(self, piece: str, cwd: str) -> str | None:
        """A glob-ish piece: its folder, or a name in it the last part matches."""
        first = min(piece.find(ch) for ch in _GLOB if ch in piece)
        head = piece[:first]
        folder = _absolute(head.rsplit("/", 1)[0] or "/" if "/" in head else ".", cwd)
        found = self.places.what(folder)
        if found is not None or "/" in piece[first:]:
            return found  # a pattern across folders: judged by its folder and its markers
        pattern = piece.rsplit("/", 1)[-1]
        try:
            names = os.listdir(folder)
        except OSError:
            return None
        for name in names[:CANDIDATES_MAX]:
            if _glob_match(pattern, name):
                found = self.places.what(os.path.join(folder, name))
                if found is not None:
                    return found
        return None


def _marker(text: str) -> str | None:
    for mark, what in MARKERS:
        if mark in text:
            return what
    if ".claude" in text and "settings" in text:
        return places.SETTINGS
    start = text.find(".plangate")
    while start >= 0:
        end = start + len(".plangate")
        while end < len(text) and text[end] not in _SEPARATORS:
            end += 1
        rest = text[start + len(".plangate") : end]
        open_folder = rest.startswith("/tmp/") or rest == "/tmp"
        open_folder |= f"/{places.OPEN_FOLDER}/" in rest or rest.endswith(f"/{places.OPEN_FOLDER}")
        if not open_folder or ".." in rest:
            return places.PLANGATE_FOLDER
        start = text.find(".plangate", start + 1)
    return None


def bash(
    command: str,
    cwd: str,
    judge_for: Judge | None = None,
    project: str | None = None,
    depth: int = 0,
    transcript: str | None = None,
) -> Found | None:
    """What protected thing a Bash command touches (see the module's text); None: nothing."""
    from plangate.decisions.defence_codes import PROTECTED_COMMAND, PROTECTED_PATH

    simples = shell.parse(command)
    variables = _Vars()
    judge = judge_for
    opaque = False
    runs: list[tuple[shell.Simple, list[str], list[str], str]] = []  # simple, argv, assigned, cwd
    here = cwd
    for simple in simples:
        words = [variables.expand(word) for word in simple.words]
        argv, assigned = commands.unwrap(words)
        for word in assigned:
            variables.assign(word)
        command_name = commands.person_only(argv)
        if command_name is not None:
            return Found(PROTECTED_COMMAND, command_name, "a command only the person may run")
        inner = commands.shell_code(argv)
        if inner is not None and depth < SHELL_DEPTH_MAX:
            nested = bash(inner, here, judge, project, depth + 1)  # ``sh -c CODE``: its commands
            if nested is not None:
                return nested
        if commands.runs_code(argv) or simple.heredocs and not commands.reads_only(argv):
            opaque = True
        runs.append((simple, argv, assigned, here))
        if argv and argv[0] in ("cd", "pushd") and not simple.nested:
            target = next((word for word in argv[1:] if not word.startswith("-")), None)
            if target is None:
                here = variables.values["HOME"]
            elif "$" not in target and "`" not in target:
                here = _absolute(target, here)
    if opaque:
        named = commands.person_only_in_text(variables.expand(command))
        if named is not None:
            return Found(PROTECTED_COMMAND, named, "a command only the person may run, in code")

    writing_pipelines = {
        simple.pipeline for simple, argv, _, _ in runs if argv and not commands.reads_only(argv)
    }
    writing_pipelines |= {
        simple.pipeline
        for simple, argv, _, _ in runs
        if not argv and simple.heredocs  # a bare here-document
    }
    seen: set[tuple[str, str, bool]] = set()
    scripts = SCRIPTS_MAX
    said: dict[int, list[str]] = {}  # the words of each pipeline that is not read-only
    for simple, argv, assigned, where in runs:
        targets = [
            target
            for op, target in simple.redirects
            if op in shell.WRITE_REDIRECTS and not target.startswith("/dev/")
        ]
        writing = simple.pipeline in writing_pipelines
        if not targets and not writing:
            continue
        if judge is None:
            judge = Judge(cwd, project, transcript)
        for target in targets:
            expanded = variables.expand(target)
            found = judge.candidate(expanded, where, False)
            if found is not None:
                return Found(PROTECTED_PATH, expanded, found)
        if not writing:
            continue
        if argv and not commands.reads_only(argv):
            found = judge.path(where)
            if found is not None:
                return Found(PROTECTED_PATH, f"{where} (the folder it runs in)", found)
        destructive = bool(argv) and commands.program(argv[0]) in DESTRUCTIVE
        texts = [variables.expand(word) for word in argv[1:]]
        texts += [variables.expand(word.partition("=")[2]) for word in assigned]
        texts += [variables.expand(body) for body in simple.heredocs]
        if scripts > 0 and commands.runs_code(argv):
            scripts -= 1
            texts += [variables.expand(body) for body in _scripts(argv, where)]
        for text in texts:
            for piece in pieces(text) if not destructive else [text, *pieces(text)]:
                key = (piece, where, destructive)
                if key in seen:
                    continue
                seen.add(key)
                if len(seen) > CANDIDATES_MAX:
                    what = f"more than {CANDIDATES_MAX} paths, more than the protection reads"
                    return Found(PROTECTED_PATH, "this command", what)
                found = judge.candidate(piece, where, destructive)
                if found is not None:
                    return Found(PROTECTED_PATH, piece, found)
        said.setdefault(simple.pipeline, []).extend(texts)
    for texts in said.values():
        text = " ".join(texts)
        marked = _marker(text)
        if marked is not None:
            return Found(PROTECTED_PATH, _clip(text), marked + ", named in the command")
    return None


def _scripts(argv: list[str], where: str) -> list[str]:
    """The text of the script a command runs (``python3 x.py``, ``bash x.sh``, ``./x.sh``,
    ``source x``): a file written into an allowed folder and then run is judged by what it
    says."""
    if not commands.runs_code(argv):
        return []
    paths = [argv[0]] if "/" in argv[0] else []
    rest = argv[1:]
    if not any(word in ("-c", "-e", "--eval", "-m") for word in rest):
        paths += [word for word in rest if not word.startswith("-")][:1]
    found: list[str] = []
    for path in paths:
        if "$" in path or "`" in path:
            continue
        try:
            with open(_absolute(path, where), "rb") as stream:
                data = stream.read(SCRIPT_MAX)
        except OSError:
            continue
        if b"\0" not in data:  # a program (the interpreter itself, ELF), not a script's text
            found.append(data.decode("utf-8", "replace"))
    return found


def _clip(text: str, most: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= most else text[: most - 3] + "..."


def check(payload: Payload) -> Found | None:
    """What protected thing this PreToolUse call touches; None for nothing (or not a call
    the protection decides)."""
    tool = payload.get("tool_name")
    if payload.get("hook_event_name") != "PreToolUse" or tool not in TOOLS:
        return None
    tool_input = payload.get("tool_input")
    cwd = payload.get("cwd")
    if not isinstance(tool_input, dict) or not isinstance(cwd, str) or not os.path.isabs(cwd):
        return None
    named = payload.get("transcript_path")
    transcript = named if isinstance(named, str) else None
    from plangate.journal.codex_folder import hook_project

    project = hook_project(payload)  # a Codex hook's cwd may be a workdir
    if tool == "Bash":
        command = tool_input.get("command")
        if not isinstance(command, str):
            return None
        return bash(command, cwd, project=project, transcript=transcript)
    if tool == "apply_patch":  # Codex: the patch names every file it writes
        from plangate.contracts.patch_writes import written_files

        text = tool_input.get("command")
        paths = written_files(text, cwd) if isinstance(text, str) else []
    else:
        path = write_path(tool_input, cwd)
        paths = [path] if path is not None else []
    judge = Judge(cwd, project, transcript)
    for path in paths:
        what = judge.path(path)
        if what is not None:
            from plangate.decisions.defence_codes import PROTECTED_PATH

            return Found(PROTECTED_PATH, path, what)
    return None


def refusal(payload: Payload) -> Output | None:
    """The denial for a call that touches a protected thing (logged); None otherwise."""
    found = check(payload)
    if found is None:
        return None
    from plangate.decisions import log, reasons
    from plangate.journal.codex_folder import AGENT, is_codex_payload

    agent = AGENT if is_codex_payload(payload) else None  # no history read: no version
    decision = reasons.Decision.deny(
        found.code, detail=found.detail, path=reasons.PATH_PAYLOAD, claude_code_version=agent
    )
    log.append_decision(decision, extra={"event": "protect"})
    return decision.output()
