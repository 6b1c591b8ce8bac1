"""Wall time of N plan-governed runs on 1, 2 and 3 workers sharing one PostgreSQL queue.

    .venv/bin/python -m benchmarks.runs_workers [--runs 6] [--workers 1,2,3] [--steps 3]
                                                [--step-seconds 1.0] [--json]

For each worker count, a throwaway PostgreSQL server (``testkit/postgres.py``) and that
many ``plangate worker --concurrency 1`` processes, each standing for a machine of its own
(``PLANGATE_WORKER_HOST``, its own state root and HOME). The runs are queued from one more
process, as ``plangate run --detach`` queues them but without its rule for starting a local
worker, so no worker but the measured ones ever serves the queue (the table's last column
checks it). Each run has ``--steps`` steps; the scripted agent sleeps ``--step-seconds`` in
each, standing for the model's time, then writes its file; one check runs at the end. The
wall time runs from the first run queued to the last run done.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.timing import load_average
from plangate.plan.model import Check, Criterion, Plan, Step
from plangate.plan.render import render_plan
from testkit.git import git
from testkit.postgres import throwaway_postgres

ENQUEUE = textwrap.dedent(
    """
    import json, sys
    from plangate.runs.engine import Engine, RunOptions
    engine = Engine()
    ids = []
    for case in json.loads(sys.argv[1]):
        run = engine.create(RunOptions(plan_path=case["plan"], repo=case["repo"],
                                       agent="scripted:" + case["script"]))
        ids.append(run.id)
    for run_id in ids:  # all recorded first, then queued together
        engine.begin(run_id, 1, detach=True)
    engine.shutdown()
    print(json.dumps(ids))
    """
)


def _cases(folder: Path, runs: int, steps: int, step_seconds: float) -> list[dict[str, str]]:
    names = [f"f{n}.txt" for n in range(1, steps + 1)]
    plan = render_plan(
        Plan(
            title="Bench",
            goal="Write the files.",
            steps=tuple(
                Step(n, f"Write {name}", (name,), ("AC1",), f"Write {name}.")
                for n, name in enumerate(names, start=1)
            ),
            checks=(Check(" && ".join(f"test -f {name}" for name in names), name="AC1"),),
            criteria=(Criterion("AC1", "Every file is there."),),
        )
    )
    cases = []
    for index in range(runs):
        run = folder / f"run{index}"
        repo = run / "repo"
        repo.mkdir(parents=True)
        git(repo, "init", "-q", "-b", "main")
        (repo / "README.md").write_text("# bench\n")
        git(repo, "add", "-A")
        git(repo, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "initial")
        (run / "plan.md").write_text(plan)
        script = {
            "steps": [
                {"step": n, "sleep": step_seconds, "write": {name: f"{n}\n"}}
                for n, name in enumerate(names, start=1)
            ]
        }
        (run / "script.json").write_text(json.dumps(script))
        cases.append(
            {"plan": str(run / "plan.md"), "repo": str(repo), "script": str(run / "script.json")}
        )
    return cases


def measure(workers: int, runs: int, steps: int, step_seconds: float) -> dict[str, Any]:
    from plangate.runs.store import Store

    with (
        tempfile.TemporaryDirectory(prefix="plangate-bench-runs-") as tmp,
        throwaway_postgres("plangate-bench-pg-") as url,
    ):
        root = Path(tmp)
        env = {**os.environ, "PLANGATE_DATABASE_URL": url}
        cases = _cases(root, runs, steps, step_seconds)
        store = Store(url)
        processes = []
        logs = []
        try:
            for index in range(workers):
                name = f"bench-host-{index + 1}"
                home = root / f"{name}-home"
                home.mkdir()
                log = open(root / f"{name}.log", "wb")  # noqa: SIM115
                logs.append(log)
                worker_env = {
                    **env,
                    "PLANGATE_WORKER_HOST": name,
                    "PLANGATE_STATE_ROOT": str(root / f"{name}-state"),
                    "HOME": str(home),
                }
                processes.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "plangate", "worker", "--concurrency", "1"],
                        env=worker_env,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                    )
                )
            deadline = time.monotonic() + 120
            while sum(1 for row in store.executors() if row[3] == "worker") < workers:
                if time.monotonic() > deadline or any(p.poll() is not None for p in processes):
                    raise SystemExit("the workers did not start")
                time.sleep(0.1)
            started = time.monotonic()
            queued = subprocess.run(
                [sys.executable, "-c", ENQUEUE, json.dumps(cases)],
                env={**env, "PLANGATE_STATE_ROOT": str(root / "submitter")},
                capture_output=True,
                text=True,
                timeout=300,
                check=True,
            )
            ids = json.loads(queued.stdout)
            serving: set[str] = set()
            while True:
                serving |= {row[1] for row in store.executors() if row[3] == "worker"}
                records = [store.run(run_id) for run_id in ids]
                states = [record.state if record else "missing" for record in records]
                if any(state in ("waiting", "errored", "missing") for state in states):
                    raise SystemExit(f"a run did not finish: {states}")
                if all(state == "done" for state in states):
                    break
                time.sleep(0.1)
            wall = time.monotonic() - started
            hosts = Counter(record.host for record in records if record is not None)
        finally:
            for process in processes:
                process.send_signal(signal.SIGTERM)
            for process in processes:
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            for log in logs:
                log.close()
            store.close()
    return {
        "workers": workers,
        "runs": runs,
        "wall_seconds": round(wall, 2),
        "runs_per_worker": sorted(hosts.values(), reverse=True),
        "serving_hosts": len(serving),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--workers", default="1,2,3", help="worker counts, comma-separated")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--step-seconds", type=float, default=1.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    counts = [int(part) for part in args.workers.split(",") if part.strip()]
    rows = []
    for count in counts:
        print(f"measuring {args.runs} runs on {count} worker(s)…", file=sys.stderr, flush=True)
        rows.append(measure(count, args.runs, args.steps, args.step_seconds))
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    base = rows[0]["wall_seconds"] if rows else 0.0
    print(
        f"{args.runs} runs of {args.steps} steps ({args.step_seconds:g} s of agent time each), "
        f"PostgreSQL, load average {load_average()}"
    )
    print()
    print("| workers | wall s | speed-up | runs per worker | hosts that served |")
    print("|---|---|---|---|---|")
    for row in rows:
        speed = base / row["wall_seconds"] if row["wall_seconds"] else 0.0
        spread = "/".join(str(n) for n in row["runs_per_worker"])
        print(
            f"| {row['workers']} | {row['wall_seconds']:.1f} | {speed:.2f}x | {spread} | "
            f"{row['serving_hosts']} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
