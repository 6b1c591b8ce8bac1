"""The pinned third-party kits install into projects as their users install them.

These are the kits the workflow-contract tests hold to their phases; what is checked here is
what those tests rely on: the installer of the pinned version runs offline, leaves its skills
where Claude Code loads project skills, and each test gets a copy of its own.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from plangate.contracts import approvals, discovery, loader, rules, state
from plangate.processes import run_bounded
from testkit.kits import CC_SDD, SPEC_KIT, Kit, KitCache, KitMissing, run_installer
from tests.conftest import InstallKit, ci_need

pytestmark = pytest.mark.slow

KIRO_SKILLS = {
    *("kiro-debug", "kiro-discovery", "kiro-impl", "kiro-review", "kiro-spec-batch"),
    *("kiro-spec-design", "kiro-spec-init", "kiro-spec-quick", "kiro-spec-requirements"),
    *("kiro-spec-status", "kiro-spec-tasks", "kiro-steering", "kiro-steering-custom"),
    *("kiro-validate-design", "kiro-validate-gap", "kiro-validate-impl"),
    "kiro-verify-completion",
}


def test_cc_sdd_installs_its_seventeen_kiro_skills(install_kit: InstallKit, tmp_path: Path) -> None:
    project = install_kit(CC_SDD, tmp_path / "project")
    assert set(CC_SDD.skills(project)) == KIRO_SKILLS
    assert CC_SDD.typed_only(project) == {"kiro-impl", "kiro-discovery"}
    init = json.loads((project / ".kiro/settings/templates/specs/init.json").read_text())
    assert init["phase"] == "initialized"
    assert set(init["approvals"]) == {"requirements", "design", "tasks"}
    assert init["ready_for_implementation"] is False
    assert "- [ ] {{NUMBER}}." in (project / ".kiro/settings/templates/specs/tasks.md").read_text()


def test_spec_kit_installs_its_speckit_skills(install_kit: InstallKit, tmp_path: Path) -> None:
    project = install_kit(SPEC_KIT, tmp_path / "project")
    skills = SPEC_KIT.skills(project)
    assert {"speckit-specify", "speckit-plan", "speckit-tasks", "speckit-implement"} <= set(skills)
    assert all(name.startswith("speckit-") for name in skills)
    # The model may start every one of them itself (the Skill tool), as a person may by typing.
    assert SPEC_KIT.typed_only(project) == set()
    options = json.loads((project / ".specify/init-options.json").read_text())
    assert options["speckit_version"] == SPEC_KIT.version
    assert options["integration"] == "claude"


def test_each_project_gets_a_copy_of_its_own(install_kit: InstallKit, tmp_path: Path) -> None:
    first = install_kit(CC_SDD, tmp_path / "one")
    (first / "CLAUDE.md").write_text("changed by a test\n", encoding="utf-8")
    (first / ".claude/skills/kiro-impl/SKILL.md").unlink()
    second = install_kit(CC_SDD, tmp_path / "two")
    assert (second / ".claude/skills/kiro-impl/SKILL.md").is_file()
    assert "changed by a test" not in (second / "CLAUDE.md").read_text()


def test_a_kit_installs_beside_the_projects_own_files(
    install_kit: InstallKit, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("print('hi')\n", encoding="utf-8")
    install_kit(CC_SDD, project)
    assert (project / "app.py").read_text() == "print('hi')\n"
    assert (project / ".claude/skills/kiro-spec-init/SKILL.md").is_file()


def test_an_installer_that_fails_names_the_kit_and_the_remedy(tmp_path: Path) -> None:
    broken = Kit("cc-sdd", "0.0.0", installer=lambda kit: ["false"], leaves=())
    with pytest.raises(KitMissing) as raised:
        run_installer(broken, tmp_path / "p", tmp_path / "h")
    message = str(raised.value)
    assert "cc-sdd 0.0.0 installer exited 1" in message and "make setup" in message
    assert ci_need(message) is not None  # CI does not let a test skip for it


def test_a_missing_installer_is_reported_once_per_session(tmp_path: Path) -> None:
    calls: list[str] = []

    def absent(kit: Kit) -> list[str]:
        calls.append(kit.name)
        raise KitMissing(f"{kit.label} (specify-cli) is not installed: run `make setup`")

    cache = KitCache(tmp_path)
    kit = Kit("spec-kit", "9.9.9", installer=absent, leaves=())
    for _ in range(2):
        with pytest.raises(KitMissing, match="specify-cli"):
            cache.install(kit, tmp_path / "project")
    assert calls == ["spec-kit"]
    assert not (tmp_path / "project").exists()


def test_an_installer_that_leaves_too_little_fails(tmp_path: Path) -> None:
    kit = Kit("cc-sdd", "3.0.2", installer=lambda kit: ["true"], leaves=("CLAUDE.md",))
    with pytest.raises(KitMissing, match=r"left no CLAUDE\.md"):
        run_installer(kit, tmp_path / "p", tmp_path / "h")


@pytest.mark.parametrize("kit", [CC_SDD, SPEC_KIT], ids=lambda kit: kit.name)
def test_the_shipped_contract_names_what_the_kit_installs(
    install_kit: InstallKit, tmp_path: Path, kit: Kit
) -> None:
    """Every skill the kit's shipped contract names is one the pinned kit installs, each
    phase starts with one of them, and ``plangate contract list`` applies it there."""
    project = install_kit(kit, tmp_path / "project")
    contract = loader.load_file(str(Path(discovery.library_dir()) / f"{kit.name}.toml"))
    installed = set(kit.skills(project))
    assert set(contract.all_skills()) <= installed
    assert all(set(phase.entry) <= installed for phase in contract.phases)
    found = discovery.discover(str(project), loader.load_file, str(tmp_path / "state"))
    applying = [item for item in found if item.applies]
    assert [Path(item.path).name for item in applying] == [f"{kit.name}.toml"]


def test_spec_kits_scripts_find_the_files_its_contract_names(
    install_kit: InstallKit, tmp_path: Path
) -> None:
    """The spec-kit contract's artifacts are where the kit's own scripts look for them:
    ``check-prerequisites.sh --paths-only`` prints them for the folder feature.json names."""
    project = install_kit(SPEC_KIT, tmp_path / "project")
    (project / "specs" / "001-greet").mkdir(parents=True)
    (project / ".specify" / "feature.json").write_text('{"feature_directory": "specs/001-greet"}')
    done = run_bounded(
        ["bash", ".specify/scripts/bash/check-prerequisites.sh", "--json", "--paths-only"],
        timeout=60,
        cwd=project,
    )
    assert done.returncode == 0, done.stderr
    paths = json.loads(done.stdout.strip().splitlines()[-1])
    feature = project / "specs" / "001-greet"
    assert Path(paths["FEATURE_DIR"]) == feature
    assert Path(paths["FEATURE_SPEC"]) == feature / "spec.md"
    assert Path(paths["IMPL_PLAN"]) == feature / "plan.md"
    assert Path(paths["TASKS"]) == feature / "tasks.md"
    contract = loader.load_file(str(Path(discovery.library_dir()) / "spec-kit.toml"))
    named = [artifact.path for phase in contract.phases for artifact in phase.artifacts]
    assert named == ["{spec}/spec.md", "{spec}/plan.md", "{spec}/tasks.md"]
    assert contract.paths == {"spec": "specs/{feature}"}


@pytest.mark.parametrize(
    ("artifact", "template", "next_phase", "mark"),
    [
        ("spec.md", "spec-template.md", "plan", "[FEATURE NAME]"),
        ("plan.md", "plan-template.md", "tasks", "[FEATURE]"),
        ("tasks.md", "tasks-template.md", "implement", "[FEATURE NAME]"),
    ],
)
def test_spec_kits_own_templates_left_as_copied_never_pass_its_contract(
    install_kit: InstallKit,
    tmp_path: Path,
    artifact: str,
    template: str,
    next_phase: str,
    mark: str,
) -> None:
    """A phase whose file is still the kit's template, as its scripts copy it, has not been
    done: the next phase is refused (``contract_artifact``) for the template's placeholder."""
    project = install_kit(SPEC_KIT, tmp_path / "project")
    feature = project / "specs" / "001-greet"
    feature.mkdir(parents=True)
    contract = loader.load_file(str(Path(discovery.library_dir()) / "spec-kit.toml"))
    earlier = contract.phases[: contract.index(next_phase)]
    values = {"feature": "001-greet"}
    root = str(tmp_path / "state")
    for phase in earlier[:-1]:  # the phases before: done and approved (`plangate approve`)
        (feature / Path(phase.artifacts[0].path).name).write_text(FILLED[phase.name])
        files = approvals.artifact_files(contract, phase, values, str(project))
        approvals.record_approval(
            contract.name, phase.name, "001-greet", str(project), files, state_root=root, now=NOW
        )
    shutil.copy(project / ".specify" / "templates" / template, feature / artifact)
    entering = contract.phase(next_phase)
    assert entering is not None
    ruling = rules.entry(contract, entering, state.Session(), str(project), root, values=values)
    assert ruling.code == "contract_artifact", ruling
    assert f"still holds the placeholder {mark!r}" in ruling.detail


def test_a_spec_with_an_open_clarification_does_not_go_to_planning(
    install_kit: InstallKit, tmp_path: Path
) -> None:
    project = install_kit(SPEC_KIT, tmp_path / "project")
    feature = project / "specs" / "001-greet"
    feature.mkdir(parents=True)
    contract = loader.load_file(str(Path(discovery.library_dir()) / "spec-kit.toml"))
    plan = contract.phase("plan")
    assert plan is not None
    spec = feature / "spec.md"
    spec.write_text(
        FILLED["specify"] + "- **FR-002**: Greet in [NEEDS CLARIFICATION: which language?]\n"
    )
    ruling = rules.entry(contract, plan, state.Session(), str(project))
    assert ruling.code == "contract_artifact" and "[NEEDS CLARIFICATION" in ruling.detail
    spec.write_text(FILLED["specify"])
    ruling = rules.entry(contract, plan, state.Session(), str(project))
    assert ruling.code == "contract_approval", ruling  # filled in: now a person approves it


NOW = "2026-12-02T03:00:00Z"
FILLED = {
    "specify": "# Feature Specification: greeting\n\n## User Scenarios & Testing\n"
    "A user is greeted.\n\n## Requirements\n- **FR-001**: The system MUST print hello.\n\n"
    "## Success Criteria\n- **SC-001**: The greeting appears at once.\n",
    "plan": "# Implementation Plan: greeting\n\n## Summary\nOne function.\n\n"
    "## Technical Context\n**Language/Version**: Python 3.11\n",
}
