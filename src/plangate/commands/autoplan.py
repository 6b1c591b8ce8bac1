"""``plangate autoplan init|checkpoint|prepare-close``: the artifact commands /autoplan runs.

Each prints one JSON line for the skill; the work is in :mod:`plangate.autoplan`
(``docs/autoplan-artifacts.md``).
"""

from __future__ import annotations

import argparse
import sys

from plangate.errors import ExitCodes

PHASES = ("ceo", "design", "dx", "eng")
EXIT_CODES = ExitCodes(
    {
        0: "done: its JSON line is printed",
        1: "refused: a plan or artifact it cannot use (the message says why and what to do)",
        2: "bad usage: a bad flag or path, or no subcommand (its help is printed)",
    },
    usage=2,
    failure=1,
)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("autoplan", help="the artifact commands /autoplan runs")
    parser.set_defaults(autoplan_help=parser.print_help)
    steps = parser.add_subparsers(dest="autoplan_command", metavar="SUBCOMMAND")
    init = steps.add_parser("init", help="make the restore point and the active plan")
    for name in ("source", "active", "restore"):
        init.add_argument(name)
    for name, help_text in (
        ("checkpoint", "freeze the phase's review input and reviewer prompt"),
        ("prepare-close", "write the phase's close packet"),
    ):
        step = steps.add_parser(name, help=help_text)
        step.add_argument("restore")
        step.add_argument("phase", choices=PHASES)


def run(args: argparse.Namespace) -> int:
    if args.autoplan_command == "init":
        from plangate.autoplan.init import init_command

        return init_command(args.source, args.active, args.restore, sys.stdout)
    if args.autoplan_command == "checkpoint":
        from plangate.autoplan.checkpoint import checkpoint_command

        return checkpoint_command(args.restore, args.phase, sys.stdout)
    if args.autoplan_command == "prepare-close":
        from plangate.autoplan.close import prepare_close_command

        return prepare_close_command(args.restore, args.phase, sys.stdout)
    args.autoplan_help()
    return EXIT_CODES.usage
