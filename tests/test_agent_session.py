"""Whether a process runs inside a coding agent's session: real process chains the test
builds (:mod:`tests.agent_chain`), never the ancestry of whatever runs the suite."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from plangate import agent_session
from tests.agent_chain import PROBE, clean_env, fake_claude, run_detached, shell

CLAUDE_BASH_ENV = {
    "CLAUDECODE": "1",
    "AI_AGENT": "claude-code_2-1-332_agent",
    "CLAUDE_CODE_CHILD_SESSION": "1",
    "CLAUDE_CODE_ENTRYPOINT": "sdk-cli",
    "CLAUDE_CODE_EXECPATH": "/usr/local/bin/claude",
}
"""The markers Claude Code 2.1.332 puts into its Bash tool's environment."""


def probe(argv: list[str], env: dict[str, str]) -> list[object] | None:
    done = run_detached(argv, env)
    assert done.returncode == 0, done.stderr
    found: list[object] | None = json.loads(done.stdout.strip().splitlines()[-1])
    return found


@pytest.mark.parametrize("name", sorted(CLAUDE_BASH_ENV))
def test_each_marker_of_the_bash_tool_is_an_agent_session(name: str) -> None:
    found = agent_session.detect({name: CLAUDE_BASH_ENV[name]})
    assert found is not None and found.signal == agent_session.ENVIRONMENT
    assert name in found.evidence and CLAUDE_BASH_ENV[name] not in found.evidence


def test_empty_markers_and_claudecode_zero_are_none() -> None:
    assert agent_session.marker({"CLAUDECODE": "0", "AI_AGENT": " ", "HOME": "/root"}) is None
    assert agent_session.marker({"CLAUDECODE": "1"}) == "CLAUDECODE"


def test_a_persons_shell_has_neither_signal() -> None:
    """A shell with no marker and no agent process above it: a person's own terminal."""
    assert probe(shell(f'"{sys.executable}" -c "$1"', PROBE), clean_env()) is None


def test_the_markers_in_the_commands_own_environment() -> None:
    found = probe([sys.executable, "-c", PROBE], clean_env(CLAUDE_BASH_ENV))
    assert found is not None and found[0] == agent_session.ENVIRONMENT


def test_markers_unset_by_env_are_found_in_the_shells_initial_environment() -> None:
    """The model's ``env -u CLAUDECODE -u AI_AGENT … plangate …`` (and ``unset``) in the Bash
    tool: the shell above it was started with the markers."""
    markers = clean_env(CLAUDE_BASH_ENV)
    unset = " ".join(f"-u {name}" for name in CLAUDE_BASH_ENV)
    for script in (
        f'env {unset} "{sys.executable}" -c "$1"',
        f'unset {" ".join(CLAUDE_BASH_ENV)}; "{sys.executable}" -c "$1"',
    ):
        found = probe(shell(script, PROBE), markers)
        assert found is not None, script
        assert found[0] == agent_session.ANCESTOR_ENVIRONMENT, found
        assert "was started with CLAUDECODE" in str(found[1])


def test_a_claude_process_above_with_no_marker_anywhere(tmp_path: Path) -> None:
    """The markers gone from every environment: the ``claude`` executable above, two
    processes up, still names the session."""
    claude = fake_claude(tmp_path / "bin")
    inner = shell(f'"{sys.executable}" -c "$1"', PROBE)
    found = probe(shell('"$@"', *inner, sh=claude), clean_env())
    assert found is not None and found[0] == agent_session.ANCESTOR
    assert "is exe claude" in str(found[1])


@pytest.mark.parametrize(
    ("where", "evidence"),
    [
        ("share/claude/versions/2.1.332", "exe 2.1.332"),  # the native installer
        ("node_modules/@anthropic-ai/claude-code/bin/claude.exe", "exe claude.exe"),
        ("bin/codex", "exe codex"),
    ],
)
def test_agent_executables_by_their_installed_paths(
    tmp_path: Path, where: str, evidence: str
) -> None:
    path = tmp_path / where
    agent = fake_claude(path.parent, path.name)
    found = probe(shell(f'"{sys.executable}" -c "$1"', PROBE, sh=agent), clean_env())
    assert found is not None and found[0] == agent_session.ANCESTOR
    assert evidence in str(found[1])


def test_a_process_named_claude_by_its_argv0(tmp_path: Path) -> None:
    """The npm CLI runs as ``node`` and titles itself ``claude``: argv[0] (a link here)."""
    link = tmp_path / "claude"
    link.symlink_to(os.path.realpath("/bin/sh"))
    found = probe(shell(f'"{sys.executable}" -c "$1"', PROBE, sh=link), clean_env())
    assert found is not None and found[0] == agent_session.ANCESTOR
    assert "argv[0] claude" in str(found[1]) or "name claude" in str(found[1])


def test_a_process_merely_near_the_name_is_no_agent(tmp_path: Path) -> None:
    for name in ("claude-notes", "myclaude", "codexes"):
        other = fake_claude(tmp_path / name, name)
        assert probe(shell(f'"{sys.executable}" -c "$1"', PROBE, sh=other), clean_env()) is None


def test_the_walk_is_bounded_and_stops_at_a_loop(tmp_path: Path) -> None:
    """A fake ``/proc`` whose parents go round in a circle, and one deeper than the bound."""
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "self").symlink_to("100")

    def process(pid: int, ppid: int) -> None:
        (proc / str(pid)).mkdir()
        (proc / str(pid) / "stat").write_text(f"{pid} (a b) c) S {ppid} 1 1 0\n")

    process(100, 101)
    process(101, 102)
    process(102, 101)
    assert list(agent_session.ancestors(str(proc))) == [101, 102]
    assert agent_session.detect({}, proc=str(proc)) is None
    for pid in range(200, 400):
        process(pid, pid + 1)
    (proc / "self").unlink()
    (proc / "self").symlink_to("200")
    walked = list(agent_session.ancestors(str(proc)))
    assert walked == list(range(201, 201 + agent_session.MAX_ANCESTORS))


def test_no_proc_at_all_reads_nothing(tmp_path: Path) -> None:
    assert list(agent_session.ancestors(str(tmp_path / "none"))) == []


NESTED_PROBE = "import json; from plangate import agent_session as a; print(json.dumps(a.nested()))"


def test_a_session_the_model_started_is_nested(tmp_path: Path) -> None:
    """Issue 33: a ``claude -p`` the model runs in its Bash tool starts a session whose
    prompts are the model's; its hooks see that the agent above them was started with Claude
    Code's markers, or below another agent. A person's own ``claude`` is not nested."""
    claude = fake_claude(tmp_path / "bin")
    inner = shell(f'"{sys.executable}" -c "$1"', NESTED_PROBE)
    below_one = shell('"$@"', *inner, sh=claude)
    done = run_detached(below_one, clean_env())
    assert done.returncode == 0 and json.loads(done.stdout) is None, done
    done = run_detached(below_one, clean_env(CLAUDE_BASH_ENV))
    assert "was started with CLAUDECODE" in str(json.loads(done.stdout)), done
    below_two = shell('"$@"', *below_one, sh=claude)
    done = run_detached(below_two, clean_env())
    assert "is another coding agent" in str(json.loads(done.stdout)), done
