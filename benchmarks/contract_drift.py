"""What judging changes by the files costs: a phase's snapshot and its compare, at 1k and 10k
files, in a git repository and in a plain folder (:mod:`plangate.contracts.snapshot`, used by
:mod:`plangate.contracts.drift`).

Run from the repository root: ``python -m benchmarks.contract_drift [--repeat N]
[--sizes 1000,10000] [--json]``.

Each project is made fresh in a temporary folder: ``N`` Python files of 10 to 400 lines
(about 1.2 KB each on average) in 100 folders, committed (the git case) or not (the plain
folder, walked). The rows, each the median (and minimum) of ``--repeat`` runs in this process,
with the page cache warm:

* ``list (git ls-files)`` / ``list (walk)``: the file list alone;
* ``snapshot, stat only``: list and ``lstat`` each file (the alternative not taken);
* ``snapshot (stat + sha1)``: :func:`snapshot.take`, what a phase entry does, plus its save;
* ``load the snapshot``: reading it back from the state root (part of every compare);
* ``compare, unchanged``: :func:`snapshot.changes` when nothing changed (a phase left cleanly);
* ``compare, 10 changed``: ten files rewritten;
* ``compare, all touched``: every file's mtime moved (each one read and hashed again);
* ``git status --porcelain``: the other candidate for a check on each Bash call.

The decision these figures support is in ``docs/contracts.md`` ("Changes judged by the
files"): the content digest is taken at the snapshot (so a restored file counts as
unchanged), and no check runs on each Bash call.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable

from plangate.contracts import snapshot

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


def make_project(folder: str, count: int, git: bool) -> None:
    rng = random.Random(count)
    for n in range(count):
        sub = os.path.join(folder, f"pkg{n % 100}")
        os.makedirs(sub, exist_ok=True)
        with open(os.path.join(sub, f"m{n}.py"), "w") as out:
            out.write("value = 1\n" * rng.randint(10, 400) if n % 2 else "x = 1\n" * 20)
    if git:
        env = {**os.environ, **GIT_ENV}
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
            subprocess.run(["git", *args], cwd=folder, env=env, check=True, timeout=600)


def timed(
    action: Callable[[], object], repeat: int, reset: Callable[[], None] | None
) -> list[float]:
    samples: list[float] = []
    for _ in range(repeat):
        if reset is not None:
            reset()
        start = time.perf_counter()
        action()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def stat_only(project: str) -> int:
    repo = snapshot.repository(project)
    kind = "walk" if repo is None else "git"
    found = snapshot.listing(project, kind, None if repo is None else repo.global_excludes)
    assert found is not None
    for name in found[1]:
        os.lstat(os.path.join(project, name))
    return len(found[1])


def rows_for(
    project: str, count: int, git: bool, repeat: int, state: str
) -> list[dict[str, object]]:
    kind = "git" if git else "walk"
    rows: list[dict[str, object]] = []

    def row(name: str, samples: list[float]) -> None:
        rows.append(
            {
                "files": count,
                "project": kind,
                "case": name,
                "median_ms": round(statistics.median(samples), 1),
                "min_ms": round(min(samples), 1),
                "runs": len(samples),
            }
        )

    row(
        f"list ({'git ls-files' if git else 'walk'})",
        timed(lambda: snapshot.listing(project, kind), repeat, None),
    )
    row("snapshot, stat only", timed(lambda: stat_only(project), repeat, None))

    def take_and_save() -> None:
        taken = snapshot.take(project, state)
        assert taken is not None
        snapshot.save(project, "bench", "", "phase", taken, state)

    row("snapshot (stat + sha1) and save", timed(take_and_save, repeat, None))
    before = snapshot.take(project, state)
    assert before is not None
    snapshot.save(project, "bench", "", "phase", before, state)
    row(
        "load the snapshot",
        timed(lambda: snapshot.load(project, "bench", "", "phase", state), repeat, None),
    )
    row("compare, unchanged", timed(lambda: snapshot.changes(project, before, state), repeat, None))
    names = sorted(before.entries)
    changed = names[:10]

    def rewrite() -> None:
        for name in changed:
            with open(os.path.join(project, name), "a") as out:
                out.write("# changed\n")

    found: list[str] = []
    row(
        "compare, 10 changed",
        timed(lambda: found.extend(snapshot.changes(project, before, state)), repeat, rewrite),
    )
    assert set(changed) <= set(found)
    clock = [time.time_ns()]

    def touch_all() -> None:
        clock[0] += 1_000_000_000
        for name in names:
            os.utime(os.path.join(project, name), ns=(clock[0], clock[0]))

    row(
        "compare, all touched",
        timed(lambda: snapshot.changes(project, before, state), repeat, touch_all),
    )
    if git:
        status = ["git", "--no-optional-locks", "status", "--porcelain", "-z"]
        row(
            "git status --porcelain",
            timed(
                lambda: subprocess.run(status, cwd=project, capture_output=True, check=True),
                repeat,
                None,
            ),
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="plangate-drift-bench-") as work:
        state = os.path.join(work, "state")
        for count in (int(size) for size in args.sizes.split(",")):
            for git in (True, False):
                project = os.path.join(work, f"{'git' if git else 'plain'}-{count}")
                os.makedirs(project)
                make_project(project, count, git)
                rows.extend(rows_for(project, count, git, args.repeat, state))
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print("| files | project | case | median ms | min ms | runs |")
    print("|---:|---|---|---:|---:|---:|")
    for item in rows:
        print(
            f"| {item['files']} | {item['project']} | {item['case']} | {item['median_ms']} | "
            f"{item['min_ms']} | {item['runs']} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
