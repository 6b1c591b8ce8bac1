"""``plangate settings --ceo-review --autoplan``: settings JSON for ``claude -p --settings``.

For headless runs that should not depend on ``~/.claude/settings.json``: the hooks of this
installation (the guard, and the gates' Stop and SubagentStop hooks with their 25 second
timeout) and an ``env`` block that turns each named gate on for that session only::

    plangate settings --ceo-review --autoplan > gates.json
    claude -p "/autoplan plan.md" --settings gates.json

``--contracts`` adds the workflow contract hooks, with the ``if`` conditions of the Read and
Agent phase entries of the contracts known for the working folder (``docs/contracts.md``).

``--hardened`` adds Claude Code's Bash sandbox and the deny rules of hardened mode
(:mod:`plangate.install.hardened`, ``docs/sandbox.md``): given with ``--settings``, they
outrank every project's settings, so no project can turn the sandbox off. The working
folder's ``.plangate/contracts`` is made read-only too (created, empty, when missing).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TextIO

from plangate import hook_registry
from plangate.errors import ExitCodes
from plangate.gates.gate import AUTOPLAN, CEO_REVIEW

USAGE = "SKILL_GATES_USAGE"
EXIT_USAGE = 1
EXIT_CODES = ExitCodes(
    {0: "printed", EXIT_USAGE: f"bad usage (`{USAGE}`): no gate named, or a bad flag"},
    usage=EXIT_USAGE,
    usage_label=USAGE,
)


def settings_object(
    ceo_review: bool,
    autoplan: bool,
    python: str | None = None,
    *,
    contracts: bool = False,
    project: str | None = None,
    hardened: bool = False,
) -> dict[str, object]:
    """The settings for these gates: ``{"hooks": {...}, "env": {...}}``. With ``contracts``
    the Read and Agent entries of the contracts known for ``project`` (default: the working
    folder) get their ``if`` conditions (:mod:`plangate.contracts.entries`); a contract that
    does not parse is named on stderr and registered from its fallback."""
    conditions: tuple[str, ...] = ()
    if contracts:
        from plangate.install.context import registered_conditions

        conditions = registered_conditions(project or os.getcwd(), sys.stderr)
    hooks = hook_registry.hook_settings(
        ceo_review,
        autoplan,
        python or sys.executable,
        workflow_contracts=contracts,
        entry_conditions=conditions,
    )
    env = {
        gate.env: "on"
        for gate, wanted in ((CEO_REVIEW, ceo_review), (AUTOPLAN, autoplan))
        if wanted
    }
    document: dict[str, object] = {"hooks": hooks, "env": env}
    if hardened:
        from plangate.install.hardened import project_contracts, sandbox_settings
        from plangate.locations import claude_config_dir, state_root

        folder, created = project_contracts(project or os.getcwd())
        if created:
            print(f"created {folder} (empty): the sandbox keeps it read-only", file=sys.stderr)

        document.update(
            sandbox_settings(
                state_root(),
                claude_config_dir(),
                hook_registry.package_root(),
                python or sys.executable,
                project=project or os.getcwd(),
            )
        )
    return document


def settings(
    ceo_review: bool,
    autoplan: bool,
    out: TextIO,
    *,
    err: TextIO | None = None,
    python: str | None = None,
    contracts: bool = False,
    hardened: bool = False,
) -> int:
    """Print the settings JSON. 0 when printed; 1 (``SKILL_GATES_USAGE``) when no gate (and
    no ``--hardened``) is named."""
    if not (ceo_review or autoplan or contracts or hardened):
        sink = err if err is not None else sys.stderr
        sink.write(
            f"plangate settings: {USAGE}: name at least one gate (--ceo-review, --autoplan, "
            "--contracts, --hardened)\n"
        )
        return EXIT_USAGE
    document = settings_object(ceo_review, autoplan, python, contracts=contracts, hardened=hardened)
    out.write(json.dumps(document, indent=2) + "\n")
    return 0


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "settings", help="print settings JSON for `claude -p --settings` with gates on"
    )
    parser.add_argument("--ceo-review", action="store_true", help="the /plan-ceo-review gate")
    parser.add_argument("--autoplan", action="store_true", help="the /autoplan gate")
    parser.add_argument(
        "--contracts", action="store_true", help="the workflow contract hooks (docs/contracts.md)"
    )
    parser.add_argument(
        "--hardened",
        action="store_true",
        help="Claude Code's Bash sandbox with plangate's files read-only (docs/sandbox.md)",
    )


def run(args: argparse.Namespace) -> int:
    return settings(
        args.ceo_review,
        args.autoplan,
        sys.stdout,
        err=sys.stderr,
        contracts=args.contracts,
        hardened=args.hardened,
    )
