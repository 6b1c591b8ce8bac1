"""The public transcript corpus: 31 real journals at ``../shared/corpus/public-transcripts``.

Every test that reads the corpus finds it here, and nowhere else. The corpus is not part of
the repository (it is other people's text), so a clone made anywhere but next to a
``shared/`` folder has none. There every corpus test skips with :data:`SKIP_REASON`, the one
reason they all give; with ``PLANGATE_REQUIRE_ALL=1`` (CI) the root ``conftest.py`` turns that
skip into a failure, since CI always has the corpus.

``PLANGATE_TEST_CORPUS`` moves the corpus, so that ``tests/test_corpus_absent.py`` can prove
both behaviours on a clone that does have it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CORPUS_ENV = "PLANGATE_TEST_CORPUS"
_BESIDE = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "public-transcripts"
CORPUS = Path(os.environ.get(CORPUS_ENV) or _BESIDE)
#: The mark of every test that reads the corpus (a whole module: ``pytestmark = corpus.needed``).
needed = pytest.mark.corpus
SKIP_REASON = (
    "the public transcript corpus is not at ../shared/corpus/public-transcripts "
    "(a clone outside CI has none; CI sets PLANGATE_REQUIRE_ALL=1 and fails instead)"
)


def present() -> bool:
    """Whether the corpus is here."""
    return CORPUS.is_dir()


def files() -> list[Path]:
    """Every journal of the corpus, sorted; none when it is absent."""
    return sorted(CORPUS.rglob("*.jsonl")) if present() else []


def skip_module_without_corpus() -> None:
    """Skips the calling test module when the corpus is absent (call it at import)."""
    if not present():
        pytest.skip(SKIP_REASON, allow_module_level=True)


def require() -> Path:
    """The corpus folder, or a skip of the calling test when it is absent."""
    if not present():
        pytest.skip(SKIP_REASON)
    return CORPUS


def journal(name: str) -> Path:
    """One journal of the corpus by its relative name (a skip when the corpus is absent).

    A corpus that is here but lacks the journal is a broken corpus, never a skip.
    """
    path = require() / name
    if not path.is_file():
        pytest.fail(f"the corpus at {CORPUS} has no {name}: restore ../shared/corpus")
    return path


def each(paths: list[Path]) -> list[object]:
    """``paths`` to parametrize a test with; one skipped case when the corpus is absent.

    Without it an absent corpus would give pytest's own "empty parameter set" skip, whose
    reason says nothing of the corpus (and CI would not fail on it).
    """
    if present():
        return list(paths)
    return [pytest.param(None, marks=pytest.mark.skip(reason=SKIP_REASON), id="no-corpus")]
