"""The read-only sessions' confinement, with a fake ``claude`` (a shell script) run by the
real :class:`~plangate.agents.claude_code.ClaudeCodeAgent` inside the real ``bwrap``.

The fake tries what a hook or a tool of the planner could try, then prints what happened as
its JSON result: writing into the worktree, the person's HOME and the main repository;
reading the agent's journal under ``~/.claude/projects``, the state root and the main
repository; writing its own HOME (allowed).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from plangate.agents.base import PlanRequest
from plangate.agents.claude_code import ClaudeCodeAgent
from plangate.agents.confinement import bwrap_problem, confined, hidden_folders, isolated_flags

from .conftest import PLAN

PROBE = r"""#!/bin/sh
try_write() { if (echo x > "$1") 2>/dev/null; then echo "wrote $1"; else echo "no-write $1"; fi; }
try_read() { if cat "$1" >/dev/null 2>&1; then echo "read $1"; else echo "no-read $1"; fi; }
{
  try_write "$WORKTREE/planted.txt"
  try_write "$REAL_HOME/planted.txt"
  try_write "$REPO/planted.txt"
  try_write "$HOME/own.txt"
  try_read "$JOURNAL"
  try_read "$STATE/config.json"
  try_read "$REPO/secret.txt"
  try_read "$WORKTREE/app.py"
  echo "home $HOME"
  echo "config $CLAUDE_CONFIG_DIR"
  ls -A "$CLAUDE_CONFIG_DIR" | sed 's/^/configured /'
} > "$HOME/report.txt"
python3 - "$HOME/report.txt" <<'EOF'
import json, sys
print(json.dumps({"type": "result", "subtype": "success", "is_error": False,
                  "result": open(sys.argv[1]).read(), "session_id": "s"}))
EOF
"""


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=30)


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    """A repository with a worktree in a state root, a person's HOME with a journal."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "app.py").write_text("VALUE = 1\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "initial")
    (repo / "secret.txt").write_text("not for the planner\n")
    state = tmp_path / "state"
    state.mkdir()
    (state / "config.json").write_text("{}\n")
    worktree = state / "runs" / "r1" / "worktree"
    _git(repo, "worktree", "add", "-q", "-b", "plangate/run-r1", str(worktree))
    home = tmp_path / "home"
    journal = home / ".claude" / "projects" / "slug" / "session.jsonl"
    journal.parent.mkdir(parents=True)
    journal.write_text('{"type":"user","message":"the agent\'s conversation"}\n')
    (home / ".claude" / ".credentials.json").write_text('{"token":"t"}')
    (home / ".claude" / "settings.json").write_text('{"hooks":{}}')
    return {"repo": repo, "state": state, "worktree": worktree, "home": home, "journal": journal}


def _probe_agent(tmp_path: Path, layout: dict[str, Path], **extra: str) -> ClaudeCodeAgent:
    binary = tmp_path / "bin" / "claude"
    binary.parent.mkdir()
    binary.write_text(PROBE)
    binary.chmod(0o755)
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(layout["home"]),
        "PLANGATE_STATE_ROOT": str(layout["state"]),
        "WORKTREE": str(layout["worktree"]),
        "REAL_HOME": str(layout["home"]),
        "REPO": str(layout["repo"]),
        "STATE": str(layout["state"]),
        "JOURNAL": str(layout["journal"]),
        **extra,
    }
    return ClaudeCodeAgent(binary=binary, env=env)


def _plan(agent: ClaudeCodeAgent, worktree: Path) -> list[str]:
    request = PlanRequest(
        run_id="r1",
        workdir=worktree,
        previous_plan=PLAN,
        task=None,
        failures=(),
        changed_files=(),
        diff="",
    )
    return agent.plan(request).message.splitlines()


def test_the_planner_runs_in_a_read_only_sandbox_with_a_home_of_its_own(
    tmp_path: Path, layout: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    problem = bwrap_problem({})
    if problem is not None:
        pytest.skip(f"bubblewrap is needed: {problem}")
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(layout["state"]))
    agent = _probe_agent(tmp_path, layout)
    lines = _plan(agent, layout["worktree"])
    home = next(line.split(" ", 1)[1] for line in lines if line.startswith("home "))
    worktree, repo = layout["worktree"], layout["repo"]
    assert f"no-write {worktree}/planted.txt" in lines
    assert f"no-write {layout['home']}/planted.txt" in lines
    assert f"no-write {repo}/planted.txt" in lines
    assert f"wrote {home}/own.txt" in lines  # its own folder, the only one it may write
    assert f"no-read {layout['journal']}" in lines  # the agent's journal is not there
    assert f"no-read {layout['state']}/config.json" in lines
    assert f"no-read {repo}/secret.txt" in lines
    assert f"read {worktree}/app.py" in lines
    assert f"config {home}/.claude" in lines
    # only the login was copied into its config folder; the person's settings were not
    assert [line for line in lines if line.startswith("configured ")] == [
        "configured .credentials.json"
    ]
    assert not Path(home).exists()  # removed after the call
    assert not (worktree / "planted.txt").exists() and not (repo / "planted.txt").exists()
    assert agent.last_isolation is not None and agent.last_isolation.startswith("bubblewrap")
    assert agent.last_args is not None and agent.last_args[0] == shutil.which("bwrap")
    for flag in isolated_flags():
        assert flag in agent.last_args


def test_without_bubblewrap_the_session_still_has_its_own_home_and_says_so(
    tmp_path: Path, layout: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(layout["state"]))
    agent = _probe_agent(tmp_path, layout, PLANGATE_BWRAP=str(tmp_path / "no-bwrap"))
    lines = _plan(agent, layout["worktree"])
    home = next(line.split(" ", 1)[1] for line in lines if line.startswith("home "))
    assert home != str(layout["home"]) and f"config {home}/.claude" in lines
    # Nothing stops the process itself here: the permission rules confine the CLI's tools.
    assert f"wrote {layout['worktree']}/planted.txt" in lines
    assert agent.last_isolation is not None
    assert agent.last_isolation.startswith("no operating-system sandbox (bubblewrap")
    assert "apt-get install bubblewrap" in agent.last_isolation
    assert agent.last_args is not None and agent.last_args[0].endswith("/claude")


def test_the_hidden_folders(layout: dict[str, Path], tmp_path: Path) -> None:
    environ = {"HOME": str(layout["home"]), "TMPDIR": str(tmp_path)}
    hidden = hidden_folders(layout["worktree"], environ, str(layout["state"]))
    # /tmp holds them all here (pytest's folders are in it): one mount hides them
    assert "/tmp" in hidden and "/root" in hidden and "/home" in hidden
    assert not any(folder.startswith("/tmp/") for folder in hidden)
    elsewhere = hidden_folders(layout["worktree"], {"HOME": "/var/lib"}, "/srv")
    assert {"/var/lib", "/srv", "/tmp"} <= set(elsewhere)


def test_the_confined_environment(layout: dict[str, Path]) -> None:
    environ = {"HOME": str(layout["home"]), "ANTHROPIC_API_KEY": "k", "PLANGATE_BWRAP": "off"}
    with confined(layout["worktree"], environ, Path("/usr/bin/true")) as confinement:
        env = confinement.environ
        assert env["ANTHROPIC_API_KEY"] == "k"
        assert env["HOME"] == str(confinement.home) != str(layout["home"])
        assert env["CLAUDE_CONFIG_DIR"] == str(confinement.home / ".claude")
        assert env["TMPDIR"] == str(confinement.home / "tmp")
        copied = confinement.home / ".claude" / ".credentials.json"
        assert copied.read_text() == '{"token":"t"}' and copied.stat().st_mode & 0o777 == 0o600
        assert confinement.prefix == () and not confinement.sandboxed
        assert "turned off" in confinement.note
    assert not confinement.home.exists()
    assert json.loads(isolated_flags()[-1]) == {"disableAllHooks": True}


REFRESH = """#!/bin/sh
echo '{"token":"refreshed"}' > "$CLAUDE_CONFIG_DIR/.credentials.json"
if [ -n "$OTHER_SESSION" ]; then echo '{"token":"other"}' > "$OTHER_SESSION"; fi
echo '{"type":"result","subtype":"success","is_error":false,"result":"NEEDS PERSON: x"}'
"""


@pytest.mark.parametrize("other_session", [False, True])
def test_a_refreshed_login_is_kept_unless_the_persons_changed_meanwhile(
    tmp_path: Path, layout: dict[str, Path], other_session: bool
) -> None:
    binary = tmp_path / "bin" / "claude"
    binary.parent.mkdir()
    binary.write_text(REFRESH)
    binary.chmod(0o755)
    login = layout["home"] / ".claude" / ".credentials.json"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(layout["home"]), "PLANGATE_BWRAP": "off"}
    if other_session:
        env["OTHER_SESSION"] = str(login)  # another session refreshes it at the same time
    ClaudeCodeAgent(binary=binary, env=env).plan(
        PlanRequest("r1", layout["worktree"], PLAN, None, (), (), "")
    )
    assert login.read_text().strip() == (
        '{"token":"other"}' if other_session else '{"token":"refreshed"}'
    )
    assert login.stat().st_mode & 0o777 == 0o600 or other_session
    assert [p.name for p in login.parent.iterdir() if "plangate-" in p.name] == []
