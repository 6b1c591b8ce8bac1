"""The hook's identity checks (``config_dir`` given): the journal must be
``<config>/projects/<slug>/<session>.jsonl`` with no symlink on the way (gstack-design B.1)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from plangate.journal import ERROR, MISSING, READY, Verdict, read_journal
from plangate.journal.codes import IDENTITY
from plangate.locations import project_slug
from testkit.journals import Journal

PROJECT = "/home/user/project"
SLUG = project_slug(PROJECT)


@pytest.fixture
def hook_journal(journal: Journal, config_dir: Path) -> Path:
    journal.session()
    return journal.write_layout(config_dir)


def hook_read(path: str | Path, config_dir: Path | str, session_id: str | None) -> Verdict:
    return read_journal(
        str(path), session_id=session_id, owners=[PROJECT], config_dir=str(config_dir)
    )


def test_the_right_layout_is_ready(hook_journal: Path, config_dir: Path, journal: Journal) -> None:
    assert hook_journal == config_dir / "projects" / SLUG / f"{journal.session_id}.jsonl"
    verdict = read_journal(
        str(hook_journal),
        session_id=journal.session_id,
        owners=[PROJECT],
        config_dir=str(config_dir),
    )
    assert (verdict.status, verdict.reason) == (READY, None)
    assert verdict.owner == PROJECT
    assert verdict.session_id == journal.session_id
    by_name = read_journal(str(hook_journal), config_dir=str(config_dir))
    assert (by_name.status, by_name.session_id) == (READY, journal.session_id)


@pytest.mark.parametrize(
    "name",
    [
        "{other}.jsonl",
        "{session}.json",
        "{session}.jsonl.bak",
        "{session}.JSONL",
        "x{session}.jsonl",
    ],
)
def test_a_wrong_file_name_is_identity(
    name: str, hook_journal: Path, config_dir: Path, journal: Journal
) -> None:
    other = "0b783d01-4581-4dfa-b7ec-39e32a8303ec"
    target = hook_journal.with_name(name.format(session=journal.session_id, other=other))
    shutil.copyfile(hook_journal, target)
    verdict = read_journal(
        str(target), session_id=journal.session_id, owners=[PROJECT], config_dir=str(config_dir)
    )
    assert (verdict.status, verdict.reason) == (ERROR, IDENTITY)


@pytest.mark.parametrize(
    "spelling",
    [
        "{config}/projects/{slug}/../{slug}/{name}",
        "{config}/projects//{slug}/{name}",
        "{config}//projects/{slug}/{name}",
        "{config}/projects/{slug}//{name}",
        "{config}/./projects/{slug}/{name}",
        "{config}/projects/{slug}/./{name}",
        "{config}/projects/../projects/{slug}/{name}",
    ],
)
def test_a_path_not_in_normal_form_is_identity(
    spelling: str, hook_journal: Path, config_dir: Path, journal: Journal
) -> None:
    path = spelling.format(config=config_dir, slug=SLUG, name=hook_journal.name)
    assert os.path.exists(path)
    verdict = hook_read(path, config_dir, journal.session_id)
    assert (verdict.status, verdict.reason) == (ERROR, IDENTITY)


@pytest.mark.parametrize("config_spelling", ["{config}/", "{config}/.", "{config}/../claude"])
def test_a_config_dir_not_in_normal_form_is_identity(
    config_spelling: str, hook_journal: Path, config_dir: Path, journal: Journal
) -> None:
    config = config_spelling.format(config=config_dir)
    verdict = hook_read(hook_journal, config, journal.session_id)
    assert (verdict.status, verdict.reason) == (ERROR, IDENTITY)


def test_a_relative_path_is_identity(
    hook_journal: Path, config_dir: Path, journal: Journal, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(config_dir)
    relative = os.path.relpath(hook_journal, config_dir)
    verdict = hook_read(relative, config_dir, journal.session_id)
    assert (verdict.status, verdict.reason) == (ERROR, IDENTITY)


@pytest.mark.parametrize("session_id", ["../x", "a b", "", "s" * 161, "id/with/slash"])
def test_an_invalid_session_id_is_identity(
    session_id: str, hook_journal: Path, config_dir: Path
) -> None:
    verdict = hook_read(hook_journal, config_dir, session_id)
    assert (verdict.status, verdict.reason) == (ERROR, IDENTITY)


def test_a_symlinked_journal_file_is_identity(
    journal: Journal, config_dir: Path, tmp_path: Path
) -> None:
    journal.session()
    real = journal.write(tmp_path / "elsewhere.jsonl")
    link = config_dir / "projects" / SLUG / f"{journal.session_id}.jsonl"
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    verdict = hook_read(link, config_dir, journal.session_id)
    assert (verdict.status, verdict.reason) == (ERROR, IDENTITY)
    # Without the layout checks only content is judged, and the link is followed.
    assert read_journal(str(link)).status == READY


@pytest.mark.parametrize("linked", ["project", "projects", "config"])
def test_a_symlinked_folder_is_identity(
    linked: str, journal: Journal, config_dir: Path, tmp_path: Path
) -> None:
    journal.session()
    real_config = tmp_path.resolve() / "real-claude"
    real = journal.write_layout(real_config)
    config = config_dir
    if linked == "project":
        (config / "projects").mkdir()
        (config / "projects" / SLUG).symlink_to(real.parent)
    elif linked == "projects":
        (config / "projects").symlink_to(real_config / "projects")
    else:
        config = tmp_path.resolve() / "claude-link"
        config.symlink_to(real_config)
    path = config / "projects" / SLUG / real.name
    assert path.read_bytes() == real.read_bytes()
    verdict = hook_read(path, config, journal.session_id)
    assert (verdict.status, verdict.reason) == (ERROR, IDENTITY)
    assert hook_read(real, real_config, journal.session_id).status == READY


@pytest.mark.parametrize(
    "where",
    [
        "{config}/{name}",
        "{config}/projects/{name}",
        "{config}/other/{slug}/{name}",
        "{config}/projects/{slug}/sub/{name}",
        "{other_config}/projects/{slug}/{name}",
        "{config}/projects/{slug}/projects/{slug}/{name}",
    ],
)
def test_a_journal_outside_config_projects_slug_is_identity(
    where: str, journal: Journal, config_dir: Path, tmp_path: Path
) -> None:
    journal.session()
    other_config = tmp_path.resolve() / "other-claude"
    path = Path(
        where.format(
            config=config_dir,
            other_config=other_config,
            slug=SLUG,
            name=f"{journal.session_id}.jsonl",
        )
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    journal.write(path)
    verdict = hook_read(path, config_dir, journal.session_id)
    assert (verdict.status, verdict.reason) == (ERROR, IDENTITY)


def test_a_missing_journal_is_missing_without_a_reason(journal: Journal, config_dir: Path) -> None:
    folder = config_dir / "projects" / SLUG
    folder.mkdir(parents=True)
    path = folder / f"{journal.session_id}.jsonl"
    verdict = read_journal(
        str(path), session_id=journal.session_id, owners=[PROJECT], config_dir=str(config_dir)
    )
    assert (verdict.status, verdict.reason) == (MISSING, None)
    assert verdict.exists is False
    assert verdict.events == [] and verdict.records == 0
    content_only = read_journal(str(path))
    assert (content_only.status, content_only.reason, content_only.exists) == (MISSING, None, False)


def test_a_folder_named_like_the_journal_is_identity(journal: Journal, config_dir: Path) -> None:
    path = config_dir / "projects" / SLUG / f"{journal.session_id}.jsonl"
    path.mkdir(parents=True)
    verdict = hook_read(path, config_dir, journal.session_id)
    assert (verdict.status, verdict.reason) == (ERROR, IDENTITY)


def test_a_fifo_named_like_the_journal_is_identity_without_blocking(
    journal: Journal, config_dir: Path
) -> None:
    """A plain read-only open of a FIFO waits for a writer forever; a hook must not."""
    path = config_dir / "projects" / SLUG / f"{journal.session_id}.jsonl"
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    code = (
        "import sys\n"
        "from plangate.journal import read_journal\n"
        "v = read_journal(sys.argv[1], session_id=sys.argv[2], config_dir=sys.argv[3])\n"
        "print(v.status, v.reason)\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, str(path), journal.session_id, str(config_dir)],
            capture_output=True,
            text=True,
            timeout=2,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("read_journal blocked on a FIFO")
    assert done.stdout.split() == [ERROR, IDENTITY]


def test_records_of_other_sessions_are_skipped(journal: Journal, config_dir: Path) -> None:
    other = Journal(cwd=PROJECT, seed=2)
    other.session("another session's prompt")
    journal.session()
    path = config_dir / "projects" / SLUG / f"{journal.session_id}.jsonl"
    path.parent.mkdir(parents=True)
    mixed = journal.lines()
    mixed[2:2] = other.lines()  # another session's root and turn before this session's root
    path.write_bytes(b"".join(line + b"\n" for line in mixed))
    verdict = read_journal(
        str(path), session_id=journal.session_id, owners=[PROJECT], config_dir=str(config_dir)
    )
    assert (verdict.status, verdict.reason) == (READY, None)
    alone = read_journal(str(journal.write(config_dir / "alone.jsonl")))
    assert verdict.records == alone.records
    assert [e.kind for e in verdict.events] == [e.kind for e in alone.events]
    only_other = path.with_name(f"{journal.session_id}.jsonl")
    only_other.write_bytes(other.to_bytes())
    nothing = read_journal(
        str(only_other), session_id=journal.session_id, owners=[PROJECT], config_dir=str(config_dir)
    )
    assert (nothing.status, nothing.reason, nothing.records) == (MISSING, None, 0)
