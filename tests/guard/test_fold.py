"""The guard's fold on real journals: the fold continued from the index equals the fold from
record 0, as a journal grows.

Each main-session journal of the public corpus is copied into the hook layout a slice at a
time; after every slice the guard decides a phase-entry Read (``evaluate``, as the hook
does) twice: going on from the journal index the previous slice's decision saved, and cold
(the index off, the fold from record 0). The two must agree, code and detail.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plangate import tuning
from plangate.guard import calls
from plangate.guard import observe as observe_module
from plangate.guard.evaluate import evaluate
from testkit.envelope import journal_path
from tests import corpus

pytestmark = corpus.needed
corpus.skip_module_without_corpus()

from tests.journal.test_corpus import MAIN_2X, rel, root_record  # noqa: E402

SLICES = 12


def cut_points(lines: list[bytes]) -> list[int]:
    """Line counts to grow the journal to: after tool results (no call left waiting) spread
    over the file, and the whole file."""
    after_results = [
        number + 1 for number, line in enumerate(lines) if b'"toolUseResult"' in line
    ] or list(range(1, len(lines) + 1))
    step = max(1, len(after_results) // SLICES)
    return sorted({*after_results[step // 2 :: step], len(lines)})


@pytest.mark.parametrize("path", MAIN_2X, ids=rel)
def test_indexed_decisions_equal_cold_ones_as_a_real_journal_grows(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = root_record(path)
    cwd, session = str(root["cwd"]), str(root["sessionId"])
    config = tmp_path / "config"
    target = journal_path(config, cwd, session)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", cwd)
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(tmp_path / "state"))
    # A slice that ends with a call waiting for its result would make the guard wait for
    # the journal to catch up; here nothing will, so it looks once.
    monkeypatch.setattr(observe_module, "DEADLINE_SECONDS", 0.0)
    driver = str(config / "skills" / "autoplan" / "sections" / "ceo-phase.md")
    call = calls.classify("Read", {"file_path": driver}, cwd)
    assert call is not None
    lines = path.read_bytes().splitlines(keepends=True)
    written = 0
    codes: list[str | None] = []
    for number, end in enumerate(cut_points(lines)):
        with target.open("ab") as handle:
            handle.write(b"".join(lines[written:end]))
        written = end
        payload = {
            "hook_event_name": "PreToolUse",
            "tool_name": "Read",
            "tool_input": {"file_path": driver},
            "tool_use_id": f"toolu_fold_probe_{number}",
            "session_id": session,
            "transcript_path": str(target),
            "cwd": cwd,
        }
        monkeypatch.setenv(tuning.ENV, tuning.joined(index_min_bytes=0))
        indexed = evaluate(json.loads(json.dumps(payload)), call)
        monkeypatch.setenv(tuning.ENV, tuning.joined(index_min_bytes=1 << 40))
        cold = evaluate(json.loads(json.dumps(payload)), call)
        assert (indexed.code, indexed.detail) == (cold.code, cold.detail), (number, rel(path))
        codes.append(indexed.code)
    assert codes and all(code is not None for code in codes)  # no /autoplan: never an allow
