"""The /autoplan gate: scope, publication, the Final Approval Gate, ``--ceo-only``."""

from __future__ import annotations

import json

import pytest

from plangate.gates import markers as mk
from plangate.gates.autoplan import END_LINE, noop_phase, progress
from testkit.journals import Journal, use_id
from tests.gates.conftest import Env, bash

PLANGATE = "/opt/venv/bin/plangate"
RESTORE = "/repo/.plangate/tmp/autoplan/plan-restore-1.md"


def _init(journal: Journal, design: bool = False, dx: bool = False, ok: bool = True) -> None:
    result = {
        "activePlan": "/repo/plan.md",
        "restorePath": RESTORE,
        "reused": False,
        "scope": {"design": design, "dx": dx, "reasons": []},
    }
    command = f'{PLANGATE} autoplan init "/repo/plan.md" "/repo/plan.md" "{RESTORE}"'
    bash(journal, command, json.dumps(result) if ok else "plangate: no such plan", is_error=not ok)


def _enter(journal: Journal, env: Env, phase: str) -> None:
    driver = "tasks-aggregator.md" if phase == "tasks" else f"{phase}-phase.md"
    path = str(env.config / "skills" / "autoplan" / "sections" / driver)
    use = journal.tool_use("Read", {"file_path": path})
    journal.read_result(use_id(use), path, ["# driver"])


def _publish(journal: Journal, phase: str, number: str, ok: bool = True) -> None:
    journal.text(
        f"The phase is finished.\n\nPhase {number} complete\n\nTop risks: none.",
        stop_reason="tool_use",
    )
    bash(journal, f"true autoplan-published {phase}", is_error=not ok)


def _session(env: Env, arguments: str = "plan.md") -> Journal:
    journal = env.journal()
    journal.slash_command("autoplan", arguments)
    return journal


def _marker(output: dict[str, object], event: str) -> dict[str, str]:
    text = str(output.get("reason", "")) + "\n" + str(output.get("systemMessage", ""))
    for line in mk.find_all(text):
        parsed = mk.parse(line)
        if parsed is not None and parsed[1] == event:
            return parsed[2]
    raise AssertionError(f"no {event} marker in {output!r}")


def test_no_init_is_missing_scope(env: Env) -> None:
    journal = _session(env)
    journal.text("I looked at the plan.")
    output = env.decide(env.payload(journal))
    blocked = _marker(output, "blocked")
    assert blocked["missing"] == "scope" and blocked["published"] == "none"
    assert "Phase 0" in str(output["reason"]) and "autoplan init" in str(output["reason"])


def test_a_failed_init_does_not_count(env: Env) -> None:
    journal = _session(env)
    _init(journal, ok=False)
    journal.text("Init failed.")
    assert _marker(env.decide(env.payload(journal)), "blocked")["missing"] == "scope"


def test_after_phase_1_the_next_is_eng_and_the_reason_names_its_driver(env: Env) -> None:
    journal = _session(env)
    _init(journal)
    _enter(journal, env, "ceo")
    _publish(journal, "ceo", "1")
    journal.text("Phase 1 is done.")
    output = env.decide(env.payload(journal))
    blocked = _marker(output, "blocked")
    assert blocked["missing"] == "eng" and blocked["published"] == "ceo"
    reason = str(output["reason"])
    assert reason.startswith("PLANGATE_GATE autoplan-gate blocked session=")
    assert "sections/eng-phase.md" in reason and "true autoplan-published eng" in reason
    assert "Applicable phases: ceo, eng (Design: no, DX: no). Published: ceo." in reason
    assert "PLANGATE_AUTOPLAN_GATE" not in reason and "autoplan_gate" not in reason
    run = next(iter(env.record(journal.session_id)["gates"]["autoplan_gate"]["runs"].values()))
    assert run["phases"] == ["ceo", "eng"] and run["published"] == ["ceo"]
    assert run["missing"] == "eng"


def test_design_and_dx_apply_by_scope(env: Env) -> None:
    journal = _session(env)
    _init(journal, design=True, dx=True)
    _publish(journal, "ceo", "1")
    journal.text("Stopping.")
    assert _marker(env.decide(env.payload(journal)), "blocked")["missing"] == "design"
    _publish(journal, "design", "2")
    journal.text("Stopping.")
    assert _marker(env.decide(env.payload(journal)), "blocked")["missing"] == "dx"


def test_a_started_phase_is_told_to_finish_its_close(env: Env) -> None:
    journal = _session(env)
    _init(journal)
    _publish(journal, "ceo", "1")
    _enter(journal, env, "eng")
    journal.text("Stopping inside Eng.")
    reason = str(env.decide(env.payload(journal))["reason"])
    assert "Phase 3 (Eng) started but is not published" in reason
    assert "phase-close.md" in reason


def test_a_noop_without_its_declaration_or_a_failed_noop_does_not_publish(env: Env) -> None:
    journal = _session(env)
    _init(journal)
    bash(journal, "true autoplan-published ceo")  # no report before it
    _publish(journal, "ceo", "1", ok=False)  # a report, but the no-op failed
    bash(journal, "true autoplan-published ceo")  # the report was used up by the failed one
    journal.text("Stopping.")
    assert _marker(env.decide(env.payload(journal)), "blocked")["missing"] == "ceo"


def test_a_hedged_declaration_does_not_publish(env: Env) -> None:
    journal = _session(env)
    _init(journal)
    journal.text("Phase 1 will be complete soon.", stop_reason="tool_use")
    bash(journal, "true autoplan-published ceo")
    journal.text("Stopping.")
    assert _marker(env.decide(env.payload(journal)), "blocked")["missing"] == "ceo"


def test_every_phase_published_then_missing_gate_then_released_by_render(env: Env) -> None:
    journal = _session(env)
    _init(journal)
    _publish(journal, "ceo", "1")
    _publish(journal, "eng", "3")
    journal.text("All phases are published.")
    output = env.decide(env.payload(journal))
    assert _marker(output, "blocked")["missing"] == "gate"
    assert f'gate render "{RESTORE}"' in str(output["reason"])
    bash(journal, f'{PLANGATE} gate render "{RESTORE}"', '{"status": "awaiting-approval"}')
    journal.text("Approve the plan?")
    output = env.decide(env.payload(journal))
    assert "decision" not in output
    released = _marker(output, "released")
    assert released["phases"] == "ceo,eng" and released["blocked"] == "1"


def test_a_written_gate_json_counts_as_the_gate(env: Env) -> None:
    journal = _session(env)
    _init(journal)
    _publish(journal, "ceo", "1")
    _publish(journal, "eng", "3")
    use = journal.tool_use(
        "Write", {"file_path": "/repo/.plangate/tmp/autoplan/gate.json", "content": "{}"}
    )
    journal.tool_result(use_id(use), "File created")
    journal.text("Done.")
    assert _marker(env.decide(env.payload(journal)), "released")["phases"] == "ceo,eng"


def test_ceo_only_needs_phase_1_and_the_end_line(env: Env) -> None:
    journal = _session(env, "plan.md --ceo-only")
    _init(journal)
    journal.text("Reviewing.")
    assert _marker(env.decide(env.payload(journal)), "blocked")["missing"] == "ceo"
    _publish(journal, "ceo", "1")
    journal.text("Verdict: proceed.")
    output = env.decide(env.payload(journal))
    assert _marker(output, "blocked")["missing"] == "end"
    assert END_LINE in str(output["reason"])
    journal.text(f"Verdict: proceed.\nTop risks: none.\n\n{END_LINE}")
    assert _marker(env.decide(env.payload(journal)), "released")["phases"] == "ceo"


def test_the_skill_tool_carries_ceo_only_too(env: Env) -> None:
    journal = env.journal()
    journal.prompt("Run autoplan on plan.md, CEO only.")
    use = journal.tool_use("Skill", {"skill": "autoplan", "args": "plan.md --ceo-only"})
    journal.tool_result(use_id(use), "Launching skill: autoplan")
    _init(journal)
    _publish(journal, "ceo", "1")
    journal.text(f"Verdict: proceed.\n{END_LINE}")
    assert _marker(env.decide(env.payload(journal)), "released")["phases"] == "ceo"


def test_both_gates_block_one_stop_with_both_reasons(env: Env) -> None:
    journal = _session(env)
    journal.slash_command("plan-ceo-review", "plan.md")
    journal.text("Done.")
    output = env.decide(env.payload(journal))
    reason = str(output["reason"])
    assert reason.startswith("PLANGATE_GATE ceo-review-gate blocked")
    assert "\n\nPLANGATE_GATE autoplan-gate blocked" in reason


@pytest.mark.parametrize(
    ("command", "phase"),
    [
        ("true autoplan-published ceo", "ceo"),
        ("  true   autoplan-published dx ", "dx"),
        ("true autoplan-published tasks", None),
        ("true autoplan-published ceo && ls", None),
        ("echo autoplan-published ceo", None),
    ],
)
def test_noop_phase(command: str, phase: str | None) -> None:
    assert noop_phase(command) == phase


def test_progress_reads_scope_and_restore_path() -> None:
    journal = Journal(cwd="/repo")
    journal.slash_command("autoplan", "plan.md")
    _init(journal, design=True)
    import os
    import tempfile

    from plangate.journal import read_journal

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, f"{journal.session_id}.jsonl")
        journal.write(path)
        verdict = read_journal(path, full=True)
    done = progress(verdict.events, "/repo")
    assert done.scope == {"design": True, "dx": False} and done.restore == RESTORE
    assert done.applicable() == ["ceo", "design", "eng"]


def test_three_blocks_then_exhausted_names_the_missing_step(env: Env) -> None:
    """Seed 001: after 3 blocks the next final stop goes through with
    ``exhausted missing=<step>``, ``stop_hook_active`` is no free pass, and the record keeps
    the run's phases and what was published as of that stop."""
    journal = _session(env)
    _init(journal)
    _publish(journal, "ceo", "1")
    for n in (1, 2, 3):
        journal.text(f"Stopping, attempt {n}.")
        blocked = _marker(env.decide(env.payload(journal, stop_hook_active=n > 1)), "blocked")
        assert blocked["missing"] == "eng" and blocked["n"] == str(n)
    journal.text("Stopping, attempt 4.")
    output = env.decide(env.payload(journal, stop_hook_active=True))
    assert "decision" not in output
    exhausted = _marker(output, "exhausted")
    assert exhausted == {
        "session": journal.session_id,
        "skill": "autoplan",
        "missing": "eng",
        "blocked": "3",
    }
    journal.text("Stopping, attempt 5.")
    assert env.decide(env.payload(journal, stop_hook_active=True)) == {}
    run = next(iter(env.record(journal.session_id)["gates"]["autoplan_gate"]["runs"].values()))
    assert run["blocked"] == 3 and run["exhausted_at"] and run["released_at"] is None
    assert run["missing"] == "eng" and run["published"] == ["ceo"]
