"""Where plangate and Claude Code keep their files. Standard library only (hook path)."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

STATE_ROOT_ENV = "PLANGATE_STATE_ROOT"
CLAUDE_CONFIG_ENV = "CLAUDE_CONFIG_DIR"


def _home() -> str:
    return os.path.expanduser("~")


def state_root(environ: Mapping[str, str] | None = None) -> str:
    """plangate's state root: ``$PLANGATE_STATE_ROOT`` (in ``environ``, default the process
    environment), default ``~/.plangate``. Never resolves a link: a root that is one is
    refused where plangate writes (:mod:`plangate.state_root`)."""
    configured = (os.environ if environ is None else environ).get(STATE_ROOT_ENV, "")
    if configured:
        return os.path.abspath(configured)
    return os.path.join(_home(), ".plangate")


def journal_index_dir() -> str:
    """Where hook reads keep their journal indexes (:mod:`plangate.journal.index`)."""
    return os.path.join(state_root(), "journal-index")


def claude_config_dir() -> str:
    """Claude Code's configuration folder: ``$CLAUDE_CONFIG_DIR``, default ``~/.claude``."""
    configured = os.environ.get(CLAUDE_CONFIG_ENV, "")
    if configured:
        return os.path.abspath(configured)
    return os.path.join(_home(), ".claude")


SLUG_MAX = 200
"""Claude Code keeps this many characters of a slug and appends a hash of the directory."""


def project_slug(directory: str) -> str:
    """The folder name Claude Code 2.1.332 derives from a project directory.

    Its rule, in JavaScript: every UTF-16 code unit outside ``[a-zA-Z0-9]`` becomes ``-`` (so
    a character beyond the Basic Multilingual Plane gives two); a slug longer than
    :data:`SLUG_MAX` is cut there and gets ``-`` and the base-36 absolute value of the
    directory's 32-bit string hash (``h = 31 * h + unit``, Java's ``String.hashCode``).
    """
    slug = "".join(
        ch if ch.isascii() and ch.isalnum() else ("--" if ord(ch) > 0xFFFF else "-")
        for ch in directory
    )
    if len(slug) <= SLUG_MAX:
        return slug
    return f"{slug[:SLUG_MAX]}-{_base36(abs(_string_hash(directory)))}"


def _string_hash(text: str) -> int:
    """JavaScript's ``(h << 5) - h + charCodeAt(i) | 0`` over the UTF-16 code units."""
    data = text.encode("utf-16-le", "surrogatepass")
    value = 0
    for index in range(0, len(data), 2):
        value = (value * 31 + (data[index] | data[index + 1] << 8)) & 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        number, digit = divmod(number, 36)
        out = digits[digit] + out
        if not number:
            return out
