"""One file of compiled plangate modules for hook processes: fewer system calls per import.

A phase decision imports some forty plangate modules. Through Python's own import system
each costs a search of the package folder, a ``stat`` of the source, an ``open``, ``fstat``
and ``read`` of its ``.pyc`` and the checks of its header, before any of its code runs, and
then some 50 µs of the import system's own Python code (module locks, the spec's
attributes): in all several milliseconds of every hook process, which starts with ``python
-S`` at about 10 ms. In a process started as hooks are registered (``python -S -c``,
:func:`plangate.hook_registry.hook_command`), ``plangate/__init__.py`` calls
:func:`install`. It serves plangate's modules from one file,
``plangate/__pycache__/hook-code.<tag>.bin``: one ``open`` for the process, then per module
one ``stat`` of its source, and one ``pread`` of its code or of its group's (the modules one
import loads together, :mod:`.code_cache_write`).

Two ways in. ``builtins.__import__`` becomes :meth:`CodeCache.import_module`: an ``import``
statement (absolute, as all of plangate's are) of a module the file holds runs that module's
code at once, bound as the import system binds it (in ``sys.modules``, on its parent
package, with the same ``__spec__``, ``__file__``, ``__path__``); anything else goes to
Python's own ``__import__``. That spares a phase decision about 1 ms. And the cache is first
in ``sys.meta_path``, for imports that do not pass through ``__import__`` (the hook
command's own, :mod:`importlib`), and to find the standard library's compiled extension
modules (``_json``, ``zlib``, ``_sha256``) where they were found before, without searching
every folder on the path (about 0.2 ms). Under ``python -X importtime`` only the finder is
used, so that every module is in the profile.

A module is served only while its source (or extension file) has the modification time (in
nanoseconds) and size recorded beside its code; any other module, a changed one, or all of
them when the file is missing, unreadable or from another Python, is imported as usual. A
hook process that imported a plangate module the usual way rewrites the file once it has
answered (deferred work, :mod:`plangate.deferred`; :mod:`.code_cache_write`), keeping the
entries that still hold: after an upgrade or an edit, the next hook runs are quick again.
``PLANGATE_HOOK_CODE_CACHE=0`` turns the cache off. Standard library only (hook path); no
``from __future__ import annotations`` here, which would import ``__future__`` into every
hook process (the cached modules are compiled without theirs, see :mod:`.code_cache_write`).
"""

import builtins
import marshal
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from types import CodeType, ModuleType

ENV = "PLANGATE_HOOK_CODE_CACHE"
MAGIC = b"PGH4"
PACKAGE = "plangate"
_PREFIX = PACKAGE + "."
_HEAD = 8  # MAGIC, then the index's length (4 bytes, little-endian)
EXTENSION = -1
"""The code length of an entry for a compiled extension module: it has no code here."""

#: name -> (source path, is a package, source mtime in ns, source size, offset, length,
#: group offset, group length, position): the module's own code is marshalled at
#: ``offset``; ``position`` is its place in the tuple of its group's code at ``group
#: offset`` (:meth:`CodeCache.code_of`), or :data:`ALONE` (imported with no other module) or
#: :data:`UNSEEN` (not seen imported yet: the next process that runs it rewrites the file).
Entry = tuple[str, bool, int, int, int, int, int, int, int]
ALONE = -1
UNSEEN = -2


def package_folder() -> str:
    """The ``plangate`` package folder this module belongs to."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cache_path(folder: "str | None" = None) -> str:
    tag = sys.implementation.cache_tag or "python"
    return os.path.join(folder or package_folder(), "__pycache__", f"hook-code.{tag}.bin")


class CodeCache:
    """The meta-path finder and loader of one cache file (``sys.meta_path[0]``), and the
    ``__import__`` that serves its modules without the import system's machinery."""

    def __init__(self, path: str, fd: int, index: "dict[str, Entry]", base: int) -> None:
        self.path = path
        self.fd = fd
        self.index = index
        self.base = base
        self.served: set[str] = set()
        self.before = set(sys.modules)
        self.fallback = builtins.__import__
        self.blobs: dict[int, tuple[CodeType, ...]] = {}
        self.loading: list[str] = []
        self.roots: dict[str, str] = {}
        """Each module this process ran from the cache -> the module whose import started
        its loading: the modules imported together, whose code the writer marshals together
        (shared names unmarshalled once)."""

    def current(self, name: str) -> "Entry | None":
        """The entry of ``name`` while its file is the one recorded."""
        entry = self.index.get(name)
        if entry is None:
            return None
        try:
            info = os.stat(entry[0])
        except OSError:
            return None
        if info.st_mtime_ns != entry[2] or info.st_size != entry[3]:
            return None
        return entry

    def find_spec(self, name: str, path: object = None, target: object = None) -> object:
        entry = self.current(name)
        if entry is None:
            return None
        if entry[5] == EXTENSION:
            external = sys.modules["_frozen_importlib_external"]
            loader = external.ExtensionFileLoader(name, entry[0])
            return external.spec_from_file_location(name, entry[0], loader=loader)
        return self._spec(sys.modules["_frozen_importlib"], name, entry)

    def _spec(self, bootstrap: "ModuleType", name: str, entry: Entry) -> object:
        spec = bootstrap.ModuleSpec(name, self, origin=entry[0], is_package=entry[1])
        if entry[1]:
            spec.submodule_search_locations = [os.path.dirname(entry[0])]
        spec.has_location = True
        spec.cached = self.path  # where its compiled code is (not a .pyc)
        return spec

    def create_module(self, spec: object) -> None:
        return None  # the default module

    def exec_module(self, module: "ModuleType") -> None:
        name = module.__name__
        code = self.code_of(self.index[name])
        self.served.add(name)
        self._run(name, code, module)

    def _run(self, name: str, code: "CodeType", module: "ModuleType") -> None:
        self.roots[name] = self.loading[0] if self.loading else name
        self.loading.append(name)
        try:
            exec(code, module.__dict__)  # noqa: S102 - plangate's own compiled module
        finally:
            self.loading.pop()

    def code_of(self, entry: Entry) -> "CodeType":
        """The code of an entry's module: from its group's blob when that is unmarshalled
        already or this is the group's first module (whose import loads the others), else
        from its own (another path imports it without the rest of its group)."""
        position = entry[8]
        blob = self.blobs.get(entry[6]) if position >= 0 else None
        if blob is None and position == 0:
            blob = marshal.loads(os.pread(self.fd, entry[7], self.base + entry[6]))
            self.blobs[entry[6]] = blob
        if blob is not None:
            return blob[position]
        code: CodeType = marshal.loads(os.pread(self.fd, entry[5], self.base + entry[4]))
        return code

    def load(self, name: str) -> "ModuleType | None":
        """Module ``name`` (its parent packages first) run from the cache and bound as the
        import system binds it; None, with nothing bound, when the cache cannot serve it.
        Without the import system's module locks: a hook process imports from one thread."""
        entry = self.current(name)
        if entry is None or entry[5] == EXTENSION:
            return None
        parent, _, child = name.rpartition(".")
        if parent and parent not in sys.modules and self.load(parent) is None:
            return None
        spec = self._spec(sys.modules["_frozen_importlib"], name, entry)
        module = type(sys)(name)
        module.__spec__ = spec  # type: ignore[assignment]
        module.__loader__ = self  # type: ignore[assignment]
        module.__file__ = entry[0]
        module.__cached__ = self.path  # type: ignore[attr-defined]
        module.__package__ = name if entry[1] else parent
        if entry[1]:
            module.__path__ = spec.submodule_search_locations  # type: ignore[attr-defined]
        code = self.code_of(entry)
        sys.modules[name] = module
        spec._initializing = True  # type: ignore[attr-defined]
        try:
            self._run(name, code, module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        finally:
            spec._initializing = False  # type: ignore[attr-defined]
        module = sys.modules[name]
        if parent:
            setattr(sys.modules[parent], child, module)
        self.served.add(name)
        return module

    def import_module(
        self,
        name: str,
        globals: "Mapping[str, object] | None" = None,  # noqa: A002 - __import__'s names
        locals: "Mapping[str, object] | None" = None,  # noqa: A002
        fromlist: "Sequence[str] | None" = (),
        level: int = 0,
    ) -> "ModuleType":
        """``builtins.__import__`` in a hook process (see the module docstring)."""
        if level == 0 and name in self.index:
            module = sys.modules.get(name)
            if module is None and name not in sys.modules:  # None there: a blocked import
                module = self.load(name)
            if module is not None:
                if not fromlist:
                    return sys.modules[name.partition(".")[0]]
                if not self.index[name][1] or self._submodules(module, name, fromlist):
                    return module
        return self.fallback(name, globals, locals, fromlist, level)

    def _submodules(self, package: "ModuleType", name: str, fromlist: "Sequence[str]") -> bool:
        """What ``from package import a, b`` needs: each name an attribute of the package,
        or a submodule the cache serves; False leaves the rest to the import system."""
        for item in fromlist:
            if item == "*":
                return False
            if hasattr(package, item):
                continue
            submodule = f"{name}.{item}"
            # Already imported (one still running, in a cycle): the import system leaves it
            # to ``from ... import`` to find it in ``sys.modules``, and so does this.
            if submodule not in sys.modules and self.load(submodule) is None:
                return False
        return True

    def ungrouped(self) -> bool:
        """Whether this process ran a module from the cache that no process had run from it
        before (written by one that imported it the usual way): the writer can group it."""
        return any(self.index[name][8] == UNSEEN for name in self.served)

    def missed(self) -> list[str]:
        """plangate modules this process imported the usual way, after the cache was set."""
        return [
            name
            for name in ours(sys.modules)
            if name not in self.served and name not in self.before and source_of(name)
        ]


def source_of(name: str) -> "str | None":
    """The ``.py`` file module ``name`` was imported from (None: not one the cache holds)."""
    origin = getattr(getattr(sys.modules.get(name), "__spec__", None), "origin", None)
    return origin if isinstance(origin, str) and origin.endswith(".py") else None


def ours(modules: "Mapping[str, ModuleType]") -> list[str]:
    return [name for name in list(modules) if name == PACKAGE or name.startswith(_PREFIX)]


def read_index(fd: int) -> "tuple[dict[str, Entry], int]":
    """The index of an open cache file and where its code starts; ValueError when it is not
    one this Python wrote."""
    head = os.pread(fd, _HEAD, 0)
    if len(head) != _HEAD or head[:4] != MAGIC:
        raise ValueError("not a plangate code cache")
    length = int.from_bytes(head[4:], "little")
    index = marshal.loads(os.pread(fd, length, _HEAD))
    if not isinstance(index, dict):
        raise ValueError("not a plangate code cache")
    return index, _HEAD + length


def install() -> "CodeCache | None":
    """Put the cache first in ``sys.meta_path`` (whether or not its file exists yet) and,
    unless imports are being profiled, make its :meth:`~CodeCache.import_module` the
    ``__import__``."""
    if os.environ.get(ENV, "1") == "0":
        return None
    path = cache_path()
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        fd = -1
    index: dict[str, Entry] = {}
    base = 0
    if fd >= 0:
        try:
            index, base = read_index(fd)
        except (OSError, ValueError, EOFError, TypeError):
            index = {}
    cache = CodeCache(path, fd, index, base)
    sys.meta_path.insert(0, cache)  # type: ignore[arg-type]
    profiled = "importtime" in sys._xoptions or os.environ.get("PYTHONPROFILEIMPORTTIME")
    if index and not profiled:
        builtins.__import__ = cache.import_module
    return cache


def installed() -> "CodeCache | None":
    for finder in sys.meta_path:
        if isinstance(finder, CodeCache):
            return finder
    return None


def after_answer() -> None:
    """In a hook process that imported a plangate module the usual way: rewrite the cache
    after the answer (deferred work), where the package folder can be written."""
    cache = installed()
    if cache is None or not (cache.missed() or cache.ungrouped()):
        return
    folder = os.path.dirname(cache.path)
    if not os.access(folder if os.path.isdir(folder) else os.path.dirname(folder), os.W_OK):
        return
    from plangate import deferred
    from plangate.hook_io import code_cache_write

    deferred.defer(lambda: code_cache_write.save_quietly(cache), deferred.min_bytes())
