"""``plangate setup``: the command line of :mod:`plangate.install.setup`, which documents what
setup owns and the order of its checks."""

from __future__ import annotations

import argparse
import sys

from plangate import agent_session, config
from plangate.errors import ExitCodes, UsageError
from plangate.install.setup import setup

EXIT_CODES = ExitCodes(
    {
        0: "installed, or removed with `--uninstall` (also when nothing needed changing)",
        1: "refused: a file or folder it cannot use or write, such as a settings.json that "
        "is not JSON or a skills folder that is not plangate's; settings hooks and the plugin "
        "both wanted; a plangate running from a temporary environment; a `claude plugin` "
        "command that failed; `--hardened` without bubblewrap or socat, or into a settings "
        "file that would undo it; with `--codex`, a hooks.json or config.toml it cannot read "
        "or add plangate's trust to (the message says what to do)",
        2: "bad usage: a bad flag, a gate switch other than on or off, switches with "
        "`--uninstall`, `--plugin` with `--project` or `--hardened`, `--codex` with any of "
        "`--project`, `--plugin`, `--hardened` or a gate switch",
    },
    usage=2,
    failure=1,
)


def flag_value(option: str, text: str | None) -> bool | None:
    """A gate flag's value for :func:`~plangate.install.setup.setup`: ``None`` when not given,
    else on/off.

    For the CLI: ``--ceo-review-gate`` stores ``"on"``, ``--no-ceo-review-gate`` ``"off"``,
    ``--ceo-review-gate=VALUE`` the value, which must be on or off (any case).
    """
    if text is None:
        return None
    word = text.strip().lower()
    if word in (config.ON, config.OFF):
        return word == config.ON
    raise UsageError(
        f"{option} takes on or off, not {text!r}",
        f"write {option}, --no-{option.removeprefix('--')} or {option}=on|off",
    )


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "setup",
        help="install the skills and register plangate's hooks in Claude Code",
        description=(
            "Install plangate's skills into Claude Code's skills folder and register its hooks "
            "in settings.json. Safe to repeat; other tools' hooks are left alone."
        ),
    )
    parser.add_argument(
        "--project", action="store_true", help="write .claude/settings.json of this folder"
    )
    parser.add_argument("--uninstall", action="store_true", help="remove what plangate added")
    parser.add_argument(
        "--plugin",
        action="store_true",
        help="install plangate as a Claude Code plugin (skills and hooks together) instead",
    )
    parser.add_argument(
        "--codex",
        action="store_true",
        help="register the workflow contract hooks in the Codex CLI ($CODEX_HOME/hooks.json) "
        "and trust them in its config.toml instead",
    )
    for gate, what in (("ceo-review-gate", "/plan-ceo-review"), ("autoplan-gate", "/autoplan")):
        dest = gate.replace("-", "_")
        parser.add_argument(
            f"--{gate}",
            dest=dest,
            nargs="?",
            const="on",
            metavar="on|off",
            help=f"turn the {what} skill gate on (or =off) and save it",
        )
        parser.add_argument(
            f"--no-{gate}",
            dest=dest,
            action="store_const",
            const="off",
            help=f"turn the {what} skill gate off and save it",
        )
    parser.add_argument(
        "--hardened",
        nargs="?",
        const="on",
        metavar="on|off",
        help="also turn on Claude Code's Bash sandbox with plangate's files read-only "
        "(=off takes it out); needs bubblewrap and socat on Linux (docs/sandbox.md)",
    )
    parser.add_argument(
        "--no-hardened",
        dest="hardened",
        action="store_const",
        const="off",
        help="take hardened mode out of the settings file",
    )


def run(args: argparse.Namespace) -> int:
    agent_session.refuse_inside("setup")
    return setup(
        project=args.project,
        uninstall=args.uninstall,
        plugin=args.plugin,
        codex=args.codex,
        ceo_review_gate=flag_value("--ceo-review-gate", args.ceo_review_gate),
        autoplan_gate=flag_value("--autoplan-gate", args.autoplan_gate),
        hardened=flag_value("--hardened", args.hardened),
        out=sys.stdout,
        err=sys.stderr,
    )
