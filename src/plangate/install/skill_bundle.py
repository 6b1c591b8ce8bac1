"""The skills bundled in ``plangate/skills/`` and the folders they are installed as.

One source of truth for every place a skill lands: ``plangate setup`` copies them into
Claude Code's skills folder, ``plangate setup --plugin`` into the plugin it builds, and
``plangate doctor`` compares what is installed with what this plangate would install. A
skill's Markdown has the installation's paths filled in (``{{PLANGATE}}``, ``{{SKILL_DIR}}``,
``{{STATE_ROOT}}``); every installed folder carries :data:`SKILL_MARKER`.
"""

from __future__ import annotations

import os
import shutil

import plangate
from plangate import jsonio
from plangate.config import display_path
from plangate.errors import ConfigError
from plangate.locations import state_root
from plangate.skill_names import PLUGIN_MARKER

SKILL_MARKER = PLUGIN_MARKER
_IGNORED = ("__pycache__",)


def bundled_skills_dir() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(plangate.__file__)), "skills")


def bundled(source: str) -> list[tuple[str, str]]:
    """The skill folders shipped with plangate, by name; none when the folder is missing."""
    try:
        names = sorted(os.listdir(source))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [
        (name, os.path.join(source, name))
        for name in names
        if not name.startswith((".", "_")) and os.path.isdir(os.path.join(source, name))
    ]


def marker_content() -> bytes:
    record = {"installed_by": "plangate", "version": plangate.__version__}
    return (jsonio.dumps(record) + "\n").encode("utf-8")


def tree(folder: str) -> dict[str, bytes]:
    """Every file under ``folder`` by relative path (``/``-separated), with its bytes."""
    files: dict[str, bytes] = {}
    for root, directories, names in os.walk(folder):
        directories[:] = sorted(d for d in directories if d not in _IGNORED)
        for name in names:
            if name.endswith(".pyc"):
                continue
            full = os.path.join(root, name)
            relative = os.path.relpath(full, folder).replace(os.sep, "/")
            with open(full, "rb") as stream:
                files[relative] = stream.read()
    return files


def plangate_command(python: str) -> str:
    """This installation's ``plangate`` as a skill writes it in a Bash call: an absolute path,
    double-quoted only when it needs quoting (the guard binds literal words only)."""
    path = os.path.join(os.path.dirname(python), "plangate")
    bare = all(ch.isalnum() or ch in "/._-+@%=:," for ch in path)
    return path if bare else f'"{path}"'


def rendered(files: dict[str, bytes], target: str, python: str) -> dict[str, bytes]:
    """The skill's Markdown with the installation's paths filled in."""
    values = {
        "{{PLANGATE}}": plangate_command(python),
        "{{SKILL_DIR}}": target,
        "{{STATE_ROOT}}": state_root(),
    }
    result: dict[str, bytes] = {}
    for relative, data in files.items():
        if relative.endswith(".md"):
            text = data.decode("utf-8")
            for placeholder, value in values.items():
                text = text.replace(placeholder, value)
            data = text.encode("utf-8")
        result[relative] = data
    return result


def expected(source: str, target: str, python: str) -> dict[str, bytes]:
    """The files of the skill folder ``source`` installed at ``target``, marker included."""
    files = rendered(tree(source), target, python)
    files[SKILL_MARKER] = marker_content()
    return files


def is_ours(folder: str) -> bool:
    return (
        not os.path.islink(folder)
        and os.path.isdir(folder)
        and os.path.isfile(os.path.join(folder, SKILL_MARKER))
    )


def replace_folder(
    files: dict[str, bytes], target: str, executable: frozenset[str] = frozenset()
) -> None:
    """Write ``files`` as the folder ``target``, swapping whole folders by rename; the
    relative paths in ``executable`` get mode 0755."""
    parent = os.path.dirname(target)
    os.makedirs(parent, exist_ok=True)
    tag = f"{os.getpid()}-{os.urandom(4).hex()}"
    name = os.path.basename(target)
    staging = os.path.join(parent, f".{name}.plangate-tmp-{tag}")
    retired = os.path.join(parent, f".{name}.plangate-old-{tag}")
    try:
        for relative, data in files.items():
            path = os.path.join(staging, *relative.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as stream:
                stream.write(data)
            if relative in executable:
                os.chmod(path, 0o755)
        if os.path.lexists(target):
            os.rename(target, retired)
            try:
                os.rename(staging, target)
            except OSError:
                os.rename(retired, target)
                raise
            shutil.rmtree(retired)
        else:
            os.rename(staging, target)
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)
        raise ConfigError(
            f"cannot write {display_path(target)}: {error.strerror or error}",
            f"check that {display_path(parent)} is writable, then run plangate setup again",
        ) from None
