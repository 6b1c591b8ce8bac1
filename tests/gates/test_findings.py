"""What counts as ranked top risks in a Markdown file."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plangate.gates.findings import check_text, is_placeholder

GOOD = [
    "## Top risks\n\n1. Payment retries can double-charge when the provider times out.\n",
    "# Plan\n\n## Findings\n\n1. No rollback path.\n2. No owner.\n",
    "### findings from the review\n1) The import has no size limit.\n",
    "#### TOP RISKS ####\n\n1. **Data loss on migration.** The old table is dropped.\n",
    "Top risks\n---------\n\n1. The vendor API has no SLA.\n",
    "## Top risks\n\nRanked by score.\n\n1. A real risk.\n   What to do: test it.\n2. Another.\n",
    "## Top risks\n\n### Critical\n\n1. Inside a subsection of the section.\n",
    "## Top risks\n\n1. [risk]\n2. The second item is real.\n",
    "## Findings\n\n1. See [the RFC](https://example.com/rfc) for the failing case.\n",
    "## Findings\n\n1. Retries lose data, see <https://example.com/bug/1>.\n",
    "## Findings\n\n1. The SLA in [1] does not cover retries.\n",
]

BAD = [
    ("# Plan\n\nNo review here.\n", 'no heading with "Findings" or "Top risks"'),
    ("## Top risks\n\n- A bullet, not a number.\n", "has a bullet list, not a numbered list"),
    ("## Top risks\n\n2. Starts at two.\n3. Then three.\n", "starts at 2, not 1"),
    ("## Top risks\n\nNone yet.\n\n## Next\n\n1. A list under the next heading.\n", "no numbered"),
    ("## Top risks\n\n1. [risk]\n2. TBD\n3. ...\n", "every item under"),
    (
        "## Top risks\n\n1. **<The risk, in one sentence.>** <Why it matters.>\n"
        "   What to do: <the change>.\n",
        "every item under",
    ),
    ("```\n## Top risks\n\n1. In a code block.\n```\n", 'no heading with "Findings"'),
    ("## Top risks\n\n```\n1. A list in a code block.\n```\n", "no numbered list"),
    ("## Risks\n\n1. The heading does not say Top risks.\n", "no heading"),
    ("## Top risks\n\n1.\n", "every item under"),
    ("## Findings\n\n1. TODO write this\n", "every item under"),
]


@pytest.mark.parametrize("text", GOOD)
def test_ranked_risks_count(text: str) -> None:
    check = check_text(text)
    assert check.ok, check.why


@pytest.mark.parametrize(("text", "why"), BAD)
def test_what_does_not_count_and_why(text: str, why: str) -> None:
    check = check_text(text)
    assert not check.ok
    assert why in check.why


@pytest.mark.parametrize(
    "item",
    ["", "TBD", "tbd.", "...", "\u2026", "[risk]", "<finding> (severity: High)", "**TODO**"],
)
def test_placeholders(item: str) -> None:
    assert is_placeholder(item)


@pytest.mark.parametrize(
    "item",
    ["Payment retries double-charge.", "Costs rise... slowly", "See [docs](x.md).", "Risk [1]"],
)
def test_real_items(item: str) -> None:
    assert not is_placeholder(item)


@given(st.text(max_size=400))
def test_any_text_gets_a_verdict(text: str) -> None:
    check = check_text(text)
    assert check.ok or check.why
