"""``plangate autoplan checkpoint <restore> <phase>``: the phase's review input and reviewer prompt.

Creates ``autoplan-<phase>-<random>/`` in the artifact folder, in one step, with three
immutable files: ``review-input.md`` (the active plan's implementation section, exactly),
``reviewer-prompt.md`` (the phase's reviewer instructions, then that input) and
``manifest.json`` (the binding, which is also what the command prints).
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

from plangate import jsonio
from plangate.autoplan import layout, plans, writes
from plangate.errors import PlangateError, UsageError

MANIFEST_KEYS = (
    "schema",
    "phase",
    "activePlan",
    "restorePath",
    "checkpoint",
    "implementationSha256",
    "reviewInput",
    "reviewerPrompt",
    "dispatchPrompt",
)


def default_reviewers_dir() -> str:
    """``plangate/skills/autoplan/reviewers`` inside the installed package."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.join(package, "skills", "autoplan", "reviewers")


def check_phase(phase: str) -> None:
    if phase not in layout.REVIEW_PHASES:
        raise UsageError(
            f"unknown review phase {phase!r}", f"use one of {', '.join(layout.REVIEW_PHASES)}"
        )


def reviewer_instructions(phase: str, reviewers_dir: str | None = None) -> str:
    """The reviewer instructions for ``phase`` (``<reviewers_dir>/<phase>.md``)."""
    path = os.path.join(reviewers_dir or default_reviewers_dir(), f"{phase}.md")
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        raise PlangateError(
            f"the {phase} reviewer instructions are missing: {path}",
            "reinstall plangate (`pip install --force-reinstall plangate`)",
        ) from None
    text = plans.decode(data, path)
    if not text.strip():
        raise PlangateError(f"the {phase} reviewer instructions are empty: {path}", "reinstall")
    return text


def reviewer_prompt(phase: str, instructions: str, implementation: str, input_path: str) -> str:
    """The reviewer's instructions followed by the review input."""
    title = layout.PHASE_TITLES[phase]
    return (
        instructions.rstrip("\n")
        + "\n\n## Review input\n\n"
        + f"The plan's implementation section as it stands at the start of the {title} review, "
        + f"byte for byte the same as {input_path}. Review this text; ignore other versions "
        + "of the plan.\n\n"
        + plans.fenced(implementation)
    )


def checkpoint(restore: str, phase: str, *, reviewers_dir: str | None = None) -> dict[str, Any]:
    """Create the phase's checkpoint folder; return its manifest."""
    check_phase(phase)
    binding = writes.load_binding(restore)
    active_text = plans.decode(binding.plan_bytes, binding.active_plan)
    implementation = plans.implementation_text(active_text, binding.active_plan)
    instructions = reviewer_instructions(phase, reviewers_dir)
    input_bytes = implementation.encode("utf-8")
    manifest: dict[str, Any] = {}

    def files(folder: str) -> dict[str, bytes]:
        input_path = os.path.join(folder, layout.REVIEW_INPUT)
        prompt_path = os.path.join(folder, layout.REVIEWER_PROMPT)
        prompt = reviewer_prompt(phase, instructions, implementation, input_path).encode("utf-8")
        prompt_sha = layout.sha256_hex(prompt)
        prompt_lines = layout.line_count(prompt)
        input_sha = layout.sha256_hex(input_bytes)
        manifest.update(
            {
                "schema": 1,
                "phase": phase,
                "activePlan": binding.active_plan,
                "restorePath": binding.restore_path,
                "checkpoint": os.path.join(folder, layout.MANIFEST),
                "implementationSha256": input_sha,
                "reviewInput": {"path": input_path, "sha256": input_sha, "bytes": len(input_bytes)},
                "reviewerPrompt": {
                    "path": prompt_path,
                    "sha256": prompt_sha,
                    "bytes": len(prompt),
                    "lines": prompt_lines,
                },
                "dispatchPrompt": layout.dispatch_prompt(
                    phase, prompt_path, prompt_lines, prompt_sha
                ),
            }
        )
        return {
            layout.REVIEW_INPUT: input_bytes,
            layout.REVIEWER_PROMPT: prompt,
            layout.MANIFEST: writes.json_bytes(manifest),
        }

    writes.create_folder(
        binding.artifact_dir, lambda token: layout.checkpoint_folder_name(phase, token), files
    )
    return manifest


def read_manifest(path: str) -> tuple[dict[str, Any], int]:
    """A checkpoint manifest and its mtime, verified with every file it lists.

    Raises :class:`~plangate.autoplan.layout.ArtifactError` (cause ``mismatch`` for a manifest
    that does not describe its own folder).
    """
    data = layout.immutable_read(path)
    try:
        value = jsonio.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, jsonio.JSONError):
        raise layout.ArtifactError(path, "mismatch", "not JSON") from None
    folder = os.path.dirname(path)
    if (
        not isinstance(value, dict)
        or tuple(value) != MANIFEST_KEYS
        or value["checkpoint"] != path
        or layout.parse_folder_name(os.path.basename(folder)) != (value["phase"], "checkpoint")
    ):
        raise layout.ArtifactError(path, "mismatch", "not this folder's manifest")
    review_input = value["reviewInput"]
    prompt = value["reviewerPrompt"]
    if (
        not isinstance(review_input, dict)
        or not isinstance(prompt, dict)
        or review_input.get("path") != os.path.join(folder, layout.REVIEW_INPUT)
        or prompt.get("path") != os.path.join(folder, layout.REVIEWER_PROMPT)
    ):
        raise layout.ArtifactError(path, "mismatch", "file paths")
    layout.read_verified(review_input["path"], review_input["sha256"], review_input["bytes"])
    prompt_bytes = layout.read_verified(prompt["path"], prompt["sha256"], prompt["bytes"])
    expected = layout.dispatch_prompt(
        value["phase"], prompt["path"], layout.line_count(prompt_bytes), prompt["sha256"]
    )
    if (
        prompt.get("lines") != layout.line_count(prompt_bytes)
        or value["dispatchPrompt"] != expected
    ):
        raise layout.ArtifactError(path, "mismatch", "dispatch prompt")
    return value, os.lstat(path).st_mtime_ns


def checkpoints(binding: writes.InitBinding, phase: str) -> list[tuple[int, str, dict[str, Any]]]:
    """This invocation's verified checkpoints of ``phase``, oldest first: (mtime, path, manifest).

    A checkpoint folder of this phase that cannot be verified raises ``PlangateError`` when its
    manifest names this restore point, so a damaged latest checkpoint is never silently
    skipped for an older one; other invocations' folders are ignored.
    """
    found: list[tuple[int, str, dict[str, Any]]] = []
    for name in sorted(os.listdir(binding.artifact_dir)):
        if layout.parse_folder_name(name) != (phase, "checkpoint"):
            continue
        path = os.path.join(binding.artifact_dir, name, layout.MANIFEST)
        try:
            manifest, mtime = read_manifest(path)
        except layout.ArtifactError as error:
            if _names_restore(path, binding.restore_path):
                raise PlangateError(
                    f"the {phase} checkpoint {path} cannot be trusted ({error.cause})",
                    f'run `plangate autoplan checkpoint "{binding.restore_path}" {phase}` again',
                ) from None
            continue
        if (
            manifest["restorePath"] == binding.restore_path
            and manifest["activePlan"] == binding.active_plan
        ):
            found.append((mtime, path, manifest))
    found.sort(key=lambda item: (item[0], item[1]))
    return found


def _names_restore(path: str, restore: str) -> bool:
    """Whether a (possibly damaged) manifest mentions this restore point."""
    try:
        with open(path, "rb") as handle:
            return jsonio.dumps(restore).encode("ascii") in handle.read(layout.MAX_ARTIFACT_BYTES)
    except OSError:
        return False


def checkpoint_command(
    restore: str, phase: str, out: TextIO | None = None, *, reviewers_dir: str | None = None
) -> int:
    """Print the checkpoint manifest (one line) and return 0."""
    result = checkpoint(restore, phase, reviewers_dir=reviewers_dir)
    (out if out is not None else sys.stdout).write(jsonio.dumps(result) + "\n")
    return 0
