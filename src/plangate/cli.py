"""The ``plangate`` command line: builds the parser from the command modules and runs one.

Every verb is a module ``plangate.commands.<verb>`` with ``add_parser(subparsers)``,
``run(args) -> int`` and ``EXIT_CODES`` (:class:`~plangate.errors.ExitCodes`, its table in
docs/exit-codes.md). This is the one place where errors become exit codes: a
:class:`~plangate.errors.UsageError` (a bad flag included) exits with the command's usage
code and any other :class:`~plangate.errors.PlangateError` with its failure code, each
printing one line that names the remedy; anything unexpected exits
:data:`~plangate.errors.EXIT_INTERNAL` with its traceback in a crash log (one line on stderr
says where; ``PLANGATE_RAISE=1`` re-raises it instead).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Sequence
from types import ModuleType

from plangate import __version__
from plangate.errors import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    ExitCodes,
    PlangateError,
    UsageError,
)
from plangate.locations import state_root
from plangate.state_root import LOGS, StateRoot

COMMANDS = (
    "journal",
    "demo",
    "setup",
    "doctor",
    "config",
    "explain",
    "log",
    "audit",
    "autoplan",
    "gate",
    "settings",
    "report",
    "gates",
    "contract",
    "approve",
    "run",
    "runs",
    "show",
    "reply",
    "worker",
    "serve",
)
"""The verbs, in the order ``plangate --help`` lists them; each is ``plangate.commands.<verb>``."""

EXIT_CODES = ExitCodes(
    {
        0: "`--help` or `--version` printed",
        2: "bad usage: no command (the help is printed), an unknown command or flag",
    },
    usage=2,
)
"""``plangate`` itself, before a command is known."""

RAISE_ENV = "PLANGATE_RAISE"

GROUPS = """\
install:
  setup              install the skills and register plangate's hooks in Claude Code
                     (--plugin: as a Claude Code plugin)
  doctor             check the installation: hooks, skills, Claude Code, gate switches
  config             read and change plangate's settings (get, set, list)
  audit [SESSION]    the calls of a session plangate's hooks did not decide, every
                     approval and who gave it, every refusal

the phase publication guard (/autoplan):
  explain CODE       what a guard or skill-gate code means and what to do
  log                summarise the guard's decision log
  autoplan           the artifact commands the /autoplan skill runs
  gate render        write the Final Approval Gate

skill gates (/plan-ceo-review, /autoplan):
  settings           print settings JSON for `claude -p --settings` with gates turned on
  report             what the gates did, per session
  gates hook-timeout the timeout setup writes for the gate hooks

workflow contracts (any phased skill):
  contract check F   validate a contract file, with line numbers
  contract list      which contracts apply in a folder, and why
  contract status    each live workflow: its phase, approvals, what comes next
  contract end|reset end a live workflow, or make it start over (a person only)
  approve W P [F]    approve phase P of workflow W (feature F) as the person

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
  demo               real Claude Code sessions on the stand-in model: a journal read, the
                     guard, a skill gate, a workflow contract and a governed run
"""


class _ArgumentError(UsageError):
    """A command line argparse refused; ``command`` is the verb it was parsing, if any."""

    def __init__(self, message: str, remedy: str, command: str | None) -> None:
        super().__init__(message, remedy)
        self.command = command


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        words = self.prog.split()
        raise _ArgumentError(
            message, f"see `{self.prog} --help`", words[1] if len(words) > 1 else None
        )


def command_module(name: str) -> ModuleType:
    """The module of the verb ``name`` (one of :data:`COMMANDS`)."""
    return importlib.import_module(f"plangate.commands.{name}")


def exit_codes(command: str | None) -> ExitCodes:
    """The exit code table of ``command`` (``None``: plangate itself)."""
    if command is None:
        return EXIT_CODES
    codes: ExitCodes = command_module(command).EXIT_CODES
    return codes


def build_parser(verbs: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """plangate's parser: the full parsers of ``verbs`` (default: every command), and for the
    others only their names, so that a command imports what it runs and nothing else (the
    top-level help is :data:`GROUPS`, which needs no command module)."""
    parser = _Parser(
        prog="plangate",
        usage="plangate [-h] [--version] COMMAND ...",
        description="Keeps AI coding agents on their plan.",
        epilog=GROUPS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"plangate {__version__}")
    # The commands are listed once, grouped by what a user wants to do (:data:`GROUPS`).
    subparsers = parser.add_subparsers(
        dest="command",
        metavar="COMMAND",
        parser_class=_Parser,
        help=argparse.SUPPRESS,
        prog="plangate",  # a verb's usage is `plangate VERB …`, whatever the top usage says
    )
    for name in COMMANDS:
        if verbs is None or name in verbs:
            command_module(name).add_parser(subparsers)
        else:
            subparsers.add_parser(name, add_help=False)  # its name only, for the choices
    return parser


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    args, extra = parser.parse_known_args(argv)
    if extra:
        # argparse reports a subcommand's unknown flags from the top parser; name the verb.
        command: str | None = args.command
        prog = "plangate" if command is None else f"plangate {command}"
        raise _ArgumentError(
            f"unrecognized arguments: {' '.join(extra)}", f"see `{prog} --help`", command
        )
    return args


def main(argv: Sequence[str] | None = None) -> int:
    command: str | None = None
    try:
        words = list(sys.argv[1:] if argv is None else argv)
        verb = next((word for word in words if not word.startswith("-")), None)
        parser = build_parser([verb] if verb in COMMANDS else [])
        try:
            args = _parse(parser, argv)
        except SystemExit as done:  # --help, --version
            return done.code if isinstance(done.code, int) else 0
        command = args.command
        if command is None:
            parser.print_help()
            return EXIT_CODES.usage
        status: int = command_module(command).run(args)
        return status
    except UsageError as error:
        if isinstance(error, _ArgumentError):
            command = error.command
        codes = exit_codes(command)
        if codes.usage_label:
            print(f"plangate {command}: {codes.usage_label}: {error}", file=sys.stderr)
        else:
            print(f"plangate: {error}", file=sys.stderr)
        return codes.usage
    except PlangateError as error:
        failure = exit_codes(command).failure
        if failure is None:  # this command promises no such error: a bug
            if os.environ.get(RAISE_ENV):
                raise
            return crashed(command, argv)
        print(f"plangate: {error}", file=sys.stderr)
        return failure
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Exception:
        if os.environ.get(RAISE_ENV):
            raise
        return crashed(command, argv)


def crashed(command: str | None, argv: Sequence[str] | None) -> int:
    """Keep the traceback of the exception being handled in a crash log, say where in one
    line on stderr, and return :data:`~plangate.errors.EXIT_INTERNAL`."""
    kind, error, _tb = sys.exc_info()
    words = list(sys.argv[1:] if argv is None else argv)
    text = (
        f"plangate {__version__} on Python {sys.version.split()[0]}, process {os.getpid()}\n"
        f"command: plangate {' '.join(words)}\n\n{traceback.format_exc()}"
    )
    what = f"{kind.__name__ if kind else 'error'}: {' '.join(str(error).split())}"[:300]
    path, note = write_crash_log(text)
    if path is None:
        sys.stderr.write(text)
        where = f"the traceback is above ({note})"
    else:
        where = f"the traceback is in {path}" + (f" ({note})" if note else "")
    name = f"plangate {command}" if command else "plangate"
    print(
        f"{name}: internal error (a bug): {what}; {where}; please report it with the "
        "command you ran",
        file=sys.stderr,
    )
    return EXIT_INTERNAL


def write_crash_log(text: str) -> tuple[str | None, str]:
    """Write ``text`` to ``<state root>/logs/crash-<UTC time>-<pid>.log`` (0600), or, when
    the state root cannot be written, to the temporary folder; ``(path, note)``, the path
    ``None`` when neither can be written. Never raises."""
    name = f"crash-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{os.getpid()}.log"
    try:
        root = state_root()
    except Exception as error:  # a state root plangate cannot even name
        root, problem = "", f"{type(error).__name__}: {error}"
    else:
        try:
            folder = StateRoot(root).folder(LOGS)
            return folder.create(name, text.encode("utf-8", "replace")), ""
        except Exception as error:
            path = os.path.join(root, LOGS, name)
            problem = f"{path}: {getattr(error, 'strerror', None) or error}"
    fallback, second = _temporary_file(f"plangate-{name}", text)
    if fallback is not None:
        return fallback, f"the state root {root or '?'} cannot be written: {problem}"
    return None, f"no crash log: {problem}; {second}"


def _temporary_file(name: str, text: str) -> tuple[str | None, str]:
    """The crash log in the temporary folder, when the state root cannot take it."""
    folder = tempfile.gettempdir()
    path = os.path.join(folder, name)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as handle:
            handle.write(text)
    except Exception as error:
        return None, f"{path}: {getattr(error, 'strerror', None) or error}"
    return path, ""
