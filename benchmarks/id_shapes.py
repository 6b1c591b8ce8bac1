"""Journal reads of records whose ids the writer chose: no id shape may make a read slow.

```
.venv/bin/python -m benchmarks.id_shapes [--sizes 10000,30000,100000] [--repeat 3] [--timeout 120]
```

Whoever can append to a session's journal chooses its records' ids. Each journal here is a
short session followed by N event-less records (attachments, each hanging from the one
before, as a long command's progress records do) whose ids have one shape:

- **sequential**: a counter in the last 12 hex digits (``00000000-0000-4000-8000-00000000002a``);
- **shared low bytes**: a counter in the first 8 hex digits, the last 8 bytes the same for
  every record (time-ordered ids of one host, as version 1 UUIDs are);
- **shared high bytes**: the first 10 bytes the same for every record, the last 6 counting
  down from the top bit (a prefix and a counter read from the other end);
- **random**: version 4 UUIDs.

Each row is the median wall time (spawn to reap) of ``python -S -m plangate.journal PATH
SESSION`` in a fresh process, as a hook reads (no journal index: a full read each time), and
the reader's answer; a read past ``--timeout`` seconds is reported as such. It imports the
tests' journal writer, so it runs from the repository root with the project's interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from testkit.journals import Journal

SHAPES: dict[str, Callable[[int, Journal], str]] = {
    "sequential": lambda i, journal: f"00000000-0000-4000-8000-{i:012x}",
    "shared low bytes": lambda i, journal: f"{i:08x}-0000-4000-8000-0242ac120002",
    "shared high bytes": lambda i, journal: (
        "5a5a5a5a-5a5a-4a5a-8a5a-" + f"{int(f'{i:048b}'[::-1], 2):012x}"
    ),
    "random": lambda i, journal: journal.new_uuid(),
}


def write_journal(path: Path, shape: str, count: int) -> str:
    """The journal of ``count`` records of ``shape`` at ``path``; its session id."""
    journal = Journal(cwd="/home/user/project", seed=shape)
    journal.session()
    make = SHAPES[shape]
    for i in range(count):
        journal.attachment("date", uuid=make(i + 1, journal), date="2026-11-29")
    journal.text("Done.")
    journal.write(path)
    return journal.session_id


def read_once(python: str, path: Path, session: str, timeout: float) -> tuple[float | None, str]:
    argv = [python, "-S", "-m", "plangate.journal", str(path), session]
    env = {**os.environ, "PYTHONPATH": str(Path("src").resolve())}
    start = time.perf_counter()
    try:
        done = subprocess.run(argv, capture_output=True, env=env, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return None, "timed out"
    seconds = time.perf_counter() - start
    try:
        verdict = json.loads(done.stdout)
    except ValueError:
        return seconds, done.stdout.decode(errors="replace").strip()[:60] or "no answer"
    return seconds, f"{verdict.get('status')} ({verdict.get('records')} records)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,30000,100000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--python", default=sys.executable)
    options = parser.parse_args(argv)
    sizes = [int(size) for size in options.sizes.split(",")]
    print(f"{'shape':<18} {'records':>8} {'median s':>9} {'max s':>7}  answer")
    with tempfile.TemporaryDirectory(prefix="plangate-id-shapes-") as folder:
        for shape in SHAPES:
            slow = False
            for size in sizes:
                if slow:
                    print(f"{shape:<18} {size:>8} {'skipped':>9}  (a smaller size timed out)")
                    continue
                path = Path(folder) / f"{shape.replace(' ', '-')}-{size}.jsonl"
                session = write_journal(path, shape, size)
                times: list[float] = []
                status = ""
                for _ in range(options.repeat):
                    seconds, status = read_once(options.python, path, session, options.timeout)
                    if seconds is None:
                        slow = True
                        break
                    times.append(seconds)
                if slow:
                    limit = f">{options.timeout:g}"
                    print(f"{shape:<18} {size:>8} {limit:>9} {'':>7}  {status}")
                else:
                    median = statistics.median(times)
                    print(f"{shape:<18} {size:>8} {median:>9.3f} {max(times):>7.3f}  {status}")
                sys.stdout.flush()
                path.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
