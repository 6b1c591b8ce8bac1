"""``plangate doctor``'s check of plangate's installed files against its wheel's ``RECORD``.

The installer wrote each file's SHA-256 into the distribution's ``RECORD``; a file edited
since (a hook module, a shipped contract) no longer matches. A development install
(``pip install -e``) has no hashes to compare: it is said to be not checkable, never a
failure. ``RECORD`` sits beside the files it lists, so someone who rewrites both is not
caught here: hardened mode keeps both read-only to the agent (``docs/sandbox.md``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from importlib import metadata

import plangate
from plangate.install.check import OK, PROBLEM, Check

NAME = "package files"
DISTRIBUTION = "plangate"
REINSTALL = (
    "reinstall plangate (`uv tool upgrade --reinstall plangate` or `pipx reinstall plangate`), "
    "then find out who changed it: an agent that edits plangate's own files is working past it"
)
SHOWN = 5
#: What plangate ships: the package and its metadata, as the wheel's RECORD names them.
SHIPPED = ("plangate/", "plangate-")


def _editable(distribution: metadata.Distribution) -> bool:
    try:
        text = distribution.read_text("direct_url.json")
        record = json.loads(text) if text else {}
    except (OSError, ValueError):
        return False
    dir_info = record.get("dir_info") if isinstance(record, dict) else None
    return isinstance(dir_info, dict) and dir_info.get("editable") is True


def _digest(mode: str, data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.new(mode, data).digest()).rstrip(b"=").decode()


def _listed(names: list[str]) -> str:
    more = f" and {len(names) - SHOWN} more" if len(names) > SHOWN else ""
    return ", ".join(names[:SHOWN]) + more


def check_installed_files() -> Check:
    try:
        distribution = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return Check(NAME, OK, "not checkable: plangate runs from a source tree, not installed")
    if _editable(distribution):
        return Check(NAME, OK, "not checkable (editable install): no hashes to compare")
    running = os.path.realpath(plangate.__file__)
    located = os.path.realpath(str(distribution.locate_file("plangate/__init__.py")))
    if running != located:
        return Check(
            NAME,
            OK,
            f"not checkable: the plangate running ({os.path.dirname(running)}) is not the "
            f"installed distribution's ({os.path.dirname(located)})",
        )
    changed: list[str] = []
    missing: list[str] = []
    checked = 0
    for entry in distribution.files or ():
        if entry.hash is None or not str(entry).startswith(SHIPPED):
            # RECORD itself, files the installer compiled, and the console script, which
            # installers write for this machine (pipx rewrites it)
            continue
        try:
            with open(str(entry.locate()), "rb") as stream:
                data = stream.read()
        except FileNotFoundError:
            missing.append(str(entry))
            continue
        except OSError:
            missing.append(f"{entry} (unreadable)")
            continue
        checked += 1
        try:
            digest = _digest(entry.hash.mode, data)
        except ValueError:
            changed.append(f"{entry} (unknown hash {entry.hash.mode})")
            continue
        if digest != entry.hash.value:
            changed.append(str(entry))
    if changed or missing:
        parts = []
        if changed:
            parts.append(f"changed since installation: {_listed(changed)}")
        if missing:
            parts.append(f"missing: {_listed(missing)}")
        return Check(
            NAME,
            PROBLEM,
            f"plangate {plangate.__version__}'s files do not match its RECORD: " + "; ".join(parts),
            REINSTALL,
        )
    if not checked:
        return Check(NAME, OK, "not checkable: the installation's RECORD lists no hashes")
    return Check(NAME, OK, f"{checked} files match the hashes in plangate's RECORD")
