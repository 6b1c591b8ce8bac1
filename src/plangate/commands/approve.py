"""``plangate approve <workflow> <phase> [feature]``: a person approves a phase.

Only a person may: inside a coding agent's session the command refuses (``agent_command``,
:func:`plangate.agent_session.refuse_inside`). It shows what is approved (the workflow, the
phase, the feature, the artifact files and their digest) and asks the person to confirm on
their terminal (``/dev/tty``); with no terminal to ask it refuses unless ``--yes`` is given.

The approval is recorded for the project folder (``--project``, default the current folder)
with a digest of the phase's artifacts as they were shown: it counts until an artifact
changes (``docs/contracts.md``, "Approvals"). The record is signed with the installation's
approval key (:mod:`plangate.contracts.approvals`), and the decision log gets a line
``via person-command``.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Callable
from typing import TextIO

from plangate import agent_session
from plangate.contracts import approvals, discovery, loader
from plangate.decisions import log, reasons
from plangate.errors import ExitCodes, UsageError

EXIT_CODES = ExitCodes(
    {
        0: "approved: the record is written, or the files of a phase that needs no approval "
        "accepted",
        1: "refused: run inside a coding agent's session (`agent_command`), no terminal to "
        "confirm on and no `--yes`, the person answered no, the phase needs no approval and "
        "has no files to accept, its artifacts are missing, or the record cannot be written in "
        "the state root",
        2: "bad usage: an unknown workflow or phase, a bad flag, or no such project folder",
    },
    usage=2,
    failure=1,
)
EXIT_REFUSED = 1
TERMINAL = "/dev/tty"
ANSWER_BYTES = 1024

Confirm = Callable[[str], bool]
"""Shown what is approved, says whether the person confirms it."""
ACCEPTED = (
    "The project's files as they are now are accepted for this phase (changes made outside "
    'its editable paths while it ran; docs/contracts.md, "Changes judged by the files").'
)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "approve",
        help="approve a workflow phase as the person",
        description=(
            "Approve a phase of a workflow contract for its artifacts as they are now. Only a "
            "person may: inside a coding agent's session (Claude Code, Codex) it refuses. It "
            "shows the artifact files and their digest and asks you to confirm on your "
            "terminal."
        ),
    )
    parser.add_argument("workflow")
    parser.add_argument("phase")
    parser.add_argument("feature", nargs="?", default=None)
    parser.add_argument("--project", default=None, help="the project folder (default: here)")
    parser.add_argument(
        "--yes",
        action="store_true",
        help="approve without asking (for your own scripts; still refused inside an agent session)",
    )


def summary(
    workflow: str, phase: str, feature: str | None, project: str, files: list[str], digest: str
) -> str:
    """What the person is asked to approve, one fact a line."""
    lines = [
        f"Approve phase {phase} of workflow {workflow}"
        + (f" for feature {feature}" if feature else ""),
        f"  project:   {project}",
        "  artifacts:",
        *(f"    {os.path.relpath(path, project)}" for path in files),
        f"  digest:    sha256:{digest}",
    ]
    return "\n".join(lines) + "\n"


def approve(
    workflow: str,
    phase_name: str,
    feature: str | None,
    project: str,
    out: TextIO,
    *,
    confirm: Confirm | None = None,
) -> int:
    """Record the approval; ``confirm`` (when given) is asked first, with :func:`summary`."""
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

        asked = f"Accept the project's files as they are now for phase {phase_name} of {workflow}"
        if confirm is not None and not confirm(f"{asked}\n  project:   {project}\n"):
            out.write("Not accepted: nothing changed.\n")
            return EXIT_REFUSED
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
    digest = approvals.digest(files)  # the record holds the digest the person was shown
    shown = summary(workflow, phase_name, feature, project, files, digest)
    if confirm is not None and not confirm(shown):
        out.write("Not approved: nothing recorded.\n")
        return EXIT_REFUSED
    approvals.record_approval(
        workflow, phase_name, feature, project, files, now=log.utc_timestamp(), digest_hex=digest
    )
    extra = {
        "workflow": workflow,
        "phase": phase_name,
        "event": "approval",
        "via": approvals.COMMAND,
    }
    log.append_decision(reasons.Decision.allow(reasons.PATH_NONE), extra=extra)
    named = ", ".join(os.path.relpath(path, project) for path in files)
    out.write(f"Approved phase {phase_name} of {workflow} ({named}) as they are now.\n")
    from plangate.contracts import drift

    if drift.rebase(contract, phase, values, project):
        out.write(ACCEPTED + "\n")
    return 0


class NoTerminal(Exception):
    """``/dev/tty`` cannot be opened: no person's terminal to ask on."""


def ask_on_terminal(shown: str, terminal: str = TERMINAL) -> bool:
    """Show ``shown`` on the controlling terminal and read the answer there: True for y or
    yes (any case). Raises :class:`NoTerminal` when there is no terminal."""
    try:
        fd = os.open(terminal, os.O_RDWR | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as error:
        raise NoTerminal(error.strerror or str(error)) from error
    try:
        os.write(fd, (shown + "Approve these files as they are now? [y/N] ").encode("utf-8"))
        answer = b""
        while b"\n" not in answer and len(answer) < ANSWER_BYTES:
            chunk = os.read(fd, ANSWER_BYTES)
            if not chunk:
                break
            answer += chunk
    finally:
        os.close(fd)
    return answer.split(b"\n", 1)[0].strip().lower() in (b"y", b"yes")


def run(args: argparse.Namespace) -> int:
    words = [args.workflow, args.phase, *([args.feature] if args.feature else [])]
    if args.project:
        words += ["--project", args.project]
    agent_session.refuse_inside(
        "approve",
        again=f"plangate approve {shlex.join(words)}",
        extra={"workflow": args.workflow, "phase": args.phase},
    )
    project = args.project or os.getcwd()
    if args.yes:
        return approve(args.workflow, args.phase, args.feature, project, sys.stdout)
    try:
        return approve(
            args.workflow, args.phase, args.feature, project, sys.stdout, confirm=ask_on_terminal
        )
    except NoTerminal as error:
        print(
            f"plangate: not approved: there is no terminal to ask you on ({TERMINAL}: {error}) "
            "(run it in your own terminal and answer y; a script of yours may add --yes)",
            file=sys.stderr,
        )
        return EXIT_REFUSED
