"""``plangate journal survey``: the verdict plangate's hooks reach on every main-session journal.

It reads each ``<config>/projects/<slug>/<session>.jsonl`` (not ``<session>/subagents/…`` nor
``agent-*.jsonl``: subagents') with :func:`plangate.journal.read_journal` as a hook does, the
layout identity checks on (``config_dir``; the session is the file name's) but no
``index_dir``: the survey writes nothing, not even a journal index.

The time bound: each journal is read in a worker process started as ``plangate setup``
registers hooks (this interpreter, ``-S -c``, plangate's folder on the path), in a process
group of its own that is killed after :data:`FILE_SECONDS`: verdict ``error``/``timeout``.
Only a process bounds whatever the reader does (a thread cannot be stopped, a signal cannot
cut one long C-level parse), and anything a worker dies of becomes ``error``/``reader_failed``,
never a traceback. Start-up is about 20 ms a file and :data:`JOBS` workers run at once, so
hundreds of journals take seconds; the worst case is ``files / JOBS × FILE_SECONDS``.

Exit 0 when every journal is ``ready``, 1 when one is not; no journal at all is exit 0
(``no journals under …``: nothing was misread); a missing config folder or a ``--since`` that
is not a positive number of days is bad usage (exit 2).
"""

from __future__ import annotations

import json
import math
import os
import stat
import subprocess
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TextIO

from plangate.errors import PlangateError, UsageError
from plangate.hook_registry import package_root
from plangate.journal.codes import base_code
from plangate.locations import claude_config_dir
from plangate.processes import kill_group, run_bounded

FILE_SECONDS = 10.0
"""A journal not judged within this time (process start included) is ``timeout``."""
JOBS = max(1, min(8, os.cpu_count() or 1))
TIMEOUT, READER_FAILED, UNREADABLE = "timeout", "reader_failed", "unreadable"  # codes of its own
NEXT_STEP = (
    "attach the output of `plangate journal survey --json` to a report; "
    "`plangate journal inspect --layout PATH` explains one journal"
)
WORKER = """\
import sys
sys.path.insert(0, sys.argv[1])
from plangate import jsonio
from plangate.journal.reader import read_journal
v = read_journal(sys.argv[2], session_id=sys.argv[3], config_dir=sys.argv[4])
sys.stdout.write(jsonio.dumps({"status": v.status, "reason": v.reason, "detail": v.detail,
    "version": v.claude_code_version}) + "\\n")
"""


def survey(
    *,
    since_days: float | None = None,
    as_json: bool = False,
    config_dir: str | None = None,
    out: TextIO | None = None,
    file_seconds: float = FILE_SECONDS,
) -> int:
    """Print the survey; 0 when every journal is ready (or there is none), 1 when not."""
    report = collect(since_days=since_days, config_dir=config_dir, file_seconds=file_seconds)
    text = json.dumps(report, indent=2) + "\n" if as_json else render(report)
    (out if out is not None else sys.stdout).write(text)
    return 0 if report["ready"] else 1


def collect(
    *,
    since_days: float | None = None,
    config_dir: str | None = None,
    file_seconds: float = FILE_SECONDS,
) -> dict[str, Any]:
    """The survey as one JSON-ready object: ``journals``, ``summary``, ``ready``."""
    if since_days is not None and not (math.isfinite(since_days) and since_days > 0):
        raise UsageError(
            f"--since {since_days:g} is not a positive number of days", "e.g. --since 7"
        )
    config = os.path.abspath(config_dir) if config_dir else claude_config_dir()
    if not os.path.isdir(config):
        raise UsageError(
            f"no Claude Code config folder at {config}",
            "pass --config-dir or set CLAUDE_CONFIG_DIR to the folder that holds projects/",
        )
    cutoff = None if since_days is None else time.time() - since_days * 86400
    found, unreadable = _journals(os.path.join(config, "projects"), cutoff)
    rows = _Workers(config, file_seconds).read_all(found) + unreadable
    rows.sort(key=lambda row: (row["project"], row["session_id"]))
    return {
        "config_dir": config,
        "since_days": since_days,
        "journals": rows,
        "summary": _summary(rows),
        "ready": all(row["status"] == "ready" for row in rows),
    }


Journal = tuple[str, str, str, int]  # path, project slug, session id, bytes
Judged = tuple[str, str | None, str, str | None]  # status, reason, detail, Claude Code version


def _journals(projects: str, cutoff: float | None) -> tuple[list[Journal], list[dict[str, Any]]]:
    """Each main-session journal, and a row for each project folder that cannot be listed."""
    found: list[Journal] = []
    unreadable: list[dict[str, Any]] = []
    try:
        folders = sorted(entry.name for entry in os.scandir(projects) if entry.is_dir())
    except FileNotFoundError:
        return found, unreadable
    except OSError as error:
        raise PlangateError(f"cannot list {projects} ({error.strerror})") from None
    for project in folders:
        folder = os.path.join(projects, project)
        try:
            for entry in sorted(os.scandir(folder), key=lambda entry: entry.name):
                if not entry.name.endswith(".jsonl") or entry.name.startswith("agent-"):
                    continue
                try:
                    info = entry.stat(follow_symlinks=False)
                except FileNotFoundError:  # removed since the listing
                    continue
                if not stat.S_ISDIR(info.st_mode) and (cutoff is None or info.st_mtime >= cutoff):
                    found.append((entry.path, project, entry.name[: -len(".jsonl")], info.st_size))
        except OSError as error:
            why = f"the project folder cannot be listed ({error.strerror})"
            unreadable.append(_row((folder, project, "", 0), ("error", UNREADABLE, why, None), 0))
    return found, unreadable


def _row(journal: Journal, judged: Judged, seconds: float) -> dict[str, Any]:
    path, project, session, size = journal
    status, reason, detail, version = judged
    return {
        "path": path,
        "project": project,
        "session_id": session,
        "bytes": size,
        "claude_code_version": version,
        "status": status,
        "reason": reason,
        "detail": detail,
        "seconds": round(seconds, 3),
    }


class _Workers:
    """Reads journals in worker processes; an interrupted survey leaves none behind."""

    def __init__(self, config: str, file_seconds: float) -> None:
        self.config = config
        self.file_seconds = file_seconds
        self.root = package_root()
        self.command = [sys.executable, "-S", "-c", WORKER, self.root]  # + path, session, config
        self.lock = threading.Lock()
        self.live: set[subprocess.Popen[bytes]] = set()
        self.stopping = False

    def read_all(self, found: list[Journal]) -> list[dict[str, Any]]:
        with ThreadPoolExecutor(max_workers=JOBS) as pool:
            futures = [pool.submit(self.read, journal) for journal in found]
            try:
                return [future.result() for future in futures]
            except BaseException:  # KeyboardInterrupt: end the workers, start no more
                with self.lock:
                    self.stopping = True
                    for future in futures:
                        future.cancel()
                    for process in self.live:
                        kill_group(process)
                raise

    def _started(self, process: subprocess.Popen[bytes]) -> None:
        with self.lock:
            self.live.add(process)
            if self.stopping:  # interrupted while it started: end it at once
                kill_group(process)

    def read(self, journal: Journal) -> dict[str, Any]:
        started = time.monotonic()
        return _row(journal, self._judge(journal), time.monotonic() - started)

    def _judge(self, journal: Journal) -> Judged:
        with self.lock:
            if self.stopping:
                return "error", READER_FAILED, "the survey was interrupted", None
        started: list[subprocess.Popen[bytes]] = []

        def on_start(process: subprocess.Popen[bytes]) -> None:
            started.append(process)
            self._started(process)

        began = time.monotonic()
        try:
            done = run_bounded(
                [*self.command, journal[0], journal[2], self.config],
                cwd=self.root,  # `-c` puts its folder on sys.path: plangate's, nothing else
                timeout=self.file_seconds,
                on_start=on_start,
            )
        except OSError as error:
            return "error", READER_FAILED, f"the worker did not start ({error.strerror})", None
        finally:
            with self.lock:
                self.live.difference_update(started)
        # Over the budget is over the budget, also when the exit was only seen after it (a
        # busy machine can keep this thread from looking in time).
        if done.timed_out or time.monotonic() - began > self.file_seconds:
            return "error", TIMEOUT, f"not judged within {self.file_seconds:g} s; skipped", None
        verdict = _parse(done.stdout_bytes) if done.returncode == 0 else None
        if verdict is None:
            lines = done.stderr.strip().splitlines()
            why = lines[-1][:200] if lines else f"exit status {done.returncode}"
            return "error", READER_FAILED, f"the reader failed: {why}", None
        return verdict


def _parse(stdout: bytes) -> Judged | None:
    try:
        value = json.loads(stdout.decode("utf-8").strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None
    if not isinstance(value, dict) or value.get("status") not in ("ready", "missing", "error"):
        return None
    reason, detail, version = value.get("reason"), value.get("detail"), value.get("version")
    if not all(isinstance(item, str | None) for item in (reason, detail, version)):
        return None
    return value["status"], reason, detail or "", version


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts by verdict (``ready``, ``missing``, ``error:<code>``) and by Claude Code version."""
    verdicts = Counter(
        row["status"] + (f":{base_code(row['reason'])}" if row["reason"] else "") for row in rows
    )
    versions = Counter(row["claude_code_version"] or "unknown" for row in rows)
    ready = Counter(
        row["claude_code_version"] or "unknown" for row in rows if row["status"] == "ready"
    )
    return {
        "journals": len(rows),
        "ready": sum(ready.values()),
        "by_verdict": dict(sorted(verdicts.items())),
        "by_version": {
            name: {"journals": count, "ready": ready[name]}
            for name, count in sorted(versions.items(), key=lambda item: _numeric(item[0]))
        },
    }


def _numeric(version: str) -> list[int]:
    return [int(part) if part.isdigit() else -1 for part in version.split(".")]  # 2.1.9 < 2.1.10


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} B"
    return f"{count / 1024:.1f} KiB" if count < 1 << 20 else f"{count / (1 << 20):.1f} MiB"


def render(report: dict[str, Any]) -> str:
    rows = report["journals"]
    if not rows:
        return f"no journals under {os.path.join(report['config_dir'], 'projects')}\n"
    header = ("project", "session", "size", "claude code", "status", "reason")
    table = [header] + [
        (
            row["project"],
            row["session_id"] or "-",
            _size(row["bytes"]),
            row["claude_code_version"] or "unknown",
            row["status"],
            row["reason"] or "-",
        )
        for row in rows
    ]
    widths = [max(len(line[column]) for line in table) for column in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in table
    ]
    summary = report["summary"]
    verdicts = ", ".join(f"{key} {count}" for key, count in summary["by_verdict"].items())
    versions = ", ".join(
        f"{name} {counts['journals']} ({counts['ready']} ready)"
        for name, counts in summary["by_version"].items()
    )
    not_ready = summary["journals"] - summary["ready"]
    lines += [
        "",
        f"by verdict: {verdicts}",
        f"by claude code version: {versions}",
        f"{summary['journals']} journals, {summary['ready']} ready, {not_ready} not: {NEXT_STEP}",
    ]
    return "\n".join(lines) + "\n"
