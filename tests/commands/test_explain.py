"""``plangate explain <code>`` and the troubleshooting page it prints from."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from plangate.commands import explain as explain_module
from plangate.commands.explain import explain, normalize, page_text, sections
from plangate.decisions import reasons

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "src" / "plangate" / "decisions" / "troubleshooting.md"
DOCS_POINTER = ROOT / "docs" / "guard-troubleshooting.md"
TOPICS = {
    "What the guard does",
    "Dispositions",
    "The fallback",
    "How a phase report is published",
    "The decision log",
    "Windows path spellings",
    "Symlinked plan folders",
}


def _run(code: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = explain(code, out, err)
    return status, out.getvalue(), err.getvalue()


def test_the_page_ships_inside_the_package() -> None:
    assert page_text() == PAGE.read_text(encoding="utf-8")


def test_docs_page_points_to_the_shipped_page() -> None:
    pointer = DOCS_POINTER.read_text(encoding="utf-8")
    assert "src/plangate/decisions/troubleshooting.md" in pointer
    assert "plangate explain <code>" in pointer
    assert "no environment variable that turns the guard off" in pointer


def test_every_known_code_has_a_complete_section() -> None:
    found = sections()
    for code in reasons.KNOWN_CODES:
        assert code in found, f"no `## {code}` section"
        body = found[code]
        assert body.startswith(f"## {code}\n")
        for label in ("**What it means**", "**Disposition**", "**What to do**"):
            assert body.count(label) == 1, (code, label)
        assert f"**Disposition**: {reasons.disposition(code)}" in body, code


def test_every_section_is_a_known_code_or_a_topic() -> None:
    headings = set(sections())
    assert headings - TOPICS - set(reasons.SEED_CODES_NOT_RAISED) == set(reasons.KNOWN_CODES)
    assert headings >= TOPICS


def test_page_states_the_rules() -> None:
    page = page_text()
    assert "There is no environment variable that turns the guard off." in page
    assert "`true autoplan-published <phase>`" in page
    assert "/plan-ceo-review" in page and "not `--resume`" in page
    assert "/autoplan <plan path>" in page
    for word in ("retry", "try again", "gstack", "./setup", "context-save"):
        assert word not in page.lower(), word
    for disposition in reasons.DISPOSITIONS:
        assert f"| {disposition} |" in page


def test_sections_ignore_headings_inside_code_fences() -> None:
    page = "# Title\n\n## a\ntext\n```\n## not a heading\n```\n## b\nmore\n"
    assert sections(page) == {
        "a": "## a\ntext\n```\n## not a heading\n```\n",
        "b": "## b\nmore\n",
    }


@pytest.mark.parametrize("code", reasons.KNOWN_CODES)
def test_explain_prints_the_section(code: str) -> None:
    status, out, err = _run(code)
    assert status == 0
    assert err == ""
    assert out.startswith(f"## {code}\n")
    fallback = "## The fallback\n" in out
    assert fallback == (reasons.disposition(code) == reasons.FALLBACK)


def test_shape_detail_finds_the_family_section() -> None:
    status, out, _ = _run("unrecognized_shape:cwd_spelling")
    assert status == 0
    assert out.startswith("## unrecognized_shape\n")
    assert "`unrecognized_shape:cwd_spelling`" in out
    status, out, _ = _run("unrecognized_shape:preamble:system")
    assert status == 0
    assert out.startswith("## unrecognized_shape\n")


@pytest.mark.parametrize(
    "spelling", ["Publication-Missing", " publication_missing ", "`publication_missing`"]
)
def test_spellings_a_person_may_type(spelling: str) -> None:
    assert normalize(spelling) == "publication_missing"
    status, out, _ = _run(spelling)
    assert status == 0
    assert out.startswith("## publication_missing\n")


@pytest.mark.parametrize(
    "code", ["changing", "nope", "", "publication_missing:x", "dispositions", "The fallback"]
)
def test_unknown_code_exits_1_and_lists_the_known_codes(code: str) -> None:
    status, out, err = _run(code)
    assert status == 1
    assert out == ""
    assert "unknown code" in err
    for known in reasons.KNOWN_CODES:
        assert known in err
    assert "unrecognized_shape:<detail>" in err


def test_unknown_code_goes_to_out_without_err() -> None:
    out = io.StringIO()
    assert explain("nope", out) == 1
    assert "publication_missing" in out.getvalue()


def test_a_page_without_the_section_is_an_unknown_code(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(explain_module, "page_text", lambda: "# Title\n\n## cycle\ntext\n")
    assert _run("cycle")[0] == 0
    assert _run("agent")[0] == 1


@pytest.mark.parametrize("typed", ["GATE_TIMEOUT", "gate-timeout", "`gate_timeout`"])
def test_skill_gate_codes_are_explained_too(typed: str) -> None:
    out = io.StringIO()
    assert explain(typed, out) == 0
    text = out.getvalue()
    assert text.startswith("## GATE_TIMEOUT\n")
    assert "PLANGATE_SKILL_GATE_DEADLINE_MS" in text and "let the stop through" in text


def test_unknown_code_lists_the_gate_codes() -> None:
    out, err = io.StringIO(), io.StringIO()
    assert explain("GATE_NOPE", out, err) == 1
    assert "skill gates: GATE_BAD_PAYLOAD, GATE_TRANSCRIPT, GATE_TIMEOUT" in err.getvalue()


def test_every_seed_code_is_explained_even_one_plangate_never_raises() -> None:
    """Seed 000 lists ``evidence``; plangate raises a code of its own per artifact instead,
    and ``explain`` says which (issue 37)."""
    status, out, _ = _run("evidence")
    assert status == 0
    assert out.startswith("## evidence\n")
    for instead in ("snapshot", "close_stale", "init_failed", "init_mismatch"):
        assert f"`{instead}`" in out
    assert not reasons.is_known("evidence")  # never a code a decision carries
