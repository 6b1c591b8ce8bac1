"""``plangate audit [SESSION]``: the calls plangate's hooks should have decided and did not.

SESSION is a session id, or the path of its journal: a Claude Code session's, or a Codex CLI
session's rollout (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-…-<id>.jsonl``); without it, the
project's (``--project``, default the current folder) newest session of either agent (the
report says which). The comparison is :mod:`plangate.audit`'s (:mod:`plangate.audit_codex`'s
for Codex).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING, TextIO

from plangate.errors import ExitCodes, PlangateError, UsageError
from plangate.locations import claude_config_dir, project_slug

EXIT_UNGUARDED = 1
EXIT_UNREADABLE = 3
EXIT_CODES = ExitCodes(
    {
        0: "every call a registered plangate hook covers was decided",
        EXIT_UNGUARDED: "at least one call went unguarded (listed)",
        2: "bad usage: a bad flag, no session found for the id or the project",
        EXIT_UNREADABLE: "the journal (or Codex rollout) could not be read (its reason code is "
        "printed)",
    },
    usage=2,
    failure=EXIT_UNREADABLE,
)
CWD_SCAN_LINES = 50

if TYPE_CHECKING:
    from plangate.audit import Report


class JournalUnreadable(PlangateError):
    """The session's journal was refused by the reader."""


def find_journal(
    session: str | None, project: str, config_dir: str, codex_home: str | None = None
) -> str:
    """The journal (or Codex rollout) of ``session`` (an id or a path), or the project's
    newest session of either agent (Claude Code's journals; Codex's rollouts under
    ``codex_home`` run in ``project``)."""
    from plangate import audit_codex

    projects = os.path.join(config_dir, "projects")
    if session is not None and (os.sep in session or session.endswith(".jsonl")):
        if not os.path.isfile(session):
            raise UsageError(
                f"no journal at {session}", "give a <session>.jsonl file or a Codex rollout"
            )
        return os.path.abspath(session)
    folder = os.path.join(projects, project_slug(project))
    if session is not None:
        here = os.path.join(folder, session + ".jsonl")
        if os.path.isfile(here):
            return here
        try:
            slugs = sorted(os.listdir(projects))
        except OSError:
            slugs = []
        for slug in slugs:
            there = os.path.join(projects, slug, session + ".jsonl")
            if os.path.isfile(there):
                return there
        rollout = audit_codex.find_rollout(session, codex_home) if codex_home else None
        if rollout is not None:
            return rollout
        where = f"{projects}" + (f" or {codex_home}/sessions" if codex_home else "")
        raise UsageError(
            f"no session {session} under {where}",
            "give the session id `claude -p --output-format json` (or `codex exec`) printed, "
            "or the journal's (rollout's) path",
        )
    try:
        names = [name for name in os.listdir(folder) if name.endswith(".jsonl")]
    except OSError:
        names = []
    newest = max((os.path.join(folder, name) for name in names), key=os.path.getmtime, default=None)
    after = os.path.getmtime(newest) if newest is not None else 0.0
    rollout = audit_codex.newest_rollout(project, codex_home, after) if codex_home else None
    if rollout is not None:
        return rollout
    if newest is None:
        raise UsageError(
            f"no session of {project} under {folder}"
            + (f" or {codex_home}/sessions" if codex_home else ""),
            "run it in the project folder, pass --project DIR, or give SESSION",
        )
    return newest


def recorded_cwd(path: str) -> str | None:
    """The folder the session ran in, as its first records say."""
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            for _, line in zip(range(CWD_SCAN_LINES), stream, strict=False):
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                cwd = record.get("cwd") if isinstance(record, dict) else None
                if isinstance(cwd, str) and os.path.isabs(cwd):
                    return cwd
    except OSError:
        return None
    return None


def audit_command(
    session: str | None,
    *,
    project: str | None = None,
    as_json: bool = False,
    config_dir: str | None = None,
    state_root: str | None = None,
    out: TextIO | None = None,
    codex_home: str | None = None,
) -> int:
    """Print the audit of one session; the exit code (:data:`EXIT_CODES`)."""
    sink = out if out is not None else sys.stdout
    config = config_dir or claude_config_dir()
    from plangate.install.codex_hooks import codex_home as codex_home_of

    home = codex_home or codex_home_of(os.environ)
    if project is not None and not os.path.isdir(project):
        raise UsageError(f"--project {project} is not a folder", "give the session's folder")
    folder = os.path.abspath(project) if project is not None else os.getcwd()
    path = find_journal(session, folder, config, home)
    from plangate import audit, audit_codex

    if audit_codex.is_rollout(path):
        report = _codex(path, folder if project is not None else None, home, state_root)
        return _print(report, as_json, sink)
    if project is None:
        folder = recorded_cwd(path) or folder
    from plangate.journal import read_journal

    # The session the file is named for (the one its hooks were called with); a journal
    # kept elsewhere under another name: its first conversation record's.
    session_id = os.path.basename(path).removesuffix(".jsonl")
    verdict = read_journal(path, session_id=session_id, full=True)
    if not verdict.ready:
        other = read_journal(path, full=True)
        if other.ready and other.session_id:
            verdict, session_id = other, other.session_id
    if not verdict.ready:
        raise JournalUnreadable(
            f"the journal {path} was not read: {verdict.reason} ({verdict.detail})",
            f"run `plangate journal inspect {path}` for why",
        )
    report = audit.audit(
        verdict.events,
        session_id,
        path,
        project=folder,
        state_root=state_root,
        config_dir=config,
        subagents=audit.subagent_events(path, session_id),
    )
    return _print(report, as_json, sink)


def _codex(path: str, project: str | None, codex_home: str, state_root: str | None) -> Report:
    """The audit of a Codex session: its rollout, the places Codex reads hooks from."""
    from plangate import audit_codex
    from plangate.journal.codex import meta, read_rollout

    verdict = read_rollout(path)
    if not verdict.ready or not verdict.session_id:
        raise JournalUnreadable(
            f"the Codex rollout {path} was not read: {verdict.reason} ({verdict.detail})",
            f"run `plangate journal inspect {path}` for why",
        )
    folder = meta(path, "cwd") or project or os.getcwd()  # where Codex read its hooks
    return audit_codex.audit(
        verdict.events,
        verdict.session_id,
        path,
        project=folder,
        state_root=state_root,
        codex_home=codex_home,
    )


def _print(report: Report, as_json: bool, sink: TextIO) -> int:
    from plangate import audit

    if as_json:
        sink.write(json.dumps(report.as_dict(), indent=2) + "\n")
    else:
        sink.write(audit.render(report))
    return 0 if report.clean else EXIT_UNGUARDED


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "audit",
        help="the calls of a session plangate's hooks did not decide",
        description=(
            "Compare a Claude Code session's journal (or a Codex CLI session's rollout) with "
            "plangate's hook-call trace and "
            "decision log: every call a registered plangate hook covers and no hook decided "
            "(the hooks switched off, removed, crashed or timed out), every approval with "
            "who gave it, and every refusal. Exit 0 when every covered call was decided, "
            "1 when one went unguarded, 2 for bad usage, 3 when the journal cannot be read."
        ),
    )
    parser.add_argument(
        "session",
        nargs="?",
        metavar="SESSION",
        help="a session id, its journal's path or a Codex rollout's path (default: the "
        "project's newest session, Claude Code's or Codex's)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--project", metavar="DIR", help="the session's project folder (default: here)"
    )


def run(args: argparse.Namespace) -> int:
    return audit_command(args.session, project=args.project, as_json=args.json)
