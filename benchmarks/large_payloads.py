"""Large hook payloads: time and peak memory of the real hook processes, per payload size.

    .venv/bin/python -m benchmarks.large_payloads [--sizes 0.07,1.2,50,1024] [--repeat 3]

Each run starts the hook as it is registered, writes the payload to its stdin in 1 MiB
chunks (a hook that answers before reading everything gets a broken pipe, which is the
point), and reads its answer. Columns: the median wall time from spawn to reap, the peak
resident memory of the hook process (``wait4``), how much of the payload it took before
answering, and its answer. Sizes are in MB of payload.
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

from plangate.autoplan import layout

ENTRIES = {
    "PreToolUse": "plangate.hooks.pre_tool_use",
    "Stop": "plangate.hooks.stop",
}
CHUNK = 1024 * 1024


PIECE = b"Summarise this part. " * (CHUNK // 21)


def _transcript(folder: str) -> tuple[str, str]:
    """A session journal whose last text is the end of the stop's message; its session."""
    from testkit.journals import Journal

    journal = Journal(cwd=folder)
    journal.prompt("Summarise the document.")
    journal.text("Summarise this part.")
    return str(journal.write(os.path.join(folder, "session.jsonl"))), journal.session_id


def _parts(case: str, folder: str) -> tuple[str, bytes, bytes, bytes]:
    """The hook event, and the payload as the bytes before, one repeated piece, and after."""
    transcript, session = _transcript(folder)
    common: dict[str, object] = {
        "session_id": session,
        "transcript_path": transcript,
        "cwd": folder,
    }
    if case == "stop, gate on":
        payload = {**common, "hook_event_name": "Stop", "last_assistant_message": "@"}
        event = "Stop"
    else:
        prompt = "@"
        if case == "Agent phase entry":
            prompt = layout.reviewer_line(layout.REVIEW_PHASES[0]) + "\n@"
        tool = "Bash" if case == "Bash" else "Agent"
        field = "command" if tool == "Bash" else "prompt"
        payload = {
            **common,
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": {field: prompt},
            "tool_use_id": "toolu_01",
        }
        event = "PreToolUse"
    before, after = json.dumps(payload).encode().split(b"@")
    return event, before, PIECE, after


def run(case: str, megabytes: float, folder: str) -> tuple[float, int, int, str]:
    event, before, piece, after = _parts(case, folder)
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("PLANGATE_", "CLAUDE"))}
    environ.update(PLANGATE_STATE_ROOT=os.path.join(folder, "state"), PLANGATE_CEO_REVIEW_GATE="on")
    command = f"from {ENTRIES[event]} import main; "
    command += "from plangate.hook_io.runtime import run_process; run_process(main)"
    unit = len(b"Summarise this part. ")
    total = int(megabytes * 1_000_000) // unit * unit  # the message ends on a whole sentence
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-c", command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=environ,
    )
    assert process.stdin is not None and process.stdout is not None
    written = 0
    try:
        process.stdin.write(before)
        while written < total:
            part = piece[: total - written]
            process.stdin.write(part)
            written += len(part)
        process.stdin.write(after)
        process.stdin.close()
    except BrokenPipeError:
        pass
    answer = process.stdout.read().decode()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    short = "{}" if answer.strip() == "{}" else answer.split('"code ', 1)[-1][:40]
    if "entry_too_large" in answer:
        short = "deny entry_too_large"
    elif "GATE_" in answer:  # the gate could not judge: it says which code
        short = answer.split("code=", 1)[-1].split()[0].split('"')[0]
    return seconds, usage.ru_maxrss // 1024, written, short


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0.07,1.2,50,1024")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    sizes = [float(size) for size in args.sizes.split(",")]
    cases = ["Agent, not a phase entry", "Bash", "Agent phase entry", "stop, gate on"]
    print("| case | payload MB | median ms | peak MiB | MB taken before it answered | answer |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for case in cases:
            for megabytes in sizes:
                if case == "stop, gate on" and megabytes > 64:
                    continue  # read whole (it needs every field): shown up to 50 MB
                samples = [run(case, megabytes, folder) for _ in range(args.repeat)]
                median = statistics.median(sample[0] for sample in samples) * 1000
                peak = max(sample[1] for sample in samples)
                taken = min(sample[2] for sample in samples) / 1_000_000
                print(
                    f"| {case} | {megabytes:g} | {median:.0f} | {peak} | "
                    f"{taken:.1f} | {samples[-1][3]} |"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
