"""Every write under the state root goes through :mod:`plangate.state_root`.

The rule, checked on the source of every module of ``src/plangate``: a module that names
the state root (imports ``state_root`` or ``journal_index_dir`` from
:mod:`plangate.locations`, calls ``locations.state_root()``, or imports
:mod:`plangate.state_root`) makes no write of its own. A write is a call that creates,
writes, renames, links, locks or removes a file or folder: ``open`` with a mode that writes,
``os.open`` with flags that write (or flags not spelled out), ``os.makedirs``,
``os.mkdir``, ``os.replace``, ``os.rename``, ``os.link``, ``os.symlink``, ``os.unlink``,
``os.remove``, ``os.rmdir``, ``shutil`` copies, moves and ``rmtree``,
``Path.write_text``/``write_bytes``/``mkdir``/``touch``/``unlink``/``rmdir``, and
:mod:`plangate.files`' ``replace``, ``remove_quietly`` and ``Lock`` (a subclass of it counts
as a lock). Such a module writes with :class:`plangate.state_root.StateRoot`'s
folders instead. :data:`ELSEWHERE` lists, by function, the writes of such modules that go
somewhere else, and says where; an entry no longer needed fails too.

Nothing outside :mod:`plangate.state_root` makes a ``Folder`` without checking it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import plangate

PACKAGE = Path(plangate.__file__).resolve().parent
OWNER = "state_root.py"

#: (module, function or class) -> where its writes go, outside the state root.
ELSEWHERE: dict[tuple[str, str], str] = {
    ("cli.py", "_temporary_file"): "a crash log the state root could not take, in /tmp",
    ("config.py", "write_atomic"): (
        "Claude Code's settings.json (install/settings_file.py), Codex's config.toml "
        "(install/codex_hooks.py)"
    ),
    ("config.py", "FileLock"): (
        "the lock beside Claude Code's settings.json; beside config.json, in the folder "
        "StateRoot checked"
    ),
    ("gates/session_record.py", "SessionLock"): "made by Folder.lock(kind=SessionLock)",
    ("install/skill_bundle.py", "replace_folder"): (
        "the skills in ~/.claude/skills; the plugin's marketplace in the state root, whose "
        "root install/plugin/install.py checks first"
    ),
    ("install/checks.py", "check_state_root"): "plangate doctor's probe of the state root",
    ("install/live.py", "live_lines"): "the throw-away folder of doctor --live, in /tmp",
    ("agents/confinement.py", "_fresh_home"): "the confined agent's home, in /tmp",
    ("agents/confinement.py", "_keep_refreshed_login"): "the login, in Claude Code's folder",
    ("agents/confinement.py", "confined"): "the confined agent's home, in /tmp",
    ("runs/sandbox.py", "restore"): "a file the agent made in its run's git worktree",
}

_OS_WRITES = {
    "open",
    "makedirs",
    "mkdir",
    "replace",
    "rename",
    "renames",
    "link",
    "symlink",
    "unlink",
    "remove",
    "rmdir",
}
_SHUTIL_WRITES = {"rmtree", "copy", "copy2", "copyfile", "copytree", "move"}
_FILES_WRITES = {"replace", "remove_quietly", "Lock"}
_PATH_WRITES = {"write_text", "write_bytes", "mkdir", "touch", "unlink", "rmdir"}


def _names_state_root(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module == "plangate.locations"
            and {alias.name for alias in node.names} & {"state_root", "journal_index_dir"}
        ):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "plangate.state_root":
            return True
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "locations"
            and node.attr in ("state_root", "journal_index_dir")
        ):
            return True
    return False


def _files_names(tree: ast.Module) -> set[str]:
    """Names this module imported from :mod:`plangate.files` (``from plangate.files import
    replace``)."""
    return {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "plangate.files"
        for alias in node.names
        if alias.name in _FILES_WRITES
    }


def _write_call(node: ast.Call, imported: set[str]) -> str | None:
    """The write ``node`` makes, by name, or None."""
    func = node.func
    if isinstance(func, ast.Name):
        if func.id == "open":
            return "open" if _writes_mode(node) else None
        return func.id if func.id in imported else None
    if not isinstance(func, ast.Attribute):
        return None
    owner = func.value.id if isinstance(func.value, ast.Name) else None
    if owner == "os" and func.attr == "open":
        return "os.open" if _writes_flags(node) else None
    if owner == "os" and func.attr in _OS_WRITES:
        return f"os.{func.attr}"
    if owner == "shutil" and func.attr in _SHUTIL_WRITES:
        return f"shutil.{func.attr}"
    if owner == "files" and func.attr in _FILES_WRITES:
        return f"files.{func.attr}"
    if func.attr in _PATH_WRITES and owner != "os":
        return f".{func.attr}"
    return None


_WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC", "O_EXCL"}


def _writes_flags(node: ast.Call) -> bool:
    """``os.open`` with flags that write, or flags the call does not spell out."""
    flags: ast.expr | None = node.args[1] if len(node.args) > 1 else None
    if flags is None:
        return True
    named = {
        part.attr if isinstance(part, ast.Attribute) else part.id
        for part in ast.walk(flags)
        if isinstance(part, (ast.Attribute, ast.Name))
    }
    spelled = {"os", *(name for name in named if name.startswith("O_"))}
    return bool(named & _WRITE_FLAGS) or not named <= spelled


def _writes_mode(node: ast.Call) -> bool:
    mode: ast.expr | None = node.args[1] if len(node.args) > 1 else None
    for keyword in node.keywords:
        if keyword.arg == "mode":
            mode = keyword.value
    if mode is None:
        return False
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return bool(set(mode.value) & set("wax+"))
    return True  # a mode the source does not spell out: taken as a write


def _lock_subclass(node: ast.ClassDef, imported: set[str]) -> bool:
    for base in node.bases:
        if (
            isinstance(base, ast.Attribute)
            and isinstance(base.value, ast.Name)
            and (base.value.id, base.attr) == ("files", "Lock")
        ):
            return True
        if isinstance(base, ast.Name) and base.id == "Lock" and "Lock" in imported:
            return True
    return False


class _Writes(ast.NodeVisitor):
    """The writes of a module, each with its line and the function or class it is in."""

    def __init__(self, imported: set[str]) -> None:
        self.imported = imported
        self.scope: list[str] = []
        self.found: list[tuple[int, str, str]] = []

    def _enter(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._enter(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._enter(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        if _lock_subclass(node, self.imported):
            self.found.append((node.lineno, self._where(node.name), "a files.Lock subclass"))
        self._enter(node)

    def visit_Call(self, node: ast.Call) -> None:
        call = _write_call(node, self.imported)
        if call is not None:
            self.found.append((node.lineno, self._where(), call))
        self.generic_visit(node)

    def _where(self, name: str | None = None) -> str:
        outer = self.scope[0] if self.scope else name
        return outer or "<module>"


def writes(source: str) -> list[tuple[int, str, str]]:
    """``(line, outermost function or class, call)`` for each write in a module that names
    the state root; none for a module that does not."""
    tree = ast.parse(source)
    if not _names_state_root(tree):
        return []
    visitor = _Writes(_files_names(tree))
    visitor.visit(tree)
    return visitor.found


def _modules() -> list[tuple[str, str]]:
    return [
        (path.relative_to(PACKAGE).as_posix(), path.read_text(encoding="utf-8"))
        for path in sorted(PACKAGE.rglob("*.py"))
    ]


def test_only_the_state_root_module_writes_under_the_state_root() -> None:
    unexplained: list[str] = []
    used: set[tuple[str, str]] = set()
    for module, source in _modules():
        if module == OWNER:
            continue
        for line, where, call in writes(source):
            for key in ((module, where), (module, "*")):
                if key in ELSEWHERE:
                    used.add(key)
                    break
            else:
                unexplained.append(f"src/plangate/{module}:{line} ({where}): {call}")
    assert not unexplained, (
        "a write in a module that names the state root: use plangate.state_root's "
        "StateRoot (or, for a write elsewhere, say where in ELSEWHERE):\n" + "\n".join(unexplained)
    )
    assert not set(ELSEWHERE) - used, f"ELSEWHERE entries no longer needed: {set(ELSEWHERE) - used}"


def test_the_state_root_module_itself_is_checked_and_writes() -> None:
    # The rule sees the primitives where they are meant to be.
    source = (PACKAGE / OWNER).read_text(encoding="utf-8")
    calls = {call for _, _, call in writes(source + "\nfrom plangate.state_root import X\n")}
    assert {"os.open", "os.replace", "os.unlink", "os.mkdir", "files.replace"} <= calls


def test_the_rule_catches_each_kind_of_write() -> None:
    module = """
from pathlib import Path
from plangate import files, locations
from plangate.files import replace as put
import os, shutil

def appends(root=locations.state_root()):
    with open(os.path.join(root, "log"), "a") as handle:
        handle.write("x")
    os.makedirs(root)
    os.open(root + "/h", os.O_WRONLY | os.O_APPEND)
    Path(root, "f").write_text("x")
    put(root + "/g", b"")
    shutil.rmtree(root)

class Held(files.Lock):
    pass

def reads(path):
    os.close(os.open(path, os.O_RDONLY | os.O_CLOEXEC))
    with open(path, "rb") as handle:
        return handle.read() + "x".replace("x", "y").encode()
"""
    found = [(where, call) for _, where, call in writes(module)]
    assert found == [
        ("appends", "open"),
        ("appends", "os.makedirs"),
        ("appends", "os.open"),
        ("appends", ".write_text"),
        ("appends", "put"),
        ("appends", "shutil.rmtree"),
        ("Held", "a files.Lock subclass"),
    ]
    assert writes(module.replace("locations.state_root()", "None")) == []


def test_no_folder_is_made_without_its_check() -> None:
    made = [
        f"src/plangate/{module}:{node.lineno}"
        for module, source in _modules()
        if module != OWNER
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id == "Folder")
            or (isinstance(node.func, ast.Attribute) and node.func.attr == "Folder")
        )
    ]
    assert not made, "a Folder is made by StateRoot.folder only: " + ", ".join(made)
