"""Real sessions that prove plangate's hooks fire and decide right with a Claude Code CLI.

Each proof plays the model through one short ``claude -p`` session on the stand-in and reads
what plangate recorded (the guard's decision log, ``plangate report``), never what the model
was told alone: a hook that did not start leaves no decision, and that is a failed proof.
``plangate demo`` shows them on a fresh ``plangate setup``; ``plangate doctor --live`` runs them
on the registration the user has.

A proof gets a :class:`Session`: a project of its own and the ``claude -p`` options that load
plangate the way the caller wants (``--settings``, ``--plugin-dir``, environment).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from plangate.decisions.reasons import PUBLICATION_MISSING
from plangate.harness.autoplan import PLAN, AutoplanProject, Player, Step, decisions
from plangate.harness.claude import ClaudeResult
from plangate.harness.standin import tool_use
from plangate.processes import run_bounded

CEO_REVIEW = "# Plan\n\nA review without risks.\n"
CEO_RISKS = """cat >> {plan} <<'EOF'

## Top risks

1. Payment retries can double-charge when the provider times out.
2. The orders schema change has no way back.
EOF"""
CEO_WRITTEN = "The review is written."
CEO_RANKED = "The top risks are ranked in plan.md."
ENG_REPORT = """Engineering findings are applied; each decision has its reason.

Phase 3 complete

Top risks: the index can go stale when notes change outside the app."""
GUARD_EXPECTED = [
    ("allow", None),
    ("allow", None),
    ("deny", PUBLICATION_MISSING),
    ("allow", None),
]
GUARD_NAMES = ["enter CEO", "CEO reviewer", "enter Design (too early)", "enter Design"]


@dataclass
class Session:
    """One proof's project, the player the stand-in was started with, and how its
    ``claude -p`` session loads plangate."""

    project: AutoplanProject
    player: Player
    settings: Mapping[str, Any] | None = None
    extra_args: Sequence[str] = ()
    env: dict[str, str] = field(default_factory=dict)

    def run(
        self, prompt: str, steps: Sequence[Step], timeout: float, tools: Sequence[str] = ()
    ) -> ClaudeResult:
        """One ``claude -p`` session; ``tools``: its allowed tools (default: the project's)."""
        self.player.steps = list(steps)
        options: dict[str, Any] = {"allowed_tools": list(tools)} if tools else {}
        return self.project.run(
            prompt,
            self.player,
            settings=self.settings,
            extra_args=list(self.extra_args),
            env=dict(self.env),
            timeout=timeout,
            **options,
        )


@dataclass
class Proof:
    """What one proof found: ``ok``, one line of detail, and the remedy when it failed."""

    name: str
    ok: bool
    detail: str
    lines: list[str] = field(default_factory=list)  # what happened, call by call


def unfinished(name: str, result: ClaudeResult) -> Proof:
    first = (result.stderr.strip() or result.stdout.strip()).splitlines()[-1:] or [""]
    why = "timed out" if result.timed_out else f"exit {result.returncode}"
    return Proof(name, False, f"Claude Code did not finish the session ({why}): {first[0][:200]}")


def guard_proof(session: Session, timeout: float) -> Proof:
    """/autoplan enters Phase 2 before Phase 1's report is published (denied), then after
    (allowed); the decisions are read from the guard's own log."""
    name = "guard"
    project = session.project
    steps: list[Step] = [
        project.init(),
        project.read_driver("ceo"),
        project.checkpoint("ceo"),
        project.dispatch("ceo"),
        project.prepare_close("ceo"),
        project.read_close("ceo"),
        project.read_driver("design"),  # too early: Phase 1's report is not published
        project.publish("ceo"),
        project.read_driver("design"),
        "Phase 2 (Design) started.",
    ]
    result = session.run("/autoplan plan.md", steps, timeout)
    if not result.ok:
        return unfinished(name, result)
    logged = decisions(project.state_root)
    got = [(entry["decision"], entry["code"]) for entry in logged]
    lines = [
        f"{label:26} {entry['decision']}{' ' + entry['code'] if entry['code'] else ''}"
        f" (read on the {entry['path']} path)"
        for label, entry in zip(GUARD_NAMES, logged, strict=False)
    ]
    if not logged:
        detail = "the guard decided nothing: its PreToolUse hook did not run"
        return Proof(name, False, detail, lines)
    if got != GUARD_EXPECTED:
        return Proof(name, False, f"unexpected guard decisions: {got}", lines)
    detail = "denied Phase 2 entered before Phase 1's report (publication_missing), then allowed it"
    return Proof(name, True, detail, lines)


def ceo_gate_proof(session: Session, timeout: float) -> Proof:
    """/plan-ceo-review stops without ranked top risks (held), then with them (released)."""
    name = "ceo-review gate"
    project = session.project
    plan = project.plan
    steps: list[Step] = [
        tool_use("Write", file_path=str(plan), content=CEO_REVIEW),
        CEO_WRITTEN,  # the first stop: no ranked risks yet
        tool_use("Bash", command=CEO_RISKS.format(plan=plan), description="Add the risks"),
        CEO_RANKED,
    ]
    result = session.run("/plan-ceo-review plan.md", steps, timeout)
    return _gate_outcome(name, session, result, (repr(CEO_WRITTEN), repr(CEO_RANKED)))


def autoplan_gate_proof(session: Session, timeout: float) -> Proof:
    """/autoplan stops after Phase 1 (held: Eng is missing), then after the Final Approval
    Gate is written (released)."""
    name = "autoplan gate"
    project = session.project
    project.plan.write_text(PLAN.replace("Scope: design", "\nScope: none\n"), encoding="utf-8")
    steps: list[Step] = [
        project.init(),
        project.read_driver("ceo"),
        project.checkpoint("ceo"),
        project.dispatch("ceo"),
        project.prepare_close("ceo"),
        project.read_close("ceo"),
        project.publish("ceo"),
        "Phase 1 is published.",  # held: Eng is missing
        project.read_driver("eng"),
        project.checkpoint("eng"),
        project.dispatch("eng"),
        project.prepare_close("eng"),
        project.read_close("eng"),
        project.publish("eng", ENG_REPORT),
        project.read_driver("tasks"),
        project.bash(project.plangate, "gate", "render", str(project.restore)),
        "The Final Approval Gate is ready for you.",
    ]
    result = session.run("/autoplan plan.md", steps, timeout)
    return _gate_outcome(name, session, result, ("'Phase 1 is published.'", "the gate"))


def _gate_outcome(
    name: str, session: Session, result: ClaudeResult, stops: tuple[str, str]
) -> Proof:
    if not result.ok or result.session_id is None:
        return unfinished(name, result)
    counts = report_counts(session.project, result.session_id)
    blocked, released = counts.get("blocked", 0), counts.get("released", 0)
    lines = [
        f"stop after {stops[0]:40} {'held' if blocked else 'let through'}",
        f"stop after {stops[1]:40} {'released' if released else 'not released'}",
    ]
    if not counts.get("fired", 0):
        return Proof(name, False, "the gate never fired: its Stop hook did not run", lines)
    if (blocked, released) != (1, 1):
        return Proof(name, False, f"unexpected gate counts: {counts}", lines)
    return Proof(name, True, "held the first stop, released the finished one", lines)


def report_counts(project: AutoplanProject, session_id: str) -> dict[str, int]:
    """The session's gate counts as ``plangate report --session ID --json`` prints them."""
    done = run_bounded(
        [project.plangate, "report", "--session", session_id, "--json"],
        env=project.environ(),
        timeout=60,
    )
    try:
        (summary,) = json.loads(done.stdout)["sessions"]
        counts: dict[str, int] = summary["counts"]
    except (ValueError, KeyError, TypeError):
        return {}
    return counts


def settings_for_gates(project: AutoplanProject, *flags: str) -> dict[str, Any]:
    """What ``plangate settings FLAGS`` prints, as a ``claude -p`` user passes it."""
    done = run_bounded([project.plangate, "settings", *flags], env=project.environ(), timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"plangate settings {' '.join(flags)} failed: {done.stderr.strip()}")
    value: dict[str, Any] = json.loads(done.stdout)
    return value


ProofFunction = Callable[[Session, float], Proof]
