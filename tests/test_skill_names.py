"""The one rule for which skill names and folders are plangate's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plangate import skill_names


@pytest.mark.parametrize(
    "name",
    ["autoplan", "/autoplan", "plangate:autoplan", "/plangate:autoplan", " plangate:autoplan\n"],
)
def test_bare_and_plugin_names_are_plangates(name: str) -> None:
    assert skill_names.is_skill(name, "autoplan")


@pytest.mark.parametrize(
    "name",
    [
        "other:autoplan",
        "/other:autoplan",
        "plangate:plan-ceo-review",
        "autoplan2",
        "plangate:",
        ":autoplan",
        "plangate:plangate:autoplan",
        "//autoplan",
        "PLANGATE:autoplan",
        "",
        None,
        42,
    ],
)
def test_other_names_are_not(name: object) -> None:
    assert not skill_names.is_skill(name, "autoplan")


def test_skill_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(tmp_path / "state"))
    monkeypatch.delenv("CLAUDE_PLUGIN_ROOT", raising=False)
    expected = [
        str(tmp_path / "claude" / "skills" / "autoplan"),
        str(tmp_path / "project" / ".claude" / "skills" / "autoplan"),
        str(tmp_path / "state" / "claude-plugin" / "plangate" / "skills" / "autoplan"),
    ]
    project = str(tmp_path / "project")
    assert skill_names.skill_dirs("autoplan", project) == expected
    # A hook of a plugin: its root counts only when plangate built it (the marker).
    plugin = tmp_path / "cache" / "plangate"
    (plugin / "skills").mkdir(parents=True)
    monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", str(plugin))
    assert skill_names.skill_dirs("autoplan", project) == expected
    (plugin / skill_names.PLUGIN_MARKER).write_text("{}")
    assert skill_names.skill_dirs("autoplan", project) == [
        *expected,
        os.path.join(str(plugin), "skills", "autoplan"),
    ]
    monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", str(tmp_path / "state" / "claude-plugin" / "plangate"))
    (tmp_path / "state" / "claude-plugin" / "plangate").mkdir(parents=True)
    (tmp_path / "state" / "claude-plugin" / "plangate" / skill_names.PLUGIN_MARKER).write_text("")
    assert skill_names.skill_dirs("autoplan", project) == expected  # no duplicate


def test_owned_reads_take_the_plugin_folder_and_no_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plangate.guard.owned import owned_by_autoplan

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(tmp_path / "state"))
    monkeypatch.delenv("CLAUDE_PLUGIN_ROOT", raising=False)
    ours = tmp_path / "state" / "claude-plugin" / "plangate" / "skills" / "autoplan" / "sections"
    other = tmp_path / "other" / "plugin" / "skills" / "autoplan" / "sections"
    for folder in (ours, other):
        folder.mkdir(parents=True)
        (folder / "ceo-phase.md").write_text("# CEO\n")
    project = str(tmp_path / "project")
    assert owned_by_autoplan(str(ours / "ceo-phase.md"), project)
    assert not owned_by_autoplan(str(other / "ceo-phase.md"), project)
