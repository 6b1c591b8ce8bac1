"""How many hook processes a session starts: with the guard's ``if`` conditions, and without.

Run from the repository root: ``python -m benchmarks.hook_starts [--reads N] [--json]``.

A real ``claude -p`` session on the stand-in model, with plangate set up by ``plangate
setup`` in a fresh HOME, runs /autoplan's init, N ordinary Reads of project files, then
enters the CEO phase, dispatches its reviewer, publishes its report and enters Design: two
phase entries and one dispatch. Every plangate handler's command is prefixed with an append to
a log with its hook event and module, so each process start is counted: the guard's
(PreToolUse, :mod:`plangate.hooks.pre_tool_use`) and every plangate hook's (the workflow
contracts' and the gates' too, as registered by default). The same session runs twice:
with the registration ``plangate setup`` writes (one handler per ``if`` condition,
:data:`GUARD_CONDITIONS`), and with those handlers folded into one that has no ``if`` (the
registration before them). The guard's decisions must be the same in both.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plangate.harness.autoplan import AutoplanProject, Player, Step, decisions
from plangate.harness.claude import ClaudeEnv
from plangate.harness.standin import StandIn, tool_use
from plangate.hook_registry import GUARD_CONDITIONS

GUARD_MODULE = "plangate.hooks.pre_tool_use"


@dataclass
class Starts:
    """What one session did: hook processes started (the guard's, and all of plangate's),
    and the guard's decisions."""

    shape: str
    starts: int
    all_starts: int
    decisions: list[tuple[str, str | None]]
    seconds: float


def _count_starts(settings: Path, log: Path, filtered: bool) -> None:
    data: dict[str, Any] = json.loads(settings.read_text(encoding="utf-8"))
    for event, groups in data["hooks"].items():
        for group in groups:
            handlers = group["hooks"]
            if not filtered:  # the registration before the `if` conditions: one handler
                handlers = [{k: v for k, v in handlers[0].items() if k != "if"}]
            for handler in handlers:
                found = re.search(r"from (\S+) import main", handler["command"])
                module = found.group(1) if found else "?"
                handler["command"] = f"echo '{event} {module}' >> '{log}'; {handler['command']}"
            group["hooks"] = handlers
    settings.write_text(json.dumps(data, indent=2), encoding="utf-8")


def session(root: Path, reads: int, filtered: bool, timeout: float = 180) -> Starts:
    """One session (see the module docstring); ``filtered``: with the ``if`` conditions."""
    player = Player([])
    with StandIn(player) as model:
        project = AutoplanProject(ClaudeEnv.create(root, model))
        project.setup()
        log = root / "starts.log"
        _count_starts(project.env.home / ".claude" / "settings.json", log, filtered)
        notes = []
        for number in range(reads):
            note = project.project / f"note-{number}.md"
            note.write_text(f"note {number}\n", encoding="utf-8")
            notes.append(note)
        steps: list[Step] = [project.init()]
        steps += [tool_use("Read", file_path=str(note)) for note in notes]
        steps += [
            project.read_driver("ceo"),
            project.checkpoint("ceo"),
            project.dispatch("ceo"),
            project.prepare_close("ceo"),
            project.read_close("ceo"),
            project.publish("ceo"),
            project.read_driver("design"),
            "Phase 2 (Design) started.",
        ]
        player.steps = steps
        result = project.run("/autoplan plan.md", player, timeout=timeout)
    if not result.ok:
        raise RuntimeError(result.describe())
    lines = log.read_text().splitlines() if log.exists() else []
    starts = lines.count(f"PreToolUse {GUARD_MODULE}")
    got = [(entry["decision"], entry["code"]) for entry in decisions(project.state_root)]
    shape = f"{len(GUARD_CONDITIONS)} `if` handlers" if filtered else "one handler, no `if`"
    return Starts(shape, starts, len(lines), got, result.duration)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reads", type=int, default=50, help="ordinary Reads in the session")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="plangate-bench-") as folder:
        for filtered in (False, True):
            rows.append(session(Path(folder) / str(filtered), args.reads, filtered))
    if args.json:
        print(json.dumps([row.__dict__ for row in rows], indent=2))
        return
    print(
        f"hook processes in one session: {args.reads} ordinary Reads, 2 phase entries, 1 dispatch"
    )
    print(
        f"{'registration':24} {'guard processes':>15} {'all plangate':>12} {'session s':>10}"
        "  guard decisions"
    )
    for row in rows:
        decided = ", ".join(d + (f" {c}" if c else "") for d, c in row.decisions)
        print(
            f"{row.shape:24} {row.starts:>15} {row.all_starts:>12} {row.seconds:>10.1f}  {decided}"
        )


if __name__ == "__main__":
    main()
