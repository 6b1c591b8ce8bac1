"""``project_slug`` is Claude Code 2.1.332's own rule; the expected values were computed with
the CLI's function (``replace(/[^a-zA-Z0-9]/g, "-")``, cut at 200 plus the base-36 string hash)
under Node.js. ``tests/e2e/test_journal_sessions.py`` checks the rule against the real CLI."""

from __future__ import annotations

import pytest

from plangate.locations import project_slug

SLUGS = [
    ("/home/me/project", "-home-me-project"),
    ("/tmp/a b/c_d.e", "-tmp-a-b-c-d-e"),
    # é is one UTF-16 unit, the emoji two: one and two dashes
    ("/tmp/caf\u00e9/\U0001f600x", "-tmp-caf----x"),
    ("C:\\Users\\me\\proj", "C--Users-me-proj"),
    ("", ""),
    ("/" + "a" * 199, "-" + "a" * 199),
    ("/" + "a" * 200, "-" + "a" * 199 + "-b6ymvl"),
    ("/srv/" + "x" * 300, "-srv-" + "x" * 195 + "-9owyih"),
]


@pytest.mark.parametrize(("directory", "slug"), SLUGS)
def test_project_slug_is_claude_codes(directory: str, slug: str) -> None:
    assert project_slug(directory) == slug
