"""``plangate demo``: one real, offline Claude Code session on the built-in stand-in model.

The stand-in plays a short script (read a file, run a Bash command, answer, end the turn); the
real Claude Code CLI runs it in a temporary project and writes its journal, which plangate's
journal reader then judges.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import TextIO

from plangate.errors import ExitCodes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from plangate.harness.claude import ClaudeEnv
    from plangate.harness.standin import Script

EXIT_CODES = ExitCodes(
    {
        0: "both sessions went as they should",
        1: "a session did not (what happened is printed), or Claude Code cannot be started",
        2: "bad usage",
    },
    usage=2,
    failure=1,
)

PROMPT = "Read PLAN.md, check how long it is, and tell me what the plan is."
PLAN = "# Plan\n\n1. Write the journal reader.\n2. Write the hooks.\n3. Ship it.\n"
ANSWER = "The plan has three steps: write the journal reader, write the hooks, then ship it."


def demo_script(project_dir: Path) -> Script:
    """The demo's model: Read, then Bash, then a short answer that ends the turn."""
    from plangate.harness.standin import Script, text, tool_use

    return Script(
        main=[
            [
                text("Let me read the plan."),
                tool_use("Read", file_path=str(project_dir / "PLAN.md")),
            ],
            [tool_use("Bash", command="wc -l PLAN.md", description="Count the plan's lines")],
            [text(ANSWER)],
        ]
    )


def demo(
    *,
    keep: bool = False,
    workdir: Path | None = None,
    timeout: float = 120.0,
    out: TextIO | None = None,
) -> int:
    """Runs two real sessions: one whose journal plangate inspects, and one in which the
    phase publication guard holds /autoplan to its phases.

    Returns 0 when both went as they should, else 1. The temporary folder is removed at the
    end unless ``keep`` (or a ``workdir`` of the caller's) is given.
    """
    stream = out or sys.stdout
    own_root = workdir is None
    root = Path(tempfile.mkdtemp(prefix="plangate-demo-")) if workdir is None else workdir
    try:
        journal_ok = _run(root / "journal", timeout, stream, keep or not own_root)
        guard_ok = _guard(root / "guard", timeout, stream)
        return 0 if journal_ok == 0 and guard_ok == 0 else 1
    finally:
        if own_root and not keep:
            shutil.rmtree(root, ignore_errors=True)


def _run(root: Path, timeout: float, out: TextIO, kept: bool) -> int:
    from plangate.claude_cli import claude_version
    from plangate.harness.claude import ClaudeEnv
    from plangate.harness.standin import StandIn

    def say(line: str = "") -> None:
        print(line, file=out, flush=True)

    project = root / "project"
    project.mkdir(parents=True, exist_ok=True)
    (project / "PLAN.md").write_text(PLAN, encoding="utf-8")
    script = demo_script(project.resolve())
    with StandIn(script) as model:
        env = ClaudeEnv.create(root, model, project_dir=project)
        version = claude_version(env.binary)
        say(f"plangate demo: Claude Code {version}, offline, on the stand-in model")
        say(f"  project:  {env.project_dir}")
        result = env.run(PROMPT, allowed_tools=["Read", "Bash"], timeout=timeout)
        requests = len(model.message_requests())
        tools = [call.name for call in model.tool_calls()]

    say(
        f"  session:  {result.session_id or '(none)'}  (exit {result.returncode}, "
        f"{result.duration:.1f}s, {requests} model requests, tools: {', '.join(tools) or '-'})"
    )
    if not result.ok:
        say("  Claude Code did not finish cleanly:")
        say("    " + result.describe().replace("\n", "\n    "))
        return 1
    say(f"  answer:   {result.result_text!r}")
    journal = result.journal_path
    if journal is None or not journal.is_file():
        say(f"  journal:  not found under {result.projects_dir}")
        return 1
    say(f"  journal:  {journal}")
    if not kept:
        say("            (removed at exit; run `plangate demo --keep` to keep it)")
    say(f"            {_record_summary(journal)}")
    return _judge(env, journal, out)


def _record_summary(journal: Path) -> str:
    """Counts the journal's lines by record type (our own reading, independent of plangate's)."""
    counts: Counter[str] = Counter()
    for line in journal.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            counts["<unparsable>"] += 1
            continue
        counts[str(record.get("type")) if isinstance(record, dict) else "<not an object>"] += 1
    total = sum(counts.values())
    parts = ", ".join(f"{n} {kind}" for kind, n in counts.most_common())
    return f"{total} lines: {parts}"


def _judge(env: ClaudeEnv, journal: Path, out: TextIO) -> int:
    """plangate's verdict, reached the way a hook reaches it: layout and owner checked."""
    from plangate.commands.journal import render, summarize
    from plangate.journal import read_journal
    from plangate.journal.owners import project_owners

    verdict = read_journal(
        str(journal),
        owners=project_owners(str(env.project_dir)),
        config_dir=str(env.home / ".claude"),
    )
    print("\nplangate journal inspect --layout says:", file=out)
    out.write(render(summarize(verdict)))
    return 0 if verdict.ready else 1


def _guard(root: Path, timeout: float, out: TextIO) -> int:
    """/autoplan with plangate set up: entering Phase 2 before Phase 1's report is published
    is denied; after publishing, it is allowed."""
    from plangate.harness.autoplan import AutoplanProject, Player, decisions
    from plangate.harness.claude import ClaudeEnv
    from plangate.harness.standin import StandIn

    def say(line: str = "") -> None:
        print(line, file=out, flush=True)

    say("\nplangate demo: the phase publication guard, with `plangate setup` in a fresh HOME")
    player = Player([])
    with StandIn(player) as model:
        root.mkdir(parents=True, exist_ok=True)
        project = AutoplanProject(ClaudeEnv.create(root, model))
        project.setup()
        player.steps = [
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
        result = project.run("/autoplan plan.md", player, timeout=timeout)
    if not result.ok:
        say("  Claude Code did not finish cleanly:")
        say("    " + result.describe().replace("\n", "\n    "))
        return 1
    logged = decisions(project.state_root)
    names = ["enter CEO", "CEO reviewer", "enter Design (too early)", "enter Design"]
    for name, entry in zip(names, logged, strict=False):
        verdict = entry["decision"] + (f" {entry['code']}" if entry["code"] else "")
        say(f"  {name:26} {verdict} (read on the {entry['path']} path)")
    expected = [("allow", None), ("allow", None), ("deny", "publication_missing"), ("allow", None)]
    got = [(entry["decision"], entry["code"]) for entry in logged]
    if got != expected:
        say(f"  unexpected guard decisions: {got}")
        return 1
    say("  the model was told: publish the Phase 1 report in a message whose only tool call is")
    say(
        "  `true autoplan-published ceo`, then enter the next phase (`plangate explain "
        "publication_missing`)"
    )
    return 0


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo_parser = subparsers.add_parser(
        "demo", help="run a short real Claude Code session on the built-in stand-in model"
    )
    demo_parser.add_argument("--keep", action="store_true", help="keep the demo's temporary folder")


def run(args: argparse.Namespace) -> int:
    return demo(keep=args.keep)
