"""Codex CLI's start of a skill: the model reads the skill's ``SKILL.md`` with the shell tool
(Codex has no Skill tool). :func:`plangate.contracts.entries.entered_by` takes a Bash command
naming an entry skill's ``SKILL.md`` where Codex finds skills for that phase's entry, through
the spellings a model may use (:mod:`plangate.contracts.shell_reads`), and leaves the
spellings it cannot see, and the commands that show no file's text, alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from plangate.contracts import entries, shell_reads
from plangate.contracts.discovery import library_dir
from plangate.contracts.loader import load_file
from plangate.contracts.model import Contract

SKILLS = ".agents/skills"


@pytest.fixture
def contract() -> Contract:
    return load_file(str(Path(library_dir()) / "cc-sdd.toml"))


def _entered(contract: Contract, command: str, project: Path) -> str | None:
    hit = entries.entered_by([contract], "Bash", {"command": command}, str(project), str(project))
    return hit[1].name if hit is not None else None


@pytest.mark.parametrize(
    ("command", "phase"),
    [
        (f"cat {SKILLS}/kiro-spec-design/SKILL.md", "design"),
        (f"sed -n 1,200p ./{SKILLS}/kiro-impl/SKILL.md", "impl"),
        (f"head -n 50 {SKILLS}/kiro-spec-tasks/SKILL.md | tail -5", "tasks"),
        (f"nl -ba '{SKILLS}/kiro-spec-init/SKILL.md'", "init"),
        (f"python3 -c \"print(open('{SKILLS}/kiro-spec-requirements/SKILL.md').read())\"",
         "requirements"),
        (f"cp {SKILLS}/kiro-impl/SKILL.md /tmp/x.md && cat /tmp/x.md", "impl"),
        (f"cd {SKILLS}/kiro-spec-init && cat SKILL.md", "init"),
        (f"cat {SKILLS}/kiro-impl/*", "impl"),
        (f"cat {SKILLS}/kiro-spec-d*/SKILL.md", "design"),
        (f"less $(echo {SKILLS}/kiro-spec-design/SKILL.md)", "design"),
        # several phases' files: judged as the latest of them
        (f"cat {SKILLS}/kiro-spec-init/SKILL.md {SKILLS}/kiro-impl/SKILL.md", "impl"),
        (f"grep -n description {SKILLS}/*/SKILL.md", "impl"),
        # no file's text shown, another skill, or nothing of a skill
        (f"ls -la {SKILLS}/kiro-impl/SKILL.md", None),
        (f"wc -l {SKILLS}/kiro-impl/SKILL.md", None),
        (f"cat {SKILLS}/kiro-spec-status/SKILL.md", None),
        ("cat */SKILL.md", None),  # the shell's * skips .agents
        ("echo hi > notes.txt", None),
        ("cat SKILL.md", None),
    ],
)  # fmt: skip
def test_a_shell_read_of_an_entry_skill_enters_its_phase(
    contract: Contract, tmp_path: Path, command: str, phase: str | None
) -> None:
    assert _entered(contract, command, tmp_path) == phase


def test_an_absolute_path_a_link_and_codex_home(
    contract: Contract, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    skill = project / SKILLS / "kiro-impl"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("# impl\n")
    assert _entered(contract, f"head -400 {skill / 'SKILL.md'}", project) == "impl"
    (tmp_path / "link").symlink_to(skill)
    assert _entered(contract, f"cat {tmp_path / 'link' / 'SKILL.md'}", project) == "impl"
    home = tmp_path / "codex-home"
    monkeypatch.setenv("CODEX_HOME", str(home))
    assert _entered(contract, f"cat {home}/skills/kiro-spec-tasks/SKILL.md", project) == "tasks"


@pytest.mark.parametrize(
    "command",
    [
        "f=kiro-impl; cat .agents/skills/$f/SKILL.md",  # a variable
        "python3 -c \"print(open('.agents/skills/' + 'kiro-impl/SK' + 'ILL.md').read())\"",
        "find .agents -path '*impl*' -name 'S*' -exec cat {} +",
    ],
)
def test_names_built_at_run_time_are_not_seen(
    contract: Contract, tmp_path: Path, command: str
) -> None:
    """docs/codex.md says so: the phase's edit limits and the files at its boundaries still
    hold (the model that read impl's skill this way is still in its earlier phase)."""
    assert _entered(contract, command, tmp_path) is None


def test_most_commands_are_passed_over_unread() -> None:
    assert not shell_reads.may_name("git status && pytest -q tests")
    assert shell_reads.may_name("cat .agents/skills/kiro-impl/SKILL.md")
    assert shell_reads.may_name("cat .agents/skills/kiro-impl/*")
