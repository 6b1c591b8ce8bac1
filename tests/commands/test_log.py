"""``plangate log [--json]``: the decision log summarised by code and disposition."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from plangate.commands.log import log_summary
from plangate.decisions import log
from plangate.decisions.reasons import Decision
from plangate.errors import StateError

T0 = 1_796_000_000.0


@pytest.fixture
def state(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(tmp_path))
    return tmp_path


def _summary(as_json: bool = True, path: str | None = None) -> tuple[int, str]:
    out = io.StringIO()
    status = log_summary(as_json, out, path=path)
    return status, out.getvalue()


def _json(path: str | None = None) -> dict[str, Any]:
    status, text = _summary(True, path)
    assert status == 0
    value: dict[str, Any] = json.loads(text)
    return value


def test_missing_log_says_so(state: Path) -> None:
    status, text = _summary(False)
    assert status == 0
    assert "No guard decisions logged (no decision log yet" in text
    assert str(state / "analytics" / "autoplan-guard.jsonl") in text
    summary = _json()
    assert summary["exists"] is False
    assert summary["decisions"] == 0
    assert summary["by_code"] == []


def test_empty_log_says_so(state: Path) -> None:
    path = state / "analytics" / "autoplan-guard.jsonl"
    path.parent.mkdir()
    path.write_text("\n")
    status, text = _summary(False)
    assert status == 0
    assert "the decision log is empty" in text
    assert _json()["exists"] is True


def _populate(state: Path) -> None:
    decisions = [
        (Decision.allow("journal", "2.1.332"), 0),
        (Decision.allow("payload", "2.1.332"), 10),
        (Decision.deny("publication_missing", path="journal"), 20),
        (Decision.deny("publication_missing", path="journal"), 30),
        (Decision.deny("publication_missing", path="journal"), 40),
        (Decision.unverified("journal_lag"), 50),
        (Decision.unverified("unrecognized_shape", detail="cwd_spelling"), 60),
        (Decision.deny("agent_key", unknown_keys=["model"]), 5),
    ]
    for decision, offset in decisions:
        assert log.append_decision(decision, state_root=str(state), now=T0 + offset)


def test_summary_by_code_and_disposition(state: Path) -> None:
    _populate(state)
    with (state / "analytics" / "autoplan-guard.jsonl").open("a") as handle:
        handle.write('not json\n[1]\n{"decision": "maybe"}\n')
    summary = _json()
    assert summary["decisions"] == 8
    assert summary["allow"] == 4
    assert summary["deny"] == 4
    assert summary["skipped"] == 3
    assert summary["first"] == log.utc_timestamp(T0)
    assert summary["last"] == log.utc_timestamp(T0 + 60)
    assert summary["by_disposition"] == {
        "allow": 2,
        "corrective": 3,
        "fallback": 1,
        "unverified": 2,
    }
    rows = {(row["code"], row["disposition"]): row for row in summary["by_code"]}
    assert summary["by_code"][0]["code"] == "publication_missing"
    missing = rows[("publication_missing", "corrective")]
    assert (missing["count"], missing["allow"], missing["deny"]) == (3, 0, 3)
    assert missing["first"] == log.utc_timestamp(T0 + 20)
    assert missing["last"] == log.utc_timestamp(T0 + 40)
    verified = rows[(None, "allow")]
    assert (verified["count"], verified["allow"]) == (2, 2)
    assert rows[("unrecognized_shape:cwd_spelling", "unverified")]["allow"] == 1
    assert rows[("agent_key", "fallback")]["first"] == log.utc_timestamp(T0 + 5)


def test_text_summary(state: Path) -> None:
    _populate(state)
    status, text = _summary(False)
    assert status == 0
    assert "8 decision(s): 4 allow, 4 deny" in text
    assert f"from {log.utc_timestamp(T0)} to {log.utc_timestamp(T0 + 60)}" in text
    assert "By disposition: allow 2, corrective 3, fallback 1, unverified 2" in text
    table = text.splitlines()
    header = next(line for line in table if line.startswith("code"))
    assert header.split() == ["code", "disposition", "count", "allow", "deny", "first", "last"]
    assert any(line.startswith("publication_missing") and " 3 " in line for line in table)
    assert any(line.startswith("(verified)") for line in table)
    assert "plangate explain <code>" in text


def test_explicit_path(tmp_path: Path) -> None:
    log.append_decision(Decision.deny("cycle"), state_root=str(tmp_path))
    summary = _json(str(tmp_path / "analytics" / "autoplan-guard.jsonl"))
    assert summary["decisions"] == 1


def test_a_folder_in_place_of_the_log_is_a_state_error(state: Path) -> None:
    (state / "analytics" / "autoplan-guard.jsonl").mkdir(parents=True)
    with pytest.raises(StateError):
        _summary(False)
