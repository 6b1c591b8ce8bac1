"""plangate gate render: gate.json, written atomically."""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path

import pytest

from plangate.autoplan.checkpoint import checkpoint
from plangate.autoplan.close import prepare_close
from plangate.autoplan.gate import gate_render, gate_render_command
from plangate.autoplan.init import init
from plangate.errors import PlangateError
from tests.autoplan.conftest import PLAN, artifact_dir, restore_path, tree, write_plan


def _reviewed(repo: Path, reviewers: str, text: str = PLAN) -> tuple[str, str]:
    source = write_plan(repo, text)
    restore = restore_path(repo)
    result = init(source, source, restore)
    phases = ["ceo"] + [p for p in ("design", "dx") if result["scope"][p]] + ["eng"]
    for phase in phases:
        checkpoint(restore, phase, reviewers_dir=reviewers)
        prepare_close(restore, phase)
    return source, restore


def test_gate_render_writes_valid_json(repo: Path, reviewers: str) -> None:
    active, restore = _reviewed(repo, reviewers)
    out = io.StringIO()
    assert gate_render_command(restore, out=out) == 0
    assert out.getvalue().count("\n") == 1
    printed = json.loads(out.getvalue())
    gate_path = artifact_dir(repo) / "gate.json"
    on_disk = json.loads(gate_path.read_text())
    assert printed == on_disk
    assert on_disk["status"] == "awaiting-approval"
    assert on_disk["gatePath"] == str(gate_path)
    active_bytes = Path(active).read_bytes()
    assert on_disk["approvedPlan"] == {
        "path": active,
        "sha256": hashlib.sha256(active_bytes).hexdigest(),
        "bytes": len(active_bytes),
    }
    assert on_disk["restorePath"] == restore
    assert on_disk["scope"]["design"] is False and on_disk["scope"]["dx"] is False
    assert [entry["phase"] for entry in on_disk["phases"]] == ["ceo", "eng"]
    assert [entry["number"] for entry in on_disk["phases"]] == ["1", "3"]
    for entry in on_disk["phases"]:
        assert os.path.isfile(entry["checkpoint"]) and os.path.isfile(entry["closePacket"])
        closed = Path(entry["closePacket"]).read_bytes()
        assert entry["closePacketSha256"] == hashlib.sha256(closed).hexdigest()
    assert on_disk["tasks"] == 2
    # Atomic write: no temporary file is left beside it.
    assert not [name for name in os.listdir(artifact_dir(repo)) if name.endswith(".tmp")]


def test_gate_lists_design_and_dx_when_they_apply(repo: Path, reviewers: str) -> None:
    plan = PLAN.replace("CSV file.\n", "CSV file.\nScope: design, dx\n", 1)
    _, restore = _reviewed(repo, reviewers, plan)
    gate = gate_render(restore)
    assert [entry["phase"] for entry in gate["phases"]] == ["ceo", "design", "dx", "eng"]
    assert [entry["number"] for entry in gate["phases"]] == ["1", "2", "2.5", "3"]


def test_a_failed_write_keeps_the_previous_gate(
    repo: Path, reviewers: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, restore = _reviewed(repo, reviewers)
    gate_render(restore)
    before = tree(repo)

    def fail(source: str, target: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        gate_render(restore)
    assert tree(repo) == before


def test_a_phase_that_was_not_closed_is_refused(repo: Path, reviewers: str) -> None:
    source = write_plan(repo)
    restore = restore_path(repo)
    init(source, source, restore)
    checkpoint(restore, "ceo", reviewers_dir=reviewers)
    prepare_close(restore, "ceo")
    manifest = checkpoint(restore, "eng", reviewers_dir=reviewers)
    before = tree(repo)
    with pytest.raises(PlangateError) as caught:
        gate_render(restore)
    assert str(caught.value) == (
        f"Phase 3 (Eng) was not closed after its latest checkpoint {manifest['checkpoint']} "
        f'(run `plangate autoplan prepare-close "{restore}" eng` and finish the close procedure)'
    )
    assert tree(repo) == before


def test_a_reopened_phase_must_be_closed_again(repo: Path, reviewers: str) -> None:
    _, restore = _reviewed(repo, reviewers)
    checkpoint(restore, "ceo", reviewers_dir=reviewers)
    with pytest.raises(PlangateError) as caught:
        gate_render(restore)
    assert str(caught.value).startswith("Phase 1 (CEO) was not closed after its latest checkpoint")


def test_a_phase_never_run_is_refused(repo: Path, reviewers: str) -> None:
    source = write_plan(repo)
    restore = restore_path(repo)
    init(source, source, restore)
    with pytest.raises(PlangateError) as caught:
        gate_render(restore)
    assert str(caught.value) == (
        f"Phase 1 (CEO) was never run for {restore} (no checkpoint) "
        "(finish that phase first: its checkpoint, review and close)"
    )


def test_a_plan_that_is_not_ready_is_refused(repo: Path, reviewers: str) -> None:
    active, restore = _reviewed(repo, reviewers)
    text = Path(active).read_text().replace("- AC1: A 1,000-row", "- AC2: A 1,000-row")
    Path(active).write_text(text)
    with pytest.raises(PlangateError) as caught:
        gate_render(restore)
    message = str(caught.value)
    assert message.startswith(f"the active plan {active} is not ready for approval: ")
    assert message.endswith(
        "(fix the plan as docs/plan-format.md describes, then render the gate again)"
    )
    assert "\n" not in message
