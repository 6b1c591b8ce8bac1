"""plangate.markdown: CommonMark's code fences and ATX headings, and everyone who asks agrees.

Each case is a text and, for each of its lines, what it is: ``c`` code (a fence line or
inside a fence), ``.`` anything else, or a heading written ``#`` * level + `` `` + text.
"""

from __future__ import annotations

from typing import NamedTuple

import pytest

from plangate import markdown
from plangate.agents.answers import parse_step_answer
from plangate.autoplan.scope import explicit_scope
from plangate.commands.explain import sections
from plangate.gates import findings
from plangate.guard.publication import declared_numbers
from plangate.plan.sections import scan
from tests.hooks.test_imports import assert_light


class Case(NamedTuple):
    name: str
    text: str
    lines: tuple[str, ...]
    open_at_end: bool = False


CASES = [
    Case("backticks", "```\n# a\n```\n# b", ("c", "c", "c", "# b")),
    Case("tildes", "~~~\n# a\n~~~\n# b", ("c", "c", "c", "# b")),
    Case("a tilde fence ignores backticks", "~~~\n```\n# a\n~~~\n# b", ("c",) * 4 + ("# b",)),
    Case("a backtick fence ignores tildes", "```\n~~~\n# a\n```\n# b", ("c",) * 4 + ("# b",)),
    Case("a longer closing fence", "```\n# a\n`````\n# b", ("c", "c", "c", "# b")),
    Case("a shorter one does not close", "````\n```\n# a\n````\n# b", ("c",) * 4 + ("# b",)),
    Case("indented by three", "   ```\n# a\n   ```\n# b", ("c", "c", "c", "# b")),
    Case("closed by a fence indented differently", "```\n# a\n  ```\n# b", ("c",) * 3 + ("# b",)),
    Case("indented by four: not a fence", "    ```\n# a", (".", "# a")),
    Case("a tab before it: not a fence", "\t```\n# a", (".", "# a")),
    Case("unclosed: code to the end", "# t\n```\n# a\n## b", ("# t", "c", "c", "c"), True),
    Case("an info string", "```python title\n# a\n```\n# b", ("c", "c", "c", "# b")),
    Case("a backtick in a backtick info string", "``` a`b\n# a", (".", "# a")),
    Case("backticks in a tilde info string", "~~~ a`b\n# a\n~~~\n# b", ("c", "c", "c", "# b")),
    Case(
        "a fence with an info string does not close",
        "```\n```python\n# a\n```\n# b",
        ("c",) * 4 + ("# b",),
    ),
    Case("closing with trailing blanks", "```\n# a\n``` \t\n# b", ("c", "c", "c", "# b")),
    Case("a closing line indented by four", "```\n    ```\n# a", ("c", "c", "c"), True),
    Case("two backticks: not a fence", "``\n# a", (".", "# a")),
    Case("CR and CRLF line endings", "```\r# a\r\n```\r# b", ("c", "c", "c", "# b")),
    Case("a fence right after a heading", "## x\n~~~~\n~~~\n~~~~\n", ("## x", "c", "c", "c")),
    Case(
        "heading shapes",
        "#5 bolt\n#\n####### seven\n   ## three\n    ## four\n#\tTab",
        (".", "# ", ".", "## three", ".", "# Tab"),
    ),
    Case(
        "closing runs",
        "## Goal ##\n# C#\n### ###\n# a \\#\n## b ## x",
        ("## Goal", "# C#", "### ", "# a \\#", "## b ## x"),
    ),
]


def _expected(case: Case) -> tuple[list[bool], list[tuple[int, int, str]]]:
    code = [kind == "c" for kind in case.lines]
    heads = []
    for index, kind in enumerate(case.lines):
        if kind.startswith("#"):
            marks, _, text = kind.partition(" ")
            heads.append((index, len(marks), text))
    return code, heads


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_fences_and_headings(case: Case) -> None:
    lines = markdown.split_lines(case.text)
    assert len(lines) == len(case.lines)
    code, heads = _expected(case)
    assert markdown.code_lines(lines) == code
    assert markdown.headings(lines) == heads
    assert markdown.prose_lines(case.text) == [
        line for line, is_code in zip(lines, code, strict=True) if not is_code
    ]
    fences = markdown.Fences()
    for number, line in enumerate(lines, 1):
        fences.code(line, number)
    assert bool(fences.fence) == case.open_at_end


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_every_reader_agrees(case: Case) -> None:
    lines = markdown.split_lines(case.text)
    code, heads = _expected(case)
    # The plan format: the same code lines; the same headings (it keeps a closing run).
    scanned = scan(case.text)
    assert [line.fenced for line in scanned.lines] == code
    assert [(line.number - 1, line.level) for line in scanned.lines if line.level] == [
        (index, level) for index, level, _ in heads
    ]
    assert bool(scanned.fence_line) == case.open_at_end
    # The CEO-review gate's findings check: the same ATX headings.
    atx = [(index, level, text) for index, level, text, _ in findings.headings(lines)]
    assert [entry for entry in atx if entry in heads] == heads
    # The agent answer parser: the same lines outside fences.
    answer = parse_step_answer(case.text + "\nESCALATE: stuck")
    assert answer.status == ("done" if case.open_at_end else "escalate")
    # The phase publication guard, autoplan scope and explain: a fence open at the end hides
    # what follows it.
    assert declared_numbers(case.text + "\nPhase 1 complete") == ([] if case.open_at_end else ["1"])
    assert (explicit_scope(case.text + "\nScope: design") is None) == case.open_at_end
    page = case.text + "\n## the_code\nwhat it means\n"
    assert ("the_code" in sections(page)) != case.open_at_end


def test_the_module_stays_off_slow_imports() -> None:
    assert_light("plangate.markdown")


# -- code spans (CommonMark 6.1) ---------------------------------------------------------------

SPANS = [
    ("check `pytest -q` failed", [("check ", False), ("pytest -q", True), (" failed", False)]),
    ("``a`b``", [("a`b", True)]),  # a shorter run inside is content
    ("`` `x` ``", [("`x`", True)]),  # one space stripped from each end
    ("`  `", [("  ", True)]),  # all spaces: kept
    ("a `b\nc` d", [("a ", False), ("b c", True), (" d", False)]),  # a line ending is a space
    # An unclosed run is literal: it never pairs with a backtick of another summary.
    (
        "rename `foo; check `t` failed",
        [("rename ", False), ("foo; check ", True)] + [("t` failed", False)],
    ),
    ("``` a `` b", [("``` a `` b", False)]),
    ("no code", [("no code", False)]),
]


@pytest.mark.parametrize(("text", "pieces"), SPANS)
def test_code_spans(text: str, pieces: list[tuple[str, bool]]) -> None:
    assert markdown.code_spans(text) == pieces


@pytest.mark.parametrize("content", ["pytest -q", "test `cat x` = y", "`a", "b`", "``", " x "])
def test_code_span_round_trips(content: str) -> None:
    written = markdown.code_span(content)
    assert markdown.code_spans(written) == [(content, True)]


def test_a_command_with_backticks_renders_as_one_code_span() -> None:
    # The viewer's `code` filter: the old pattern (`[^`]+`) split this summary in three and
    # left its closing backtick on the page.
    from plangate.web.app import templates

    code = templates().filters["code"]
    summary = f"check {markdown.code_span('test `cat v` = 2')} failed (exit 1)"
    assert str(code(summary)) == "check <code>test `cat v` = 2</code> failed (exit 1)"
    assert str(code("sent back: use ``a`b`` <here>")) == (
        "sent back: use <code>a`b</code> &lt;here&gt;"
    )
    assert str(code("rename `foo")) == "rename `foo"


def test_a_send_back_keeps_its_closing_backtick() -> None:
    from plangate.agents.answers import parse_review_answer, parse_step_answer

    assert parse_review_answer("SEND BACK: rename `foo`").reason == "rename `foo`"
    assert parse_step_answer("ESCALATE: needs `src/x.py`").escalation == "needs `src/x.py`"


def test_a_check_label_with_a_backtick_stays_one_code_span() -> None:
    from plangate.runs.model import CheckRecord

    check = CheckRecord("r1", 0, "lint", "echo `date`", 0, False, 0.1, "", "")
    assert check.label == "lint (`` echo `date` ``)"
    assert [piece for piece, is_code in markdown.code_spans(check.label) if is_code] == [
        "echo `date`"
    ]
