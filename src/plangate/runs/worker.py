"""``python -m plangate.runs.worker [--until-idle] [--concurrency N]``: a queue worker.

The same as ``plangate worker``; ``plangate run --detach`` starts one in the background when
no worker is alive.
"""

from __future__ import annotations

import sys

from plangate.commands.run import main


def run(argv: list[str] | None = None) -> int:
    return main(["worker", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    raise SystemExit(run())
