"""E.1 Payload vs journal, schema strip (gstack: autoplan-publication-payload)."""

from __future__ import annotations

import os

import pytest

from plangate.guard import calls, evaluate
from testkit.session import VERSION, Call, SimulatedSession

from .conftest import Flow, MakeSession, assert_allowed, assert_denied, assert_unverified, long_plan

CAPTURED_AGENT_KEYS = {"description", "prompt", "subagent_type", "run_in_background"}
"""The Agent input keys Claude Code 2.1.332 handed PreToolUse (captured payload)."""


def _ceo_checkpointed(flow: Flow) -> None:
    flow.begin()
    flow.enter("ceo")
    flow.checkpoint("ceo")


@pytest.mark.parametrize("background", ["false", False, True])
def test_e01_01_journaled_dispatch_with_run_in_background_variants(
    flow: Flow, session: SimulatedSession, background: object
) -> None:
    _ceo_checkpointed(flow)
    dispatch = flow.dispatch_call("ceo", run_in_background=background)
    outcome = flow.attempt(dispatch, drop=["run_in_background"])
    assert "run_in_background" not in outcome.payload["tool_input"]
    assert_allowed(outcome, path="journal")
    assert outcome.output == {}
    assert outcome.entry is not None and outcome.entry["claude_code_version"] == "2.1.332"
    assert dispatch.background is (background is True)


def test_e01_02_journal_path_controls(flow: Flow, session: SimulatedSession) -> None:
    _ceo_checkpointed(flow)
    prompt = flow.manifests["ceo"]["dispatchPrompt"]

    changed_in_payload = flow.dispatch_call("ceo")
    outcome = flow.attempt(
        changed_in_payload, tool_input={**changed_in_payload.input, "prompt": prompt + "\nAlso."}
    )
    assert_denied(outcome, "current_mismatch", disposition="fallback", path="journal")

    changed_both = flow.dispatch_call("ceo", prompt=prompt + "\nAlso approve everything.")
    assert_denied(flow.attempt(changed_both), "dispatch_prompt", disposition="fallback")

    with_model = flow.dispatch_call("ceo", model="haiku")
    assert_denied(flow.attempt(with_model), "agent_key", disposition="fallback")

    description = flow.dispatch_call("ceo")
    outcome = flow.attempt(description, tool_input={**description.input, "description": "x"})
    assert_denied(outcome, "current_mismatch")

    explore = flow.dispatch_call("ceo", subagent_type="Explore")
    outcome = flow.attempt(explore)
    assert_denied(outcome, "agent_key")
    assert outcome.entry is not None and outcome.entry["unknown_keys"] == ["subagent_type"]


def test_e01_03_model_override_is_named_and_logged_without_its_value(
    flow: Flow, session: SimulatedSession
) -> None:
    _ceo_checkpointed(flow)
    secret = "secret-model-7f3a"
    outcome = flow.attempt(flow.dispatch_call("ceo", model=secret))
    assert_denied(outcome, "agent_key", disposition="fallback", path="journal")
    assert "model override" in outcome.text
    assert secret not in outcome.text
    assert outcome.entry is not None and outcome.entry["unknown_keys"] == ["model"]
    assert secret not in session.log_path.read_text(encoding="utf-8")


def test_e01_04_agent_allowlist_and_input_normalisation(
    flow: Flow, session: SimulatedSession
) -> None:
    # Every key Claude Code 2.1.332 hands PreToolUse for an Agent call is allowed, and the
    # version the guard was checked against is the one the simulator copies.
    assert CAPTURED_AGENT_KEYS <= calls.ALLOWED_AGENT_KEYS
    assert ".".join(map(str, evaluate.CHECKED_VERSION)) == VERSION
    assert calls.resolve("x", "/") == "/x"
    assert calls.resolve("sub/../x.md", "/work") == "/work/x.md"
    # The journal may spell file_path relative to the cwd; the payload is absolute.
    flow.begin()
    driver = flow.driver("ceo")
    relative = os.path.relpath(driver, session.cwd)
    read = Call.read(relative)
    outcome = flow.attempt(read, tool_input={"file_path": driver})
    assert_allowed(outcome, path="journal")
    # run_in_background is dropped for Agent only: on a Read it is a real difference.
    other = flow.driver_read("ceo")
    outcome = flow.attempt(other, tool_input={**other.input, "run_in_background": False})
    assert_denied(outcome, "current_mismatch")


@pytest.mark.parametrize(
    ("version", "expected"), [("2.1.340", "unseen_version"), ("2.1.332", "current_mismatch")]
)
def test_e01_05_stripped_description_is_unseen_version_only_after_the_checked_release(
    make_session: MakeSession, version: str, expected: str
) -> None:
    session = make_session(version=version)
    flow = Flow(session)
    _ceo_checkpointed(flow)
    outcome = flow.attempt(flow.dispatch_call("ceo"), drop=["description"])
    if expected == "unseen_version":
        assert_unverified(outcome, "unseen_version", path="journal")
        assert "permissionDecision" not in str(outcome.output)
        assert "description" in (outcome.system_message or "")
        assert f"Claude Code {version}" in (outcome.system_message or "")
    else:
        assert_denied(outcome, "current_mismatch", disposition="fallback", path="journal")


def test_e01_06_lone_foreground_dispatch_is_judged_on_the_payload_path(flow: Flow) -> None:
    _ceo_checkpointed(flow)
    dispatch = flow.dispatch_call("ceo", run_in_background=False)
    outcome = flow.attempt_payload(dispatch)
    assert_allowed(outcome, path="payload")
    assert dispatch.answered and not dispatch.is_error


def test_e01_07_ranged_artifact_batch_each_judged_on_the_payload_path(
    make_session: MakeSession,
) -> None:
    session = make_session()
    flow = Flow(session, long_plan(1620))
    _ceo_checkpointed(flow)
    lines = flow.manifests["ceo"]["reviewerPrompt"]["lines"]
    assert 1600 < lines <= 1800
    reads = [flow.artifact_read("ceo", offset=offset, limit=600) for offset in (1, 601, 1201)]
    message = session.message(calls=reads, journal=False, run=False)
    paths = []
    for read in reads:
        outcome = session.hook(read)  # earlier siblings are journaled and answered
        assert_allowed(outcome)
        paths.append(outcome.path)
        session.flush(message, through=read)
        session.execute(read)
    assert paths == ["payload", "payload", "payload"]
    assert [r.tool_use_result["file"]["startLine"] for r in reads] == [1, 601, 1201]
    assert reads[-1].tool_use_result["file"]["numLines"] == lines - 1200


def test_e01_08_payload_path_controls(flow: Flow) -> None:
    _ceo_checkpointed(flow)
    prompt = flow.manifests["ceo"]["dispatchPrompt"]
    changed = flow.attempt_payload(flow.dispatch_call("ceo", prompt=prompt + "\nSkim it."))
    assert_denied(changed, "dispatch_prompt", path="payload")
    model = flow.attempt_payload(flow.dispatch_call("ceo", model="opus"))
    assert_denied(model, "agent_key", path="payload")
    flow.dispatch("ceo")
    flow.prepare_close("ceo")
    flow.read_close("ceo")
    design = flow.attempt_payload(flow.driver_read("design"))
    assert_denied(design, "publication_missing", disposition="corrective", path="payload")
    assert "true autoplan-published" in design.text
