"""A gate never blocks because it broke: every error code is recorded, logged, on stderr and
in the transcript (``systemMessage``), and the stop goes through."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from plangate import files
from plangate.gates import markers as mk
from plangate.gates import session_record, skill_loads, stop_hook, timing
from tests.gates.conftest import Env, ceo_session


def _error(output: dict[str, Any]) -> dict[str, str]:
    assert "decision" not in output, output
    found = [mk.parse(line) for line in mk.find_all(str(output.get("systemMessage", "")))]
    errors = [parsed[2] for parsed in found if parsed is not None and parsed[1] == "error"]
    assert errors, output
    return errors[0]


def _decide(env: Env, payload: dict[str, Any], **environ: str) -> tuple[dict[str, Any], str]:
    stderr = io.StringIO()
    merged = dict(env.environ)
    merged.update(environ)
    output = stop_hook.decide(payload, "Stop", environ=merged, stderr=stderr)
    return output, stderr.getvalue()


def _armed(env: Env) -> dict[str, Any]:
    journal = ceo_session(env)
    journal.text("Done.")
    return env.payload(journal)


def _recorded(env: Env, session: str, code: str) -> None:
    entry = env.record(session)["gates"]["ceo_review_gate"]
    assert [e["code"] for e in entry["errors"]] == [code]
    assert entry["error_count"] == 1
    assert any(f"event=error code={code}" in line for line in env.log("ceo-review-gate"))


def test_gate_transcript_for_a_missing_transcript(env: Env) -> None:
    payload = _armed(env)
    os.unlink(payload["transcript_path"])
    output, stderr = _decide(env, payload, PLANGATE_SKILL_GATE_DEADLINE_MS="200")
    assert _error(output)["code"] == "GATE_TRANSCRIPT"
    assert "GATE_TRANSCRIPT" in stderr and "plangate explain GATE_TRANSCRIPT" in stderr
    _recorded(env, payload["session_id"], "GATE_TRANSCRIPT")


def test_gate_transcript_for_a_malformed_line(env: Env) -> None:
    payload = _armed(env)
    with open(payload["transcript_path"], "ab") as stream:
        stream.write(b"{not json}\n")
    output, _ = _decide(env, payload)
    error = _error(output)
    assert error["code"] == "GATE_TRANSCRIPT" and "malformed" in error["why"]


def test_gate_transcript_for_a_load_without_timestamp(env: Env) -> None:
    journal = ceo_session(env)
    journal.text("Done.")
    payload = env.payload(journal)
    path = Path(payload["transcript_path"])
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    (load,) = [line for line in lines if "command-name" in json.dumps(line)]
    load["timestamp"] = "2026-11-29T19:59:56.059"  # the reader takes it; it names no zone
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    output, _ = _decide(env, payload)
    error = _error(output)
    assert error["code"] == "GATE_TRANSCRIPT" and "timestamp" in error["why"]


def test_gate_timeout_when_the_deadline_passes(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timing, "MIN_DEADLINE_MS", 0)  # below the floor: a timeout
    payload = _armed(env)
    output, stderr = _decide(env, payload, PLANGATE_SKILL_GATE_DEADLINE_MS="1")
    assert _error(output)["code"] == "GATE_TIMEOUT"
    assert "PLANGATE_SKILL_GATE_DEADLINE_MS" in stderr
    _recorded(env, payload["session_id"], "GATE_TIMEOUT")


def test_gate_bad_payload_without_a_session(env: Env) -> None:
    payload = _armed(env)
    del payload["session_id"]
    output, stderr = _decide(env, payload)
    error = _error(output)
    assert error["code"] == "GATE_BAD_PAYLOAD" and error["session"] == "unknown"
    assert "GATE_BAD_PAYLOAD" in stderr
    assert any("event=error code=GATE_BAD_PAYLOAD" in line for line in env.log("ceo-review-gate"))


def test_gate_bad_payload_without_a_transcript_is_recorded(env: Env) -> None:
    payload = _armed(env)
    payload["transcript_path"] = "relative.jsonl"
    output, _ = _decide(env, payload)
    assert _error(output)["code"] == "GATE_BAD_PAYLOAD"
    entry = env.record(payload["session_id"])["gates"]
    assert entry["ceo_review_gate"]["errors"][0]["code"] == "GATE_BAD_PAYLOAD"
    assert entry["autoplan_gate"]["errors"][0]["code"] == "GATE_BAD_PAYLOAD"


def test_gate_state_when_the_record_cannot_be_written(env: Env) -> None:
    payload = _armed(env)
    folder = env.state / "skill-gates"
    folder.mkdir(parents=True)
    (folder / payload["session_id"]).write_text("a file, not a folder")
    output, stderr = _decide(env, payload)
    assert _error(output)["code"] == "GATE_STATE"
    assert "GATE_STATE" in stderr
    assert any("code=GATE_STATE" in line for line in env.log("ceo-review-gate"))


def test_gate_locked_when_another_hook_holds_the_lock(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    payload = _armed(env)
    folder = Path(session_record.session_folder(payload["session_id"], str(env.state)))
    folder.mkdir(parents=True)
    monkeypatch.setattr(session_record, "LOCK_WAIT_S", 0.2)
    with files.Lock(str(folder / session_record.LOCK), timeout=0):
        output, stderr = _decide(env, payload)
    assert _error(output)["code"] == "GATE_LOCKED"
    assert "GATE_LOCKED" in stderr
    assert any("code=GATE_LOCKED" in line for line in env.log("ceo-review-gate"))


def test_gate_unexpected_for_anything_else(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    payload = _armed(env)

    def broken(*args: object, **kwargs: object) -> object:
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(skill_loads, "loads", broken)
    output, stderr = _decide(env, payload)
    error = _error(output)
    assert error["code"] == "GATE_UNEXPECTED" and "ZeroDivisionError" in error["why"]
    assert "Traceback" not in stderr
    _recorded(env, payload["session_id"], "GATE_UNEXPECTED")


def test_an_error_in_one_gate_leaves_the_other_gate_deciding(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = ceo_session(env)
    journal.slash_command("autoplan", "plan.md")
    journal.text("Done.")
    output, _ = _decide(env, env.payload(journal), PLANGATE_PROJECT_SLUG="a/b")
    assert output["decision"] == "block"
    assert str(output["reason"]).startswith("PLANGATE_GATE autoplan-gate blocked")
    assert "code=GATE_SLUG" in str(output["systemMessage"])
