"""``plangate journal inspect|survey``: judge a journal and explain the verdict to a person.

``inspect`` is here; ``survey`` (every journal in Claude Code's folder) is
:mod:`plangate.journal_survey`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TextIO

from plangate.errors import ExitCodes, UsageError
from plangate.journal.inspection import render, summarize
from plangate.locations import claude_config_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    pass

EXIT_CODES = ExitCodes(
    {
        0: "ready (`survey`: every journal is, or there is none)",
        1: "not ready: missing or refused (`survey`: at least one journal, or the projects "
        "folder cannot be listed)",
        2: "bad usage: a bad flag, no subcommand (its help is printed), no journal at the path, "
        "a `--since` that is not a positive number, no config folder",
    },
    usage=2,
    failure=1,
)


def inspect(
    path: str,
    *,
    session_id: str | None = None,
    project_dir: str | None = None,
    layout: bool = False,
    config_dir: str | None = None,
    as_json: bool = False,
    out: TextIO | None = None,
) -> int:
    """Print the verdict on one journal; 0 when ready, 1 when not, 2 for bad usage."""
    sink = out if out is not None else sys.stdout
    absolute = os.path.abspath(path)
    if not os.path.lexists(absolute):
        raise UsageError(
            f"no journal at {path}",
            "check the path (journals live in ~/.claude/projects/<project>/<session>.jsonl)",
        )
    if os.path.isdir(absolute):
        raise UsageError(f"{path} is a folder", "give the <session>.jsonl file inside it")
    from plangate.journal import read_journal
    from plangate.journal.owners import project_owners

    owners = None
    if project_dir is not None:
        if not os.path.isdir(project_dir):
            raise UsageError(
                f"--project-dir {project_dir} is not a folder",
                "give the folder the session was started in",
            )
        owners = project_owners(os.path.abspath(project_dir))
    config = None
    if layout:
        config = os.path.abspath(config_dir) if config_dir else claude_config_dir()
    if _codex_rollout(absolute):
        from plangate.journal.codex import read_rollout

        verdict = read_rollout(absolute, session_id=session_id)
    else:
        verdict = read_journal(absolute, session_id=session_id, owners=owners, config_dir=config)
    report = summarize(verdict)
    if as_json:
        sink.write(json.dumps(report, indent=2) + "\n")
    else:
        sink.write(render(report))
    return 0 if verdict.ready else 1


def _codex_rollout(path: str) -> bool:
    """Whether ``path`` is Codex CLI's session history (its first line the session's
    ``session_meta``): read by :mod:`plangate.journal.codex`."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline(64 * 1024)
    except OSError:
        return False
    try:
        record = json.loads(first)
    except ValueError:
        return False
    return isinstance(record, dict) and record.get("type") == "session_meta"


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    journal = subparsers.add_parser("journal", help="read Claude Code session journals")
    journal.set_defaults(journal_help=journal.print_help)
    journal_commands = journal.add_subparsers(dest="journal_command", metavar="SUBCOMMAND")
    inspect = journal_commands.add_parser(
        "inspect",
        help="judge a journal: ready, missing or refused with a reason code",
        description=(
            "Judge a Claude Code session journal the way plangate's hooks read it (a Codex "
            "CLI rollout, rollout-<time>-<session>.jsonl, is read as Codex writes it). Without "
            "--layout only the file's content is judged, so a journal anywhere can be "
            "inspected; with --layout the hook's identity checks apply too. Exit 0 when "
            "ready, 1 when not ready, 2 for bad usage."
        ),
    )
    inspect.add_argument("path", help="the journal file (<session>.jsonl)")
    inspect.add_argument("--session", help="session id to read (default: the file's own)")
    inspect.add_argument(
        "--project-dir", help="the project folder the session must belong to (and its worktrees)"
    )
    inspect.add_argument(
        "--layout",
        action="store_true",
        help="also check that the path is <config>/projects/<project>/<session>.jsonl",
    )
    inspect.add_argument(
        "--config-dir",
        help="Claude Code's config folder (default: $CLAUDE_CONFIG_DIR or ~/.claude)",
    )
    inspect.add_argument("--json", action="store_true", help="print one JSON object")
    survey = journal_commands.add_parser(
        "survey",
        help="judge every main-session journal under the Claude Code folder",
        description=(
            "Judge every <config>/projects/<project>/<session>.jsonl the way plangate's hooks "
            "read it (layout checks on), each in a worker process with a time limit, and "
            "summarise by verdict and Claude Code version. Writes nothing. Exit 0 when every "
            "journal is ready (or there is none), 1 when one is not, 2 for bad usage."
        ),
    )
    survey.add_argument(
        "--since", type=float, metavar="DAYS", help="only journals modified in the last DAYS days"
    )
    survey.add_argument(
        "--config-dir",
        help="Claude Code's config folder (default: $CLAUDE_CONFIG_DIR or ~/.claude)",
    )
    survey.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    if args.journal_command == "inspect":
        return inspect(
            args.path,
            session_id=args.session,
            project_dir=args.project_dir,
            layout=args.layout,
            config_dir=args.config_dir,
            as_json=args.json,
        )
    if args.journal_command == "survey":
        from plangate.journal_survey import survey

        return survey(since_days=args.since, as_json=args.json, config_dir=args.config_dir)
    args.journal_help()
    return EXIT_CODES.usage
