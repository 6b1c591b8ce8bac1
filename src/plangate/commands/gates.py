"""``plangate gates hook-timeout``: the timeout every gate registration must carry.

Claude Code kills a hook that outlives its registration's ``timeout`` and lets the stop
through without a trace, so a gate must always give up by itself first: its longest deadline
is 20 seconds, and the registration allows 25 (``plangate.hook_registry.HOOK_TIMEOUT_S``).
Setup and ``plangate settings`` write this number; keep your own settings at or above it.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from plangate.errors import ExitCodes
from plangate.hook_registry import HOOK_TIMEOUT_S

EXIT_CODES = ExitCodes(
    {0: "printed", 2: "bad usage: a bad flag, or no subcommand (its help is printed)"},
    usage=2,
)


def hook_timeout(out: TextIO) -> int:
    """Print the hook timeout in seconds (``25``). Returns 0."""
    out.write(f"{HOOK_TIMEOUT_S}\n")
    return 0


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("gates", help="skill gate facts")
    parser.set_defaults(gates_help=parser.print_help)
    facts = parser.add_subparsers(dest="gates_command", metavar="SUBCOMMAND")
    facts.add_parser("hook-timeout", help="the gate hooks' registration timeout (s)")


def run(args: argparse.Namespace) -> int:
    if args.gates_command == "hook-timeout":
        return hook_timeout(sys.stdout)
    args.gates_help()
    return EXIT_CODES.usage
