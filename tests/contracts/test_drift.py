"""Changes judged by the files (:mod:`plangate.contracts.drift`, :mod:`.snapshot`):
snapshots of real git repositories and plain folders in a temporary folder, compared after
real changes; and the rulings on real journals: a phase entry refused and a final stop held
while the phase left has changed files outside its ``editable`` paths, whatever wrote them."""

from __future__ import annotations

import io
import os
import subprocess
from pathlib import Path

import pytest

from plangate.commands.approve import approve
from plangate.contracts import drift, snapshot
from tests.contracts.conftest import (
    FEATURE,
    REQUIREMENTS,
    Project,
    spec_json,
    stop,
    typed_refusal,
)
from tests.contracts.test_rules import bash, skill, write

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def git(folder: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args],
        cwd=folder,
        env={**os.environ, **GIT_ENV},
        check=True,
        capture_output=True,
        timeout=60,
    )


def repository(folder: Path) -> Path:
    """A git repository with two tracked files, an ignore rule and one commit."""
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "app.py").write_text("print('app')\n")
    (folder / "README.md").write_text("# app\n")
    (folder / ".gitignore").write_text("build/\n")
    git(folder, "init", "-q")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "init")
    return folder


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return repository(tmp_path / "repo")


def snap(folder: Path, tmp_path: Path) -> snapshot.Snapshot:
    taken = snapshot.take(str(folder), str(tmp_path / "state"))
    assert taken is not None
    return taken


def changed(folder: Path, before: snapshot.Snapshot, tmp_path: Path) -> list[str]:
    return sorted(snapshot.changes(str(folder), before, str(tmp_path / "state")))


def test_an_untouched_repository_has_no_changes(repo: Path, tmp_path: Path) -> None:
    before = snap(repo, tmp_path)
    assert before.kind == "git"
    assert {"src/app.py", "README.md", ".gitignore"} <= set(before.entries)
    assert changed(repo, before, tmp_path) == []


def test_changed_added_and_deleted_files_are_found_ignored_ones_are_not(
    repo: Path, tmp_path: Path
) -> None:
    before = snap(repo, tmp_path)
    (repo / "src" / "app.py").write_text("print('changed')\n")
    (repo / "src" / "new.py").write_text("x = 1\n")
    (repo / "README.md").unlink()
    (repo / "build").mkdir()
    (repo / "build" / "out.bin").write_text("ignored\n")
    (repo / "src" / "__pycache__").mkdir()
    (repo / "src" / "__pycache__" / "app.cpython-312.pyc").write_bytes(b"\0")
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.local.json").write_text("{}\n")
    assert changed(repo, before, tmp_path) == ["README.md", "src/app.py", "src/new.py"]


def test_a_file_restored_as_it_was_counts_as_unchanged(repo: Path, tmp_path: Path) -> None:
    before = snap(repo, tmp_path)
    (repo / "src" / "app.py").write_text("print('changed')\n")
    assert changed(repo, before, tmp_path) == ["src/app.py"]
    git(repo, "checkout", "--", "src/app.py")  # a new inode and mtime, the same bytes
    assert changed(repo, before, tmp_path) == []


def test_a_mode_change_a_retargeted_link_and_a_committed_change_count(
    repo: Path, tmp_path: Path
) -> None:
    os.symlink("src/app.py", repo / "link")
    before = snap(repo, tmp_path)
    os.chmod(repo / "src" / "app.py", 0o755)
    os.unlink(repo / "link")
    os.symlink("README.md", repo / "link")
    (repo / "README.md").write_text("# other\n")
    git(repo, "commit", "-qam", "hide it in a commit")
    assert changed(repo, before, tmp_path) == ["README.md", "link", "src/app.py"]


def test_hiding_a_new_file_behind_info_exclude_is_itself_a_change(
    repo: Path, tmp_path: Path
) -> None:
    before = snap(repo, tmp_path)
    (repo / "src" / "sneaky.py").write_text("x = 1\n")
    with (repo / ".git" / "info" / "exclude").open("a") as exclude:
        exclude.write("src/sneaky.py\n")
    assert changed(repo, before, tmp_path) == [".git/info/exclude"]


def test_a_write_in_place_with_the_old_size_and_mtime_put_back_is_found(
    repo: Path, tmp_path: Path
) -> None:
    app = repo / "src" / "app.py"
    before = snap(repo, tmp_path)
    info = app.stat()
    with app.open("r+") as same_inode:
        same_inode.write("print('APP')\n")  # the same length
    os.utime(app, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert (app.stat().st_ino, app.stat().st_size) == (info.st_ino, info.st_size)
    assert changed(repo, before, tmp_path) == ["src/app.py"]


def test_a_new_file_hidden_by_the_user_s_global_ignore_file_is_found(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".config").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    before = snap(repo, tmp_path)
    (repo / "src" / "sneaky.py").write_text("x = 1\n")
    ignore = home / ".config" / "git" / "ignore"
    ignore.parent.mkdir()
    ignore.write_text("sneaky.py\n")
    assert changed(repo, before, tmp_path) == [str(ignore)]


def test_a_global_ignore_file_configured_after_the_snapshot_hides_nothing(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    before = snap(repo, tmp_path)
    (repo / "src" / "sneaky.py").write_text("x = 1\n")
    (home / "hide").write_text("sneaky.py\n")
    (home / ".gitconfig").write_text(f"[core]\n\texcludesFile = {home / 'hide'}\n")
    assert changed(repo, before, tmp_path) == ["src/sneaky.py"]


def test_a_hook_or_a_config_change_in_the_repository_is_a_change(
    repo: Path, tmp_path: Path
) -> None:
    """What git runs the next time the person uses it: the repository's hooks and config."""
    before = snap(repo, tmp_path)
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.write_text("#!/bin/sh\necho x > src/app.py\n")
    with (repo / ".git" / "config").open("a") as config:
        config.write("[core]\n\thooksPath = elsewhere\n")
    assert changed(repo, before, tmp_path) == [".git/config", ".git/hooks/post-checkout"]


def test_a_tracked_file_newly_ignored_and_untracked_is_a_change(repo: Path, tmp_path: Path) -> None:
    before = snap(repo, tmp_path)
    git(repo, "rm", "-q", "--cached", "README.md")
    (repo / ".gitignore").write_text("build/\nREADME.md\n")
    assert changed(repo, before, tmp_path) == [".gitignore", "README.md"]


def test_a_repository_git_cannot_list_any_more_cannot_be_cleared(
    repo: Path, tmp_path: Path
) -> None:
    before = snap(repo, tmp_path)
    (repo / ".git" / "HEAD").write_text("garbage\n")
    with pytest.raises(snapshot.Unlisted):
        snapshot.changes(str(repo), before, str(tmp_path / "state"))


def test_outside_git_the_project_is_walked_without_dependencies(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "a.py").write_text("a\n")
    before = snap(folder, tmp_path)
    assert before.kind == "walk" and list(before.entries) == ["src/a.py"]
    (folder / "node_modules" / "x").mkdir(parents=True)
    (folder / "node_modules" / "x" / "index.js").write_text("1\n")
    (folder / ".claude").mkdir()
    (folder / ".claude" / "settings.local.json").write_text("{}\n")
    (folder / "src" / "b.py").write_text("b\n")
    assert changed(folder, before, tmp_path) == ["src/b.py"]


def test_outside_git_a_project_over_the_walk_limit_gets_no_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    for n in range(4):
        (folder / f"f{n}.txt").write_text("x\n")
    monkeypatch.setattr(snapshot, "WALK_LIMIT", 3)
    assert snapshot.take(str(folder), str(tmp_path / "state")) is None


def test_the_state_root_inside_the_project_is_left_out(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    (folder / ".plangate").mkdir(parents=True)
    (folder / "a.txt").write_text("a\n")
    before = snapshot.take(str(folder), str(folder / ".plangate"))
    assert before is not None
    (folder / ".plangate" / "log.jsonl").write_text("{}\n")
    assert snapshot.changes(str(folder), before, str(folder / ".plangate")) == []


def test_a_snapshot_is_kept_by_project_workflow_scope_and_phase(repo: Path, tmp_path: Path) -> None:
    state = str(tmp_path / "state")
    taken = snap(repo, tmp_path)
    snapshot.save(str(repo), "cc-sdd", "feature=greet", "requirements", taken, state)
    loaded = snapshot.load(str(repo), "cc-sdd", "feature=greet", "requirements", state)
    assert loaded is not None and loaded.entries == taken.entries
    assert snapshot.load(str(repo), "cc-sdd", "feature=other", "requirements", state) is None
    assert snapshot.load(str(repo), "cc-sdd", "feature=greet", "design", state) is None
    assert snapshot.latest(str(repo), "cc-sdd", state) == ("feature=greet", "requirements")
    kept = list((tmp_path / "state" / snapshot.FOLDER).iterdir())
    assert all(os.stat(path).st_mode & 0o077 == 0 for path in kept)


def test_a_linked_snapshot_folder_is_never_written_through(repo: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, state / snapshot.FOLDER)
    taken = snap(repo, tmp_path)
    with pytest.raises(OSError):
        snapshot.save(str(repo), "cc-sdd", "", "init", taken, str(state))
    assert list(elsewhere.iterdir()) == []


def test_the_refusal_names_a_few_files_then_a_count_and_the_remedy() -> None:
    names = [f"src/m{n}.py" for n in range(8)]
    text = drift.describe(names, "requirements", "cc-sdd", "greet")
    assert text.startswith("src/m0.py, src/m1.py, src/m2.py, src/m3.py, src/m4.py and 3 more;")
    assert "git checkout -- FILE" in text
    assert "plangate approve cc-sdd requirements greet" in text
    long = [f"src/{'deep/' * 12}m{n}.py" for n in range(8)]
    fitted = drift.describe(long, "requirements", "cc-sdd", "greet", drift.DETAIL_BUDGET)
    assert len(fitted) <= drift.DETAIL_BUDGET and "and 7 more" in fitted


# --- the rulings, on real journals ------------------------------------------------------------


@pytest.fixture
def gitproject(project: Project) -> Project:
    """The cc-sdd project as a git repository with a source file."""
    (project.dir / "src").mkdir()
    (project.dir / "src" / "app.py").write_text("print('app')\n")
    git(project.dir, "init", "-q")
    git(project.dir, "add", "-A")
    git(project.dir, "commit", "-qm", "init")
    return project


def in_requirements(project: Project) -> None:
    """spec-init and requirements entered through the hook (their snapshots taken)."""
    project.journal.prompt("/kiro-spec-init a greeting command")
    assert skill(project, "kiro-spec-init", "a greeting command") is None
    project.write(project.spec / "spec.json", spec_json())
    assert skill(project, "kiro-spec-requirements") is None
    project.write(project.spec / "requirements.md", REQUIREMENTS)


def deny_reason(project: Project, name: str) -> str:
    from plangate.contracts import evaluate

    payload = project.journaled("Skill", {"skill": name, "args": FEATURE})
    output = evaluate.pre_tool_use(payload, None)
    hook = output.get("hookSpecificOutput")
    assert isinstance(hook, dict), output
    project.answered(payload, None, "refused")
    return str(hook.get("permissionDecisionReason", ""))


def test_a_source_file_written_unseen_refuses_the_next_entry_until_restored(
    gitproject: Project,
) -> None:
    project = gitproject
    in_requirements(project)
    command = "python3 -c \"open('src/app.py', 'w').write('early')\""
    assert bash(project, command) is None  # no parser sees it ...
    (project.dir / "src" / "app.py").write_text("early")  # ... and it runs
    project.person("approve requirements")
    assert skill(project, "kiro-spec-design") == "contract_drift"
    reason = deny_reason(project, "kiro-spec-design")
    assert "src/app.py" in reason and "git checkout -- FILE" in reason
    assert "phase requirements" in reason
    git(project.dir, "checkout", "--", "src/app.py")
    assert skill(project, "kiro-spec-design") is None


def test_the_phase_s_own_files_and_the_flag_file_are_not_drift(gitproject: Project) -> None:
    project = gitproject
    in_requirements(project)
    (project.spec / "notes.md").write_text("editable: {spec}/**\n")
    (project.dir / ".kiro" / "steering").mkdir(parents=True)
    (project.dir / ".kiro" / "steering" / "product.md").write_text("steering\n")
    project.person("approve requirements")
    assert skill(project, "kiro-spec-design") is None


def test_the_final_stop_is_held_naming_the_file_then_let_through_once_restored(
    gitproject: Project,
) -> None:
    project = gitproject
    in_requirements(project)
    (project.dir / "src" / "extra.py").write_text("x = 1\n")
    held = stop(project, "Requirements written.")
    assert held.get("decision") == "block", held
    assert "contract_drift" in str(held["reason"]) and "src/extra.py" in str(held["reason"])
    (project.dir / "src" / "extra.py").unlink()
    assert stop(project, "Requirements written.").get("decision") is None


def test_a_person_s_approve_accepts_the_changes(gitproject: Project) -> None:
    project = gitproject
    in_requirements(project)
    (project.dir / "src" / "app.py").write_text("reviewed by the person\n")
    project.person("approve requirements")
    assert skill(project, "kiro-spec-design") == "contract_drift"
    out = io.StringIO()
    assert approve("cc-sdd", "requirements", FEATURE, str(project.dir), out) == 0
    assert "accepted" in out.getvalue()
    assert skill(project, "kiro-spec-design") is None


def test_a_fresh_session_s_entry_compares_the_phase_begun_last(gitproject: Project) -> None:
    from testkit.journals import Journal

    project = gitproject
    in_requirements(project)
    (project.dir / "src" / "app.py").write_text("changed\n")
    project.journal = Journal(cwd=str(project.dir))  # a new session: no phase in its journal
    project.person("approve requirements")
    assert skill(project, "kiro-spec-design") == "contract_drift"


def test_each_phase_begun_is_noted_as_the_one_begun_last(gitproject: Project) -> None:
    project = gitproject
    in_requirements(project)
    state = str(project.state)
    assert snapshot.latest(str(project.dir), "cc-sdd", state) == ("feature=greet", "requirements")
    project.person("approve requirements")
    assert skill(project, "kiro-spec-design") is None
    assert snapshot.latest(str(project.dir), "cc-sdd", state) == ("feature=greet", "design")


def test_an_edit_refused_at_the_call_still_refuses_with_its_own_code(
    gitproject: Project,
) -> None:
    project = gitproject
    in_requirements(project)
    assert write(project, project.dir / "src" / "app.py", "x") == "contract_edit_scope"
    assert bash(project, "sed -Ei 's/app/x/' src/app.py") == "contract_edit_scope"


def test_entering_the_current_phase_again_neither_compares_nor_rebases(
    gitproject: Project,
) -> None:
    project = gitproject
    in_requirements(project)
    (project.dir / "src" / "app.py").write_text("changed\n")
    assert skill(project, "kiro-spec-requirements") is None  # the same phase: not left
    project.person("approve requirements")
    assert skill(project, "kiro-spec-design") == "contract_drift"  # the change still counts


def test_a_typed_entry_is_refused_for_the_person_to_see_naming_the_file(
    gitproject: Project,
) -> None:
    project = gitproject
    in_requirements(project)
    (project.dir / "src" / "app.py").write_text("changed\n")
    project.person("approve requirements")
    reason = typed_refusal(project.expansion("kiro-spec-design", FEATURE))
    assert reason is not None and "contract_drift" in reason and "src/app.py" in reason
    assert "plangate approve cc-sdd requirements greet" in reason


def test_going_back_to_an_earlier_phase_leaves_the_current_one_too(gitproject: Project) -> None:
    project = gitproject
    in_requirements(project)
    (project.dir / "src" / "app.py").write_text("changed\n")
    assert skill(project, "kiro-spec-init", "a greeting command") == "contract_drift"


def test_a_person_accepts_a_change_in_a_phase_that_needs_no_approval(
    gitproject: Project,
) -> None:
    project = gitproject
    project.journal.prompt("/kiro-spec-init a greeting command")
    assert skill(project, "kiro-spec-init", "a greeting command") is None
    project.write(project.spec / "spec.json", spec_json())
    (project.dir / "src" / "app.py").write_text("the person's own edit\n")
    assert skill(project, "kiro-spec-requirements") == "contract_drift"
    asked: list[str] = []

    def decline(shown: str) -> bool:
        asked.append(shown)
        return False

    out = io.StringIO()
    declined = approve("cc-sdd", "init", FEATURE, str(project.dir), out, confirm=decline)
    assert declined == 1 and "Not accepted" in out.getvalue()  # the person said no
    assert "Accept the project's files as they are now for phase init" in asked[0]
    assert skill(project, "kiro-spec-requirements") == "contract_drift"
    out = io.StringIO()
    assert approve("cc-sdd", "init", FEATURE, str(project.dir), out) == 0
    assert "accepted" in out.getvalue()
    assert skill(project, "kiro-spec-requirements") is None


def _unseen_forms(repo: Path) -> dict[str, str]:
    """Each way of writing ``src/app.py`` that no parser sees, as a real shell command."""
    git(repo, "branch", "other")
    git(repo, "checkout", "-q", "other")
    (repo / "src" / "app.py").write_text("print('other')\n")
    git(repo, "commit", "-qam", "other")
    git(repo, "checkout", "-q", "-")
    (repo / "docs").mkdir()
    diff = subprocess.run(
        ["git", "diff", "HEAD", "other", "--", "src/app.py"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    (repo / "docs" / "change.diff").write_text(diff)
    (repo / "docs" / "run.sh").write_text("echo 'print(2)' > src/app.py\n")
    encoded = "ZWNobyAncHJpbnQoMyknID4gc3JjL2FwcC5weQo="  # echo 'print(3)' > src/app.py
    return {
        "python3 -c": "python3 -c \"open('src/app.py','w').write('x')\"",
        "python3 - <<EOF": "python3 - <<'EOF'\nopen('src/app.py','w').write('x')\nEOF",
        "node -e": "node -e \"require('fs').writeFileSync('src/app.py','x')\"",
        "ed": "printf '1d\\nw\\nq\\n' | ed -s src/app.py",
        "patch": "patch -s -p1 < docs/change.diff",
        "git apply": "git apply docs/change.diff",
        "git checkout BRANCH -- FILE": "git checkout other -- src/app.py",
        "sh -c": "sh -c 'echo x > src/app.py'",
        "eval": "CMD='echo x > src/app.py'; eval \"$CMD\"",
        "bash -c base64": f'bash -c "$(echo {encoded} | base64 -d)"',
        "find -exec sed -i": "find src -name app.py -exec sed -i s/app/x/ {} +",
        "xargs sed -i": "echo src/app.py | xargs sed -i s/app/x/",
        "a script in an allowed folder": "sh docs/run.sh",
        "perl -i joined": "perl -pi -e s/app/x/ src/app.py",
    }


UNSEEN = (
    "python3 -c",
    "python3 - <<EOF",
    "node -e",
    "ed",
    "patch",
    "git apply",
    "git checkout BRANCH -- FILE",
    "sh -c",
    "eval",
    "bash -c base64",
    "find -exec sed -i",
    "xargs sed -i",
    "a script in an allowed folder",
    "perl -i joined",
)


@pytest.mark.parametrize("form", UNSEEN)
def test_every_form_the_parser_does_not_see_is_caught_by_the_files(
    tmp_path: Path, form: str
) -> None:
    """The command really runs in a fresh repository; the compare names ``src/app.py``."""
    repo = repository(tmp_path / "repo")
    command = _unseen_forms(repo)[form]
    before = snap(repo, tmp_path)
    subprocess.run(["bash", "-c", command], cwd=repo, check=True, timeout=60)
    assert "src/app.py" in changed(repo, before, tmp_path)


def test_after_an_unlimited_phase_a_fresh_session_compares_nothing_before_it(
    gitproject: Project,
) -> None:
    """The implementation may change anything: once it began, a later session going back to
    an earlier phase does not compare the tasks phase's old snapshot with the code."""
    from plangate.contracts import evaluate, progress
    from testkit.journals import Journal

    project = gitproject
    in_requirements(project)
    state = str(project.state)
    found = evaluate.applying(str(project.dir)).contracts
    contract = next(c for c in found if c.name == "cc-sdd")
    impl = contract.phase("impl")
    assert impl is not None and impl.editable is None
    drift.begin(contract, impl, {"feature": FEATURE}, str(project.dir), state)  # no snapshot
    progress.began(contract, "impl", {"feature": FEATURE}, str(project.dir), "earlier", [], state)
    assert snapshot.latest(str(project.dir), "cc-sdd", state) == ("feature=greet", "impl")
    (project.dir / "src" / "app.py").write_text("implemented\n")
    project.journal = Journal(cwd=str(project.dir))
    project.person("approve requirements")
    assert skill(project, "kiro-spec-design") is None


def test_files_added_past_the_walk_limit_refuse_rather_than_clear(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outside git: flooding an editable folder so that the walk gives up is a refusal."""
    in_requirements(project)
    monkeypatch.setattr(snapshot, "WALK_LIMIT", 40)
    for n in range(50):
        (project.spec / f"junk{n}.md").write_text("x\n")
    project.person("approve requirements")
    reason = deny_reason(project, "kiro-spec-design")
    assert "contract_drift" in reason and "outside git" in reason
