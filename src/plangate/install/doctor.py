"""``plangate doctor``'s report: the checks of :mod:`plangate.install.checks`, one line each
(or as JSON), and whether the installation is healthy."""

from __future__ import annotations

import json
import os
from typing import TextIO

from plangate.install import checks as install_checks
from plangate.install.check import OK, PROBLEM
from plangate.install.skill_bundle import bundled_skills_dir


def doctor(
    *,
    as_json: bool,
    out: TextIO,
    cwd: str | None = None,
    skills_source: str | None = None,
) -> int:
    """Prints the checks; 0 when healthy (warnings allowed), 1 when one found a problem."""
    checks = install_checks.run_checks(
        os.environ,
        cwd or os.getcwd(),
        skills_source if skills_source is not None else bundled_skills_dir(),
    )
    healthy = all(check.status != PROBLEM for check in checks)
    if as_json:
        record = {"healthy": healthy, "checks": [check.as_dict() for check in checks]}
        print(json.dumps(record, indent=2), file=out)
    else:
        width = max(len(check.name) for check in checks)
        for check in checks:
            line = f"{check.status:7} {check.name:{width}}  {check.detail}"
            if check.remedy and check.status != OK:
                line += f" -> {check.remedy}"
            print(line, file=out)
        problems = sum(check.status == PROBLEM for check in checks)
        print("healthy" if healthy else f"{problems} problem(s)", file=out)
    return 0 if healthy else 1
