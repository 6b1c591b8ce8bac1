"""A journal's verdict as a person reads it: ``plangate journal inspect``'s report.

:func:`summarize` makes the report (a dict, which ``--json`` prints as it is) and
:func:`render` its rows of text; each refusal's code comes with what to do about it.
"""

from __future__ import annotations

from collections import Counter

from plangate.journal import chain, codes
from plangate.journal.codes import base_code

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from plangate.journal import Verdict

REMEDIES = {
    codes.AGENT: "this is a subagent's journal; inspect the parent session's <session>.jsonl "
    "instead",
    codes.SIDECHAIN: "the conversation starts in a subagent (sidechain) record; inspect the parent "
    "session's journal instead",
    codes.MALFORMED: "Claude Code did not write this line whole; keep a copy of the journal and "
    "start a new session",
    codes.TOO_LARGE: "one record (often a huge pasted file or tool output) is over 32 MiB; "
    "start a new session and keep large output in files",
    codes.IDENTITY: "with --layout the path must be <config>/projects/<project>/<session>.jsonl "
    "with no symlink on the way; inspect without --layout to judge the content alone",
    codes.COMPETING_ROOT: "two writers appended to this session (two Claude Code windows on one "
    "session?); close one and start a new session rather than editing journals by hand",
    codes.CYCLE: "the parent links loop; the file was edited or damaged: start a new session",
    codes.FOREIGN_CWD: "pass --project-dir with the folder the session was started in",
    codes.UNRECOGNIZED_SHAPE: "Claude Code wrote a layout plangate does not know yet; report the "
    "detail and the Claude Code version",
    codes.REWRITTEN: "the journal changed under the reader; inspect it again once Claude Code "
    "is idle",
    codes.OVERSIZED_INVOCATION: "the records needed in full pass 32 MiB; start a new session",
}
MISSING_REMEDY = (
    "nothing is owned yet: wait until Claude Code has written the first response, "
    "then inspect again"
)


def summarize(verdict: Verdict) -> dict[str, Any]:
    kinds = Counter(event.kind for event in verdict.events)
    remedy = None
    if verdict.reason is not None:
        remedy = REMEDIES.get(base_code(verdict.reason))
    elif not verdict.ready:
        remedy = MISSING_REMEDY
    return {
        "path": verdict.path,
        "session_id": verdict.session_id,
        "status": verdict.status,
        "reason": verdict.reason,
        "detail": verdict.detail,
        "remedy": remedy,
        "claude_code_version": verdict.claude_code_version,
        "records": verdict.records,
        "owned_records": verdict.owned,
        "lines": verdict.lines,
        "events": len(verdict.events),
        "event_kinds": dict(sorted(kinds.items())),
        "root_shape": verdict.root_shape,
        "dropped": dict(verdict.dropped),
        "complete": verdict.complete,
        "untrusted": untrusted(verdict),
    }


UNTRUSTED_REMEDY = (
    "these records never count as the person's words; inside a workflow plangate refuses "
    "its calls (journal_untrusted): continue the work in a fresh session"
)


def untrusted(verdict: Verdict) -> list[str]:
    """The live chain's records that look like the person's words but are not written as
    Claude Code writes them (:func:`plangate.journal.trust.forged`), in words, once each."""
    from plangate.journal.trust import forged

    found = forged(verdict.events, verdict.handed_over)
    counts = Counter(found.values())
    return [f"{count} x {what}" for what, count in sorted(counts.items())]


DROP_WORDS = {
    chain.ABANDONED_BRANCH: "on abandoned branches (a rewound or interrupted prompt, and after)",
    chain.SUMMARIZED: "summarized away (before a compaction or 'Summarize from here')",
    chain.ABANDONED_ROOT: "under an abandoned first prompt (an Esc or a rewind on it)",
    chain.UNREACHABLE: "waiting for an ancestor Claude Code has not written yet",
}


def _records_row(report: dict[str, Any]) -> str:
    """``32 (17 in the live conversation, 15 other lines)``: besides the conversation and what
    it dropped, a journal holds session metadata lines (titles, queue operations, request
    blobs) and, in old releases, subagent records."""
    total, live = report["records"], report["owned_records"]
    other = total - live - sum(report["dropped"].values())
    tail = f", {other} metadata or subagent lines" if other > 0 else ""
    return f"{total} ({live} in the live conversation{tail})"


def _dropped(dropped: dict[str, int]) -> str:
    """What the live chain left out, in words (``docs/journal-reading.md``)."""
    if not dropped:
        return "none"
    parts = (f"{count} {DROP_WORDS.get(reason, reason)}" for reason, count in dropped.items())
    return "; ".join(parts)


def render(report: dict[str, Any]) -> str:
    kinds = ", ".join(f"{kind} {count}" for kind, count in report["event_kinds"].items())
    rows = [
        ("journal", report["path"]),
        ("session", report["session_id"] or "unknown"),
        ("status", report["status"]),
        ("reason", report["reason"] or "none"),
        ("claude code", report["claude_code_version"] or "unknown"),
        ("records", _records_row(report)),
        ("dropped", _dropped(report["dropped"])),
        ("events", f"{report['events']}" + (f" ({kinds})" if kinds else "")),
        ("root", " > ".join(report["root_shape"]) or "none"),
    ]
    if not report["complete"]:
        rows.append(("last line", "unfinished (Claude Code is still writing it; ignored)"))
    if report["detail"] and report["status"] != "ready":
        rows.append(("why", report["detail"]))
    if report["remedy"]:
        rows.append(("what to do", report["remedy"]))
    if report.get("untrusted"):
        rows.append(("untrusted", "; ".join(report["untrusted"])))
        rows.append(("what to do", UNTRUSTED_REMEDY))
    width = max(len(name) for name, _ in rows)
    return "".join(f"{name.ljust(width)}  {value}\n" for name, value in rows)
