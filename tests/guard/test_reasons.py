"""The guard's code table, its texts and the hook outputs built from it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from plangate.decisions import reasons
from plangate.journal import codes as reader_codes

SEED_CODES = {
    reasons.UNVERIFIED: {
        "unrecognized_shape",
        "journal_lag",
        "rewritten",
        "too_large",
        "unseen_version",
    },
    reasons.FALLBACK: {
        "competing_root",
        "foreign_cwd",
        "sidechain",
        "agent",
        "cycle",
        "identity",
        "malformed",
        "journal_missing",
        "oversized_invocation",
        "event_order",
        "tool_identity",
        "current_mismatch",
        "agent_key",
        "cross_phase_batch",
        "init_mismatch",
        "snapshot",
        "dispatch_prompt",
        "evidence",
        "publication_repeat",
    },
    reasons.CORRECTIVE: {
        "publication_missing",
        "publication_unflushed",
        "close_required",
        "close_incomplete",
        "close_stale",
        "close_edits",
        "init_required",
        "init_own",
        "init_failed",
        "init_unbindable",
        "phase_order",
        "hook_input",
        "installation",
        "foreign_install",
    },
    reasons.TRANSIENT: {"entry_pending", "mutation_pending"},
}
# Codes of earlier releases (and of the seed: ``evidence`` could never arise here, every
# artifact has a code of its own for "cannot be parsed"; docs/guard-deviations.md).
REMOVED_CODES = ["changing", "current_missing", "pending_read", "evidence"]
DENY_CODES = [c for c in reasons.KNOWN_CODES if reasons.disposition(c) != reasons.UNVERIFIED]
UNVERIFIED_CODES = [c for c in reasons.KNOWN_CODES if reasons.disposition(c) == reasons.UNVERIFIED]
VERSIONS = ["2.1.332", None, ""]


def _all_messages() -> list[str]:
    messages: list[str] = []
    for code in DENY_CODES:
        for version in VERSIONS:
            for detail in (None, "writable", reasons.INIT_FAILED_NOT_JSON):
                for facts in (None, {"phase": "ceo"}):
                    output = reasons.deny_output(code, version, detail, facts)
                    messages.append(output["hookSpecificOutput"]["permissionDecisionReason"])
    for code in [*UNVERIFIED_CODES, "unrecognized_shape:cwd_spelling", "unrecognized_shape:x"]:
        for version in VERSIONS:
            output = reasons.unverified_output(code, version)
            messages.append(output["systemMessage"])
            messages.append(output["hookSpecificOutput"]["additionalContext"])
    return messages


PLANGATE_CODES = {
    reasons.UNVERIFIED: {"guard_timeout", "contract_unverified"},
    reasons.CORRECTIVE: {
        "entry_too_large",
        "contract_invalid",
        "contract_phase_order",
        "contract_artifact",
        "contract_approval",
        "contract_self_approval",
        "contract_edit_scope",
        "agent_command",
        "protected_path",
        "protected_command",
        "sandbox_bypass",
        "contract_drift",
        "journal_untrusted",
        "unguarded_calls",
        "contract_timeout",
    },
}
"""Codes plangate adds to the seed's: the guard's own deadline (issue 14), a phase entry
whose payload is over the read limit (issue 24) and the workflow contracts' codes (issue 25,
:mod:`plangate.decisions.contract_codes`)."""
PLANGATE_DROPPED = {"evidence"}
"""Seed codes plangate has not: every artifact has its own code for "cannot be parsed", so
``evidence`` could never arise (docs/guard-deviations.md)."""


def test_table_is_exactly_the_seed_codes_with_their_dispositions() -> None:
    table = {
        kind: {c for c in reasons.KNOWN_CODES if reasons.disposition(c) == kind}
        for kind in reasons.DISPOSITIONS
    }
    expected = {
        kind: (codes | PLANGATE_CODES.get(kind, set())) - PLANGATE_DROPPED
        for kind, codes in SEED_CODES.items()
    }
    assert table == expected
    assert len(reasons.KNOWN_CODES) == len(set(reasons.KNOWN_CODES))


@pytest.mark.parametrize("code", REMOVED_CODES + ["", "nope", "publication_missing:x"])
def test_removed_and_unknown_codes_are_not_known(code: str) -> None:
    assert not reasons.is_known(code)
    with pytest.raises(ValueError):
        reasons.disposition(code)
    with pytest.raises(ValueError):
        reasons.deny_output(code, "2.1.332")


def test_every_reader_code_is_a_guard_code() -> None:
    for code in [*reader_codes.ERROR_STATUS_REASONS, reader_codes.UNRECOGNIZED_SHAPE]:
        assert reasons.is_known(code), code
    assert reasons.disposition(reader_codes.unrecognized("preamble:x")) == reasons.UNVERIFIED


def test_shape_family() -> None:
    for code in ["unrecognized_shape", "unrecognized_shape:cwd_spelling", "unrecognized_shape:a:b"]:
        assert reasons.is_known(code)
        assert reasons.disposition(code) == reasons.UNVERIFIED
    assert reasons.full_code("unrecognized_shape", "cwd_spelling") == (
        "unrecognized_shape:cwd_spelling"
    )
    assert reasons.full_code("snapshot", "writable") == "snapshot"


def test_no_message_tells_the_model_to_retry() -> None:
    for message in _all_messages():
        lowered = message.lower()
        assert "retry" not in lowered, message
        assert "try again" not in lowered, message


def test_no_message_leaves_a_placeholder() -> None:
    for message in _all_messages():
        assert "{" not in message and "}" not in message, message


@pytest.mark.parametrize("code", DENY_CODES)
def test_deny_output_shape_and_trailer(code: str) -> None:
    output = reasons.deny_output(code, "2.1.332")
    assert set(output) == {"hookSpecificOutput"}
    specific = output["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse"
    assert specific["permissionDecision"] == "deny"
    reason = specific["permissionDecisionReason"]
    assert reason.startswith("[plangate] ")
    assert reason.endswith(
        f"(code {code}, Claude Code 2.1.332). Run `plangate explain {code}` for what to do."
    )
    assert reasons.text(code) in reason
    if reasons.disposition(code) == reasons.FALLBACK:
        assert reasons.FALLBACK_TEXT in reason
        assert "/plan-ceo-review" in reason and "not --resume" in reason
        assert "/autoplan <plan path>" in reason
    else:
        assert reasons.FALLBACK_TEXT not in reason


@pytest.mark.parametrize("version", [None, ""])
def test_missing_version_says_version_unknown(version: str | None) -> None:
    reason = reasons.deny_reason("cycle", version)
    assert "(code cycle, Claude Code version unknown)." in reason


@pytest.mark.parametrize(
    "code", [c for c in DENY_CODES if reasons.disposition(c) == reasons.TRANSIENT]
)
def test_transient_texts_name_what_to_wait_for(code: str) -> None:
    assert "Wait for" in reasons.text(code)


def test_corrective_texts_name_an_action() -> None:
    verbs = ("Publish", "Run", "Read", "Repeat", "Prepare", "Restore", "Enter", "Finish")
    for code in DENY_CODES:
        if reasons.disposition(code) == reasons.CORRECTIVE:
            assert any(verb in reasons.text(code) for verb in verbs), code


def test_publication_texts_name_the_no_op_and_the_later_message() -> None:
    for code in (reasons.PUBLICATION_MISSING, reasons.PUBLICATION_UNFLUSHED):
        reason = reasons.deny_reason(code, "2.1.332", facts={"phase": "design"})
        assert "only tool call is the Bash no-op `true autoplan-published design`" in reason
        assert "later message" in reason
        generic = reasons.deny_reason(code, "2.1.332")
        assert "`true autoplan-published <phase>`" in generic
        # The guard's refusal carries the due phase as its detail: the text names it.
        named = reasons.deny_reason(code, "2.1.332", "ceo")
        assert "only tool call is the Bash no-op `true autoplan-published ceo`" in named
        assert "<phase>" not in named and "Detail:" not in named


def test_detail_is_shown_and_known_details_explained() -> None:
    assert "Detail: writable." in reasons.deny_reason("snapshot", "2.1.332", "writable")
    reason = reasons.deny_reason("init_failed", "2.1.332", reasons.INIT_FAILED_NOT_JSON)
    assert "without a leading `cd`" in reason
    assert "Detail:" not in reason
    long = reasons.deny_reason("close_stale", "2.1.332", "x" * 5000)
    assert len(long) < 1500


def test_unverified_code_cannot_deny_and_denial_cannot_be_unverified() -> None:
    with pytest.raises(ValueError):
        reasons.deny_output("journal_lag", "2.1.332")
    with pytest.raises(ValueError):
        reasons.unverified_output("publication_missing", "2.1.332")


@pytest.mark.parametrize("code", UNVERIFIED_CODES)
def test_unverified_output(code: str) -> None:
    output = reasons.unverified_output(code, "2.1.332")
    assert set(output) == {"systemMessage", "hookSpecificOutput"}
    specific = output["hookSpecificOutput"]
    assert specific == {
        "hookEventName": "PreToolUse",
        "additionalContext": specific["additionalContext"],
    }
    assert "permissionDecision" not in specific
    notice = output["systemMessage"]
    assert notice.startswith(
        f"[plangate] phase publication was NOT verified for this call ({code})"
    )
    assert "Phase-report enforcement was skipped for this call." in notice
    assert "Claude Code 2.1.332" in notice
    assert f"plangate explain {code}" in notice
    context = specific["additionalContext"]
    assert context.startswith(notice)
    assert "only tool call is the Bash no-op `true autoplan-published <phase>`" in context
    assert "next phase in a later message" in context


def test_unverified_shape_names_the_journal_shape() -> None:
    output = reasons.unverified_output("unrecognized_shape", None, detail="cwd_spelling")
    notice = output["systemMessage"]
    assert "(unrecognized_shape:cwd_spelling)" in notice
    assert "(journal shape unrecognized_shape:cwd_spelling, Claude Code version unknown)" in notice
    assert "project folder spelled differently" in notice
    assert "plangate explain unrecognized_shape:cwd_spelling" in notice
    same = reasons.unverified_output("unrecognized_shape:cwd_spelling", None)
    assert same == output


def test_verified_allow_decision() -> None:
    decision = reasons.Decision.allow(reasons.PATH_PAYLOAD, "2.1.332")
    assert decision.allowed
    assert decision.disposition == reasons.ALLOW
    assert decision.code is None
    assert decision.path == "payload"
    assert decision.output() == {}


def test_unverified_decision_merges_the_shape_detail() -> None:
    decision = reasons.Decision.unverified(
        "unrecognized_shape",
        detail="preamble:system",
        path=reasons.PATH_JOURNAL,
        record_shapes=["system", "attachment:hook_success"],
    )
    assert decision.allowed
    assert decision.code == "unrecognized_shape:preamble:system"
    assert decision.detail is None
    assert decision.disposition == reasons.UNVERIFIED
    assert decision.record_shapes == ("system", "attachment:hook_success")
    output = decision.output()
    assert "permissionDecision" not in output["hookSpecificOutput"]


def test_deny_decision_output() -> None:
    decision = reasons.Decision.deny(
        "agent_key",
        path=reasons.PATH_JOURNAL,
        claude_code_version="2.1.332",
        unknown_keys=["model"],
    )
    assert not decision.allowed
    assert decision.disposition == reasons.FALLBACK
    assert decision.unknown_keys == ("model",)
    assert decision.output() == reasons.deny_output("agent_key", "2.1.332")
    facts = {"phase": "eng"}
    missing = reasons.Decision.deny("publication_missing", claude_code_version="2.1.332")
    assert missing.output(facts) == reasons.deny_output(
        "publication_missing", "2.1.332", None, facts
    )
    assert decision == reasons.Decision.deny(
        "agent_key", path="journal", claude_code_version="2.1.332", unknown_keys=("model",)
    )
    assert "agent_key" in repr(decision)


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        (("deny",), {}),
        (("allow", "publication_missing"), {}),
        (("deny", "journal_lag"), {}),
        (("maybe",), {}),
        (("allow",), {"path": "elsewhere"}),
        (("deny", "nope"), {}),
    ],
)
def test_inconsistent_decisions_are_refused(args: tuple[str, ...], kwargs: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        reasons.Decision(*args, **kwargs)  # type: ignore[arg-type]


def test_names_must_be_a_sequence_of_strings() -> None:
    with pytest.raises(TypeError):
        reasons.Decision.deny("agent_key", unknown_keys="model")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        reasons.Decision.deny("agent_key", unknown_keys=[1])  # type: ignore[list-item]


HEAVY = {"re", "json", "typing", "dataclasses", "enum", "argparse", "subprocess", "asyncio"}


@pytest.mark.parametrize(
    "module", ["plangate.guard", "plangate.decisions.reasons", "plangate.decisions.log"]
)
def test_hook_path_modules_import_nothing_heavy(module: str) -> None:
    script = (
        "import sys\n"
        "before = set(sys.modules)\n"
        f"__import__({module!r})\n"
        "sys.stdout.write(repr(sorted(set(sys.modules) - before)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    loaded: list[str] = eval(result.stdout)  # noqa: S307 - repr of a list of str from our probe
    roots = {name.split(".")[0] for name in loaded}
    assert roots <= set(sys.stdlib_module_names) | {"plangate"}, loaded
    assert not HEAVY & set(loaded), sorted(HEAVY & set(loaded))
