"""A workflow's definition of done, checked at the final stop.

``files`` must exist (a glob: at least one match), every checkbox of each ``all_checked``
file must be ticked, and the ``check`` command must exit 0 (run by ``sh -c`` in the project
folder, within ``check_timeout`` seconds and the gate's own deadline).
"""

from __future__ import annotations

import os

from plangate.contracts import artifacts
from plangate.contracts.templates import absolute, expand, fill

TYPE_CHECKING = False
if TYPE_CHECKING:
    from plangate.contracts.model import Contract


def shortfalls(
    contract: Contract, values: dict[str, str], project: str, budget: float
) -> list[artifacts.Shortfall]:
    """What stands between the workflow and done (empty: done)."""
    done = contract.done
    assert done is not None
    found: list[artifacts.Shortfall] = []

    def files(template: str) -> list[str]:
        pattern = absolute(fill(template, values, contract.paths), project)
        return expand(pattern) or [pattern]

    for template in done.files:
        path = files(template)[0]
        if not os.path.exists(path):
            found.append(artifacts.Shortfall(path, "missing"))
    for template in done.all_checked:
        for path in files(template)[:1]:
            shortfall = artifacts.unticked(path)
            if shortfall is not None:
                found.append(shortfall)
    if done.check is not None and not found:
        failure = run_check(done.check, project, min(float(done.check_timeout), budget))
        if failure is not None:
            found.append(artifacts.Shortfall(done.check, failure))
    return found


def run_check(command: str, project: str, seconds: float) -> str | None:
    """None when ``command`` exits 0, else why not (run as every command plangate waits for:
    :func:`plangate.processes.run_bounded`, which ends whatever it leaves behind)."""
    from plangate.processes import run_bounded

    try:
        result = run_bounded(["/bin/sh", "-c", command], cwd=project, timeout=max(seconds, 0.1))
    except OSError as error:
        return f"could not run: {error.strerror or error}"
    if result.timed_out:
        return f"did not finish within {seconds:g} s"
    if result.returncode != 0:
        tail = result.stdout.strip().splitlines()[-1:] or [""]
        return f"exited {result.returncode}" + (f": {tail[0][:120]}" if tail[0] else "")
    return None
