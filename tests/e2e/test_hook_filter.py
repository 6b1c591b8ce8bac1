"""The guard's ``if`` conditions in a real session: other Reads start no plangate process.

The session (:func:`benchmarks.hook_starts.session`) makes ordinary Reads, then enters two
phases and dispatches a reviewer, with plangate set up by ``plangate setup``; every hook
process start is counted.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks.hook_starts import session
from plangate.autoplan import layout
from plangate.guard import calls
from plangate.hook_registry import GUARD_CONDITIONS

READS = 6


@pytest.mark.e2e
@pytest.mark.timeout(400)
def test_ordinary_reads_start_no_process_and_decisions_stay(
    tmp_path: Path, claude_bin: Path
) -> None:
    filtered = session(tmp_path / "filtered", READS, filtered=True)
    unfiltered = session(tmp_path / "unfiltered", READS, filtered=False)
    # CEO entry, its dispatch, its close packet (a checkpoint-folder Read), Design entry
    assert filtered.starts == 4
    assert unfiltered.starts == READS + filtered.starts
    # The other plangate hooks (the workflow contracts', by default) start alike either way.
    assert unfiltered.all_starts - unfiltered.starts == filtered.all_starts - filtered.starts
    assert filtered.decisions == unfiltered.decisions == [("allow", None)] * 3


def _rule_matches(rule: str, tool: str, path: str) -> bool:
    """Claude Code's permission-rule match, as far as the guard's rules use it: ``Tool`` or
    ``Tool(glob)``, where ``**`` is any run of folders and ``*`` stays within one name."""
    name, _, glob = rule.partition("(")
    if name != tool:
        return False
    if not glob:
        return True
    pattern = re.escape(glob.removesuffix(")")).replace(r"\*\*", ".*").replace(r"\*", "[^/]*")
    return re.fullmatch(pattern, path) is not None


PHASE_ENTRIES = [
    "/home/u/.claude/skills/autoplan/sections/ceo-phase.md",
    "/home/u/.claude/skills/autoplan/sections/tasks-aggregator.md",
    "/home/u/.plangate/claude-plugin/plangate/skills/autoplan/sections/eng-phase.md",
    "/p/.claude/skills/autoplan/sections/dx-phase.md",
    f"/tmp/autoplan-ceo-{'k' * layout.TOKEN_LENGTH}/{layout.REVIEW_INPUT}",
    f"/tmp/autoplan-eng-{'7' * layout.TOKEN_LENGTH}/{layout.MANIFEST}",
]


@pytest.mark.parametrize("path", PHASE_ENTRIES)
def test_every_phase_entry_the_guard_decides_starts_it(path: str) -> None:
    assert calls.classify("Read", {"file_path": path}, "/") is not None, path
    assert any(_rule_matches(rule, "Read", path) for rule in GUARD_CONDITIONS)


@pytest.mark.parametrize("path", ["/p/notes.md", "/p/src/autoplan.py", "/p/sections/x.md"])
def test_ordinary_reads_match_no_condition(path: str) -> None:
    assert calls.classify("Read", {"file_path": path}, "/") is None
    assert not any(_rule_matches(rule, "Read", path) for rule in GUARD_CONDITIONS)


def test_every_agent_call_starts_the_guard() -> None:
    assert any(_rule_matches(rule, "Agent", "") for rule in GUARD_CONDITIONS)
