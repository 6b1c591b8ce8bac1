"""plangate autoplan init: the restore point, the active plan, the exclude line."""

from __future__ import annotations

import hashlib
import io
import os
import stat
from pathlib import Path

import pytest

from plangate import files, jsonio
from plangate.autoplan import layout
from plangate.autoplan.init import init, init_command
from plangate.autoplan.scope import detect_scope
from plangate.errors import PlangateError, UsageError
from tests.autoplan.conftest import PLAN, artifact_dir, restore_path, tree, write_plan

KEYS = [
    "sourcePlan",
    "activePlan",
    "restorePath",
    "originalSha256",
    "originalBytes",
    "reused",
    "scope",
]


def _exclude_lines(repo: Path) -> list[str]:
    return (repo / ".git" / "info" / "exclude").read_text().splitlines()


def test_init_happy_path(repo: Path) -> None:
    source = write_plan(repo)
    restore = restore_path(repo)
    out = io.StringIO()
    assert init_command(source, source, restore, out=out) == 0
    printed = out.getvalue()
    assert printed.endswith("\n") and printed.count("\n") == 1
    result = jsonio.loads(printed)
    assert isinstance(result, dict)
    assert list(result) == KEYS
    original = PLAN.encode()
    assert result["sourcePlan"] == source
    assert result["activePlan"] == source
    assert result["restorePath"] == restore
    assert result["originalSha256"] == hashlib.sha256(original).hexdigest()
    assert result["originalBytes"] == len(original)
    assert result["reused"] is False
    assert list(result["scope"]) == ["design", "dx", "reasons"]

    # The restore point: the original bytes, written once, read-only.
    assert layout.immutable_read(restore) == original
    assert stat.S_IMODE(os.stat(restore).st_mode) == 0o444
    record = layout.init_record_path(restore)
    assert stat.S_IMODE(os.stat(record).st_mode) == 0o444
    # The active plan: the header line, LF, then the plan (already in the plan format).
    active = Path(source).read_bytes()
    header = f'<!-- plangate autoplan restore point: "{restore}" -->'
    assert active == header.encode() + b"\n" + original
    assert layout.has_restore_header(active, restore)
    # The artifact folder holds exactly the restore point and its record.
    assert sorted(os.listdir(artifact_dir(repo))) == sorted(
        [os.path.basename(restore), os.path.basename(record)]
    )
    assert _exclude_lines(repo).count("/.plangate/tmp/") == 1


def test_exclude_line_is_added_once(repo: Path) -> None:
    source = write_plan(repo)
    init(source, source, restore_path(repo, "plan-restore-1.md"))
    other = write_plan(repo, name="other.md")
    init(other, other, restore_path(repo, "other-restore-1.md"))
    assert _exclude_lines(repo).count("/.plangate/tmp/") == 1


def test_exclude_file_is_created_when_missing(repo: Path) -> None:
    exclude = repo / ".git" / "info" / "exclude"
    exclude.unlink()
    (repo / ".git" / "info").rmdir()
    source = write_plan(repo)
    init(source, source, restore_path(repo))
    assert exclude.read_text() == "/.plangate/tmp/\n"


def test_exclude_keeps_existing_lines(repo: Path) -> None:
    exclude = repo / ".git" / "info" / "exclude"
    exclude.write_text("*.log")  # no final newline
    source = write_plan(repo)
    init(source, source, restore_path(repo))
    assert exclude.read_text() == "*.log\n/.plangate/tmp/\n"


def test_git_status_stays_clean(repo: Path) -> None:
    import subprocess

    source = write_plan(repo)
    init(source, source, restore_path(repo))
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert status == "?? plan.md\n"


def test_init_repeat_is_reused_and_changes_nothing(repo: Path) -> None:
    source = write_plan(repo)
    restore = restore_path(repo)
    first = init(source, source, restore)
    before = tree(repo)
    second = init(source, source, restore)
    assert tree(repo) == before
    assert second == {**first, "reused": True}


def test_init_with_a_separate_active_plan(repo: Path) -> None:
    source = write_plan(repo)
    active = str(repo / "active.md")
    result = init(source, active, restore_path(repo))
    assert result["activePlan"] == active
    assert Path(source).read_text() == PLAN
    assert Path(active).read_bytes().split(b"\n", 1)[1] == PLAN.encode()


def test_plain_markdown_is_wrapped(repo: Path) -> None:
    text = "# Add a dashboard\n\nA page with a button.\n"
    source = write_plan(repo, text)
    restore = restore_path(repo)
    init(source, source, restore)
    active = Path(source).read_text()
    first, rest = active.split("\n", 1)
    assert first == layout.restore_header(restore)
    assert rest.startswith("# Plan: Add a dashboard\n\n## Goal\n")
    assert text in rest
    assert layout.immutable_read(restore) == text.encode()


def test_a_source_with_an_old_header_gets_the_new_one(repo: Path) -> None:
    source = write_plan(repo)
    init(source, source, restore_path(repo, "plan-restore-1.md"))
    previous = Path(source).read_bytes()
    restore = restore_path(repo, "plan-restore-2.md")
    init(source, source, restore)
    assert layout.immutable_read(restore) == previous
    assert Path(source).read_bytes() == layout.restore_header(restore).encode() + b"\n" + (
        PLAN.encode()
    )


def test_paths_are_canonical(repo: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(repo)
    source = write_plan(repo)
    restore = str(alias / ".plangate" / "tmp" / "autoplan" / "plan-restore-1.md")
    result = init(str(alias / "plan.md"), str(alias / "plan.md"), restore)
    assert result["sourcePlan"] == source
    assert result["restorePath"] == restore_path(repo, "plan-restore-1.md")


def test_outside_git_the_source_folder_is_the_project(tmp_path: Path) -> None:
    folder = Path(os.path.realpath(tmp_path)) / "plain"
    folder.mkdir()
    source = write_plan(folder)
    restore = restore_path(folder)
    result = init(source, source, restore)
    assert result["restorePath"] == restore
    assert not (folder / ".git").exists()


def test_failed_write_leaves_nothing(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = write_plan(repo)
    init(source, source, restore_path(repo, "plan-restore-1.md"))  # folder and exclude exist
    before = tree(repo)

    real = files.replace

    def fail_on_the_active_plan(
        path: str, data: bytes, mode: int | None = 0o600, **options: bool
    ) -> None:
        if options.get("exclusive"):  # the record and the restore point are written first
            return real(path, data, mode, **options)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files, "replace", fail_on_the_active_plan)
    with pytest.raises(OSError):
        init(source, source, restore_path(repo, "plan-restore-2.md"))
    assert tree(repo) == before


# --- refusals: one line, nothing written -------------------------------------------------


def _refused(repo: Path, source: str, active: str, restore: str) -> PlangateError:
    before = tree(repo)
    with pytest.raises(PlangateError) as caught:
        init(source, active, restore)
    assert tree(repo) == before
    assert "\n" not in str(caught.value)
    return caught.value


def test_missing_source_is_refused(repo: Path) -> None:
    source = str(repo / "missing.md")
    error = _refused(repo, source, source, restore_path(repo))
    assert str(error) == f"no plan at {source} (check the path of the plan to review)"


def test_restore_outside_the_artifact_folder_is_refused(repo: Path) -> None:
    source = write_plan(repo)
    restore = str(repo / "plan-restore.md")
    folder = artifact_dir(repo)
    error = _refused(repo, source, source, restore)
    assert isinstance(error, UsageError)
    assert str(error) == (
        f"the restore point {restore} is not a .md file directly inside the artifact folder "
        f"{folder} (use a path like {folder}/<plan>-restore-<yyyymmdd-hhmmss>.md)"
    )
    deeper = str(folder / "sub" / "plan-restore.md")
    _refused(repo, source, source, deeper)
    _refused(repo, source, source, str(folder / "plan-restore.txt"))


def test_restore_of_another_plan_is_refused(repo: Path) -> None:
    first = write_plan(repo, name="first.md")
    restore = restore_path(repo)
    init(first, first, restore)
    second = write_plan(repo, name="second.md")
    error = _refused(repo, second, second, restore)
    assert str(error) == (
        f"the restore point {restore} belongs to another plan ({first} -> {first}) "
        "(choose a new restore path for this plan)"
    )


def test_a_foreign_file_at_the_restore_path_is_refused(repo: Path) -> None:
    source = write_plan(repo)
    restore = restore_path(repo)
    os.makedirs(os.path.dirname(restore))
    Path(restore).write_text("someone else's file")
    error = _refused(repo, source, source, restore)
    assert str(error) == (
        f"the restore point {restore} already exists and was not made by init "
        "(choose a new restore path for this plan)"
    )


def test_repeat_after_the_header_was_removed_is_refused(repo: Path) -> None:
    source = write_plan(repo)
    restore = restore_path(repo)
    init(source, source, restore)
    Path(source).write_text(PLAN)
    error = _refused(repo, source, source, restore)
    assert str(error) == (
        f"the active plan {source} no longer starts with the header of {restore} "
        "(choose a new restore path for this plan)"
    )


def test_repeat_after_the_restore_point_changed_is_refused(repo: Path) -> None:
    source = write_plan(repo)
    restore = restore_path(repo)
    init(source, source, restore)
    os.chmod(restore, 0o644)
    error = _refused(repo, source, source, restore)
    assert str(error) == (
        f"the restore point {restore} cannot be trusted (writable) "
        "(choose a new restore path for this plan)"
    )


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("plan.md", "the source plan must be an absolute path: plan.md (pass the full path)"),
        (
            "/x/../plan.md",
            "the source plan is not in normal form: /x/../plan.md (write it as /plan.md: "
            "no '.', '..', '//' or trailing '/')",
        ),
    ],
)
def test_bad_paths_are_refused(repo: Path, source: str, message: str) -> None:
    write_plan(repo)
    error = _refused(repo, source, str(repo / "plan.md"), restore_path(repo))
    assert isinstance(error, UsageError)
    assert str(error) == message


def test_restore_equal_to_active_is_refused(repo: Path) -> None:
    source = write_plan(repo)
    restore = restore_path(repo)
    os.makedirs(os.path.dirname(restore))
    error = _refused(repo, source, restore, restore)
    assert str(error).startswith(f"the restore point {restore} is also the source or active plan")


def test_non_utf8_source_is_refused(repo: Path) -> None:
    source = repo / "plan.md"
    source.write_bytes(b"# Plan\n\xff\n")
    error = _refused(repo, str(source), str(source), restore_path(repo))
    assert str(error) == f"the plan {source} is not UTF-8 text (byte 7) (save it as UTF-8)"


def test_active_in_a_missing_folder_is_refused(repo: Path) -> None:
    source = write_plan(repo)
    active = str(repo / "nowhere" / "plan.md")
    error = _refused(repo, source, active, restore_path(repo))
    assert str(error) == (
        f"the active plan's folder {repo / 'nowhere'} does not exist "
        "(create it or pick another path)"
    )


# --- scope ------------------------------------------------------------------------------


def test_explicit_scope_line_wins() -> None:
    text = "# Plan\n\n## Goal\n\nA dashboard page.\nScope: dx\n"
    assert detect_scope(text) == {
        "design": False,
        "dx": True,
        "reasons": ["the plan says Scope: dx"],
    }
    assert detect_scope("Scope: none\nA CLI and a button.\n")["design"] is False
    assert detect_scope("- **Scope:** design, dx\n") == {
        "design": True,
        "dx": True,
        "reasons": ["the plan says Scope: design, dx"],
    }


def test_prose_scope_line_is_not_a_declaration() -> None:
    scope = detect_scope("Scope: the whole backend rewrite.\nA new API endpoint.\n")
    assert scope["design"] is False
    assert scope["dx"] is True


def test_scope_heuristics_list_their_reasons() -> None:
    scope = detect_scope("Add a settings page with a Save button to the web app.\n")
    assert scope["design"] is True and scope["dx"] is False
    assert scope["reasons"][0] == (
        'design: the plan mentions user-interface terms "page", "button", "web app"'
    )
    assert scope["reasons"][1].startswith("dx: no developer-facing terms")
    scope = detect_scope("Ship an SDK and a CLI for the public API; update the config file.\n")
    assert scope["design"] is False and scope["dx"] is True
    assert scope["reasons"][1] == (
        'dx: the plan mentions developer-facing terms "SDK", "CLI", "API", "config file"'
    )


def test_scope_ignores_false_friends_and_code() -> None:
    text = "Tune the page cache in the form of a patch.\n```\nbutton()\n```\n"
    assert detect_scope(text)["design"] is False


def test_init_reports_the_scope(repo: Path) -> None:
    source = write_plan(repo, PLAN.replace("from a CSV file.", "from a CSV file.\nScope: design"))
    result = init(source, source, restore_path(repo))
    assert result["scope"] == {
        "design": True,
        "dx": False,
        "reasons": ["the plan says Scope: design"],
    }


def test_an_unrelated_existing_active_plan_is_not_overwritten(repo: Path) -> None:
    source = write_plan(repo)
    notes = repo / "notes.md"
    notes.write_text("my notes\n")
    error = _refused(repo, source, str(notes), restore_path(repo))
    assert str(error) == (
        f"the active plan {notes} already exists and is not an /autoplan active plan "
        "(pass the source plan as the active plan too, or a path that does not exist yet)"
    )


def test_an_earlier_active_plan_may_be_the_active_plan_again(repo: Path) -> None:
    source = write_plan(repo)
    active = str(repo / "active.md")
    init(source, active, restore_path(repo, "plan-restore-1.md"))
    restore = restore_path(repo, "plan-restore-2.md")
    result = init(source, active, restore)
    assert result["reused"] is False
    assert layout.has_restore_header(Path(active).read_bytes(), restore)


def test_an_empty_source_is_refused(repo: Path) -> None:
    source = write_plan(repo, "\n")
    error = _refused(repo, source, source, restore_path(repo))
    assert str(error) == f"the plan {source} is empty (write the plan first, then review it)"
