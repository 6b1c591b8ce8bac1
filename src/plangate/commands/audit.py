"""``plangate audit [SESSION]``: the calls plangate's hooks should have decided and did not.

SESSION is a session id, or the path of its journal; without it, the newest session of the
project (``--project``, default the current folder). The comparison is
:mod:`plangate.audit`'s.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TextIO

from plangate.errors import ExitCodes, PlangateError, UsageError
from plangate.locations import claude_config_dir, project_slug

EXIT_UNGUARDED = 1
EXIT_UNREADABLE = 3
EXIT_CODES = ExitCodes(
    {
        0: "every call a registered plangate hook covers was decided",
        EXIT_UNGUARDED: "at least one call went unguarded (listed)",
        2: "bad usage: a bad flag, no session found for the id or the project",
        EXIT_UNREADABLE: "the journal could not be read (its reason code is printed)",
    },
    usage=2,
    failure=EXIT_UNREADABLE,
)
CWD_SCAN_LINES = 50


class JournalUnreadable(PlangateError):
    """The session's journal was refused by the reader."""


def find_journal(session: str | None, project: str, config_dir: str) -> str:
    """The journal of ``session`` (an id or a path), or the project's newest."""
    projects = os.path.join(config_dir, "projects")
    if session is not None and (os.sep in session or session.endswith(".jsonl")):
        if not os.path.isfile(session):
            raise UsageError(f"no journal at {session}", "give a <session>.jsonl file")
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
        raise UsageError(
            f"no session {session} under {projects}",
            "give the session id `claude -p --output-format json` printed, or the journal path",
        )
    try:
        names = [name for name in os.listdir(folder) if name.endswith(".jsonl")]
    except OSError:
        names = []
    if not names:
        raise UsageError(
            f"no session of {project} under {folder}",
            "run it in the project folder, pass --project DIR, or give SESSION",
        )
    return max((os.path.join(folder, name) for name in names), key=os.path.getmtime)


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
) -> int:
    """Print the audit of one session; the exit code (:data:`EXIT_CODES`)."""
    sink = out if out is not None else sys.stdout
    config = config_dir or claude_config_dir()
    if project is not None and not os.path.isdir(project):
        raise UsageError(f"--project {project} is not a folder", "give the session's folder")
    folder = os.path.abspath(project) if project is not None else os.getcwd()
    path = find_journal(session, folder, config)
    if project is None:
        folder = recorded_cwd(path) or folder
    from plangate import audit
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
            "Compare a Claude Code session's journal with plangate's hook-call trace and "
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
        help="a session id or its journal's path (default: the project's newest session)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--project", metavar="DIR", help="the session's project folder (default: here)"
    )


def run(args: argparse.Namespace) -> int:
    return audit_command(args.session, project=args.project, as_json=args.json)
