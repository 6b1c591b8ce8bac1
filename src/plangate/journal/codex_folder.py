"""The folder a Codex CLI session runs in, for its hooks: cheap enough for every call.

Codex 0.171.0 gives the shell tool's ``workdir`` to a PreToolUse hook as its ``cwd`` and sets
no ``CLAUDE_PROJECT_DIR``; the project is the session's folder, the ``cwd`` of the rollout's
first line (``session_meta``, about 22 KB with Codex's instructions). That line begins
``{"timestamp":…,"ordinal":0,"type":"session_meta","payload":{…,"cwd":"<folder>",…``: the
folder is read from the line's first few KB when it stands there as a plain JSON string
before any nested object; otherwise the line is parsed whole
(:func:`plangate.journal.codex.meta`). Both read through the world a hook is handed
(:mod:`plangate.journal.world`). Standard library only (hook path).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from plangate.journal.world import World

HEAD_BYTES = 4096
META = b'"type":"session_meta","payload":{'
KEY = b'"cwd":"'


AGENT = "codex-cli"
"""How Codex names itself (``codex --version``): the agent part of a version plangate logs
and shows for a Codex session (``codex-cli 0.171.0``)."""


def is_codex_payload(payload: dict[str, object]) -> bool:
    """Whether a hook payload is Codex CLI's: its ``transcript_path`` a rollout
    (``…/sessions/YYYY/MM/DD/rollout-<time>-<session>.jsonl``) and a ``turn_id`` beside it."""
    path = payload.get("transcript_path")
    return (
        isinstance(path, str)
        and os.path.basename(path).startswith("rollout-")
        and isinstance(payload.get("turn_id"), str)
    )


def session_folder(payload: dict[str, object], world: World | None = None) -> str | None:
    """The folder a Codex hook payload's session runs in: the project. None for a payload not
    Codex's (:func:`is_codex_payload`) or a history that does not say. ``world``: what is
    read (the operating system's unless told)."""
    if not is_codex_payload(payload):
        return None
    if world is None:
        from plangate.journal.world import OS

        world = OS
    path = str(payload["transcript_path"])
    try:
        head = world.read_file(path, HEAD_BYTES)
    except OSError:
        return None
    folder = _plain(head)
    if folder is None:
        from plangate.journal.codex import meta

        folder = meta(path, "cwd", world)
    return os.path.normpath(folder) if folder is not None and os.path.isabs(folder) else None


def hook_project(payload: dict[str, object], world: World | None = None) -> str | None:
    """The project a hook's session works in, as its agent says: for Codex CLI (which sets no
    ``CLAUDE_PROJECT_DIR``, and gives a call's ``workdir`` as the hook's ``cwd``) the folder
    its session runs in (:func:`session_folder`, read through ``world``); for Claude Code
    ``$CLAUDE_PROJECT_DIR``. None when it does not say: the caller falls back on the ``cwd``."""
    if is_codex_payload(payload):
        return session_folder(payload, world)
    return os.environ.get("CLAUDE_PROJECT_DIR") or None


def _plain(head: bytes) -> str | None:
    """The ``cwd`` written plainly (no escape, no nested object before it) in the head."""
    first = head.split(b"\n", 1)[0]
    start = first.find(META)
    if start < 0 or not first.startswith(b"{"):
        return None
    body = start + len(META)
    at = first.find(KEY, body)
    if at < 0 or b"{" in first[body:at]:
        return None
    value = first[at + len(KEY) :]
    end = value.find(b'"')
    if end < 0 or b"\\" in value[:end]:
        return None
    try:
        return value[:end].decode("utf-8")
    except UnicodeDecodeError:
        return None
