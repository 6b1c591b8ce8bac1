"""The skill gates in real Claude Code sessions (the headless smoke).

plangate is set up in a fresh HOME (skills installed, the guard registered); the session gets
the gates through ``--settings`` with the JSON ``plangate settings --ceo-review --autoplan``
prints, as a ``claude -p`` user would. The stand-in plays the model; the real CLI runs the
real Stop and SubagentStop hooks. Each test checks the session record, the trace log, the
transcript's hook attachments, that no ``systemMessage`` marker ever reached a model
request, and ``plangate report --expect armed``.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from plangate.commands.report import report
from plangate.commands.settings import settings_object
from plangate.gates import markers as mk
from plangate.harness.autoplan import PLAN, AutoplanProject, Player, decisions
from plangate.harness.claude import ClaudeEnv, ClaudeResult
from plangate.harness.standin import ModelRequest, Reply, StandIn, canned_side_reply, text, tool_use
from plangate.harness.standin.script import TurnLike, as_reply

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

MakeEnv = Callable[[StandIn], ClaudeEnv]
SESSION_TIMEOUT = 90
GATES = settings_object(True, True)
RANKED_HEREDOC = """cat >> {plan} <<'EOF'

## Top risks

1. Payment retries can double-charge when the provider times out.
2. The orders schema change has no way back.
EOF"""
PHASE_3_REPORT = """Engineering findings are applied; each decision has its reason.

Phase 3 complete

Top risks: the index can go stale when notes change outside the app."""


@pytest.fixture
def project(make_env: MakeEnv) -> Iterator[Callable[[Any], tuple[AutoplanProject, StandIn]]]:
    made: list[StandIn] = []

    def make(script: Any) -> tuple[AutoplanProject, StandIn]:
        model = StandIn(script)
        model.__enter__()
        made.append(model)
        autoplan = AutoplanProject(make_env(model))
        autoplan.setup()
        return autoplan, model

    yield make
    for model in made:
        model.__exit__(None, None, None)


def _ok(result: ClaudeResult) -> Path:
    assert result.ok, result.describe()
    assert result.journal_path is not None and result.session_id is not None
    return result.journal_path


def _record(project: AutoplanProject, session: str) -> dict[str, Any]:
    path = project.state_root / "skill-gates" / session / "record.json"
    assert path.stat().st_mode & 0o777 == 0o600
    value = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(value, dict)
    return value


def _log_events(project: AutoplanProject, hook: str) -> list[str]:
    path = project.state_root / "hooks" / f"{hook}.log"
    return [line.split(" event=")[1].split()[0] for line in path.read_text().splitlines()]


def _hook_attachments(*journals: Path) -> list[dict[str, Any]]:
    """Stop and SubagentStop hook attachments: the session's, then each subagent's."""
    found = []
    lines = [line for journal in journals for line in journal.read_text("utf-8").splitlines()]
    for line in lines:
        record = json.loads(line)
        attachment = record.get("attachment")
        if isinstance(attachment, dict) and attachment.get("hookEvent") in (
            "Stop",
            "SubagentStop",
        ):
            found.append(attachment)
    return found


def _transcript_markers(journals: list[Path]) -> tuple[list[str], list[str]]:
    """(first lines of block reasons, systemMessage marker lines) in the transcripts."""
    blocks, system = [], []
    for attachment in _hook_attachments(*journals):
        if attachment.get("type") == "hook_blocking_error":
            reason = attachment["blockingError"]["blockingError"]
            blocks.append(reason.splitlines()[0])
        elif attachment.get("type") == "hook_system_message":
            system.extend(mk.find_all(attachment["content"]))
    return blocks, system


def _check_common(
    project: AutoplanProject, model: StandIn, result: ClaudeResult, hook: str
) -> dict[str, Any]:
    assert result.journal_path is not None and result.session_id is not None
    record = _record(project, result.session_id)
    blocks, system = _transcript_markers([result.journal_path, *result.subagent_journals])
    recorded = record["markers"]
    # Every marker is in the transcript: blocks as the reason, the rest as systemMessage.
    assert blocks == [line for line in recorded if " blocked " in line]
    assert system == [line for line in recorded if " blocked " not in line]
    assert [mk.parse(line)[1] for line in recorded] == _log_events(project, hook)  # type: ignore[index]
    for line in system:
        assert not model.saw(line), f"a systemMessage marker reached the model: {line}"
    for line in blocks:
        assert model.saw(line), "the block reason must reach the model"
    out = io.StringIO()
    state = str(project.state_root)
    assert report(result.session_id, "armed", True, out, state_root=state) == 0
    assert json.loads(out.getvalue())["code"] is None
    return record


def test_ceo_review_is_blocked_then_released_by_a_heredoc(project: Any) -> None:
    player = Player([])
    autoplan, model = project(player)
    plan = autoplan.plan
    player.steps = [
        tool_use("Write", file_path=str(plan), content="# Plan\n\nA review without risks.\n"),
        "The review is written.",
        tool_use("Bash", command=RANKED_HEREDOC.format(plan=plan), description="Add risks"),
        "The top risks are ranked in plan.md.",
    ]
    result = autoplan.run(
        "/plan-ceo-review plan.md", player, settings=GATES, timeout=SESSION_TIMEOUT
    )
    _ok(result)
    assert result.result_text == "The top risks are ranked in plan.md."
    record = _check_common(autoplan, model, result, "ceo-review-gate")
    gate = record["gates"]["ceo_review_gate"]
    (run,) = gate["runs"].values()
    assert run["blocked"] == 1 and run["fired_at"] and run["released_at"]
    assert run["file"] == str(plan) and run["via"] == "command"
    assert gate["error_count"] == 0 and "autoplan_gate" not in record["gates"]
    events = [mk.parse(line)[1] for line in record["markers"]]  # type: ignore[index]
    assert events == ["skipped", "fired", "blocked", "released"]  # no-head: a fresh repository
    blocked = mk.parse([line for line in record["markers"] if " blocked " in line][0])
    assert blocked is not None and blocked[2]["files"] == "plan.md"
    released = mk.parse(record["markers"][-1])
    assert released is not None and released[2]["file"] == "plan.md"


def test_autoplan_is_blocked_after_phase_1_then_released_after_phase_3(project: Any) -> None:
    player = Player([])
    autoplan, model = project(player)
    autoplan.plan.write_text(PLAN.replace("Scope: design", "\nScope: none\n"), encoding="utf-8")
    player.steps = [
        autoplan.init(),
        autoplan.read_driver("ceo"),
        autoplan.checkpoint("ceo"),
        autoplan.dispatch("ceo"),
        autoplan.prepare_close("ceo"),
        autoplan.read_close("ceo"),
        autoplan.publish("ceo"),
        "Phase 1 is published.",  # blocked: missing=eng
        autoplan.read_driver("eng"),
        autoplan.checkpoint("eng"),
        autoplan.dispatch("eng"),
        autoplan.prepare_close("eng"),
        autoplan.read_close("eng"),
        autoplan.publish("eng", PHASE_3_REPORT),
        autoplan.read_driver("tasks"),
        autoplan.bash(autoplan.plangate, "gate", "render", str(autoplan.restore)),
        "The Final Approval Gate is ready for you.",
    ]
    result = autoplan.run("/autoplan plan.md", player, settings=GATES, timeout=SESSION_TIMEOUT)
    journal = _ok(result)
    assert not player.steps, "the session ended before the script did"
    assert (autoplan.restore.parent / "gate.json").is_file()
    assert all(d["decision"] == "allow" for d in decisions(autoplan.state_root))
    record = _check_common(autoplan, model, result, "autoplan-gate")
    (run,) = record["gates"]["autoplan_gate"]["runs"].values()
    assert run["blocked"] == 1 and run["released_at"] and not run["exhausted_at"]
    assert run["phases"] == ["ceo", "eng"] and run["published"] == ["ceo", "eng"]
    events = [mk.parse(line) for line in record["markers"]]
    assert [e[1] for e in events] == ["fired", "blocked", "released"]  # type: ignore[index]
    blocked = events[1][2]  # type: ignore[index]
    assert blocked["missing"] == "eng" and blocked["published"] == "ceo"
    assert events[2][2]["phases"] == "ceo,eng"  # type: ignore[index]
    reason = next(
        a["blockingError"]["blockingError"]
        for a in _hook_attachments(journal)
        if a.get("type") == "hook_blocking_error"
    )
    assert "sections/eng-phase.md" in reason and "true autoplan-published eng" in reason


class ReviewerScript:
    """The main session dispatches one subagent; the subagent loads /plan-ceo-review by
    reading its SKILL.md, stops without a review (blocked), then writes one (released)."""

    def __init__(self, skill_file: str, output: str) -> None:
        self.main: list[TurnLike] = [
            [
                tool_use(
                    "Agent",
                    description="CEO review",
                    prompt="Do a CEO review of plan.md",
                    subagent_type="general-purpose",
                )
            ],
            "The reviewer finished.",
        ]
        self.sub: list[TurnLike] = [
            [tool_use("Read", file_path=skill_file)],
            "I reviewed the plan.",
            [
                tool_use(
                    "Write",
                    file_path=output,
                    content="# CEO review\n\n## Top risks\n\n1. Nobody owns the rollout.\n",
                )
            ],
            "The ranked risks are in review.md.",
        ]

    def respond(self, request: ModelRequest) -> Reply:
        if request.kind == "side":
            return canned_side_reply(request)
        queue = self.sub if request.kind == "subagent" else self.main
        return as_reply(queue.pop(0) if queue else text("Done."))


def test_a_review_subagent_is_held_by_subagent_stop(project: Any) -> None:
    script = ReviewerScript("", "")
    autoplan, model = project(script)
    skill_file = autoplan.env.home / ".claude" / "skills" / "plan-ceo-review" / "SKILL.md"
    output = autoplan.project / "review.md"
    script.__init__(str(skill_file), str(output))  # type: ignore[misc]
    result = autoplan.run(
        "Get a CEO review of plan.md from a subagent.",
        script,
        settings=GATES,
        timeout=SESSION_TIMEOUT,
    )
    _ok(result)
    assert output.is_file()
    record = _check_common(autoplan, model, result, "ceo-review-gate")
    (run,) = record["gates"]["ceo_review_gate"]["runs"].values()
    assert run["agent"] and run["via"] == "read"
    assert run["blocked"] == 1 and run["released_at"] and run["file"] == str(output)
    events = [mk.parse(line) for line in record["markers"]]
    assert [e[1] for e in events] == ["skipped", "fired", "blocked", "released"]  # type: ignore[index]
    assert events[1][2]["on"] == "SubagentStop"  # type: ignore[index]
    assert events[2][2]["via"] == "subagent-stop"  # type: ignore[index]
    assert list(record["stops"]) == [f"agent:{run['agent']}"]  # the main session never armed
