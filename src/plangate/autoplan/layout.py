"""Names, paths and formats of the ``/autoplan`` artifacts, and the one way to read them.

This module is the shared vocabulary of the commands that write the artifacts
(``plangate autoplan …``, ``plangate gate render``) and the guard that trusts them
(``docs/autoplan-artifacts.md``). It is on the hook path: standard library only, and nothing
slow at import (no ``re``, ``json``, ``typing`` or ``dataclasses``; hashing is imported on
first use).
"""

from __future__ import annotations

import os
import stat
import sys

from plangate import jsonio
from plangate.errors import PlangateError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

# --- phases -----------------------------------------------------------------------------

PHASES = ("ceo", "design", "dx", "eng", "tasks")
REVIEW_PHASES = ("ceo", "design", "dx", "eng")
"""The phases with an independent reviewer, a checkpoint and a close packet."""
PHASE_NUMBERS = {"ceo": "1", "design": "2", "dx": "2.5", "eng": "3", "tasks": "4"}
PHASE_TITLES = {"ceo": "CEO", "design": "Design", "dx": "DX", "eng": "Eng", "tasks": "Tasks"}
DRIVER_FILES = {
    "ceo": "ceo-phase.md",
    "design": "design-phase.md",
    "dx": "dx-phase.md",
    "eng": "eng-phase.md",
    "tasks": "tasks-aggregator.md",
}
"""Phase driver files, in ``<skills>/autoplan/sections/`` of the installed skill."""
PHASE_CLOSE_FILE = "phase-close.md"
"""The close procedure every phase ends with; reading it is never a phase entry."""
SKILL_NAME = "autoplan"
SECTIONS_DIR = "sections"


def next_phase(phase: str, design: bool, dx: bool) -> str:
    """The applicable phase after ``phase`` for a plan with this scope (``""`` after tasks)."""
    applicable = {"ceo", "eng", "tasks"}
    if design:
        applicable.add("design")
    if dx:
        applicable.add("dx")
    for candidate in PHASES[PHASES.index(phase) + 1 :]:
        if candidate in applicable:
            return candidate
    return ""


def due_phase(entered: str | None, scope: dict[str, object]) -> str:
    """The phase due after ``entered`` (None: nothing entered yet, so CEO) for the ``scope``
    an init recorded (``{"design": bool, "dx": bool, ...}``): what a close packet names as
    ``next`` and the only later phase the guard lets the session enter."""
    if entered is None:
        return PHASES[0]
    return next_phase(entered, bool(scope.get("design")), bool(scope.get("dx")))


# --- where the files live ---------------------------------------------------------------

ARTIFACT_PARTS = (".plangate", "tmp", "autoplan")
ARTIFACT_DIR = "/".join(ARTIFACT_PARTS)
"""The artifact folder, relative to the project's git top level (or project folder)."""
EXCLUDE_LINE = "/.plangate/tmp/"
"""The line ``init`` adds to ``.git/info/exclude``."""

REVIEW_INPUT = "review-input.md"
REVIEWER_PROMPT = "reviewer-prompt.md"
MANIFEST = "manifest.json"
CLOSE_PACKET = "close-packet.md"
GATE = "gate.json"
INIT_RECORD_SUFFIX = ".init.json"
CHECKPOINT_FILES = (REVIEW_INPUT, REVIEWER_PROMPT, MANIFEST)

MAX_ARTIFACT_BYTES = 32 * 1024 * 1024
READ_CHUNK_LINES = 600
"""Lines per Read in a close packet's ``readRanges``."""
TOKEN_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
TOKEN_LENGTH = 6
IMMUTABLE_MODE = 0o444


def artifact_dir(repo: str) -> str:
    """``<repo>/.plangate/tmp/autoplan``."""
    return os.path.join(repo, *ARTIFACT_PARTS)


def init_record_path(restore_path: str) -> str:
    """The immutable record ``init`` keeps beside a restore point: ``<name>.init.json``.

    The restore point holds the source's bytes and nothing else, so the bound paths, the
    scope and the original hash live here, where ``checkpoint``, ``prepare-close`` and
    ``gate render`` find them from the restore path alone.
    """
    base = restore_path[:-3] if restore_path.endswith(".md") else restore_path
    return base + INIT_RECORD_SUFFIX


def new_token() -> str:
    """A random folder token: six characters of ``[a-z0-9]``."""
    chars: list[str] = []
    while len(chars) < TOKEN_LENGTH:
        for byte in os.urandom(TOKEN_LENGTH * 2):
            if byte < 252 and len(chars) < TOKEN_LENGTH:  # 252 = 7 * 36: no modulo bias
                chars.append(TOKEN_ALPHABET[byte % 36])
    return "".join(chars)


def checkpoint_folder_name(phase: str, token: str) -> str:
    """``autoplan-<phase>-<random>``: a checkpoint folder."""
    return f"autoplan-{phase}-{token}"


def close_folder_name(phase: str, token: str) -> str:
    """``autoplan-<phase>-close-<random>``: a close packet folder."""
    return f"autoplan-{phase}-close-{token}"


def _is_token(text: str) -> bool:
    return len(text) == TOKEN_LENGTH and all(char in TOKEN_ALPHABET for char in text)


def parse_folder_name(name: str) -> tuple[str, str] | None:
    """``(phase, "checkpoint" | "close")`` for an artifact folder name, else ``None``."""
    if not name.startswith("autoplan-"):
        return None
    phase, _, rest = name[len("autoplan-") :].partition("-")
    if phase not in REVIEW_PHASES:
        return None
    if _is_token(rest):
        return phase, "checkpoint"
    if rest.startswith("close-") and _is_token(rest[len("close-") :]):
        return phase, "close"
    return None


def canonical_path(
    path: str,
    exists: Callable[[str], bool] = os.path.exists,
    real_path: Callable[[str], str] = os.path.realpath,
) -> str:
    """The canonical form of a path that may not exist yet.

    The path is made absolute and normalised; its deepest existing ancestor is resolved with
    ``realpath`` and the missing parts are joined back on. ``init`` reports paths in this
    form, and the guard canonicalizes the init command's arguments the same way, through its
    world's ``exists`` and ``real_path`` (:meth:`plangate.guard.world.World.canonical_path`).
    """
    absolute = os.path.abspath(path)
    existing = absolute
    missing: list[str] = []
    while not exists(existing):
        parent = os.path.dirname(existing)
        if parent == existing:
            break
        missing.append(os.path.basename(existing))
        existing = parent
    resolved = real_path(existing)
    for part in reversed(missing):
        resolved = os.path.join(resolved, part)
    return resolved


# --- text formats -----------------------------------------------------------------------


def json_string(text: str) -> str:
    """``text`` as a JSON string that keeps non-ASCII characters readable.

    Only ``"``, ``\\`` and control characters are escaped, so a model reading the line sees the
    path it must pass to Read; :func:`plangate.jsonio.loads` reads it back exactly.
    """
    parts = ['"']
    for char in text:
        if char == '"':
            parts.append('\\"')
        elif char == "\\":
            parts.append("\\\\")
        elif char < " " or char == "\x7f" or char in "\u2028\u2029":
            parts.append(f"\\u{ord(char):04x}")
        else:
            parts.append(char)
    parts.append('"')
    return "".join(parts)


RESTORE_HEADER_PREFIX = "<!-- plangate autoplan restore point: "
RESTORE_HEADER_SUFFIX = " -->"


def restore_header(restore_path: str) -> str:
    """The active plan's first line, without its line ending.

    ``<!-- plangate autoplan restore point: "<restore path as a JSON string>" -->``. A ``--``
    inside the path is written ``\\u002d\\u002d`` (still the same JSON string) so the HTML
    comment cannot end early.
    """
    quoted = json_string(restore_path).replace("--", "\\u002d\\u002d")
    return RESTORE_HEADER_PREFIX + quoted + RESTORE_HEADER_SUFFIX


def restore_header_path(data: bytes) -> str | None:
    """The restore path named by the header on the first line of ``data``, else ``None``.

    Only the exact form :func:`restore_header` writes counts, ended by LF or CRLF.
    """
    end = data.find(b"\n")
    if end < 0:
        return None
    line = data[:end]
    if line.endswith(b"\r"):
        line = line[:-1]
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not (text.startswith(RESTORE_HEADER_PREFIX) and text.endswith(RESTORE_HEADER_SUFFIX)):
        return None
    quoted = text[len(RESTORE_HEADER_PREFIX) : len(text) - len(RESTORE_HEADER_SUFFIX)]
    try:
        value = jsonio.loads(quoted)
    except jsonio.JSONError:
        return None
    if not isinstance(value, str) or restore_header(value) != text:
        return None
    return value


def has_restore_header(data: bytes, restore_path: str) -> bool:
    """Whether ``data`` starts with the header for ``restore_path`` then LF or CRLF."""
    header = restore_header(restore_path).encode("utf-8")
    return data.startswith(header + b"\n") or data.startswith(header + b"\r\n")


def strip_restore_header(data: bytes) -> bytes:
    """``data`` without its restore header line (unchanged when it has none)."""
    if restore_header_path(data) is None:
        return data
    return data[data.index(b"\n") + 1 :]


REVIEWER_LINE_PREFIX = "You are the independent "
REVIEWER_LINE_SUFFIX = " reviewer for this phase."


def reviewer_line(phase: str) -> str:
    """``You are the independent <CEO|DESIGN|DX|ENG> reviewer for this phase.``"""
    return f"{REVIEWER_LINE_PREFIX}{phase.upper()}{REVIEWER_LINE_SUFFIX}"


def reviewer_phase(prompt: str) -> str | None:
    """The phase whose reviewer an Agent prompt dispatches (its first line), else ``None``."""
    first, newline, _ = prompt.partition("\n")
    if not newline:
        return None
    for phase in REVIEW_PHASES:
        if first == reviewer_line(phase):
            return phase
    return None


READ_FILE_PREFIX = "Read file: "


def dispatch_prompt(phase: str, prompt_path: str, lines: int, sha256: str) -> str:
    """The exact Agent prompt that dispatches ``phase``'s reviewer."""
    return (
        f"{reviewer_line(phase)}\n"
        f"{READ_FILE_PREFIX}{json_string(prompt_path)}\n"
        f"It has {lines} lines (sha256 {sha256}). Read all of it, then begin your answer "
        f"with: INPUT: {phase} {sha256[:12]}"
    )


CLOSE_PACKET_HEADING = "# Current phase close packet"
BINDING_PREFIX = "Binding: "


def close_binding(data: bytes) -> dict[str, object] | None:
    """The ``Binding:`` object on a close packet's second line, else ``None``."""
    heading = (CLOSE_PACKET_HEADING + "\n").encode("utf-8")
    if not data.startswith(heading):
        return None
    end = data.find(b"\n", len(heading))
    if end < 0:
        return None
    try:
        line = data[len(heading) : end].decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not line.startswith(BINDING_PREFIX):
        return None
    try:
        value = jsonio.loads(line[len(BINDING_PREFIX) :])
    except jsonio.JSONError:
        return None
    return value if isinstance(value, dict) else None


def implementation_sha256(active: bytes) -> str | None:
    """SHA-256 of the implementation section of an active plan (its header line ignored).

    The section is the exact source text :func:`plangate.plan.sections.implementation_section`
    finds (heading included), hashed as UTF-8; ``None`` when the plan has no single
    implementation section or is not UTF-8. ``checkpoint`` and ``prepare-close`` record the
    same hash as ``implementationSha256``.
    """
    from plangate.plan.errors import PlanFormatError
    from plangate.plan.sections import implementation_section

    try:
        section = implementation_section(strip_restore_header(active).decode("utf-8"))
    except (UnicodeDecodeError, PlanFormatError):
        return None
    return None if section is None else sha256_hex(section.encode("utf-8"))


def line_count(data: bytes) -> int:
    """Lines as the guard counts them: ``\\n``-split parts, so a final newline adds one."""
    return data.count(b"\n") + 1


def read_ranges(lines: int) -> list[dict[str, int]]:
    """Read ``offset``/``limit`` pairs (1-based, 600 lines each) that cover ``lines`` lines."""
    return [
        {"offset": offset, "limit": READ_CHUNK_LINES}
        for offset in range(1, max(lines, 1) + 1, READ_CHUNK_LINES)
    ]


# --- hashing and reading ----------------------------------------------------------------

_sha256: Callable[[bytes], object] | None = None


def sha256_hex(data: bytes) -> str:
    """SHA-256 of ``data`` as 64 lowercase hex digits."""
    global _sha256
    if _sha256 is None:
        _sha256 = _load_sha256()
    return _sha256(data).hexdigest()  # type: ignore[attr-defined, no-any-return]


def _load_sha256() -> Callable[[bytes], object]:
    # The built-in module is far cheaper to import than OpenSSL's _hashlib. Its name is
    # `_sha2` from Python 3.12 and `_sha256` before: this Python's own name is tried first,
    # since a failed import searches every folder on the path.
    names = ("_sha2", "_sha256") if sys.version_info >= (3, 12) else ("_sha256", "_sha2")
    for name in names:
        try:
            module = __import__(name)
        except ImportError:
            continue
        factory: Callable[[bytes], object] = module.sha256
        return factory
    import hashlib  # pragma: no cover - CPython always has one of the above

    return hashlib.sha256  # pragma: no cover


class ArtifactError(PlangateError):
    """An artifact that cannot be trusted; ``cause`` says why in one word. A command that
    meets one refuses (exit 1) and names the remedy.

    Causes: ``missing``, ``alias`` (reached through a symlink or another spelling),
    ``not_regular``, ``writable``, ``too_large``, ``changed`` (during the read),
    ``unreadable``, ``mismatch`` (bytes differ from the recorded hash or size).
    """

    def __init__(self, path: str, cause: str, detail: str = "") -> None:
        super().__init__(
            f"{path}: {cause}" + (f" ({detail})" if detail else ""),
            "the /autoplan artifacts were changed or removed: run /autoplan again from its init",
        )
        self.path = path
        self.cause = cause
        self.detail = detail


def _signature(info: os.stat_result) -> tuple[int, int, int, int, int]:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_mode)


def immutable_read(path: str, *, limit: int = MAX_ARTIFACT_BYTES) -> bytes:
    """The bytes of an immutable artifact, or :class:`ArtifactError`.

    Refused: a path whose ``realpath`` is not the path itself (a symlink anywhere on the
    way, or a non-canonical spelling), anything but a regular file, a file with any write
    bit, a file over ``limit`` bytes, and a file whose device, inode, size, mtime or mode
    changed while it was read.
    """
    try:
        if os.path.realpath(path) != path:
            raise ArtifactError(path, "alias", "its real path differs")
        before = os.lstat(path)
    except FileNotFoundError:
        raise ArtifactError(path, "missing") from None
    except OSError as error:
        raise ArtifactError(path, "unreadable", error.strerror or "") from None
    if stat.S_ISLNK(before.st_mode):
        raise ArtifactError(path, "alias", "symlink")
    if not stat.S_ISREG(before.st_mode):
        raise ArtifactError(path, "not_regular")
    if before.st_mode & 0o222:
        raise ArtifactError(path, "writable")
    if before.st_size > limit:
        raise ArtifactError(path, "too_large", f"{before.st_size} bytes")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_NONBLOCK", 0)
    try:
        descriptor = os.open(path, flags)
    except FileNotFoundError:
        raise ArtifactError(path, "changed", "removed during the read") from None
    except OSError as error:
        raise ArtifactError(path, "unreadable", error.strerror or "") from None
    try:
        opened = os.fstat(descriptor)
        if _signature(opened) != _signature(before):
            raise ArtifactError(path, "changed")
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(descriptor, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:
                raise ArtifactError(path, "too_large", f"over {limit} bytes")
            chunks.append(chunk)
        after = os.fstat(descriptor)
    except OSError as error:
        raise ArtifactError(path, "unreadable", error.strerror or "") from None
    finally:
        os.close(descriptor)
    data = b"".join(chunks)
    try:
        still = os.lstat(path)
    except OSError:
        raise ArtifactError(path, "changed", "removed during the read") from None
    if (
        _signature(after) != _signature(before)
        or _signature(still) != _signature(before)
        or len(data) != before.st_size
    ):
        raise ArtifactError(path, "changed")
    return data


def read_verified(path: str, sha256: str, size: int) -> bytes:
    """:func:`immutable_read` that also requires the recorded hash and size."""
    data = immutable_read(path)
    if len(data) != size or sha256_hex(data) != sha256:
        raise ArtifactError(path, "mismatch", "the bytes differ from the recorded hash")
    return data
