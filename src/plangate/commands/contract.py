"""``plangate contract check FILE`` and ``plangate contract list [--json] [DIR]``.

``check`` parses one contract file and prints where each problem is (``file:line``) with its
remedy. ``list`` shows every contract file found for a project folder (``docs/contracts.md``,
"Where contracts are found"), whether it applies and why.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TextIO

from plangate.contracts import discovery, loader
from plangate.contracts.model import Contract
from plangate.errors import ContractError, ExitCodes, UsageError

EXIT_INVALID = 1
EXIT_CODES = ExitCodes(
    {
        0: "`check`: the contract is valid; `list`: listed (no contract found included)",
        EXIT_INVALID: "`check`: the contract is not valid (each error names its line and the "
        "remedy); `list`: a contract that applies here does not parse",
        2: "bad usage: a bad flag, no subcommand, or a file or folder that does not exist",
    },
    usage=2,
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
    args.contract_help()
    return EXIT_CODES.usage
