"""The Write tools against every protected place: as spelled, through ``~``, relative to the
call's folder, through a symlink to the file and through a symlinked folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from plangate import hook_registry
from plangate.contracts import discovery
from plangate.protect import decide, places
from tests.conftest import SRC
from tests.protect.conftest import World

WRITE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")


def refused(world: World, path: str, tool: str = "Write") -> str | None:
    key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    found = decide.check(world.payload(tool, **{key: path, "content": "x"}))
    if found is None:
        return None
    assert found.code == "protected_path"
    return found.what


def protected_places(world: World) -> dict[str, str]:
    """One file of each protected class, by the name of its class."""
    package = Path(hook_registry.package_root()) / "plangate"
    return {
        "state root": str(world.state / "contract-approvals.jsonl"),
        "default state root": str(world.home / ".plangate" / "cache" / "contracts.json"),
        "user settings": str(world.claude / "settings.json"),
        "user local settings": str(world.claude / "settings.local.json"),
        "project settings": str(world.project / ".claude" / "settings.json"),
        "project local settings": str(world.project / ".claude" / "settings.local.json"),
        "managed settings": "/etc/claude-code/managed-settings.json",
        "~/.claude.json": str(world.home / ".claude.json"),
        "skill contract (user)": str(world.claude / "skills" / "any" / "plangate.toml"),
        "skill contract (project)": str(
            world.project / ".claude" / "skills" / "kiro-impl" / "plangate.toml"
        ),
        "project contract": str(world.project / ".plangate" / "contracts" / "cc-sdd.toml"),
        "user contract": str(world.state / "contracts" / "cc-sdd.toml"),
        "shipped contract": os.path.join(discovery.library_dir(), "cc-sdd.toml"),
        "package": str(package / "hooks" / "contract_pre_tool_use.py"),
        "new file in the package": str(package / "sitecustomize.py"),
        "interpreter": sys.executable,
        "standard library": os.path.join(os.path.dirname(os.__file__), "json", "__init__.py"),
        "journal": str(world.claude / "projects" / "-p" / "s-1.jsonl"),
        "plugins": str(world.claude / "plugins" / "cache" / "plangate" / "hooks.json"),
    }


@pytest.mark.parametrize("tool", WRITE_TOOLS)
def test_every_protected_class_is_refused_to_every_write_tool(world: World, tool: str) -> None:
    for name, path in protected_places(world).items():
        assert refused(world, path, tool) is not None, name


def test_the_detail_names_the_path_and_what_it_is(world: World) -> None:
    path = str(world.claude / "settings.json")
    found = decide.check(world.payload("Edit", file_path=path, old_string="a", new_string="b"))
    assert found is not None
    assert found.detail == f"{path} is Claude Code settings (user)"


def test_the_venv_of_the_hooks_is_protected(world: World) -> None:
    venv = places.venv_dir()
    if venv is None:
        pytest.skip("these tests run outside a virtual environment")
    assert refused(world, os.path.join(venv, "pyvenv.cfg")) is not None
    assert refused(world, os.path.join(venv, "bin", "python3")) is not None
    assert refused(world, os.path.join(venv, "bin", "pytest")) is None  # not the hooks'


def test_home_and_relative_spellings(world: World) -> None:
    assert refused(world, "~/.claude/settings.json") is not None
    assert refused(world, ".claude/settings.local.json") is not None
    assert refused(world, "src/../.plangate/contracts/x.toml") is not None
    assert refused(world, "../../.claude.json") is not None  # the project is ~/work/project


def test_a_symlink_to_a_protected_file_is_that_file(world: World) -> None:
    link = world.project / "notes.json"
    link.symlink_to(world.claude / "settings.json")
    assert refused(world, str(link)) == "Claude Code settings (user)"
    dangling = world.project / "later.jsonl"
    dangling.symlink_to(world.state / "not-yet.jsonl")
    assert refused(world, "later.jsonl") == places.STATE


def test_a_path_whose_parent_is_a_symlink(world: World) -> None:
    (world.project / "cfg").symlink_to(world.claude)
    assert refused(world, "cfg/settings.json") is not None
    (world.project / "st").symlink_to(world.state)
    assert refused(world, str(world.project / "st" / "new.jsonl")) == places.STATE


def test_what_is_not_protected(world: World) -> None:
    for path in (
        "src/app.py",
        "new.py",
        str(world.project / ".plangate" / "tmp" / "autoplan" / "plan-restore-1.md"),
        str(world.claude / "skills" / "mine" / "SKILL.md"),
        "/tmp/scratch.txt",
        str(world.home / "notes" / "settings.json"),
    ):
        assert refused(world, path) is None, path


def test_a_settings_file_passed_to_a_process_above_the_hook(world: World) -> None:
    passed = world.home / "session-settings.json"
    probe = (
        "import subprocess, sys; sys.exit(subprocess.run([sys.executable, '-c', "
        "'import sys; sys.path.insert(0, sys.argv[1]); from plangate.protect import places; "
        "print(places.settings_arguments())', sys.argv[1]]).returncode)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, SRC, "--settings", "session-settings.json"],
        cwd=world.home,
        capture_output=True,
        text=True,
        check=True,
    )
    assert str(passed) in done.stdout
    inline = subprocess.run(
        [sys.executable, "-c", probe, SRC, "--settings", '{"hooks": {}}'],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "hooks" not in inline.stdout


def test_other_tools_and_events_are_not_decided(world: World) -> None:
    path = str(world.claude / "settings.json")
    assert decide.check(world.payload("Read", file_path=path)) is None
    post = world.payload("Write", file_path=path, content="x")
    post["hook_event_name"] = "PostToolUse"
    assert decide.check(post) is None


def test_the_ceo_reviews_folders_stay_open(world: World) -> None:
    """``plan-ceo-review`` writes its review into the state root's ``ceo-plans`` when the plan
    must not change: that keeps working, and goes nowhere else."""
    for state in (world.state, world.home / ".plangate"):
        assert refused(world, str(state / "ceo-plans" / "plan-ceo-review.md")) is None
        review = state / "projects" / "-work-project" / "ceo-plans" / "plan-ceo-review.md"
        assert refused(world, str(review)) is None
        assert refused(world, str(state / "ceo-plans" / ".." / "contracts" / "x.toml"))
        assert refused(world, str(state / "projects" / "-work-project" / "record.json"))
        assert refused(world, str(state / "ceo-plans")) is None  # the folder itself
        assert refused(world, str(state / "ceo-plansx")) is not None
    (world.state / "ceo-plans").mkdir()
    (world.state / "ceo-plans" / "link.md").symlink_to(world.claude / "settings.json")
    assert refused(world, str(world.state / "ceo-plans" / "link.md")) is not None


def test_the_journals_where_the_payload_says_they_are(world: World) -> None:
    elsewhere = world.home / "elsewhere" / "projects" / "-p" / "s-1.jsonl"
    payload = world.payload("Write", file_path=str(elsewhere.parent / "s-2.jsonl"), content="x")
    assert decide.check(payload) is None
    payload["transcript_path"] = str(elsewhere)
    found = decide.check(payload)
    assert found is not None and found.what == places.JOURNALS
