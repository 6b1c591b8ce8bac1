"""``plangate doctor``: is this installation one to trust? One line per check.

The checks (:mod:`plangate.install.checks`, printed by :mod:`plangate.install.doctor`): what
registers plangate's hooks (settings files, the plugin) and that nothing registers them twice;
that the hook commands run an interpreter that exists and a plangate of this version, outside
any temporary environment; that the skills Claude Code loads are the package's (with the
plugin, the copy ``claude plugin install`` made too); the Claude Code CLI and its version
against those plangate is verified with; that the state root can be written; the gate
switches as resolved. Exit 0 when healthy (warnings allowed), 1 with each problem naming its
remedy. ``--live`` then proves the hooks fire and decide right in real sessions of the user's
Claude Code (:mod:`plangate.install.live`).
"""

from __future__ import annotations

import argparse
import sys

from plangate.errors import ExitCodes, UsageError
from plangate.install.doctor import doctor

EXIT_CODES = ExitCodes(
    {
        0: "healthy: every check passed (warnings are printed, such as an unverified Claude "
        "Code version)",
        1: "at least one problem: each names its remedy",
        2: "bad usage",
    },
    usage=2,
    failure=1,
)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="check the installation: hooks, skills, Claude Code, state root, gate switches",
        description=(
            "Check plangate's installation as Claude Code will use it. One line per check; "
            "exit 0 when healthy, 1 when a check found a problem (each names its remedy)."
        ),
    )
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")
    parser.add_argument(
        "--live",
        action="store_true",
        help="also run real Claude Code sessions on the stand-in model with your registration "
        "(run it after every Claude Code upgrade)",
    )


def run(args: argparse.Namespace) -> int:
    if args.live and args.json:
        raise UsageError("--live prints lines, not JSON", "give --live or --json, not both")
    status = doctor(as_json=args.json, out=sys.stdout)
    if not args.live:
        return status
    from plangate.install.live import live

    print("", file=sys.stdout)
    return max(status, live(sys.stdout))
