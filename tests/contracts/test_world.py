"""The contracts read, wait and take the time through the one read seam
(:mod:`plangate.journal.world`): decided in this process on an injected clock, the waits
for a journal Claude Code writes late pass at once and decide deterministically.

The clock (:class:`testkit.clock.FakeClock`) moves only when the hook sleeps on it, by the
poll it asked for; Claude Code's late write happens at the hook's first sleep. So each test
knows exactly how many polls the decision took, and none sleeps for real.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from plangate.contracts import evaluate, stop_gate
from plangate.journal.settle import POLL_SECONDS
from testkit.clock import FakeClock
from tests.contracts.conftest import Project, implementing, stop_payload, through_requirements
from tests.contracts.test_journal_lag import _design_call, _read_of_requirements
from tests.contracts.test_local_commands import _tasks_approved, _typed_then_written
from tests.contracts.test_rules import code_of, log_lines


def _late_write(project: Project, path: Path, written: bytes) -> FakeClock:
    """A clock on which Claude Code writes what the journal builder holds beyond
    ``written`` at the hook's first sleep (one poll after its first read)."""
    later = project.journal.write(project.dir.parent / "later.jsonl").read_bytes()
    assert later.startswith(written)

    def write(clock: FakeClock) -> None:
        if clock.sleeps == 1:
            with path.open("ab") as handle:
                handle.write(later[len(written) :])

    return FakeClock(write)


def test_after_compact_the_first_call_waits_one_poll_for_the_typed_command(
    project: Project,
) -> None:
    """test_local_commands' /compact race on an injected clock: the first read ends on
    ``/compact``'s records (not the person's turn: not caught up), one poll later the typed
    ``/kiro-impl`` and the Write are in, and the implementation's write is allowed."""
    _tasks_approved(project)
    project.journal.manual_compact()
    path = project.save()
    written = path.read_bytes()
    target = project.dir / "src/greet.py"
    payload = _typed_then_written(project, path, "kiro-impl", target)
    clock = _late_write(project, path, written)
    decided = evaluate.pre_tool_use(payload, [str(target)], clock.world())
    assert code_of(dict(decided)) is None, decided
    assert clock.sleeps == 1
    assert abs(clock.elapsed - POLL_SECONDS) < 1e-9


def test_after_compact_a_journal_that_stays_behind_decides_at_the_bound(
    project: Project,
) -> None:
    """Nothing more is written: the read polls until the journal-lag bound on the injected
    clock, then decides on what is written (the phase before: the write is refused)."""
    through_requirements(project)
    project.person("approve requirements")
    project.journal.text("Noted.")
    project.journal.manual_compact()
    path = project.save()
    target = project.dir / "src/extra.py"
    payload = _typed_then_written(project, path, "kiro-spec-design", target)
    clock = FakeClock()
    decided = evaluate.pre_tool_use(payload, [str(target)], clock.world())
    assert code_of(dict(decided)) == "contract_edit_scope", decided
    assert clock.elapsed >= evaluate.JOURNAL_WAIT_SECONDS
    assert clock.elapsed < evaluate.JOURNAL_WAIT_SECONDS + 2 * POLL_SECONDS


def test_a_queued_approval_journaled_after_the_hook_started_counts_after_one_poll(
    project: Project,
) -> None:
    """test_journal_lag's queued-approval race on an injected clock: the refusal for the
    missing approval waits for the call, which comes one poll later with the approval
    before it, and the entry is allowed."""
    through_requirements(project)
    project.person("check the requirements once more")
    _read_of_requirements(project)
    journal = project.save()  # the hook's first look ends on the Read's result
    written = journal.read_bytes()
    project.journal._clock = datetime.now(UTC)
    project.journal.queued_prompt("approve requirements")
    payload = _design_call(project, journal)
    clock = _late_write(project, journal, written)
    decided: dict[str, Any] = dict(evaluate.pre_tool_use(payload, None, clock.world()))
    assert code_of(decided) is None, decided
    assert clock.sleeps == 1
    approvals = [line for line in log_lines(project) if line.get("event") == "approval"]
    assert [(line["phase"], line["via"]) for line in approvals] == [("requirements", "human")]


def test_the_stop_gate_waits_on_the_worlds_clock_for_the_stops_message(
    project: Project,
) -> None:
    """The contracts' stop gate reads the transcript through the world too: the stop's
    message is journaled one poll after the hook started, and the stop is judged on it
    (held: no task is ticked)."""
    implementing(project)
    path = project.save()
    written = path.read_bytes()
    message = "Implemented."
    project.journal.text(message)
    clock = _late_write(project, path, written)
    payload = stop_payload(project, path, message)
    held = stop_gate.decide(payload, "Stop", stderr=io.StringIO(), world=clock.world())
    assert held.get("decision") == "block", held
    assert "2 of 2 checkboxes unticked" in str(held["reason"])
    assert clock.sleeps == 1


def test_the_stop_gate_judges_what_is_written_when_the_message_never_comes(
    project: Project,
) -> None:
    """The stop's message is never journaled: the gate waits its settle budget on the
    injected clock (2 s of the 5 s deadline), and judges the transcript as it is."""
    implementing(project)
    project.journal.text("An older text.")
    path = project.save()
    payload = stop_payload(project, path, "A message never written.")
    clock = FakeClock()
    held = stop_gate.decide(payload, "Stop", stderr=io.StringIO(), world=clock.world())
    assert held.get("decision") == "block", held
    assert 2.0 <= clock.elapsed < 2.0 + 2 * POLL_SECONDS
