"""``plangate gate render RESTORE``: write the Final Approval Gate for the reviewed plan.

The work is in :mod:`plangate.autoplan.gate` (``docs/autoplan-artifacts.md``).
"""

from __future__ import annotations

import argparse
import sys

from plangate.errors import ExitCodes

EXIT_CODES = ExitCodes(
    {
        0: "`gate.json` written: its JSON line is printed",
        1: "refused: the review is not complete, or an artifact it cannot use (the message "
        "says why)",
        2: "bad usage: a bad flag, or no subcommand (its help is printed)",
    },
    usage=2,
    failure=1,
)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("gate", help="the Final Approval Gate")
    parser.set_defaults(gate_help=parser.print_help)
    steps = parser.add_subparsers(dest="gate_command", metavar="SUBCOMMAND")
    render = steps.add_parser("render", help="write gate.json for the reviewed plan")
    render.add_argument("restore")


def run(args: argparse.Namespace) -> int:
    if args.gate_command == "render":
        from plangate.autoplan.gate import gate_render_command

        return gate_render_command(args.restore, sys.stdout)
    args.gate_help()
    return EXIT_CODES.usage
