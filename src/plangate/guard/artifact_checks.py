"""The artifacts the guard trusts, verified: the init binding, checkpoints and close packets.

Every check recomputes what the writer recorded (hashes, sizes, paths) from the immutable
files on disk; nothing the model wrote is taken on its word. Raises :class:`Refusal` with the
code the seed names for each failure.
"""

from __future__ import annotations

import os

from plangate import jsonio
from plangate.autoplan import layout
from plangate.decisions import reasons
from plangate.guard.state import Refusal
from plangate.guard.world import World

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HEX = frozenset("0123456789abcdef")


class Binding:
    """The invocation's init: the plans, the restore point and where the invocation starts."""

    __slots__ = ("source", "active", "restore", "sha256", "size", "start", "scope")

    def __init__(
        self,
        source: str,
        active: str,
        restore: str,
        sha256: str,
        size: int,
        start: int,
        scope: dict[str, Any],
    ) -> None:
        self.source = source
        self.active = active
        self.restore = restore
        self.sha256 = sha256
        self.size = size
        self.start = start
        self.scope = scope

    @property
    def artifact_dir(self) -> str:
        return os.path.dirname(self.restore)


def init_result(text: str, arguments: list[str], world: World) -> dict[str, Any]:
    """The JSON an init printed, checked against its own arguments.

    Raises ``init_failed`` when the output is not one JSON object and ``init_mismatch`` when
    its fields disagree with the canonical form of the arguments.
    """
    try:
        value = jsonio.loads(text.strip())
    except jsonio.JSONError:
        value = None
    if not isinstance(value, dict):
        # The denial then says to re-run it without a leading `cd` (reasons.DETAIL_TEXT).
        raise Refusal(reasons.INIT_FAILED, reasons.INIT_FAILED_NOT_JSON)
    source, active, restore = (world.canonical_path(argument) for argument in arguments)
    checks = (
        value.get("sourcePlan") == source,
        value.get("activePlan") == active,
        value.get("restorePath") == restore,
        isinstance(value.get("reused"), bool),
        _positive_int(value.get("originalBytes")),
        _sha(value.get("originalSha256")),
    )
    if not all(checks):
        raise Refusal(reasons.INIT_MISMATCH, "the init result does not match its own arguments")
    return value


def verify_binding(binding: Binding, world: World) -> None:
    """The restore point holds the original bytes; the active plan carries its header."""
    if binding.active == binding.restore:
        raise Refusal(reasons.INIT_MISMATCH, "the active plan is the restore point")
    if os.path.basename(binding.artifact_dir) != "autoplan" or not binding.artifact_dir.endswith(
        os.sep + os.path.join(*layout.ARTIFACT_PARTS)
    ):
        raise Refusal(reasons.INIT_MISMATCH, "the restore point is outside .plangate/tmp/autoplan")
    try:
        world.read_verified(binding.restore, binding.sha256, binding.size)
    except layout.ArtifactError as error:
        raise Refusal(reasons.INIT_MISMATCH, f"restore point {error.cause}") from None
    try:
        head = world.read_file(binding.active, 64 * 1024)
    except OSError:
        raise Refusal(reasons.INIT_MISMATCH, "the active plan cannot be read") from None
    if not layout.has_restore_header(head, binding.restore):
        raise Refusal(reasons.INIT_MISMATCH, "the active plan lost its restore-point header")


def read_active(binding: Binding, world: World) -> bytes:
    try:
        return world.read_file(binding.active, -1)
    except OSError:
        raise Refusal(reasons.CLOSE_STALE, "the active plan cannot be read") from None


def load_manifest(
    manifest_path: str, binding: Binding, world: World, code: str = reasons.SNAPSHOT
) -> dict[str, Any]:
    """A checkpoint manifest of this invocation, with its files verified."""
    folder = os.path.dirname(manifest_path)
    if os.path.dirname(folder) != binding.artifact_dir:
        raise Refusal(code, "the checkpoint is not in this invocation's artifact folder")
    parsed = layout.parse_folder_name(os.path.basename(folder))
    if parsed is None or parsed[1] != "checkpoint":
        raise Refusal(code, "not a checkpoint folder")
    try:
        manifest = jsonio.loads(world.read_artifact(manifest_path).decode("utf-8"))
    except layout.ArtifactError as error:
        raise Refusal(code, f"manifest {error.cause}") from None
    except (UnicodeDecodeError, jsonio.JSONError):
        raise Refusal(code, "the manifest is not JSON") from None
    if not isinstance(manifest, dict):
        raise Refusal(code, "the manifest is not a JSON object")
    if (
        manifest.get("phase") != parsed[0]
        or manifest.get("restorePath") != binding.restore
        or manifest.get("activePlan") != binding.active
        or manifest.get("checkpoint") != manifest_path
    ):
        raise Refusal(code, "the manifest belongs to another invocation")
    for key, name in (
        ("reviewInput", layout.REVIEW_INPUT),
        ("reviewerPrompt", layout.REVIEWER_PROMPT),
    ):
        entry = manifest.get(key)
        if not isinstance(entry, dict) or entry.get("path") != os.path.join(folder, name):
            raise Refusal(code, f"the manifest does not name its {name}")
        try:
            world.read_verified(
                entry["path"], str(entry.get("sha256")), int(entry.get("bytes", -1))
            )
        except layout.ArtifactError as error:
            raise Refusal(code, f"{name} {error.cause}") from None
        except (TypeError, ValueError):
            raise Refusal(code, f"the manifest's {name} entry is malformed") from None
    return manifest


def manifest_path_of(artifact_path: str) -> str:
    return os.path.join(os.path.dirname(artifact_path), layout.MANIFEST)


def dispatch_target(prompt: str) -> str | None:
    """The reviewer-prompt path a dispatch prompt binds (its ``Read file: "…"`` line)."""
    for line in prompt.split("\n"):
        if line.startswith(layout.READ_FILE_PREFIX):
            quoted = line[len(layout.READ_FILE_PREFIX) :].strip()
            try:
                value = jsonio.loads(quoted)
            except jsonio.JSONError:
                return None
            return value if isinstance(value, str) else None
    return None


def load_close_packet(
    path: str, binding: Binding, phase: str, world: World
) -> tuple[bytes, dict[str, Any]]:
    """The close packet's bytes and binding, or ``close_stale``."""
    if os.path.dirname(os.path.dirname(path)) != binding.artifact_dir:
        raise Refusal(reasons.CLOSE_STALE, "the close packet is not in this invocation's folder")
    try:
        data = world.read_artifact(path)
    except layout.ArtifactError as error:
        raise Refusal(reasons.CLOSE_STALE, f"close packet {error.cause}") from None
    bound = layout.close_binding(data)
    if bound is None or bound.get("phase") != phase or bound.get("activePlan") != binding.active:
        raise Refusal(reasons.CLOSE_STALE, "the close packet belongs to another phase or plan")
    return data, bound


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _sha(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and set(value) <= HEX
