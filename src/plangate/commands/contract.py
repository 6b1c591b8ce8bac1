"""``plangate contract check FILE``, ``plangate contract list [--json] [DIR]``, and the
workflows' progress: ``contract status [DIR] [--json]``, ``end`` and ``reset``.

``check`` parses one contract file and prints where each problem is (``file:line``) with its
remedy. ``list`` shows every contract file found for a project folder (``docs/contracts.md``,
"Where contracts are found"), whether it applies and why.

``status`` shows each live workflow of a project (:mod:`plangate.contracts.progress`): its
phase, the approvals earlier conversations gave (who, when, on which artifacts, and whether
they still count), what the next phase needs, and the files changed outside the current
phase's editable paths. The model may run it: it only reads. ``end`` and ``reset`` are a
person's (they refuse inside an agent session, as ``approve`` does): ``end`` ends a workflow
instance as a released final stop with its definition of done met does; ``reset`` forgets it
(its progress, the approvals earlier conversations gave, its phases' snapshots), so that the
workflow starts over.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TextIO

from plangate import agent_session
from plangate.contracts import discovery, loader, progress
from plangate.contracts.model import Contract
from plangate.errors import ContractError, ExitCodes, UsageError

EXIT_INVALID = 1
EXIT_CODES = ExitCodes(
    {
        0: "`check`: the contract is valid; `list`, `status`: listed (none found included); "
        "`end`, `reset`: done",
        EXIT_INVALID: "`check`: the contract is not valid (each error names its line and the "
        "remedy); `list`: a contract that applies here does not parse; `end`, `reset`: no "
        "live workflow of that name here, or run inside an agent session (`agent_command`)",
        2: "bad usage: a bad flag, no subcommand, or a file or folder that does not exist",
    },
    usage=2,
    failure=EXIT_INVALID,
)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("contract", help="check and list workflow contracts")
    parser.set_defaults(contract_help=parser.print_help)
    steps = parser.add_subparsers(dest="contract_command", metavar="SUBCOMMAND")
    check = steps.add_parser("check", help="validate a contract file, with line numbers")
    check.add_argument("file")
    listing = steps.add_parser("list", help="which contracts apply in a folder, and why")
    listing.add_argument("folder", nargs="?", default=None, help="default: the current folder")
    listing.add_argument("--json", action="store_true", help="one JSON object")
    status = steps.add_parser(
        "status", help="each live workflow: its phase, approvals and what comes next"
    )
    status.add_argument("folder", nargs="?", default=None, help="default: the current folder")
    status.add_argument("--json", action="store_true", help="one JSON object")
    for verb, what in (
        ("end", "end a live workflow, as its released final stop does (a person only)"),
        ("reset", "forget a workflow's progress so that it starts over (a person only)"),
    ):
        parser = steps.add_parser(verb, help=what)
        parser.add_argument("workflow")
        parser.add_argument("feature", nargs="?", default=None)
        parser.add_argument("--project", default=None, help="the project folder (default: here)")


def check_file(path: str, out: TextIO) -> int:
    if not os.path.isfile(path):
        raise UsageError(f"no contract file at {path}", "give the path of a .toml contract")
    try:
        contract = loader.load_file(path)
    except ContractError as error:
        for each in (error, *error.more):
            out.write(f"{each.where()}: error: {each.message}\n  fix: {each.remedy}\n")
        count = 1 + len(error.more)
        out.write(f"{path}: {count} error{'s' if count > 1 else ''}\n")
        return EXIT_INVALID
    phases = " → ".join(phase.name for phase in contract.phases)
    out.write(
        f"{path}: valid: workflow {contract.name}, {len(contract.phases)} phases ({phases}), "
        f"skills {', '.join(contract.all_skills())}\n"
    )
    for warning in unknown_entries(contract, os.getcwd()):
        out.write(f"{path}: warning: {warning}\n")
    return 0


def unknown_entries(contract: Contract, project: str) -> list[str]:
    """A phase entry naming a skill that exists nowhere: not among the workflow's declared
    ``skills`` and not installed here (the project's or your skills and commands folders).
    Each warning names the closest known name, where one is close."""
    import difflib

    installed: set[str] = set()
    for folder in discovery.skill_folders(project):
        installed.update(_names(folder))
        installed.update(
            name.removesuffix(".md")
            for name in _names(os.path.join(os.path.dirname(folder), "commands"))
            if name.endswith(".md")
        )
    known = sorted(set(contract.skills) | installed)
    warnings: list[str] = []
    for phase in contract.phases:
        for entry in phase.entry:
            bare = entry.split(":", 1)[-1]
            if entry in contract.skills or bare in installed:
                continue
            close = difflib.get_close_matches(bare, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            warnings.append(
                f"phase {phase.name} enters with {entry!r}, a skill that is neither in the "
                f"workflow's skills nor installed here{hint}"
            )
    return warnings


def _names(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


def list_contracts(folder: str, as_json: bool, out: TextIO) -> int:
    if not os.path.isdir(folder):
        raise UsageError(f"no folder at {folder}", "give a project folder")
    project = os.path.abspath(folder)
    found = discovery.discover(project, loader.load_file)
    broken = [item for item in found if item.applies and item.error is not None]
    if as_json:
        document = {"project": project, "contracts": [item.as_dict() for item in found]}
        out.write(json.dumps(document, indent=2) + "\n")
        return EXIT_INVALID if broken else 0
    if not found:
        out.write(f"No workflow contract found for {project}.\n")
        return 0
    for item in found:
        if item.error is not None:
            label = "BROKEN" if item.applies else "broken, not applied"
            out.write(f"{label}  {item.path}\n  {item.why}\n")
            out.write(f"  {item.error.where()}: {item.error.message}\n  fix: {item.error.remedy}\n")
            continue
        assert item.contract is not None
        label = "applies" if item.applies else "not applied"
        out.write(f"{label}  {item.contract.name}  {item.path}\n  {item.why}\n")
    return EXIT_INVALID if broken else 0


def run(args: argparse.Namespace) -> int:
    if args.contract_command == "check":
        return check_file(args.file, sys.stdout)
    if args.contract_command == "list":
        return list_contracts(args.folder or os.getcwd(), args.json, sys.stdout)
    if args.contract_command in ("status", "end", "reset"):
        return run_progress(args)
    args.contract_help()
    return EXIT_CODES.usage


# --- the workflows' progress (status, end, reset) ---------------------------------------

EXIT_NONE = EXIT_INVALID
"""``end``/``reset``: no live workflow matched."""


def _contracts(project: str) -> dict[str, Contract]:
    found = discovery.discover(project, loader.load_file)
    contracts, _ = discovery.applying(found)
    return {contract.name: contract for contract in contracts}


def _project(folder: str | None) -> str:
    project = os.path.abspath(folder or os.getcwd())
    if not os.path.isdir(project):
        raise UsageError(f"no folder at {project}", "give a project folder")
    return project


def describe(item: progress.Progress, contract: Contract | None, project: str) -> dict[str, object]:
    """One live instance as the status shows it."""
    from plangate.contracts import approvals, drift, rules, snapshot
    from plangate.contracts.state import Invocation, Session

    values = item.values
    shown: dict[str, object] = {
        "workflow": item.workflow,
        "values": values,
        "phase": item.phase,
        "begun": item.text("begun"),
        "conversation": item.text("session"),
    }
    given = item.approvals()
    if contract is None:
        shown["problem"] = "no contract of this name applies here now"
        shown["approvals"] = given
        return shown
    listed: list[dict[str, object]] = []
    for approval in given:
        phase = contract.phase(str(approval.get("phase")))
        files = approvals.artifact_files(contract, phase, values, project) if phase else []
        counts = bool(files) and approvals.digest(files) == approval.get("digest")
        listed.append(
            {
                **approval,
                "files": [os.path.relpath(path, project) for path in files],
                "counts": counts,
            }
        )
    shown["approvals"] = listed
    current = contract.phase(item.phase)
    index = contract.index(item.phase) if current is not None else -1
    if 0 <= index < len(contract.phases) - 1:
        following = contract.phases[index + 1]
        session = Session()
        session.contract = contract
        session.values = dict(values)
        session.entered = [Invocation(-1, "", "", "", progress.EARLIER, contract, current)]
        session.carried = given
        ruling = rules.entry(contract, following, session, project, values=values)
        shown["next"] = {
            "phase": following.name,
            "ready": ruling.code is None,
            "code": ruling.code,
            "needs": ruling.detail,
        }
    if current is not None:
        try:
            outside = drift.outside(contract, current, values, project)
        except snapshot.Unlisted as error:
            shown["outside_problem"] = str(error)
        else:
            shown["outside"] = outside if outside is not None else []
    return shown


def status(folder: str | None, as_json: bool, out: TextIO) -> int:
    project = _project(folder)
    contracts = _contracts(project)
    shown = [
        describe(item, contracts.get(item.workflow), project) for item in progress.live(project)
    ]
    if as_json:
        out.write(json.dumps({"project": project, "workflows": shown}, indent=2) + "\n")
        return 0
    if not shown:
        out.write(f"No live workflow in {project}.\n")
        return 0
    for each in shown:
        _write_one(each, out)
    return 0


def _write_one(each: dict[str, object], out: TextIO) -> None:
    values = each["values"]
    assert isinstance(values, dict)
    feature = " ".join(f"{k}={v}" for k, v in sorted(values.items()))
    out.write(f"{each['workflow']}" + (f" ({feature})" if feature else "") + "\n")
    conversation = str(each["conversation"])[:8]
    out.write(
        f"  phase      {each['phase']} (begun {each['begun']}, conversation {conversation})\n"
    )
    if "problem" in each:
        out.write(f"  problem    {each['problem']}\n")
    listed = each.get("approvals")
    assert isinstance(listed, list)
    if not listed:
        out.write("  approvals  none from earlier conversations\n")
    for number, approval in enumerate(listed):
        label = "approvals " if number == 0 else "          "
        files = ", ".join(approval.get("files", []))
        state = "counts" if approval.get("counts") else "stale: changed since"
        out.write(
            f"  {label} {approval.get('phase')}: by {approval.get('via')} at {approval.get('at')}"
            f" on {files or '?'} ({state})\n"
        )
    following = each.get("next")
    if isinstance(following, dict):
        needs = "may start" if following["ready"] else f"needs: {following['needs']}"
        out.write(f"  next       {following['phase']}: {needs}\n")
    if "outside_problem" in each:
        out.write(f"  outside    cannot be listed: {each['outside_problem']}\n")
    elif isinstance(each.get("outside"), list):
        outside = each["outside"]
        assert isinstance(outside, list)
        names = ", ".join(outside) if outside else "none"
        out.write(f"  outside    changed outside {each['phase']}'s editable paths: {names}\n")


def finish(verb: str, workflow: str, feature: str | None, folder: str | None, out: TextIO) -> int:
    """``end`` or ``reset`` the live instances of ``workflow`` (for ``feature``)."""
    project = _project(folder)
    matched = [
        item
        for item in progress.live(project)
        if item.workflow == workflow and (feature is None or feature in item.values.values())
    ]
    if not matched:
        out.write(f"No live workflow {workflow}" + (f" for {feature}" if feature else ""))
        out.write(f" in {project} (`plangate contract status` lists them).\n")
        return EXIT_NONE
    from plangate.contracts import snapshot

    contract = _contracts(project).get(workflow)
    for item in matched:
        if verb == "end":
            progress.end(workflow, item.values, project, progress.BY_PERSON)
        else:
            if contract is not None:
                scope = snapshot.scope_of(item.values)
                for phase in contract.phases:
                    snapshot.forget(project, workflow, scope, phase.name)
            progress.reset(item)
        done = "ended" if verb == "end" else "reset: it starts over"
        out.write(f"Workflow {workflow} {_scope(item.values)}{done}.\n")
    return 0


def _scope(values: dict[str, str]) -> str:
    return f"({', '.join(f'{k}={v}' for k, v in sorted(values.items()))}) " if values else ""


def run_progress(args: argparse.Namespace) -> int:
    import shlex

    if args.contract_command == "status":
        return status(args.folder, args.json, sys.stdout)
    verb = str(args.contract_command)
    words = [args.workflow, *([args.feature] if args.feature else [])]
    if args.project:
        words += ["--project", args.project]
    agent_session.refuse_inside(
        "contract",
        verb,
        again=f"plangate contract {verb} {shlex.join(words)}",
        extra={"workflow": args.workflow},
    )
    return finish(verb, args.workflow, args.feature, args.project, sys.stdout)
