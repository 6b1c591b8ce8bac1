"""plangate autoplan checkpoint: the review input, the reviewer prompt and the manifest."""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path

import pytest

from plangate import jsonio
from plangate.autoplan import layout, writes
from plangate.autoplan.checkpoint import checkpoint, checkpoint_command, read_manifest
from plangate.autoplan.init import init
from plangate.errors import PlangateError, UsageError
from plangate.plan import implementation_section
from tests.autoplan.conftest import REVIEWER_TEXT, artifact_dir, restore_path, tree, write_plan

MANIFEST_KEYS = [
    "schema",
    "phase",
    "activePlan",
    "restorePath",
    "checkpoint",
    "implementationSha256",
    "reviewInput",
    "reviewerPrompt",
    "dispatchPrompt",
]


@pytest.fixture
def initialized(repo: Path) -> tuple[str, str]:
    source = write_plan(repo)
    restore = restore_path(repo)
    init(source, source, restore)
    return source, restore


def test_checkpoint_files_and_manifest(
    repo: Path, reviewers: str, initialized: tuple[str, str]
) -> None:
    active, restore = initialized
    out = io.StringIO()
    assert checkpoint_command(restore, "ceo", out=out, reviewers_dir=reviewers) == 0
    assert out.getvalue().count("\n") == 1
    manifest = jsonio.loads(out.getvalue())
    assert isinstance(manifest, dict)
    assert list(manifest) == MANIFEST_KEYS

    folder = os.path.dirname(manifest["checkpoint"])
    assert os.path.dirname(folder) == str(artifact_dir(repo))
    assert layout.parse_folder_name(os.path.basename(folder)) == ("ceo", "checkpoint")
    assert sorted(os.listdir(folder)) == sorted(layout.CHECKPOINT_FILES)
    for name in layout.CHECKPOINT_FILES:
        assert stat.S_IMODE(os.lstat(os.path.join(folder, name)).st_mode) == 0o444

    # The manifest on disk is exactly what the command printed.
    assert layout.immutable_read(manifest["checkpoint"]) == out.getvalue().encode()
    assert manifest["schema"] == 1
    assert manifest["phase"] == "ceo"
    assert manifest["activePlan"] == active
    assert manifest["restorePath"] == restore

    # Every recorded hash and size verifies against the immutable files.
    review_input = manifest["reviewInput"]
    prompt = manifest["reviewerPrompt"]
    assert review_input["path"] == os.path.join(folder, "review-input.md")
    assert prompt["path"] == os.path.join(folder, "reviewer-prompt.md")
    input_bytes = layout.read_verified(
        review_input["path"], review_input["sha256"], review_input["bytes"]
    )
    prompt_bytes = layout.read_verified(prompt["path"], prompt["sha256"], prompt["bytes"])
    assert prompt["lines"] == prompt_bytes.count(b"\n") + 1

    # The review input is the implementation section, exactly.
    plan_text = Path(active).read_text().split("\n", 1)[1]
    section = implementation_section(plan_text)
    assert section is not None
    assert input_bytes == section.encode()
    assert manifest["implementationSha256"] == layout.sha256_hex(input_bytes)
    assert (
        layout.implementation_sha256(Path(active).read_bytes())
        == (manifest["implementationSha256"])
    )

    # The reviewer prompt: the instructions, then the review input.
    prompt_text = prompt_bytes.decode()
    assert prompt_text.startswith(REVIEWER_TEXT.format(phase="ceo"))
    assert section in prompt_text

    # The dispatch prompt starts with the reviewer line and names the prompt file.
    lines = manifest["dispatchPrompt"].split("\n")
    assert lines[0] == "You are the independent CEO reviewer for this phase."
    assert lines[1] == f'Read file: "{prompt["path"]}"'
    assert lines[2] == (
        f"It has {prompt['lines']} lines (sha256 {prompt['sha256']}). Read all of it, then "
        f"begin your answer with: INPUT: ceo {prompt['sha256'][:12]}"
    )
    assert len(lines) == 3
    assert layout.reviewer_phase(manifest["dispatchPrompt"]) == "ceo"

    assert read_manifest(manifest["checkpoint"])[0] == manifest


@pytest.mark.parametrize("phase", ["design", "dx", "eng"])
def test_each_review_phase_has_its_reviewer(
    reviewers: str, initialized: tuple[str, str], phase: str
) -> None:
    _, restore = initialized
    manifest = checkpoint(restore, phase, reviewers_dir=reviewers)
    assert manifest["dispatchPrompt"].startswith(
        f"You are the independent {phase.upper()} reviewer for this phase.\n"
    )
    prompt = Path(manifest["reviewerPrompt"]["path"]).read_text()
    assert prompt.startswith(REVIEWER_TEXT.format(phase=phase))


def test_installed_reviewer_instructions_are_used_by_default(
    initialized: tuple[str, str],
) -> None:
    from plangate.autoplan.checkpoint import default_reviewers_dir

    assert os.path.isfile(os.path.join(default_reviewers_dir(), "ceo.md"))
    _, restore = initialized
    manifest = checkpoint(restore, "ceo")
    installed = Path(default_reviewers_dir(), "ceo.md").read_text()
    assert Path(manifest["reviewerPrompt"]["path"]).read_text().startswith(installed.rstrip())


def test_two_checkpoints_get_two_folders(reviewers: str, initialized: tuple[str, str]) -> None:
    _, restore = initialized
    first = checkpoint(restore, "ceo", reviewers_dir=reviewers)
    second = checkpoint(restore, "ceo", reviewers_dir=reviewers)
    assert first["checkpoint"] != second["checkpoint"]
    assert first["implementationSha256"] == second["implementationSha256"]


def test_unknown_phase_is_refused(reviewers: str, initialized: tuple[str, str]) -> None:
    _, restore = initialized
    with pytest.raises(UsageError) as caught:
        checkpoint(restore, "tasks", reviewers_dir=reviewers)
    assert str(caught.value) == "unknown review phase 'tasks' (use one of ceo, design, dx, eng)"


def test_checkpoint_without_init_is_refused(repo: Path, reviewers: str) -> None:
    restore = restore_path(repo)
    with pytest.raises(PlangateError) as caught:
        checkpoint(restore, "ceo", reviewers_dir=reviewers)
    assert str(caught.value) == (
        f"no autoplan init for the restore point {restore} "
        "(run `plangate autoplan init <source> <active> <restore>` first)"
    )


def test_checkpoint_refuses_an_active_plan_without_its_header(
    repo: Path, reviewers: str, initialized: tuple[str, str]
) -> None:
    active, restore = initialized
    Path(active).write_text(Path(active).read_text().split("\n", 1)[1])
    before = tree(repo)
    with pytest.raises(PlangateError) as caught:
        checkpoint(restore, "ceo", reviewers_dir=reviewers)
    assert str(caught.value).startswith(
        f"the active plan {active} no longer starts with its restore header"
    )
    assert tree(repo) == before


def test_checkpoint_refuses_a_changed_restore_point(
    repo: Path, reviewers: str, initialized: tuple[str, str]
) -> None:
    _, restore = initialized
    os.chmod(restore, 0o644)
    Path(restore).write_text("changed")
    os.chmod(restore, 0o444)
    with pytest.raises(PlangateError) as caught:
        checkpoint(restore, "ceo", reviewers_dir=reviewers)
    assert str(caught.value).startswith(f"the restore point {restore} cannot be trusted (mismatch)")


def test_missing_reviewer_instructions_are_refused(
    tmp_path: Path, initialized: tuple[str, str]
) -> None:
    _, restore = initialized
    empty = tmp_path / "none"
    empty.mkdir()
    with pytest.raises(PlangateError) as caught:
        checkpoint(restore, "ceo", reviewers_dir=str(empty))
    assert str(caught.value).startswith(
        f"the ceo reviewer instructions are missing: {empty / 'ceo.md'}"
    )


def test_a_failed_checkpoint_leaves_nothing(
    repo: Path, reviewers: str, initialized: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, restore = initialized
    before = tree(repo)
    real = writes.write_immutable
    calls: list[str] = []

    def fail_on_the_third(path: str, data: bytes) -> None:
        calls.append(path)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        real(path, data)

    monkeypatch.setattr(writes, "write_immutable", fail_on_the_third)
    with pytest.raises(OSError):
        checkpoint(restore, "ceo", reviewers_dir=reviewers)
    assert tree(repo) == before


def test_a_plan_without_an_implementation_section_is_refused(
    repo: Path, reviewers: str, initialized: tuple[str, str]
) -> None:
    active, restore = initialized
    text = Path(active).read_text().replace("## Implementation plan", "## Steps")
    Path(active).write_text(text)
    with pytest.raises(PlangateError) as caught:
        checkpoint(restore, "ceo", reviewers_dir=reviewers)
    assert str(caught.value).startswith(
        f"the active plan {active} has no `## Implementation plan` section"
    )
