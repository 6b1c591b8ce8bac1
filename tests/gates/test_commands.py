"""``plangate settings``, ``plangate report`` and ``plangate gates hook-timeout``."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from plangate import hook_registry
from plangate.commands.gates import hook_timeout
from plangate.commands.report import report
from plangate.commands.settings import settings
from plangate.gates import session_record, timing
from tests.gates.conftest import RANKED, Env, ceo_session, write_file

PYTHON = "/opt/venv/bin/python"
SESSION = "3f1c7275-0705-4388-8338-5aa9c0a4c4cd"


def _settings(ceo: bool, autoplan: bool) -> tuple[int, dict[str, Any], str]:
    out, err = io.StringIO(), io.StringIO()
    code = settings(ceo, autoplan, out, err=err, python=PYTHON)
    return code, json.loads(out.getvalue()) if out.getvalue() else {}, err.getvalue()


def test_settings_for_both_gates() -> None:
    code, data, _ = _settings(True, True)
    assert code == 0
    assert data["env"] == {"PLANGATE_CEO_REVIEW_GATE": "on", "PLANGATE_AUTOPLAN_GATE": "on"}
    assert data["hooks"] == hook_registry.hook_settings(True, True, PYTHON)
    stop = data["hooks"]["Stop"][0]["hooks"][0]
    assert stop == {
        "type": "command",
        "command": hook_registry.hook_command("plangate.hooks.stop", PYTHON),
        "timeout": 25,
    }
    assert "plangate.hooks.stop import main" in stop["command"]
    assert data["hooks"]["SubagentStop"][0]["hooks"][0]["timeout"] == 25
    assert data["hooks"]["PreToolUse"][0]["matcher"] == "Read|Agent"


def test_settings_for_one_gate_registers_only_its_hooks() -> None:
    code, data, _ = _settings(False, True)
    assert code == 0
    assert data["env"] == {"PLANGATE_AUTOPLAN_GATE": "on"}
    assert "SubagentStop" not in data["hooks"] and "Stop" in data["hooks"]


def test_settings_without_a_gate_is_a_usage_error() -> None:
    code, data, err = _settings(False, False)
    assert code == 1 and data == {} and "SKILL_GATES_USAGE" in err


def test_hook_timeout_prints_25() -> None:
    out = io.StringIO()
    assert hook_timeout(out) == 0
    assert out.getvalue() == "25\n"


def _report(
    env: Env, session: str | None, expect: str | None, as_json: bool
) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = report(session, expect, as_json, out, err=err, state_root=str(env.state))
    return code, out.getvalue(), err.getvalue()


def _blocked_then_released(env: Env) -> str:
    journal = ceo_session(env)
    journal.text("Done.")
    env.decide(env.payload(journal))
    write_file(journal, env.project / "plan.md", RANKED)
    journal.text("Ranked.")
    env.decide(env.payload(journal))
    return journal.session_id


def test_report_counts_and_expect_armed(env: Env) -> None:
    session = _blocked_then_released(env)
    code, out, _ = _report(env, None, "armed", False)
    assert code == 0
    header, row = out.splitlines()[:2]
    assert header.split() == [
        "session",
        "gate",
        *["runs", "fired", "blocked", "released", "exhausted", "observed", "errors"],
    ]
    assert row.split() == [session, "ceo_review_gate", "1", "1", "1", "1", "0", "2", "0"]
    code, out, _ = _report(env, session, "armed", True)
    data = json.loads(out)
    assert code == 0 and data["code"] is None
    (summary,) = data["sessions"]
    assert summary["counts"] == {
        "runs": 1,
        "fired": 1,
        "blocked": 1,
        "released": 1,
        "exhausted": 0,
        "observed": 2,
        "errors": 0,
    }
    run = next(iter(summary["gates"]["ceo_review_gate"]["runs"].values()))
    assert run["file"] == str(env.project / "plan.md")


def test_report_not_armed(env: Env) -> None:
    code, out, _ = _report(env, None, "armed", False)
    assert code == 2 and "GATE_NOT_ARMED: no session has a skill-gate record: the hooks" in out
    assert "in no session" not in out  # issue 34: it once read "no gate armed in no session"
    code, out, _ = _report(env, SESSION, "armed", True)
    assert code == 2 and json.loads(out)["code"] == "GATE_NOT_ARMED"
    code, out, _ = _report(env, SESSION, None, False)
    assert code == 0 and "no skill-gate record for this session" in out


def test_report_a_session_that_never_fired_is_not_armed(env: Env) -> None:
    journal = ceo_session(env)
    journal.records[-1]["promptSource"] = "typed"  # a person answers this session
    journal.text("Which plan?")
    env.decide(env.payload(journal))  # a question: never judged, so never fired
    code, out, _ = _report(env, journal.session_id, "armed", False)
    assert code == 2 and journal.session_id in out


def test_report_errored_wins(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timing, "MIN_DEADLINE_MS", 0)  # below the floor: a timeout
    journal = ceo_session(env)
    journal.text("Done.")
    env.decide(env.payload(journal), PLANGATE_SKILL_GATE_DEADLINE_MS="1")
    code, out, _ = _report(env, None, "armed", False)
    assert code == 3 and "GATE_ERRORED" in out
    code, out, _ = _report(env, None, None, True)
    assert code == 3 and json.loads(out)["errored"] == [journal.session_id]


def test_report_an_unreadable_record_is_an_error(env: Env) -> None:
    path = Path(session_record.record_path(SESSION, str(env.state)))
    path.parent.mkdir(parents=True)
    path.write_text("{broken")
    code, out, _ = _report(env, None, None, False)
    assert code == 3 and "GATE_STATE" in out


@pytest.mark.parametrize(
    ("session", "expect"), [(None, "released"), ("not a session/id", None), ("", "armed")]
)
def test_report_usage_errors(env: Env, session: str | None, expect: str | None) -> None:
    code, out, err = _report(env, session, expect, False)
    assert code == 1 and out == "" and "SKILL_GATES_USAGE" in err
