"""``plangate doctor``: is this installation one to trust? One line per check.

The checks (:mod:`plangate.install_checks`): what registers plangate's hooks (settings files,
the plugin) and that nothing registers them twice; that the hook commands run an interpreter
that exists and a plangate of this version, outside any temporary environment; that the
installed skills are the package's; the Claude Code CLI and its version against those
plangate is verified with; that the state root can be written; the gate switches as
resolved. Exit 0 when healthy (warnings allowed), 1 with each problem naming its remedy.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TextIO

from plangate import install_checks
from plangate.errors import ExitCodes
from plangate.skill_bundle import bundled_skills_dir

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


def doctor(
    *,
    as_json: bool,
    out: TextIO,
    cwd: str | None = None,
    skills_source: str | None = None,
) -> int:
    checks = install_checks.run_checks(
        os.environ,
        cwd or os.getcwd(),
        skills_source if skills_source is not None else bundled_skills_dir(),
    )
    healthy = all(check.status != install_checks.PROBLEM for check in checks)
    if as_json:
        record = {"healthy": healthy, "checks": [check.as_dict() for check in checks]}
        print(json.dumps(record, indent=2), file=out)
    else:
        width = max(len(check.name) for check in checks)
        for check in checks:
            line = f"{check.status:7} {check.name:{width}}  {check.detail}"
            if check.remedy and check.status != install_checks.OK:
                line += f" -> {check.remedy}"
            print(line, file=out)
        problems = sum(check.status == install_checks.PROBLEM for check in checks)
        print("healthy" if healthy else f"{problems} problem(s)", file=out)
    return 0 if healthy else 1


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


def run(args: argparse.Namespace) -> int:
    return doctor(as_json=args.json, out=sys.stdout)
