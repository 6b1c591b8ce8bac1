"""``python -m plangate.journal PATH [SESSION PROJECT_DIR CONFIG_DIR]``: one verdict line.

The hook-path way to read a journal from a fresh process, as a hook does: standard library
only, no argparse; started also as hooks are (:func:`plangate.hook_registry.hook_command`:
``main()`` then reads ``sys.argv``). ``benchmarks/journal_decision.py`` times it from process
start to verdict; people use ``plangate journal inspect`` instead.
"""

from __future__ import annotations

import sys

# In a process started as hooks are, importing plangate has already taken the working folder
# off the path (plangate/__init__.py).
from plangate import jsonio
from plangate.journal.reader import read_journal
from plangate.locations import journal_index_dir


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if not argv or len(argv) > 4:
        sys.stderr.write(
            "usage: python -m plangate.journal PATH [SESSION PROJECT_DIR CONFIG_DIR]\n"
        )
        return 2
    path = argv[0]
    session = argv[1] if len(argv) > 1 and argv[1] else None
    owners = [argv[2]] if len(argv) > 2 and argv[2] else None
    config = argv[3] if len(argv) > 3 and argv[3] else None
    verdict = read_journal(
        path,
        session_id=session,
        owners=owners,
        config_dir=config,
        index_dir=journal_index_dir() if config is not None else None,
    )
    sys.stdout.write(
        jsonio.dumps(
            {
                "status": verdict.status,
                "reason": verdict.reason,
                "claude_code_version": verdict.claude_code_version,
                "records": verdict.records,
                "events": verdict.event_count,
            }
        )
        + "\n"
    )
    sys.stdout.flush()
    return 0 if verdict.ready else 1


if __name__ == "__main__":
    raise SystemExit(main())
