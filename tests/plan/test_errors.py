"""Every rejection of parse_plan, with its exact message."""

from __future__ import annotations

import pytest

from plangate.plan import PlanFormatError, parse_plan
from tests.plan.conftest import EXAMPLE


def _replace(old: str, new: str) -> str:
    assert EXAMPLE.count(old) == 1, old
    return EXAMPLE.replace(old, new)


CASES = [
    (
        "unclosed_fence",
        _replace("Scope: none\n", "Scope: none\n````\nopen\n```\n"),
        "plan.md:7: the code fence opened here (````) is never closed "
        "(close it with a line of ````)",
    ),
    (
        "no_title",
        "Some notes\n# Plan: late\n",
        "plan.md:1: the plan does not start with its title "
        "(begin the plan with a line `# Plan: <title>`)",
    ),
    (
        "no_title",
        "",
        "plan.md:1: the plan does not start with its title "
        "(begin the plan with a line `# Plan: <title>`)",
    ),
    (
        "empty_title",
        _replace("# Plan: Rate-limit the login endpoint", "# Plan:  "),
        "plan.md:1: the title is empty (write the title after `# Plan: `)",
    ),
    (
        "second_title",
        _replace("Scope: none\n", "Scope: none\n# Details\n"),
        "plan.md:7: a second title `# Details` (the plan's title is on line 1) "
        "(a plan has one `#` heading; use `###` or deeper headings inside a section)",
    ),
    (
        "unknown_section",
        _replace("## Review record", "## Notes"),
        "plan.md:42: unknown section `## Notes` (the sections are `## Goal`, "
        "`## Implementation plan`, `## Checks`, `## Acceptance criteria`, `## Review record`; "
        "put other text inside one of them, under a `###` heading in the goal or the review "
        "record)",
    ),
    (
        "duplicate_section",
        EXAMPLE + "\n## Review record\n",
        "plan.md:48: a second `## Review record` section (the first is on line 42) "
        "(a plan has each section once; merge the two)",
    ),
    (
        "section_order",
        _replace(
            "## Checks\n\n- `pytest -q` (timeout 300s)\n- Lint: `ruff check .`\n\n"
            "## Acceptance criteria\n\n- AC1: The sixth failed login within a minute is refused.\n"
            "- AC2: A refused login says when to try again.\n",
            "## Acceptance criteria\n\n- AC1: x\n\n## Checks\n\n- `pytest -q`\n",
        ),
        "plan.md:36: `## Checks` comes after `## Acceptance criteria` (put the sections in "
        "this order: `## Goal`, `## Implementation plan`, `## Checks`, `## Acceptance criteria`, "
        "`## Review record`)",
    ),
    (
        "stray_text",
        _replace("endpoint\n\n## Goal", "endpoint\nA summary.\n\n## Goal"),
        "plan.md:2: text between the title and the first section (move it into `## Goal`)",
    ),
    (
        "stray_text",
        _replace("## Goal\n\nStop password guessing", "Stop password guessing"),
        "plan.md:3: text between the title and the first section (move it into `## Goal`)",
    ),
    (
        "missing_section",
        _replace("# Plan: Rate-limit the login endpoint\n\n## Goal\n", "# Plan: x\n")
        .replace("Stop password guessing: at most five failed logins per account per minute.\n", "")
        .replace("Scope: none\n\n", ""),
        "plan.md:3: no `## Goal` section (add a `## Goal` section after the title, saying in a "
        "few sentences what the plan achieves)",
    ),
    (
        "missing_section",
        EXAMPLE[: EXAMPLE.index("## Checks")],
        "plan.md:32: no `## Checks` section (add a `## Checks` section after "
        "`## Implementation plan`, with one line `- `<command>`` per check)",
    ),
    (
        "missing_section",
        _replace("## Checks\n\n- `pytest -q` (timeout 300s)\n- Lint: `ruff check .`\n\n", ""),
        "plan.md:32: no `## Checks` section (add a `## Checks` section after "
        "`## Implementation plan`, with one line `- `<command>`` per check)",
    ),
    (
        "missing_section",
        "# Plan: x\n\n## Goal\n\n## Implementation plan\n\n## Checks\n",
        "plan.md:8: no `## Acceptance criteria` section (add a `## Acceptance criteria` section "
        "after `## Checks`, with one line `- AC1: <text>` per criterion)",
    ),
    (
        "missing_section",
        "# Plan: x\n\n## Goal\n\n## Checks\n",
        "plan.md:5: no `## Implementation plan` section (add a `## Implementation plan` section "
        "after `## Goal`, with one `### Step <n>: <title>` heading per step)",
    ),
    (
        "text_before_step",
        _replace("## Implementation plan\n\n", "## Implementation plan\n\nFirst, the idea.\n\n"),
        "plan.md:10: text before the first step of `## Implementation plan` (start the section "
        "with `### Step 1: <title>`; background belongs in `## Goal`)",
    ),
    (
        "bad_step_heading",
        _replace("### Step 3: Document the limit", "### Documentation"),
        "plan.md:28: `### Documentation` is not a step heading (write steps as "
        "`### Step <n>: <title>`; use `####` for headings inside a step)",
    ),
    (
        "bad_step_heading",
        _replace("### Step 3: Document the limit", "### Step three: Document"),
        "plan.md:28: `### Step three: Document` is not a step heading (write steps as "
        "`### Step <n>: <title>`; use `####` for headings inside a step)",
    ),
    (
        "empty_step_title",
        _replace("### Step 3: Document the limit", "### Step 3:"),
        "plan.md:28: step 3 has no title (write it after the colon: `### Step 3: <title>`)",
    ),
    (
        "duplicate_field",
        _replace("Files: none\n", "Files: none\nFiles: `a.py`\n"),
        "plan.md:30: a second `Files:` line in step 3 (put everything on one `Files:` line)",
    ),
    (
        "misplaced_field",
        _replace("Files: `src/app/login.py`\n", "\nFiles: `src/app/login.py`\n\n"),
        "plan.md:26: the `Serves:` line of step 2 is separated from the step heading (put "
        "`Files:` and `Serves:` directly under the step heading, before the step's text)",
    ),
    (
        "bad_files",
        _replace("Files: none", "Files:"),
        "plan.md:29: a path is missing on the `Files:` line (list the paths in backticks, "
        "separated by commas (`Files: `src/app.py`, `tests/test_app.py``), or write "
        "`Files: none`)",
    ),
    (
        "bad_files",
        _replace("Files: none", "Files: `a.py`, `b.py"),
        "plan.md:29: a backtick on the `Files:` line is never closed (list the paths in "
        "backticks, separated by commas (`Files: `src/app.py`, `tests/test_app.py``), or write "
        "`Files: none`)",
    ),
    (
        "bad_files",
        _replace("Files: none", "Files: `a.py` and `b.py`"),
        "plan.md:29: unexpected `and `b.py`` on the `Files:` line (list the paths in "
        "backticks, separated by commas (`Files: `src/app.py`, `tests/test_app.py``), or write "
        "`Files: none`)",
    ),
    (
        "bad_serves",
        _replace("Serves: none", "Serves: AC1 and AC2"),
        "plan.md:30: `AC1 and AC2` on the `Serves:` line is not an acceptance criterion id "
        "(list acceptance criterion ids separated by commas (`Serves: AC1, AC2`), or write "
        "`Serves: none`)",
    ),
    (
        "bad_serves",
        _replace("Serves: none", "Serves:"),
        "plan.md:30: nothing on the `Serves:` line is not an acceptance criterion id "
        "(list acceptance criterion ids separated by commas (`Serves: AC1, AC2`), or write "
        "`Serves: none`)",
    ),
    (
        "bad_check",
        _replace("- Lint: `ruff check .`", "Run ruff."),
        "plan.md:35: not a check: every line of `## Checks` is a list item `- `<command>`` "
        "(write each check as `- `<command>``, optionally named (`- Tests: `pytest -q``) and "
        "with a timeout after it (`(timeout 300s)`))",
    ),
    (
        "bad_check",
        _replace("- Lint: `ruff check .`", "- ruff check ."),
        "plan.md:35: the check has no command in backticks (write each check as "
        "`- `<command>``, optionally named (`- Tests: `pytest -q``) and with a timeout after "
        "it (`(timeout 300s)`))",
    ),
    (
        "bad_check",
        _replace("- Lint: `ruff check .`", "- Lint: ` `"),
        "plan.md:35: the check's command is empty (write each check as `- `<command>``, "
        "optionally named (`- Tests: `pytest -q``) and with a timeout after it "
        "(`(timeout 300s)`))",
    ),
    (
        "bad_check",
        _replace("(timeout 300s)", "(5 minutes)"),
        "plan.md:34: unexpected `(5 minutes)` after the command (write each check as "
        "`- `<command>``, optionally named (`- Tests: `pytest -q``) and with a timeout after "
        "it (`(timeout 300s)`))",
    ),
    (
        "bad_criterion",
        _replace("- AC2: A refused", "- A refused"),
        "plan.md:40: not an acceptance criterion (write each criterion as `- AC1: <text>`; "
        "indent a line to continue the text)",
    ),
    (
        "bad_criterion",
        _replace("- AC2: A refused", "- none: A refused"),
        "plan.md:40: `none` cannot be a criterion id (use another id, such as AC1)",
    ),
]


@pytest.mark.parametrize(("code", "text", "message"), CASES)
def test_rejection(code: str, text: str, message: str) -> None:
    with pytest.raises(PlanFormatError) as caught:
        parse_plan(text, source="plan.md")
    assert str(caught.value) == message
    assert caught.value.code == code
    assert caught.value.line == int(message.split(":")[1])
