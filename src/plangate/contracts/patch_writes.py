"""The files a Codex ``apply_patch`` call writes, from its patch text.

Codex CLI's ``apply_patch`` tool takes one patch (``*** Begin Patch`` … ``*** End Patch``);
its PreToolUse hook gets the whole text as ``tool_input.command``. Each file the patch touches
is named on a header line of its own: ``*** Add File: PATH``, ``*** Update File: PATH``
(optionally followed by ``*** Move to: NEW``) and ``*** Delete File: PATH``, a path relative
to the session's folder or absolute. Every one is a write: an added, changed, moved (both
names) or deleted file. A header with no path names nothing. Standard library only (hook
path).
"""

from __future__ import annotations

import os

TOOL = "apply_patch"
HEADERS = ("*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:")


def written_files(patch: str, cwd: str) -> list[str]:
    """The absolute paths ``patch`` writes, in order, each once."""
    found: list[str] = []
    for line in patch.splitlines():
        stripped = line.strip()
        header = next((h for h in HEADERS if stripped.startswith(h)), None)
        if header is None:
            continue
        named = os.path.expanduser(stripped[len(header) :].strip())
        if not named:
            continue
        path = os.path.normpath(named if os.path.isabs(named) else os.path.join(cwd, named))
        if path not in found:
            found.append(path)
    return found
