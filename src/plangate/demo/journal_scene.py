"""The demo's first scene: one real Claude Code session whose journal plangate judges.

The stand-in plays a short script (read a file, run a Bash command, answer, end the turn); the
real Claude Code CLI runs it in a temporary project and writes its journal, which plangate's
journal reader then judges as a hook would.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from plangate.demo.say import Say

TYPE_CHECKING = False
if TYPE_CHECKING:
    from plangate.harness.claude import ClaudeEnv
    from plangate.harness.standin import Script

PROMPT = "Read PLAN.md, check how long it is, and tell me what the plan is."
PLAN = "# Plan\n\n1. Write the journal reader.\n2. Write the hooks.\n3. Ship it.\n"
ANSWER = "The plan has three steps: write the journal reader, write the hooks, then ship it."


def demo_script(project_dir: Path) -> Script:
    """The scene's model: Read, then Bash, then a short answer that ends the turn."""
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


def journal_scene(root: Path, timeout: float, say: Say, kept: bool) -> bool:
    """Runs the session and judges its journal; whether it went as it should."""
    from plangate.claude_cli import claude_version
    from plangate.harness.claude import ClaudeEnv
    from plangate.harness.standin import StandIn

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
        return False
    say(f"  answer:   {result.result_text!r}")
    journal = result.journal_path
    if journal is None or not journal.is_file():
        say(f"  journal:  not found under {result.projects_dir}")
        return False
    say(f"  journal:  {journal}")
    if not kept:
        say("            (removed at exit; run `plangate demo --keep` to keep it)")
    say(f"            {_record_summary(journal)}")
    return _judge(env, journal, say)


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


def _judge(env: ClaudeEnv, journal: Path, say: Say) -> bool:
    """plangate's verdict, reached the way a hook reaches it: layout and owner checked."""
    from plangate.journal import read_journal
    from plangate.journal.inspection import render, summarize
    from plangate.journal.owners import project_owners

    verdict = read_journal(
        str(journal),
        owners=project_owners(str(env.project_dir)),
        config_dir=str(env.home / ".claude"),
    )
    say("\nplangate journal inspect --layout says:")
    say(render(summarize(verdict)).rstrip("\n"))
    return verdict.ready
