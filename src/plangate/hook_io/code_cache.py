"""One file of compiled plangate modules for hook processes: fewer system calls per import.

A phase decision imports some forty plangate modules. Through Python's own import system
each costs a search of the package folder, a ``stat`` of the source, an ``open``, ``fstat``
and ``read`` of its ``.pyc`` and the checks of its header, before any of its code runs: in
all a few milliseconds of every hook process, which starts with ``python -S`` at about 8 ms.
In a process started as hooks are registered (``python -S -c``,
:func:`plangate.hook_registry.hook_command`), ``plangate/__init__.py`` installs this module's
finder first in ``sys.meta_path``. It serves plangate's modules from one file,
``plangate/__pycache__/hook-code.<tag>.bin``: one ``open`` for the process, then per module
one ``stat`` of its source and one ``pread`` of its code.

A module is served only while its source has the modification time (in nanoseconds) and
size recorded beside its code; any other module, a changed one, or all of them when the file
is missing, unreadable or from another Python, is imported as usual. A hook process that
imported a plangate module the usual way rewrites the file once it has answered (deferred
work, :mod:`plangate.deferred`), keeping the entries that still hold: after an upgrade or an
edit, the next hook runs are quick again. The file is replaced atomically; where the
package folder cannot be written nothing is cached. ``PLANGATE_HOOK_CODE_CACHE=0`` turns
the cache off. Standard library only (hook path).
"""

from __future__ import annotations

import marshal
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType

ENV = "PLANGATE_HOOK_CODE_CACHE"
MAGIC = b"PGHC"
PACKAGE = "plangate"
_PREFIX = PACKAGE + "."
_HEAD = 8  # MAGIC, then the index's length (4 bytes, little-endian)

#: name -> (source path, is a package, source mtime in ns, source size, offset, length)
Entry = tuple[str, bool, int, int, int, int]


def package_folder() -> str:
    """The ``plangate`` package folder this module belongs to."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cache_path(folder: str | None = None) -> str:
    tag = sys.implementation.cache_tag or "python"
    return os.path.join(folder or package_folder(), "__pycache__", f"hook-code.{tag}.bin")


class CodeCache:
    """The meta-path finder and loader of one cache file (``sys.meta_path[0]``)."""

    def __init__(self, path: str, fd: int, index: dict[str, Entry], base: int) -> None:
        self.path = path
        self.fd = fd
        self.index = index
        self.base = base
        self.served: set[str] = set()
        self.before = set(sys.modules)

    def find_spec(self, name: str, path: object = None, target: object = None) -> object:
        entry = self.index.get(name)
        if entry is None:
            return None
        try:
            info = os.stat(entry[0])
        except OSError:
            return None
        if info.st_mtime_ns != entry[2] or info.st_size != entry[3]:
            return None
        spec_type = sys.modules["_frozen_importlib"].ModuleSpec
        spec = spec_type(name, self, origin=entry[0], is_package=entry[1])
        if entry[1]:
            spec.submodule_search_locations = [os.path.dirname(entry[0])]
        spec.has_location = True
        return spec

    def create_module(self, spec: object) -> None:
        return None  # the default module

    def exec_module(self, module: ModuleType) -> None:
        entry = self.index[module.__name__]
        code = marshal.loads(os.pread(self.fd, entry[5], self.base + entry[4]))
        self.served.add(module.__name__)
        exec(code, module.__dict__)  # noqa: S102 - plangate's own compiled module

    def missed(self) -> list[str]:
        """plangate modules this process imported the usual way, after the cache was set."""
        return [
            name
            for name in ours(sys.modules)
            if name not in self.served and name not in self.before and source_of(name)
        ]


def source_of(name: str) -> str | None:
    """The ``.py`` file module ``name`` was imported from (None: not one the cache holds)."""
    origin = getattr(getattr(sys.modules.get(name), "__spec__", None), "origin", None)
    return origin if isinstance(origin, str) and origin.endswith(".py") else None


def ours(modules: dict[str, ModuleType]) -> list[str]:
    return [name for name in list(modules) if name == PACKAGE or name.startswith(_PREFIX)]


def read_index(fd: int) -> tuple[dict[str, Entry], int]:
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


def install() -> CodeCache | None:
    """Put the cache first in ``sys.meta_path`` (whether or not its file exists yet)."""
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
    return cache


def installed() -> CodeCache | None:
    for finder in sys.meta_path:
        if isinstance(finder, CodeCache):
            return finder
    return None


def after_answer() -> None:
    """In a hook process that imported a plangate module the usual way: rewrite the cache
    after the answer (deferred work), where the package folder can be written."""
    cache = installed()
    if cache is None or not cache.missed():
        return
    folder = os.path.dirname(cache.path)
    if not os.access(folder if os.path.isdir(folder) else os.path.dirname(folder), os.W_OK):
        return
    from plangate import deferred

    deferred.defer(lambda: _save_quietly(cache), deferred.min_bytes())


def _save_quietly(cache: CodeCache) -> None:
    try:
        save(cache.path, sys.modules, cache)
    except Exception:  # noqa: BLE001 - a cache: the next hook run imports as usual
        return


def save(path: str, modules: dict[str, ModuleType], cache: CodeCache | None = None) -> int:
    """Write the cache for the plangate modules of ``modules`` and the entries of ``cache``
    that still hold; returns how many modules it holds."""
    blobs: list[bytes] = []
    index: dict[str, Entry] = {}
    offset = 0

    def add(name: str, origin: str, is_package: bool, info: os.stat_result, code: bytes) -> None:
        nonlocal offset
        index[name] = (origin, is_package, info.st_mtime_ns, info.st_size, offset, len(code))
        blobs.append(code)
        offset += len(code)

    for name in ours(modules):
        spec = getattr(modules[name], "__spec__", None)
        origin = getattr(spec, "origin", None)
        if not isinstance(origin, str) or not origin.endswith(".py"):
            continue  # not a module of source files (a namespace package, a frozen module)
        with open(origin, "rb") as handle:
            info = os.fstat(handle.fileno())
            source = handle.read()
        compiled = compile(source, origin, "exec", dont_inherit=True)
        is_package = getattr(spec, "submodule_search_locations", None) is not None
        add(name, origin, is_package, info, marshal.dumps(compiled))
    if cache is not None and cache.fd >= 0:
        for name, entry in cache.index.items():
            if name in index:
                continue
            try:
                info = os.stat(entry[0])
            except OSError:
                continue
            if info.st_mtime_ns == entry[2] and info.st_size == entry[3]:
                code = os.pread(cache.fd, entry[5], cache.base + entry[4])
                add(name, entry[0], entry[1], info, code)
    from plangate import files

    head = marshal.dumps(index)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = b"".join([MAGIC, len(head).to_bytes(4, "little"), head, *blobs])
    files.replace(path, data, mode=None)  # readable as the .pyc files beside it
    return len(index)
