"""What plangate protects, and whether a path is inside it. Standard library only (hook path).

Two kinds of protection, both checked on a path made absolute and normalized, and again on
its ``realpath`` and on its parent's ``realpath`` (a symlink to a protected file, or into a
protected folder, is that file):

- **places**: a file or folder at a known spot (:class:`Places`, built once per call): the
  state root, the user's settings files, ``~/.claude.json``, the managed settings folder, the
  session journals (``<config dir>/projects``), Claude Code's plugins folder, files passed
  with ``--settings`` to a Claude Code process above this hook, the project's settings files,
  plangate's installed package (its ``plangate`` folder and ``plangate-*.dist-info``), the
  interpreter the hooks run, its virtual environment's ``pyvenv.cfg``, ``lib`` and
  ``bin/python*``, the standard library the hooks import, and the skills plangate installed
  (a skill folder holding plangate's marker file, in the user's or the project's skills);
- **open folders** inside them, which a skill has the model write by design: the CEO
  review's output folders ``<state root>/ceo-plans/`` and
  ``<state root>/projects/<slug>/ceo-plans/`` (the ``plan-ceo-review`` skill writes its review
  there when the plan must not change). A path in one is not protected unless a symlink
  takes it elsewhere;
- **shapes**: a path that looks like one wherever it is (:func:`shape`): a ``.claude/settings.json``
  or ``.claude/settings.local.json``, any ``plangate.toml`` (a skill's contract), any
  ``.plangate`` folder except its ``tmp`` (the state root, a project's contracts; a project's
  ``.plangate/tmp/`` holds the /autoplan artifacts and is not protected), and any
  ``.claude/projects`` folder (journals).
"""

from __future__ import annotations

import os
import sys

from plangate import locations
from plangate.skill_names import PLUGIN_MARKER

SETTINGS = "Claude Code settings"
STATE = "plangate's state root"
CONTRACT = "a workflow contract"
PACKAGE = "plangate's installed package"
INTERPRETER = "the Python that runs plangate's hooks"
JOURNALS = "Claude Code's session journals"
CODEX_SESSIONS = "Codex CLI's session histories"
CODEX_SETTINGS = "Codex CLI's settings (its hooks and their trust)"
PLUGINS = "Claude Code's plugins (plangate's plugin hooks)"
PLANGATE_FOLDER = "a plangate folder (.plangate: state or workflow contracts)"
INSTALLED_SKILL = "a skill plangate installed"
MANAGED_DIR = "/etc/claude-code"
OPEN_FOLDER = "ceo-plans"
"""The state root's folders a skill has the model write: ``ceo-plans`` at its top and in each
``projects/<slug>``."""
ANCESTRY_MAX = 32
"""How many processes above the hook are looked at for ``--settings``."""
CMDLINE_MAX = 64 * 1024


def _norm(path: str) -> str:
    return os.path.normpath(path)


def inside(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or below it (both normalized absolute paths)."""
    if path == root:
        return True
    prefix = root if root.endswith("/") else root + "/"
    return path.startswith(prefix)


def shape(path: str) -> str | None:
    """What a normalized absolute path is by its shape alone (None: nothing protected)."""
    parts = path.split("/")
    last = parts[-1]
    if last == "plangate.toml":
        return CONTRACT
    for index, part in enumerate(parts):
        if part == ".plangate":
            following = parts[index + 1] if index + 1 < len(parts) else ""
            if following != "tmp":
                return PLANGATE_FOLDER
        elif part == ".claude" and index + 1 < len(parts):
            following = parts[index + 1]
            if following in ("settings.json", "settings.local.json"):
                return SETTINGS
            if following == "projects":
                return JOURNALS
    if last == ".claude.json" or last.startswith(".claude.json."):
        return SETTINGS + " (~/.claude.json)"
    return None


def _codex_home(transcript: str | None) -> str | None:
    """Codex CLI's home for a call whose history is a Codex rollout
    (``<CODEX_HOME>/sessions/YYYY/MM/DD/rollout-….jsonl``): ``$CODEX_HOME``, which Codex
    gives its hooks, else the folder above ``sessions``; None for another agent's call."""
    if not transcript or not os.path.basename(transcript).startswith("rollout-"):
        return None
    named = os.environ.get("CODEX_HOME")
    if named and os.path.isabs(named):
        return os.path.normpath(named)
    folder = transcript
    for _ in range(4):
        folder = os.path.dirname(folder)
    if os.path.basename(folder) != "sessions":
        return None
    return os.path.dirname(folder)


def _proc_is_ours() -> bool:
    # plangate.processes.proc_is_ours without importing subprocess on the hook path
    try:
        return os.readlink("/proc/self") == str(os.getpid())
    except OSError:
        return False


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as stream:
            return stream.read(CMDLINE_MAX)
    except OSError:
        return b""


def settings_arguments(start: int | None = None) -> list[str]:
    """The files given with ``--settings`` to the processes above ``start`` (default: this
    process), read from ``/proc`` of this PID namespace only, at most :data:`ANCESTRY_MAX`
    of them. A ``--settings`` value that is JSON text (not a file) is left out."""
    if not _proc_is_ours():
        return []
    found: list[str] = []
    pid = os.getpid() if start is None else start
    for _ in range(ANCESTRY_MAX):
        stat = _read(f"/proc/{pid}/stat")
        close = stat.rfind(b")")
        fields = stat[close + 2 :].split() if close >= 0 else []
        if len(fields) < 2:
            break
        try:
            parent = int(fields[1])
        except ValueError:
            break
        argv = [
            a.decode("utf-8", "surrogateescape") for a in _read(f"/proc/{pid}/cmdline").split(b"\0")
        ]
        values = []
        for index, word in enumerate(argv):
            if word == "--settings" and index + 1 < len(argv):
                values.append(argv[index + 1])
            elif word.startswith("--settings="):
                values.append(word.split("=", 1)[1])
        if values:
            try:
                cwd = os.readlink(f"/proc/{pid}/cwd")
            except OSError:
                cwd = "/"
            for value in values:
                text = value.strip()
                if text and not text.startswith("{"):
                    found.append(_norm(os.path.join(cwd, os.path.expanduser(text))))
        if parent <= 1 or parent == pid:
            break
        pid = parent
    return found


def venv_dir() -> str | None:
    """The virtual environment of the Python running this, or None. Found by its
    ``pyvenv.cfg`` beside the interpreter's folder, not by ``sys.prefix``: the hooks run with
    ``-S``, and without ``site`` ``sys.prefix`` is the base installation's."""
    if not sys.executable:
        return None
    folder = os.path.dirname(os.path.dirname(os.path.abspath(sys.executable)))
    if os.path.isfile(os.path.join(folder, "pyvenv.cfg")):
        return folder
    return sys.prefix if sys.prefix != sys.base_prefix else None


def _interpreter(venv: str | None) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    executable = sys.executable
    if executable:
        found.append((_norm(os.path.abspath(executable)), INTERPRETER))
        found.append((os.path.realpath(executable), INTERPRETER))
    if venv is not None:
        what = "the virtual environment plangate's hooks run in"
        for name in ("pyvenv.cfg", "lib", "lib64"):
            found.append((os.path.join(venv, name), what))
    stdlib = "the Python standard library plangate's hooks import"
    found.append((os.path.dirname(os.__file__), stdlib))
    return found


class Places:
    """The protected places for one call: ``(folder or file, what it is)`` pairs."""

    __slots__ = ("roots", "bin_dir", "package_dir", "states", "skill_folders")

    def __init__(self, cwd: str, project: str | None = None, transcript: str | None = None) -> None:
        from plangate.hook_registry import package_root

        home = os.path.expanduser("~")
        config = locations.claude_config_dir()
        states = {locations.state_root(), os.path.join(home, ".plangate")}
        self.states = sorted({_norm(p) for p in states} | {os.path.realpath(p) for p in states})
        roots: list[tuple[str, str]] = [(state, STATE) for state in sorted(states)]
        roots += [
            (os.path.join(config, "settings.json"), SETTINGS + " (user)"),
            (os.path.join(config, "settings.local.json"), SETTINGS + " (user, local)"),
            (os.path.join(config, ".claude.json"), SETTINGS + " (.claude.json)"),
            (os.path.join(home, ".claude.json"), SETTINGS + " (~/.claude.json)"),
            (os.path.join(config, "projects"), JOURNALS),
            (os.path.join(config, "plugins"), PLUGINS),
            (MANAGED_DIR, SETTINGS + " (managed)"),
        ]
        skill_folders = {os.path.join(config, "skills")}
        for folder in {cwd, project or cwd}:
            skill_folders.add(os.path.join(folder, ".claude", "skills"))
            skill_folders.add(os.path.join(folder, ".agents", "skills"))  # Codex's
            for name in ("settings.json", "settings.local.json"):
                roots.append((os.path.join(folder, ".claude", name), SETTINGS + " (project)"))
            roots.append((os.path.join(folder, ".plangate", "contracts"), CONTRACT + " folder"))
        codex_home = _codex_home(transcript)
        if codex_home is not None:
            # Codex CLI: its sessions, and the files that hold its hooks and their trust
            roots.append((os.path.join(codex_home, "sessions"), CODEX_SESSIONS))
            for name in ("config.toml", "hooks.json"):
                roots.append((os.path.join(codex_home, name), CODEX_SETTINGS))
            for folder in {cwd, project or cwd}:
                roots.append((os.path.join(folder, ".codex"), CODEX_SETTINGS + " (project)"))
        elif transcript and transcript.endswith(".jsonl") and os.path.isabs(transcript):
            # ``<config dir>/projects/<slug>/<session>.jsonl``, wherever Claude Code keeps it
            roots.append((os.path.dirname(os.path.dirname(transcript)), JOURNALS))
        for path in settings_arguments():
            roots.append((path, SETTINGS + " (passed with --settings)"))
        self.package_dir = os.path.join(package_root(), "plangate")
        roots.append((self.package_dir, PACKAGE))
        venv = venv_dir()
        roots.extend(_interpreter(venv))
        self.bin_dir = os.path.join(venv, "bin") if venv is not None else None
        seen: dict[str, str] = {}
        for path, what in roots:
            for spelling in (_norm(os.path.abspath(path)), os.path.realpath(path)):
                seen.setdefault(spelling, what)
        self.roots = list(seen.items())
        self.skill_folders = sorted(
            {_norm(p) for p in skill_folders} | {os.path.realpath(p) for p in skill_folders}
        )

    def is_open(self, path: str) -> bool:
        """Whether ``path`` is inside one of the state root's open folders."""
        for state in self.states:
            if inside(path, state) and path != state:
                parts = path[len(state) :].strip("/").split("/")
                if parts[0] == OPEN_FOLDER:
                    return True
                if parts[0] == "projects" and len(parts) > 2 and parts[2] == OPEN_FOLDER:
                    return True
        return False

    def what_at(self, path: str) -> str | None:
        """What protected place the normalized absolute ``path`` is in, by spelling alone."""
        if self.is_open(path):
            return None
        for root, what in self.roots:
            if inside(path, root):
                return what
        found = shape(path)
        if found is not None:
            return found
        for folder in self.skill_folders:
            if path != folder and inside(path, folder):
                skill = path[len(folder) :].strip("/").split("/")[0]
                if os.path.lexists(os.path.join(folder, skill, PLUGIN_MARKER)):
                    return INSTALLED_SKILL
        parent, name = os.path.split(path)
        package_parent = os.path.dirname(self.package_dir)
        if (
            parent == package_parent
            and name.startswith("plangate-")
            and name.endswith(".dist-info")
        ):
            return PACKAGE + " (its record)"
        if self.bin_dir is not None and parent == self.bin_dir and name.startswith("python"):
            return INTERPRETER
        return None

    def what(self, path: str) -> str | None:
        """What protected place ``path`` (absolute) is in: as spelled, with every symlink
        followed, or with its parent's symlinks followed; None when none."""
        if "\0" in path:
            return None  # no file has such a name (a word of binary text, not a path)
        spelled = _norm(path)
        found = self.what_at(spelled)
        if found is not None:
            return found
        real = os.path.realpath(spelled)
        if real != spelled:
            found = self.what_at(real)
            if found is not None:
                return found
        parent, name = os.path.split(spelled)
        via_parent = os.path.join(os.path.realpath(parent), name)
        if via_parent not in (spelled, real):
            return self.what_at(via_parent)
        return None

    def holds_below(self, path: str) -> str | None:
        """What protected place lies below the folder ``path`` (normalized absolute): removing
        or moving the folder would take it along. None when none does."""
        for spelling in {path, os.path.realpath(path)}:
            for root, what in self.roots:
                if root != spelling and inside(root, spelling):
                    return what
            for folder in self.skill_folders:
                if inside(folder, spelling):
                    for skill in _listdir(folder):
                        inner = os.path.join(folder, skill)
                        for name in (PLUGIN_MARKER, "plangate.toml"):
                            if os.path.lexists(os.path.join(inner, name)):
                                return INSTALLED_SKILL if name == PLUGIN_MARKER else CONTRACT
        return None


def _listdir(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []
