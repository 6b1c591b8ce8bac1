"""Only a person's own words approve: negated, quoted, questioned, hedged, conditional and
taken-back phrasings of a phase's approval words (or pattern) never count.

The phrasings and what each must do are a table, ``approval_phrasings.toml`` beside this file;
every row is checked against the shipped contracts' approval words, and the issue's four
phrasings are decided by the contract hooks themselves, in process, on a cc-sdd-shaped
project (:mod:`tests.contracts.conftest`).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from plangate.contracts import approvals, discovery, loader, phrasing
from tests.conftest import SRC
from tests.contracts.conftest import Project, through_requirements
from tests.contracts.test_rules import skill

TABLE = Path(__file__).with_name("approval_phrasings.toml")
ROWS: list[dict[str, Any]] = tomllib.loads(TABLE.read_text(encoding="utf-8"))["phrasing"]
NO_MATCH = "no match"
ISSUE_33 = (
    "don't approve requirements yet",
    'my teammate wants me to type "approve requirements" but I am not ready',
    "should I approve requirements?",
    "requirements approved? not yet, I still have questions",
)


def approval_words(workflow: str, phase: str) -> tuple[str, ...]:
    """The approval words of a phase of a contract shipped with plangate."""
    contract = loader.load_file(str(Path(discovery.library_dir()) / f"{workflow}.toml"))
    found = contract.phase(phase)
    assert found is not None, f"{workflow} has no phase {phase}"
    assert found.approval.words, f"{workflow}'s {phase} has no approval words"
    return found.approval.words


def row_words(row: dict[str, Any]) -> tuple[str, ...]:
    if "words" in row:
        return tuple(row["words"])
    return approval_words(row.get("workflow", "cc-sdd"), row.get("phase", "requirements"))


def row_id(row: dict[str, Any]) -> str:
    return " ".join(str(row["text"]).split())[:60]


def test_the_table_has_both_outcomes_every_rule_and_the_issues_phrasings() -> None:
    assert len(ROWS) >= 30
    outcomes = [row["approves"] for row in ROWS]
    assert outcomes.count(True) >= 10 and outcomes.count(False) >= 10
    for row in ROWS:
        assert set(row) <= {"text", "approves", "rule", "note", "workflow", "phase", "words"}
        assert isinstance(row["text"], str) and isinstance(row["approves"], bool), row
        assert ("rule" in row) is (not row["approves"]), f"a refusal names its rule: {row}"
    rules = {row["rule"] for row in ROWS if "rule" in row}
    assert rules == {*phrasing.RULES, NO_MATCH}
    refused = {row["text"] for row in ROWS if not row["approves"]}
    assert set(ISSUE_33) <= refused
    texts = [row["text"] for row in ROWS]
    assert len(texts) == len(set(texts)), "each phrasing once"


@pytest.mark.parametrize("row", ROWS, ids=row_id)
def test_each_phrasing_approves_or_not_as_the_table_says(row: dict[str, Any]) -> None:
    text, words = row["text"], row_words(row)
    assert approvals.words_match(text, words, None) is row["approves"], row
    spans = approvals.word_spans(text, words)
    if row.get("rule") == NO_MATCH:
        assert spans == [], spans
        return
    assert spans, "the approval words are in the phrasing"
    for start, end in spans:  # each match is the words themselves, found in the text
        assert " ".join(text[start:end].lower().split()) in {" ".join(w.split()) for w in words}
    refusals = {phrasing.refusal(text, start, end) for start, end in spans}
    if row["approves"]:
        assert None in refusals
    else:
        assert row["rule"] in refusals and None not in refusals, (row, refusals)


def test_the_pattern_is_held_to_the_same_rule() -> None:
    """A phase approved by ``pattern`` (a regular expression) rather than by words."""
    pattern = "ship (it|the draft)"
    said = {
        "ship it": True,
        "Looks fine, ship the draft.": True,
        "SHIP IT!": True,
        "don't ship it": False,
        "ship it?": False,
        'he told me to type "ship it"': False,
        "ship it once the tests pass": False,
        "I'll ship the draft later": False,
        "ship it. Wait, no.": False,
        "shipit": False,
    }
    for text, approves in said.items():
        assert approvals.words_match(text, (), pattern) is approves, text
    # a plain match anywhere in the turn counts, words or pattern
    assert approvals.words_match("don't ship it yet. OK: ship it.", (), pattern)
    assert approvals.words_match("ship it?", ("lgtm",), pattern) is False
    assert approvals.words_match("ship it? lgtm", ("lgtm",), pattern)


def test_a_contract_approving_by_pattern_refuses_a_negated_or_questioned_match(
    project: Project,
) -> None:
    """cc-sdd's contract, given by the project with a pattern for its requirements approval:
    the hooks refuse design after a negated and a questioned match, and allow it after a
    plain one."""
    shipped = Path(discovery.library_dir(), "cc-sdd.toml").read_text(encoding="utf-8")
    words = 'words = ["approve requirements", "requirements approved", "approve the requirements"]'
    assert shipped.count(words) == 1
    patterned = shipped.replace(words, 'pattern = "(requirements|reqs) (are )?good to go"')
    folder = project.dir / ".plangate" / "contracts"
    folder.mkdir(parents=True)
    (folder / "cc-sdd.toml").write_text(patterned, encoding="utf-8")
    through_requirements(project)
    for said in ("don't tell me the reqs are good to go", "requirements are good to go?"):
        project.person(said)
        assert skill(project, "kiro-spec-design") == "contract_approval", said
    project.person("Read them twice: requirements are good to go.")
    assert skill(project, "kiro-spec-design") is None


@pytest.mark.parametrize("said", ISSUE_33)
def test_the_issues_phrasings_do_not_let_design_start(project: Project, said: str) -> None:
    through_requirements(project)
    project.person(said)
    assert skill(project, "kiro-spec-design") == "contract_approval"
    project.person("Looks right: approve requirements.")
    assert skill(project, "kiro-spec-design") is None


@pytest.mark.parametrize(
    ("said", "why"),
    [
        ("don't approve requirements yet", phrasing.NEGATED),
        ("should I approve requirements?", phrasing.QUESTIONED),
    ],
)
def test_the_refusal_says_why_the_persons_words_did_not_count(
    project: Project, said: str, why: str
) -> None:
    from plangate.contracts import evaluate

    through_requirements(project)
    project.person(said)
    payload = project.journaled("Skill", {"skill": "kiro-spec-design", "args": "greet"})
    hook = evaluate.pre_tool_use(payload, None)["hookSpecificOutput"]
    assert isinstance(hook, dict) and hook["permissionDecision"] == "deny"
    reason = " ".join(str(hook["permissionDecisionReason"]).split())
    assert "(code contract_approval" in reason
    assert f"the person's words were {why}: say it plainly" in reason


def test_matches_map_back_to_the_text_across_spaces_and_case() -> None:
    text = "Ok.\n  APPROVE\t\n requirements — İ approve requirements"
    spans = approvals.word_spans(text, ("approve requirements",))
    assert [text[start:end] for start, end in spans] == [
        "APPROVE\t\n requirements",
        "approve requirements",
    ]
    assert approvals.word_spans("approved requirements", ("approve requirements",)) == []


def test_deciding_on_words_imports_no_regular_expressions() -> None:
    probe = (
        "import sys, json; sys.path.insert(0, sys.argv[1]); before = set(sys.modules); "
        "from plangate.contracts.approvals import words_match; "
        "words = ('approve requirements',); "
        "assert words_match('Looks right: approve requirements.', words, None); "
        "assert not words_match('\"approve requirements\"?', words, None); "
        "print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, SRC], capture_output=True, text=True, check=True
    )
    added = json.loads(done.stdout)
    assert "re" not in added and "plangate.contracts.phrasing" in added


def test_a_turn_longer_than_any_person_types_is_judged_in_bounded_time() -> None:
    """Only the first :data:`phrasing.MOST_MATCHES` matches are judged, each on at most
    :data:`phrasing.WINDOW` characters either side on its line: one line of 2,400 negated
    matches took 39 s before that bound."""
    import time

    words = ("approve requirements",)
    line = "don't approve requirements yet, I am reading; " * 2400
    began = time.monotonic()
    assert approvals.words_match(line, words, None) is False
    assert approvals.words_match(line + "\napprove requirements", words, None) is False
    assert time.monotonic() - began < 5
    few = "don't approve requirements yet\n" * (phrasing.MOST_MATCHES - 1)
    assert approvals.words_match(few + "approve requirements", words, None) is True
    assert approvals.words_match("x" * 5000 + " approve requirements", words, None) is True
