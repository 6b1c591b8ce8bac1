"""``plangate approve <workflow> <phase> [feature]``: a person approves a phase.

The approval is recorded for the project folder (``--project``, default the current folder)
with a digest of the phase's artifacts as they are now: it counts until an artifact changes
(``docs/contracts.md``, "Approvals"). The record and the decision log both get a line.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TextIO

from plangate.contracts import approvals, discovery, loader
from plangate.errors import ExitCodes, UsageError
from plangate.guard import log, reasons

EXIT_CODES = ExitCodes(
    {
        0: "approved: the record is written, or the files of a phase that needs no approval "
        "accepted",
        1: "refused: the phase needs no approval and has no files to accept, or its artifacts "
        "are missing",
        2: "bad usage: an unknown workflow or phase, a bad flag, or no such project folder",
    },
    usage=2,
)
EXIT_REFUSED = 1
ACCEPTED = (
    "The project's files as they are now are accepted for this phase (changes made outside "
    'its editable paths while it ran; docs/contracts.md, "Changes judged by the files").'
)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("approve", help="approve a workflow phase as the person")
    parser.add_argument("workflow")
    parser.add_argument("phase")
    parser.add_argument("feature", nargs="?", default=None)
    parser.add_argument("--project", default=None, help="the project folder (default: here)")


def approve(workflow: str, phase_name: str, feature: str | None, project: str, out: TextIO) -> int:
    if not os.path.isdir(project):
        raise UsageError(f"no project folder at {project}", "give --project DIR")
    project = os.path.abspath(project)
    found = discovery.discover(project, loader.load_file)
    contracts, _ = discovery.applying(found)
    contract = next((c for c in contracts if c.name == workflow), None)
    if contract is None:
        names = ", ".join(c.name for c in contracts) or "none"
        raise UsageError(
            f"no workflow {workflow!r} applies in {project}",
            f"name one of: {names} (`plangate contract list` says why)",
        )
    phase = contract.phase(phase_name)
    if phase is None:
        raise UsageError(
            f"workflow {workflow} has no phase {phase_name!r}",
            f"name one of: {', '.join(p.name for p in contract.phases)}",
        )
    values = {"feature": feature} if feature else {}
    if not phase.approval.required:
        from plangate.contracts import drift

        if drift.rebase(contract, phase, values, project):
            out.write(f"Phase {phase_name} of {workflow} needs no approval. {ACCEPTED}\n")
            return 0
        out.write(f"Phase {phase_name} of {workflow} needs no approval; nothing recorded.\n")
        return EXIT_REFUSED
    files = approvals.artifact_files(contract, phase, values, project)
    missing = [path for path in files if not os.path.exists(path)]
    if missing:
        out.write(f"Not approved: {', '.join(missing)} does not exist yet.\n")
        return EXIT_REFUSED
    approvals.record_approval(
        workflow, phase_name, feature, project, files, now=log.utc_timestamp()
    )
    extra = {"workflow": workflow, "phase": phase_name, "event": "approval", "via": "command"}
    log.append_decision(reasons.Decision.allow(reasons.PATH_NONE), extra=extra)
    shown = ", ".join(os.path.relpath(path, project) for path in files)
    out.write(f"Approved phase {phase_name} of {workflow} ({shown}) as they are now.\n")
    from plangate.contracts import drift

    if drift.rebase(contract, phase, values, project):
        out.write(ACCEPTED + "\n")
    return 0


def run(args: argparse.Namespace) -> int:
    return approve(args.workflow, args.phase, args.feature, args.project or os.getcwd(), sys.stdout)
