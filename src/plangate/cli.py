"""The ``plangate`` command line: parses arguments and calls one command function.

This is the one place where errors become exit codes: a :class:`~plangate.errors.PlangateError`
prints one line naming its remedy and exits with its code; anything unexpected exits 3 with
the traceback kept out of the way unless ``PLANGATE_RAISE=1``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from plangate import __version__
from plangate.errors import PlangateError, UsageError

Handler = Callable[[argparse.Namespace], int]

GROUPS = """\
journals:
  journal inspect    judge a Claude Code session journal and say why

try it:
  demo               run a short real Claude Code session on the built-in stand-in model
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message, f"see `{self.prog} --help`")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="plangate",
        description="Keeps AI coding agents on their plan.",
        epilog=GROUPS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"plangate {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    journal = commands.add_parser("journal", help="read Claude Code session journals")
    journal_commands = journal.add_subparsers(dest="journal_command", metavar="SUBCOMMAND")
    inspect = journal_commands.add_parser(
        "inspect",
        help="judge a journal: ready, missing or refused with a reason code",
        description=(
            "Judge a Claude Code session journal the way plangate's hooks read it. Without "
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
    inspect.set_defaults(handler=_journal_inspect)

    demo = commands.add_parser(
        "demo", help="run a short real Claude Code session on the built-in stand-in model"
    )
    demo.add_argument("--keep", action="store_true", help="keep the demo's temporary folder")
    demo.set_defaults(handler=_demo)
    return parser


def _journal_inspect(args: argparse.Namespace) -> int:
    from plangate.commands.journal import inspect

    return inspect(
        args.path,
        session_id=args.session,
        project_dir=args.project_dir,
        layout=args.layout,
        config_dir=args.config_dir,
        as_json=args.json,
    )


def _demo(args: argparse.Namespace) -> int:
    from plangate.commands.demo import demo

    return demo(keep=args.keep)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        handler: Handler | None = getattr(args, "handler", None)
        if handler is None:
            parser.print_help()
            return 2 if args.command is None else _subcommand_help(parser, args)
        return handler(args)
    except PlangateError as error:
        print(f"plangate: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        return 130
    except Exception:
        if os.environ.get("PLANGATE_RAISE"):
            raise
        import traceback

        traceback.print_exc()
        print(
            "plangate: unexpected error (above); please report it with the command you ran",
            file=sys.stderr,
        )
        return 3


def _subcommand_help(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    print(
        f"plangate {args.command}: a subcommand is needed; see `plangate {args.command} --help`",
        file=sys.stderr,
    )
    return 2
