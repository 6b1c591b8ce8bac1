"""No plangate write follows a symbolic link planted in the state root (issue 24.1).

Each state file and folder the hooks write is replaced in turn by a link to something
outside the state root; real hook processes then run (the Stop gate armed and judging, the
guard deciding a phase entry), and the link's target must be exactly as it was. The gates
fail open with ``GATE_STATE`` when a folder or file they need is refused; the guard still
decides (its log is diagnostics).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from plangate.autoplan import layout
from plangate.gates import markers as mk
from tests.gates.conftest import Env, ceo_session

GUARD = (
    "from plangate.hooks.pre_tool_use import main; "
    "from plangate.hook_io.runtime import run_process; run_process(main)"
)
PRECIOUS = b"the user's own file\n"


def _snapshot(path: Path) -> dict[str, bytes]:
    """Every file under ``path`` (or ``path`` itself) with its bytes and mode."""
    if path.is_file():
        return {".": path.read_bytes() + oct(path.stat().st_mode).encode()}
    found: dict[str, bytes] = {}
    for folder, _, names in os.walk(path):
        found[os.path.relpath(folder, path) + "/"] = b""
        for name in names:
            full = Path(folder) / name
            found[str(full.relative_to(path))] = (
                full.read_bytes() + oct(full.stat().st_mode).encode()
            )
    return found


def _line(result: subprocess.CompletedProcess[bytes]) -> dict[str, Any]:
    assert result.returncode == 0 and b"Traceback" not in result.stderr, result.stderr
    lines = result.stdout.decode().splitlines()
    assert len(lines) == 1, lines
    value: dict[str, Any] = json.loads(lines[0])
    return value


def _guard(env: Env, tmp: Path) -> dict[str, Any]:
    """A phase-entry Agent call too large to decide: the guard denies it and logs it."""
    payload = {
        "session_id": "0f3e2c1a-1111-4222-8333-444455556666",
        "transcript_path": str(tmp / "none.jsonl"),
        "cwd": str(env.project),
        "hook_event_name": "PreToolUse",
        "tool_name": "Agent",
        "tool_input": {
            "prompt": layout.reviewer_line(layout.REVIEW_PHASES[0]) + "\n" + "x" * 70_000
        },
        "tool_use_id": "toolu_01",
    }
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("PLANGATE_", "CLAUDE"))}
    environ.update(env.environ)
    done = subprocess.run(
        [sys.executable, "-c", GUARD],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=environ,
        timeout=60,
    )
    return _line(done)


# (what is planted, relative to the state root; whether it is a folder; which hook writes it;
#  what else is planted first so that the write is reached)
CASES = [
    ("", True, "stop", ()),
    ("skill-gates", True, "stop", ()),
    ("skill-gates/{session}", True, "stop", ()),
    ("skill-gates/{session}/record.lock", False, "stop", ()),
    ("skill-gates/{session}/record.json", False, "stop", ()),
    ("skill-gates/{session}/errors.pending.jsonl", False, "stop", ("record.lock",)),
    ("hooks", True, "stop", ()),
    ("hooks/ceo-review-gate.log", False, "stop", ()),
    ("", True, "guard", ()),
    ("analytics", True, "guard", ()),
    ("analytics/autoplan-guard.jsonl", False, "guard", ()),
]


@pytest.mark.parametrize(
    ("planted", "folder", "hook", "also"), CASES, ids=[f"{c[2]}:{c[0] or 'root'}" for c in CASES]
)
def test_a_planted_link_is_never_written_through(
    env: Env, tmp_path: Path, planted: str, folder: bool, hook: str, also: tuple[str, ...]
) -> None:
    journal = ceo_session(env)
    journal.text("Done.")
    payload = env.payload(journal)
    place = env.state / planted.format(session=payload["session_id"])
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / ("folder" if folder else "file")
    if folder:
        target.mkdir()
        (target / "keep.txt").write_bytes(PRECIOUS)
    else:
        target.write_bytes(PRECIOUS)
        target.chmod(0o644)
    place.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    for name in also:  # planted too, so that the write under test is reached
        (place.parent / name).symlink_to(outside / "elsewhere")
    place.symlink_to(target)
    before = _snapshot(outside)

    if hook == "stop":
        output = _line(env.hook(payload))
        errors = [
            parsed[2]
            for parsed in map(mk.parse, mk.find_all(str(output.get("systemMessage", ""))))
            if parsed is not None and parsed[1] == mk.ERROR
        ]
        if planted.startswith("hooks"):
            assert output["decision"] == "block"  # the trace log is not the count source
        else:
            assert "decision" not in output  # the gate failed open
            assert [e["code"] for e in errors] == ["GATE_STATE"] * len(errors) and errors
            assert all("symbolic link" in e["why"] for e in errors), errors
    else:
        output = _guard(env, tmp_path)
        assert output["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert _snapshot(outside) == before
    assert place.is_symlink()  # refused, not silently replaced


def test_a_state_folder_of_another_user_is_refused(tmp_path: Path) -> None:
    from plangate.state_root import UNSAFE, StateRoot, UnsafeFolder

    if os.geteuid() != 0:
        pytest.skip("making a folder another user's needs root")
    root = tmp_path / "state"
    (root / "analytics").mkdir(parents=True)
    os.chown(root / "analytics", 12345, 12345)
    with pytest.raises(UnsafeFolder) as refused:
        StateRoot(str(root)).folder("analytics")
    assert UNSAFE in str(refused.value) and "another user" in str(refused.value)
    assert "PLANGATE_STATE_ROOT" in refused.value.remedy


def test_a_state_folder_is_made_private_and_checked_from_the_root_down(tmp_path: Path) -> None:
    from plangate.state_root import StateRoot, UnsafeFolder

    root = tmp_path / "state"
    made = Path(StateRoot(str(root)).folder("skill-gates", "s1").path)
    assert made == root / "skill-gates" / "s1" and made.is_dir()
    assert (made.stat().st_mode & 0o777) == 0o700
    (root / "hooks").write_text("not a folder")
    with pytest.raises(UnsafeFolder, match="is not a folder"):
        StateRoot(str(root)).folder("hooks")
    with pytest.raises(FileNotFoundError):
        StateRoot(str(root)).folder("analytics", create=False)
