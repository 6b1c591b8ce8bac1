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
from typing import Any, TypeAlias

from plangate import __version__
from plangate.errors import PlangateError, UsageError

Handler = Callable[[argparse.Namespace], int]
Subcommands: TypeAlias = "argparse._SubParsersAction[Any]"

GROUPS = """\
install:
  setup              install the skills and register plangate's hooks in Claude Code
  config             read and change plangate's settings (get, set, list)

the phase publication guard (/autoplan):
  explain CODE       what a guard or skill-gate code means and what to do
  log                summarise the guard's decision log
  autoplan           the artifact commands the /autoplan skill runs
  gate render        write the Final Approval Gate

skill gates (/plan-ceo-review, /autoplan):
  settings           print settings JSON for `claude -p --settings` with gates turned on
  report             what the gates did, per session
  gates hook-timeout the timeout setup writes for the gate hooks

journals:
  journal inspect    judge a Claude Code session journal and say why
  journal survey     judge every session journal in Claude Code's folder, one row each

plan-governed runs:
  run PLAN.md        carry out an approved plan (or --task TEXT) in a worktree of its own
  runs               list the runs
  show RUN           a run's state, attempts, plan versions and why each exists
  reply RUN MESSAGE  answer a run that waits on you
  worker             take runs from the queue (--detach, several machines)
  serve              the run viewer: follow and answer runs in a local web page

try it:
  demo               real Claude Code sessions on the stand-in model: a journal, the guard
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
    survey.set_defaults(handler=_journal_survey)

    demo = commands.add_parser(
        "demo", help="run a short real Claude Code session on the built-in stand-in model"
    )
    demo.add_argument("--keep", action="store_true", help="keep the demo's temporary folder")
    demo.set_defaults(handler=_demo)

    _add_setup(commands)
    _add_config(commands)
    _add_guard(commands)
    _add_gates(commands)
    from plangate.commands.run import add_parsers as add_run_parsers

    add_run_parsers(commands)
    serve = commands.add_parser("serve", help="the run viewer: a local web page on 127.0.0.1")
    serve.add_argument("--host", default="127.0.0.1", help="127.0.0.1, localhost or ::1")
    serve.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    serve.add_argument("--open", action="store_true", help="open it in a browser")
    serve.set_defaults(handler=_serve)
    return parser


def _serve(args: argparse.Namespace) -> int:
    from plangate.commands.serve import serve

    return serve(args.host, args.port, args.open, sys.stdout)


def _add_gates(commands: Subcommands) -> None:
    settings = commands.add_parser(
        "settings", help="print settings JSON for `claude -p --settings` with gates on"
    )
    settings.add_argument("--ceo-review", action="store_true", help="the /plan-ceo-review gate")
    settings.add_argument("--autoplan", action="store_true", help="the /autoplan gate")
    settings.set_defaults(handler=_settings)
    report = commands.add_parser("report", help="what the skill gates did, per session")
    report.add_argument("--session", help="one session id")
    report.add_argument("--expect", metavar="armed", help="exit 2 unless a gate armed")
    report.add_argument("--json", action="store_true", help="print one JSON object")
    report.set_defaults(handler=_report)
    gates = commands.add_parser("gates", help="skill gate facts")
    facts = gates.add_subparsers(dest="gates_command", metavar="SUBCOMMAND")
    timeout = facts.add_parser("hook-timeout", help="the gate hooks' registration timeout (s)")
    timeout.set_defaults(handler=_hook_timeout)


def _settings(args: argparse.Namespace) -> int:
    from plangate.commands.settings import settings

    return settings(args.ceo_review, args.autoplan, sys.stdout, err=sys.stderr)


def _report(args: argparse.Namespace) -> int:
    from plangate.commands.report import report

    return report(args.session, args.expect, args.json, sys.stdout, err=sys.stderr)


def _hook_timeout(args: argparse.Namespace) -> int:
    from plangate.commands.gates import hook_timeout

    return hook_timeout(sys.stdout)


def _add_setup(commands: Subcommands) -> None:
    setup = commands.add_parser(
        "setup",
        help="install the skills and register plangate's hooks in Claude Code",
        description=(
            "Install plangate's skills into Claude Code's skills folder and register its hooks "
            "in settings.json. Safe to repeat; other tools' hooks are left alone."
        ),
    )
    setup.add_argument(
        "--project", action="store_true", help="write .claude/settings.json of this folder"
    )
    setup.add_argument("--uninstall", action="store_true", help="remove what plangate added")
    for gate, what in (("ceo-review-gate", "/plan-ceo-review"), ("autoplan-gate", "/autoplan")):
        dest = gate.replace("-", "_")
        setup.add_argument(
            f"--{gate}",
            dest=dest,
            nargs="?",
            const="on",
            metavar="on|off",
            help=f"turn the {what} skill gate on (or =off) and save it",
        )
        setup.add_argument(
            f"--no-{gate}",
            dest=dest,
            action="store_const",
            const="off",
            help=f"turn the {what} skill gate off and save it",
        )
    setup.set_defaults(handler=_setup)


def _add_config(commands: Subcommands) -> None:
    config = commands.add_parser("config", help="read and change plangate's settings")
    actions = config.add_subparsers(dest="config_command", metavar="SUBCOMMAND")
    get = actions.add_parser("get", help="print a setting's value in effect")
    get.add_argument("key")
    get.set_defaults(handler=lambda a: _config("get", a))
    put = actions.add_parser("set", help="change a setting")
    put.add_argument("key")
    put.add_argument("value")
    put.set_defaults(handler=lambda a: _config("set", a))
    listing = actions.add_parser("list", help="every setting with its value and source")
    listing.set_defaults(handler=lambda a: _config("list", a))


def _add_guard(commands: Subcommands) -> None:
    explain = commands.add_parser("explain", help="what a guard code means and what to do")
    explain.add_argument("code", help="a code from a guard message, e.g. publication_missing")
    explain.set_defaults(handler=_explain)
    log = commands.add_parser("log", help="summarise the guard's decision log")
    log.add_argument("--json", action="store_true", help="print one JSON object")
    log.set_defaults(handler=_log)

    autoplan = commands.add_parser("autoplan", help="the artifact commands /autoplan runs")
    steps = autoplan.add_subparsers(dest="autoplan_command", metavar="SUBCOMMAND")
    init = steps.add_parser("init", help="make the restore point and the active plan")
    for name in ("source", "active", "restore"):
        init.add_argument(name)
    init.set_defaults(handler=_autoplan_init)
    for name, help_text in (
        ("checkpoint", "freeze the phase's review input and reviewer prompt"),
        ("prepare-close", "write the phase's close packet"),
    ):
        step = steps.add_parser(name, help=help_text)
        step.add_argument("restore")
        step.add_argument("phase", choices=("ceo", "design", "dx", "eng"))
        step.set_defaults(handler=_autoplan_step)

    gate = commands.add_parser("gate", help="the Final Approval Gate")
    gate_steps = gate.add_subparsers(dest="gate_command", metavar="SUBCOMMAND")
    render = gate_steps.add_parser("render", help="write gate.json for the reviewed plan")
    render.add_argument("restore")
    render.set_defaults(handler=_gate_render)


def _setup(args: argparse.Namespace) -> int:
    from plangate.commands.setup import flag_value, setup

    return setup(
        project=args.project,
        uninstall=args.uninstall,
        ceo_review_gate=flag_value("--ceo-review-gate", args.ceo_review_gate),
        autoplan_gate=flag_value("--autoplan-gate", args.autoplan_gate),
        out=sys.stdout,
        err=sys.stderr,
    )


def _config(action: str, args: argparse.Namespace) -> int:
    from plangate.commands import config

    if action == "get":
        return config.config_get(args.key, sys.stdout)
    if action == "set":
        return config.config_set(args.key, args.value, sys.stdout)
    return config.config_list(sys.stdout)


def _explain(args: argparse.Namespace) -> int:
    from plangate.commands.explain import explain

    return explain(args.code, sys.stdout, sys.stderr)


def _log(args: argparse.Namespace) -> int:
    from plangate.commands.log import log_summary

    return log_summary(args.json, sys.stdout)


def _autoplan_init(args: argparse.Namespace) -> int:
    from plangate.autoplan.init import init_command

    return init_command(args.source, args.active, args.restore, sys.stdout)


def _autoplan_step(args: argparse.Namespace) -> int:
    if args.autoplan_command == "checkpoint":
        from plangate.autoplan.checkpoint import checkpoint_command

        return checkpoint_command(args.restore, args.phase, sys.stdout)
    from plangate.autoplan.close import prepare_close_command

    return prepare_close_command(args.restore, args.phase, sys.stdout)


def _gate_render(args: argparse.Namespace) -> int:
    from plangate.autoplan.gate import gate_render_command

    return gate_render_command(args.restore, sys.stdout)


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


def _journal_survey(args: argparse.Namespace) -> int:
    from plangate.commands.journal_survey import survey

    return survey(since_days=args.since, as_json=args.json, config_dir=args.config_dir)


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
