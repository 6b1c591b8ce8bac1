"""The contracts' index fold (:mod:`plangate.contracts.tracking`): an edit's read after an
append reloads only the records from the session's first workflow call, and folds to the
same state as a read of the whole session, before any workflow, during one, after a
rewind."""

from __future__ import annotations

from typing import Any

import pytest

from plangate.contracts import bash_writes, evaluate, state
from plangate.contracts.tracking import RunTracker
from plangate.journal.verdict import Verdict
from testkit.journals import use_id
from tests.contracts.conftest import FEATURE, REQUIREMENTS, Project, project, spec_json

__all__ = ["project"]


@pytest.fixture(autouse=True)
def indexed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANGATE_TUNING", "index_min_bytes=1")  # every journal is indexed


def bulk(project: Project, count: int) -> None:
    for n in range(count):
        use = project.journal.tool_use("Bash", {"command": f"make check-{n}"})
        project.journal.tool_result(use_id(use), "ok\n" * 50)


def summary(session: state.Session) -> tuple[Any, ...]:
    return (
        session.contract.name if session.contract is not None else None,
        session.current.name if session.current is not None else None,
        dict(session.values),
        [(turn.order, turn.text) for turn in session.turns],
        [(edit.order, edit.path) for edit in session.edits],
        [(inv.order, inv.phase.name if inv.phase else None) for inv in session.entered],
    )


def both(project: Project) -> tuple[tuple[Any, ...], tuple[Any, ...], int, int]:
    """The fold after a windowed read and after a full one, and their event counts."""
    payload = project.payload("Write", {"file_path": str(project.dir / "src/a.py"), "content": ""})
    project_dir = str(project.dir)
    contracts = evaluate.applying(project_dir).contracts
    tracker = RunTracker(contracts, project_dir, project_dir)
    windowed = evaluate.read_events(payload, project_dir, tracker)
    whole = evaluate.read_events(payload, project_dir)
    assert windowed.problem is None and whole.problem is None
    folds = [
        summary(state.fold(read.events, contracts, project_dir, project_dir))
        for read in (windowed, whole)
    ]
    return folds[0], folds[1], len(windowed.events), len(whole.events)


def test_before_any_workflow_the_window_is_the_last_record(project: Project) -> None:
    project.person("tidy the repo")
    bulk(project, 40)
    both(project)  # the first read indexes the journal
    bulk(project, 3)
    windowed, whole, few, many = both(project)
    assert windowed[:3] == whole[:3] == (None, None, {})
    assert few < 5 < many


def test_during_a_workflow_the_window_starts_at_its_first_call(project: Project) -> None:
    project.person("tidy the repo first")
    bulk(project, 40)
    project.person(f"/kiro-spec-init {FEATURE}")
    project.skill("kiro-spec-init", "a greeting command")
    project.write(project.spec / "spec.json", spec_json())
    both(project)
    project.skill("kiro-spec-requirements", FEATURE)
    bulk(project, 5)
    project.write(project.spec / "requirements.md", REQUIREMENTS)
    project.person("approve requirements")
    windowed, whole, few, many = both(project)
    assert windowed == whole
    assert windowed[1] == "requirements" and windowed[2] == {"feature": FEATURE}
    assert few < many / 2


def test_after_a_rewind_the_live_chain_decides(project: Project) -> None:
    project.person(f"/kiro-spec-init {FEATURE}")
    project.skill("kiro-spec-init", "a greeting command")
    project.write(project.spec / "spec.json", spec_json())
    project.skill("kiro-spec-requirements", FEATURE)
    project.write(project.spec / "requirements.md", REQUIREMENTS)
    before = project.journal.records[-1]["uuid"]
    project.person("approve requirements")
    bulk(project, 3)
    both(project)
    project.journal.typed_prompt("not yet: change the wording", parent=before)  # rewound
    windowed, whole, _, _ = both(project)
    assert windowed == whole
    assert "approve requirements" not in [text for _, text in windowed[3]]


def entry(project: Project, monkeypatch: pytest.MonkeyPatch, skill: str) -> list[Any]:
    """The ruling on the model's Skill call for ``skill``, windowed and from a full read."""
    payload = project.payload("Skill", {"skill": skill, "args": FEATURE})
    rulings = []
    for fold in ("1", "0"):
        monkeypatch.setenv("PLANGATE_TUNING", f"index_min_bytes=1,fold={fold}")
        found = evaluate.entry_ruling(payload, skill, FEATURE, "entry")
        assert found is not None
        ruling = found[0]
        rulings.append((ruling.code, ruling.phase, ruling.detail, ruling.approvals))
    return rulings


def test_a_phase_entry_rules_the_same_windowed(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.person("tidy the repo first")
    bulk(project, 40)
    project.person(f"/kiro-spec-init {FEATURE}")
    project.skill("kiro-spec-init", "a greeting command")
    project.write(project.spec / "spec.json", spec_json())
    project.skill("kiro-spec-requirements", FEATURE)
    project.write(project.spec / "requirements.md", REQUIREMENTS)
    windowed, whole = entry(project, monkeypatch, "kiro-spec-design")
    assert windowed == whole and whole[0] == "contract_approval"
    bulk(project, 3)
    project.person("approve requirements")
    windowed, whole = entry(project, monkeypatch, "kiro-spec-design")
    assert windowed == whole == (None, "design", "", [("requirements", "human")])


def test_an_entry_before_any_workflow_call_reads_the_whole_session(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.write_spec("spec.json", spec_json())
    project.write_spec("requirements.md", REQUIREMENTS)
    project.person("the requirements from yesterday are fine: approve requirements")
    bulk(project, 40)
    entry(project, monkeypatch, "kiro-spec-design")  # indexes the journal
    bulk(project, 3)
    windowed, whole = entry(project, monkeypatch, "kiro-spec-design")
    assert windowed == whole == (None, "design", "", [("requirements", "human")])


def test_a_first_phase_entry_keeps_its_windowed_read(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Entering a workflow's first phase checks no earlier phase, so no human turn before the
    window can matter: one windowed read (no whole-session read after it), the ruling a full
    read gives. A later phase's entry still reads the whole session."""
    project.person("the requirements from yesterday are fine: approve requirements")
    bulk(project, 40)
    entry(project, monkeypatch, "kiro-spec-init")  # indexes the journal
    bulk(project, 3)
    from plangate.journal.world import World  # what evaluate reads through

    real = World.read_journal
    reads: list[bool] = []

    def counted(self: World, path: str, **options: Any) -> Verdict:
        verdict = real(self, path, **options)
        reads.append(verdict.window is not None)
        return verdict

    monkeypatch.setattr(World, "read_journal", counted)
    windowed, whole = entry(project, monkeypatch, "kiro-spec-init")
    assert windowed == whole == (None, "init", "", [])
    assert reads == [True, False]  # the windowed read alone, then the fold-off full read
    reads.clear()
    windowed, whole = entry(project, monkeypatch, "kiro-spec-requirements")
    # init began (allowed above), so its missing file is a short artifact, not a phase that
    # never ran: the workflow's progress in the project says so (contracts.progress).
    assert windowed == whole and whole[:2] == ("contract_artifact", "requirements")
    assert reads == [True, False, False]  # the window found no run: the whole session read


@pytest.mark.parametrize(
    "command",
    [
        "make check",
        "ls -la src | wc -l",
        "git status && git diff",
        "cat a>b",
        "echo hi >> log.txt",
        "rm -rf build",
        "/bin/rm x",
        "r'm' x",
        '"rm" y',
        "r\\m z",
        "cp a b",
        "sed -i s/a/b/ f.txt",
        "cd src && touch new.py",
        'python -c \'open("x", "w")\'',
    ],
)
def test_a_command_that_cannot_write_skips_the_lexer_and_loses_nothing(
    command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = bash_writes.written_files(command, "/p")
    monkeypatch.setattr(bash_writes, "may_write", lambda _: True)
    assert found == bash_writes.written_files(command, "/p")


def test_a_skill_read_with_the_shell_starts_the_window(project: Project) -> None:
    """Codex's start of a phase (the model reads the skill's ``SKILL.md`` with the shell) is a
    workflow's first call for the window as a Skill call is."""
    project.person("tidy the repo first")
    bulk(project, 40)
    use = project.journal.tool_use(
        "Bash", {"command": "cat .agents/skills/kiro-spec-init/SKILL.md"}
    )
    project.journal.tool_result(use_id(use), "# Spec Initialization\n")
    project.write(project.spec / "spec.json", spec_json())
    both(project)
    bulk(project, 5)
    windowed, whole, few, many = both(project)
    assert windowed == whole
    assert windowed[1] == "init" and windowed[2] == {"feature": FEATURE}
    assert few < many / 2
