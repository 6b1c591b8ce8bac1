"""Writing the hook code cache (:mod:`.code_cache`), after a hook has answered.

Only a hook process that imported a plangate module the usual way loads this module, in the
detached child that does its deferred work (:func:`.code_cache.after_answer`). The file holds
the compiled code of every plangate module the process imported, the entries of the old
file that still hold, and where the standard library's compiled extension modules it
imported were found (their file's modification time and size, no code).

A module is compiled as Python compiles it, with two differences that only introspection
could see. ``from __future__ import annotations`` is taken out of its code and given to the
compiler as a flag: no hook process imports ``__future__`` (about 0.2 ms) for a statement
that only the compiler needs. And its functions' annotations are left out (their
``__annotations__`` are empty): nothing in a hook process reads them (no
``functools.singledispatch``, no ``inspect.signature``), while loading and attaching them
cost a phase decision about 0.3 ms. Annotations of classes and modules (``x: int = 0``) are
kept. With ``PLANGATE_HOOK_CODE_CACHE=0`` every module is Python's own compilation. Standard
library only (hook path).
"""

from __future__ import annotations

import marshal
import os
import sys

from plangate.hook_io.code_cache import ALONE, EXTENSION, MAGIC, UNSEEN, CodeCache, Entry, ours

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from types import CodeType, ModuleType


def save_quietly(cache: CodeCache) -> None:
    try:
        save(cache.path, sys.modules, cache)
    except Exception:  # noqa: BLE001 - a cache: the next hook run imports as usual
        return


def save(path: str, modules: Mapping[str, ModuleType], cache: CodeCache | None = None) -> int:
    """Write the cache for the plangate modules of ``modules``, the extension modules among
    them, and the entries of ``cache`` that still hold; returns how many modules it holds.

    Modules that ``cache`` saw imported together (:attr:`.CodeCache.roots`) are marshalled
    together too, and a group already in the file stays one."""
    codes: dict[str, CodeType] = {}
    files_of: dict[str, tuple[str, bool, int, int]] = {}
    kept: dict[str, Entry] = {}
    for name in ours(modules):
        spec = getattr(modules[name], "__spec__", None)
        origin = getattr(spec, "origin", None)
        if not isinstance(origin, str) or not origin.endswith(".py"):
            continue  # not a module of source files (a namespace package, a frozen module)
        with open(origin, "rb") as handle:
            info = os.fstat(handle.fileno())
            source = handle.read()
        is_package = getattr(spec, "submodule_search_locations", None) is not None
        codes[name] = compiled(source, origin)
        files_of[name] = (origin, is_package, info.st_mtime_ns, info.st_size)
    index: dict[str, Entry] = {}
    for name, origin in extensions(modules):
        info = os.stat(origin)
        index[name] = (origin, False, info.st_mtime_ns, info.st_size, 0, EXTENSION, 0, 0, ALONE)
    if cache is not None and cache.fd >= 0:
        for name in cache.index:
            entry = cache.current(name)
            if entry is None or name in index:
                continue
            if entry[5] == EXTENSION:
                index[name] = entry
                continue
            kept[name] = entry
            if name not in codes:
                codes[name] = cache.code_of(entry)
                files_of[name] = entry[:4]
    groups: dict[tuple[str, object], list[str]] = {}
    for name in codes:
        entry = kept.get(name)
        if entry is not None and entry[8] >= 0:
            key: tuple[str, object] = ("kept", entry[6])
        elif entry is not None and entry[8] == ALONE:
            key = ("alone", name)
        elif cache is not None and name in cache.roots:
            key = ("imported with", cache.roots[name])
        else:
            key = ("unseen", name)
        groups.setdefault(key, []).append(name)
    blobs: list[bytes] = []
    offset = 0
    for key, names in groups.items():
        # The group's first module is the one whose import loads the others: only loading it
        # unmarshals the group (CodeCache.code_of).
        if key[0] == "kept":
            names.sort(key=lambda name: kept[name][8])
        elif key[0] == "imported with":
            names.sort(key=lambda name: name != key[1])
        group_offset, group_length = 0, 0
        if len(names) > 1:
            group = marshal.dumps(tuple(codes[name] for name in names))
            group_offset, group_length = offset, len(group)
            blobs.append(group)
            offset += len(group)
        for position, name in enumerate(names):
            if len(names) == 1:
                position = UNSEEN if key[0] == "unseen" else ALONE
            own = marshal.dumps(codes[name])
            origin, is_package, mtime, size = files_of[name]
            index[name] = (
                origin,
                is_package,
                mtime,
                size,
                offset,
                len(own),
                group_offset,
                group_length,
                position,
            )
            blobs.append(own)
            offset += len(own)
    from plangate import files

    head = marshal.dumps(index)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = b"".join([MAGIC, len(head).to_bytes(4, "little"), head, *blobs])
    files.replace(path, data, mode=None)  # readable as the .pyc files beside it
    return len(index)


def compiled(source: bytes, origin: str) -> CodeType:
    """The module's code, without the run-time import of ``from __future__ import
    annotations`` and without its functions' annotations (see the module docstring)."""
    import __future__

    import ast

    tree = ast.parse(source, origin)
    future = [
        node
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        and node.module == "__future__"
        and [alias.name for alias in node.names] == ["annotations"]
    ]
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.returns = None
            arguments = node.args
            for arg in (
                *arguments.posonlyargs,
                *arguments.args,
                *arguments.kwonlyargs,
                arguments.vararg,
                arguments.kwarg,
            ):
                if arg is not None:
                    arg.annotation = None
    flags = 0
    if future:
        tree.body.remove(future[0])
        flags = __future__.annotations.compiler_flag
    code: CodeType = compile(tree, origin, "exec", flags=flags, dont_inherit=True)
    return code


def extensions(modules: Mapping[str, ModuleType]) -> list[tuple[str, str]]:
    """``(name, file)`` of the top-level compiled extension modules in ``modules`` that were
    found in a folder of ``sys.path`` (the standard library's ``lib-dynload``)."""
    loader_type = sys.modules["_frozen_importlib_external"].ExtensionFileLoader
    folders = {os.path.abspath(folder) for folder in sys.path if folder}
    found = []
    for name, module in list(modules.items()):
        spec = getattr(module, "__spec__", None)
        origin = getattr(spec, "origin", None)
        if "." in name or not isinstance(getattr(spec, "loader", None), loader_type):
            continue
        if isinstance(origin, str) and os.path.dirname(os.path.abspath(origin)) in folders:
            found.append((name, origin))
    return found
