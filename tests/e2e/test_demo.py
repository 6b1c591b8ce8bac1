"""``plangate demo``: every scene in real Claude Code sessions, and the viewer it serves."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from plangate.commands.demo import demo

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def test_every_scene_goes_as_it_should(tmp_path: Path, claude_bin: Path) -> None:
    out = io.StringIO()
    assert demo(workdir=tmp_path, out=out) == 0, out.getvalue()
    said = out.getvalue()
    # the journal, judged as a hook judges it
    assert "tools: Read, Bash" in said
    assert "journal:" in said and ".jsonl" in said
    assert "status       ready" in said
    # the guard
    assert "enter Design (too early)   deny publication_missing" in said
    # the CEO-review gate: held once, then released, as `plangate report` counts it
    assert re.search(r"stop after 'The review is written.' +held\n", said)
    assert re.search(r"stop after 'The top risks are ranked in plan.md.' +released\n", said)
    # the workflow contract: the publish phase started before the draft, then after it
    assert "a workflow contract, a phase started before the one it needs" in said
    assert "start publish (too early)  deny contract_phase_order\n" in said
    assert re.search(r"start draft +allow\n +start publish +allow\n", said)
    assert "the model was told which phase must come first" in said
    # the governed run: a failed check, version 2, passed
    assert "failed (exit 1)." in said
    assert "Plan changed to version 2: A check failed." in said
    assert "versions kept: v1 (initial), v2 (check)" in said
    assert "every scene went as it should" in said
    _kept_commands_work_as_printed(said)


def _kept_commands_work_as_printed(said: str) -> None:
    """Issue 34: every command the demo prints after it ends works, pasted into a shell."""
    assert "View version 2: plangate show" not in said  # the run's own hint names its root
    commands = [line.strip() for line in said.splitlines() if line.startswith("    PLANGATE_")]
    assert len(commands) == 4, said
    expected = {
        " log": "publication_missing",
        " report": "blocked",
        " --version 2": "Step 2: Fix SIZE",
    }
    env = {key: value for key, value in os.environ.items() if key != "PLANGATE_STATE_ROOT"}
    for command in commands:
        if command.endswith(" serve"):
            continue  # runs until Ctrl+C: the --serve test shows the viewer
        wanted = next(text for tail, text in expected.items() if command.endswith(tail))
        done = subprocess.run(
            ["bash", "-c", command], env=env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, (command, done.stdout, done.stderr)
        assert wanted in done.stdout, (command, done.stdout)


def test_without_keep_no_printed_command_needs_the_removed_folder(claude_bin: Path) -> None:
    out = io.StringIO()
    assert demo(out=out) == 0, out.getvalue()
    said = out.getvalue()
    assert "View version 2: plangate show" not in said
    assert "`plangate demo --keep` keeps them" in said
    assert "PLANGATE_STATE_ROOT=" not in said


def _serving(tmp_path: Path) -> tuple[subprocess.Popen[str], list[str], str]:
    """``plangate demo --serve`` started as a person starts it, once its viewer is up: the
    process, what it printed so far, and the run's address."""
    env = {key: value for key, value in os.environ.items() if key != "PLANGATE_DATABASE_URL"}
    env.update(PYTHONUNBUFFERED="1", TMPDIR=str(tmp_path))
    demo_process = subprocess.Popen(
        [sys.executable, "-m", "plangate", "demo", "--serve"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert demo_process.stdout is not None
    seen = []
    for line in demo_process.stdout:
        seen.append(line)
        if line.startswith("The run viewer shows the run at "):
            return demo_process, seen, line.split()[7]
    pytest.fail("".join(seen))


def test_serve_shows_the_run_until_ctrl_c(tmp_path: Path, claude_bin: Path) -> None:
    demo_process, seen, address = _serving(tmp_path)
    run_id = address.rsplit("/", 1)[1]
    with urllib.request.urlopen(address, timeout=30) as page:
        html = page.read().decode("utf-8")
    assert "Size the cache" in html and run_id in html
    with urllib.request.urlopen(f"{address}/versions/2", timeout=30) as page:
        assert "Step 2: Fix SIZE" in page.read().decode("utf-8")
    demo_process.send_signal(signal.SIGINT)  # Ctrl+C
    rest, _ = demo_process.communicate(timeout=60)
    assert demo_process.returncode == 0, "".join(seen) + rest
    assert list(tmp_path.glob("plangate-demo-*")) == []  # the folder is removed after serving


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_serve_stopped_by_a_signal_ends_as_cleanly_as_ctrl_c(
    tmp_path: Path, claude_bin: Path, stop: signal.Signals
) -> None:
    """Issue 34: ``timeout``, ``kill`` and process managers stop with SIGTERM, a closed
    terminal with SIGHUP. The demo then stops its viewer and removes its folder, as for
    Ctrl+C: no ``plangate serve`` is left answering with parent 1."""
    demo_process, seen, address = _serving(tmp_path)
    with urllib.request.urlopen(address, timeout=30) as page:
        assert page.status == 200
    demo_process.send_signal(stop)
    rest, _ = demo_process.communicate(timeout=60)
    assert demo_process.returncode == 0, "".join(seen) + rest
    assert list(tmp_path.glob("plangate-demo-*")) == []
    with pytest.raises(OSError):  # the viewer is gone, not orphaned
        urllib.request.urlopen(address, timeout=5)
