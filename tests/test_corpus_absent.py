"""A clone with no ``../shared`` beside it: every corpus test skips with the one reason.

The suite runs its corpus tests (``-m corpus``) in a child pytest whose corpus is moved to a
folder that does not exist (``PLANGATE_TEST_CORPUS``), once as on a developer's clone and
once as in CI (``PLANGATE_REQUIRE_ALL=1``), where each of those skips must fail instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from tests import corpus
from tests.conftest import REQUIRE_ALL_ENV

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"


#: The helpers through which a test needs the corpus (``CORPUS`` alone is an optional use:
#: tests/journal/test_properties.py adds corpus journals to its sources when they are here).
NEEDS = ("corpus.require(", "corpus.journal(", "corpus.files(", "corpus.each(", "without_corpus()")


def corpus_modules() -> list[Path]:
    """The test modules that need the corpus (through :data:`NEEDS`)."""
    return [
        path
        for path in sorted(TESTS.rglob("test_*.py"))
        if path.name != Path(__file__).name
        and any(need in path.read_text(encoding="utf-8") for need in NEEDS)
    ]


def run_without_corpus(tmp_path: Path, *, required: bool) -> list[tuple[str, str]]:
    """(outcome, message) of every corpus test, from the child pytest's JUnit report."""
    env = dict(os.environ, **{corpus.CORPUS_ENV: str(tmp_path / "no-shared" / "corpus")})
    env.pop(REQUIRE_ALL_ENV, None)
    if required:
        env[REQUIRE_ALL_ENV] = "1"
    report = tmp_path / "report.xml"
    modules = [str(path.relative_to(ROOT)) for path in corpus_modules()]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-m", "corpus"]
        + ["-o", "addopts=", f"--junitxml={report}", *modules],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert report.is_file(), result.stdout[-3000:] + result.stderr[-3000:]
    outcomes = []
    for case in ElementTree.parse(report).iter("testcase"):
        found = [(child.tag, f"{child.get('message', '')} {child.text or ''}") for child in case]
        outcomes.append(next(iter(found), ("passed", "")))
    assert outcomes, result.stdout[-3000:]
    return outcomes


def test_the_corpus_modules_are_found() -> None:
    names = {path.relative_to(TESTS).as_posix() for path in corpus_modules()}
    assert {"journal/test_corpus.py", "test_fuzz.py", "commands/test_journal_survey.py"} <= names


def test_every_corpus_module_marks_what_reads_the_corpus() -> None:
    """A test module that reads the corpus marks those tests, so that ``-m corpus`` below
    reaches every one of them."""
    for path in corpus_modules():
        text = path.read_text(encoding="utf-8")
        assert "corpus.needed" in text or "mark.corpus" in text, path


@pytest.mark.slow
def test_without_the_corpus_every_corpus_test_skips_with_one_reason(tmp_path: Path) -> None:
    outcomes = run_without_corpus(tmp_path, required=False)
    assert {kind for kind, _ in outcomes} == {"skipped"}, outcomes
    assert all(corpus.SKIP_REASON in message for _, message in outcomes), outcomes
    # Every module is there: one skip for a module skipped whole, one or more for the others.
    assert len(outcomes) >= len(corpus_modules())


@pytest.mark.slow
def test_in_ci_every_corpus_test_fails_without_the_corpus(tmp_path: Path) -> None:
    outcomes = run_without_corpus(tmp_path, required=True)
    assert {kind for kind, _ in outcomes} <= {"failure", "error"}, outcomes
    assert len(outcomes) >= len(corpus_modules())
    for _, message in outcomes:
        assert "the public transcript corpus is missing" in message, message
        assert corpus.SKIP_REASON in message, message
