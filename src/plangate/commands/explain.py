"""``plangate explain <code>``: the troubleshooting section for one guard code.

The sections come from ``plangate/decisions/troubleshooting.md``, which ships inside the package
(``docs/guard-troubleshooting.md`` points to it). A code section's heading is exactly
``## <code>``; ``unrecognized_shape:<detail>`` finds the ``## unrecognized_shape`` section.
A fallback code's section is followed by the fallback itself.
"""

from __future__ import annotations

import argparse
import sys
from importlib import resources
from typing import TextIO

from plangate import markdown
from plangate.decisions import reasons
from plangate.errors import ExitCodes
from plangate.gates.errors import REMEDIES as GATE_REMEDIES
from plangate.journal import codes

PAGE = "troubleshooting.md"
EXIT_UNKNOWN = 1
EXIT_CODES = ExitCodes(
    {
        0: "explained",
        EXIT_UNKNOWN: "unknown code (the known codes are listed on stderr)",
        2: "bad usage",
    },
    usage=2,
)
FALLBACK_SECTION = "The fallback"


def page_text() -> str:
    """The troubleshooting page as shipped with this installation."""
    return resources.files("plangate.decisions").joinpath(PAGE).read_text(encoding="utf-8")


def sections(page: str | None = None) -> dict[str, str]:
    """Every ``## `` section of the page: heading text → the section (heading included)."""
    text = page if page is not None else page_text()
    found: dict[str, str] = {}
    heading: str | None = None
    lines: list[str] = []
    fences = markdown.Fences()
    for line in markdown.split_lines(text):
        level = 0 if fences.code(line) else markdown.atx_heading(line)[0]
        if level in (1, 2):
            if heading is not None:
                found[heading] = "\n".join(lines).rstrip() + "\n"
            heading = markdown.atx_heading(line)[1] if level == 2 else None
            lines = [line]
        elif heading is not None:
            lines.append(line)
    if heading is not None:
        found[heading] = "\n".join(lines).rstrip() + "\n"
    return found


def normalize(code: str) -> str:
    """The table's spelling of a code as a person may type it (any case, ``-`` for ``_``)."""
    cleaned = code.strip().strip("`").strip()
    base, colon, detail = cleaned.partition(":")
    base = base.lower().replace("-", "_")
    return base + colon + detail


def explain(code: str, out: TextIO, err: TextIO | None = None) -> int:
    """Print the section for ``code``; 0 when found, 1 (listing the known codes) when not.

    ``err`` receives the unknown-code message (default: ``out``).
    """
    gate_code = code.strip().strip("`").strip().upper().replace("-", "_")
    if gate_code in GATE_REMEDIES:
        out.write(_gate_section(gate_code))
        return 0
    wanted = normalize(code)
    found = sections()
    if wanted in reasons.SEED_CODES_NOT_RAISED and wanted in found:
        out.write(found[wanted])
        return 0
    if not reasons.is_known(wanted) or codes.base_code(wanted) not in found:
        sink = err if err is not None else out
        sink.write(f"plangate explain: unknown code {code!r}. Known codes:\n")
        for disposition in reasons.DISPOSITIONS:
            names = [c for c in reasons.KNOWN_CODES if reasons.disposition(c) == disposition]
            shown = [f"{c}:<detail>" if c == codes.UNRECOGNIZED_SHAPE else c for c in names]
            sink.write(f"  {disposition}: {', '.join(shown)}\n")
        sink.write(f"  skill gates: {', '.join(GATE_REMEDIES)}\n")
        return EXIT_UNKNOWN
    base = codes.base_code(wanted)
    out.write(found[base])
    if base != wanted:
        out.write(f"\n(You asked about `{wanted}`.)\n")
    if reasons.disposition(base) == reasons.FALLBACK and FALLBACK_SECTION in found:
        out.write("\n" + found[FALLBACK_SECTION])
    return 0


def _gate_section(code: str) -> str:
    return (
        f"## {code}\n\n"
        "**What it means**: a skill gate (a Stop or SubagentStop hook) could not decide. A gate "
        "never blocks because it broke: it recorded the error (session record, trace log, "
        "stderr, the transcript) and let the stop through unchecked; `plangate report` exits 3 "
        "for the session.\n\n"
        f"**What to do**: {GATE_REMEDIES[code]}.\n\n"
        "The causes of every gate error are listed under Errors in docs/skill-gates.md.\n"
    )


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("explain", help="what a guard code means and what to do")
    parser.add_argument("code", help="a code from a guard message, e.g. publication_missing")


def run(args: argparse.Namespace) -> int:
    return explain(args.code, sys.stdout, sys.stderr)
