"""``plangate journal survey`` on a Claude Code folder holding real journals.

The journals are copies of files from the public transcript corpus
(``../shared/corpus/public-transcripts``, located by :mod:`tests.corpus`), put
where Claude Code writes them: ``<config>/projects/<slug>/<session>.jsonl`` with the session id
of their records. Without the corpus these tests skip (:mod:`tests.corpus`).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from plangate import journal_survey
from plangate.errors import UsageError
from plangate.journal_survey import collect, survey
from testkit.journals import journal_path
from tests import corpus
from tests.corpus import CORPUS

# Main sessions of four Claude Code versions, all ready in the hook layout (test_corpus).
MAIN = {
    "agtrace/claude_session.jsonl": "2.0.28",
    "ai-systems/0bfd826f-14ed-4e00-8015-75bf5f7fe33f.jsonl": "2.0.55",
    "mimer/real_transcript.jsonl": "2.1.170",
    "spotter/short.jsonl": "2.1.38",
    "spotter/tool_heavy.jsonl": "2.1.38",
}
SUBAGENT = "ai-systems/agent-6d933f1b.jsonl"
MALFORMED_SESSION = "00000000-0000-4000-8000-00000000dead"
JOURNAL_KEYS = {
    "path",
    "project",
    "session_id",
    "bytes",
    "claude_code_version",
    "status",
    "reason",
    "detail",
    "seconds",
}


def root_record(path: Path) -> dict[str, Any]:
    """The first user record with a null parent (or the first user record), as test_corpus."""
    records = [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    users = [r for r in records if isinstance(r, dict) and r.get("type") == "user"]
    return next((r for r in users if r.get("parentUuid") is None), users[0])


class Folder:
    """A Claude Code config folder in a symlink-free temporary folder."""

    def __init__(self, tmp_path: Path) -> None:
        self.config = Path(os.path.realpath(tmp_path)) / "claude"
        self.config.mkdir()
        self.main: dict[str, Path] = {}
        for name, _version in MAIN.items():
            source = CORPUS / name
            root = root_record(source)
            target = journal_path(self.config, str(root["cwd"]), str(root["sessionId"]))
            shutil.copyfile(source, target)
            self.main[name] = target

    @property
    def projects(self) -> Path:
        return self.config / "projects"

    def add_ignored(self) -> list[Path]:
        """Files a survey must not read: subagents' journals, other files, a folder."""
        project = next(iter(self.main.values())).parent
        session = next(iter(self.main.values())).stem
        nested = project / session / "subagents" / "agent-a1.jsonl"
        nested.parent.mkdir(parents=True)
        ignored = [nested, project / "agent-6d933f1b.jsonl"]
        for path in ignored:
            shutil.copyfile(CORPUS / SUBAGENT, path)
        (project / "notes.txt").write_text("not a journal\n")
        (project / "history.jsonl.bak").write_text("not a journal\n")
        (project / "folder.jsonl").mkdir()
        (self.config / "history.jsonl").write_text("{}\n")
        return ignored

    def add_malformed(self) -> Path:
        target = journal_path(self.config, "/home/user/broken", MALFORMED_SESSION)
        lines = (CORPUS / "mimer/real_transcript.jsonl").read_bytes().splitlines(keepends=True)
        target.write_bytes(b"".join(lines[:2]) + b"{not json\n" + b"".join(lines[2:]))
        return target

    def fingerprint(self) -> dict[str, tuple[int, int, str]]:
        return {
            str(path): (path.stat().st_size, path.stat().st_mtime_ns, _digest(path))
            for path in sorted(self.config.rglob("*"))
            if path.is_file()
        }


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Folder:
    corpus.require()
    made = Folder(tmp_path)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(made.config))
    return made


def run_cli(*args: str, config: Path | str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(config)}
    return subprocess.run(
        [sys.executable, "-m", "plangate", "journal", "survey", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@corpus.needed
def test_every_real_main_journal_is_ready_and_nothing_is_written(folder: Folder) -> None:
    ignored = folder.add_ignored()
    before = folder.fingerprint()
    out = io.StringIO()
    assert survey(out=out) == 0
    assert folder.fingerprint() == before
    state = Path(os.environ["PLANGATE_STATE_ROOT"])
    assert not state.exists(), "the survey wrote to plangate's state root"
    report = collect()
    rows = {row["path"]: row for row in report["journals"]}
    assert set(rows) == {str(path) for path in folder.main.values()}
    assert not {str(path) for path in ignored} & set(rows)
    for name, path in folder.main.items():
        row = rows[str(path)]
        assert (row["status"], row["reason"]) == ("ready", None), row
        assert row["claude_code_version"] == MAIN[name]
        assert row["session_id"] == path.stem == root_record(path)["sessionId"]
        assert row["project"] == path.parent.name
        assert row["bytes"] == path.stat().st_size
    assert report["ready"] is True
    assert report["summary"]["by_verdict"] == {"ready": len(MAIN)}
    assert report["summary"]["by_version"]["2.1.38"] == {"journals": 2, "ready": 2}
    text = out.getvalue()
    assert "by verdict: ready 5" in text
    assert "by claude code version: 2.0.28 1 (1 ready), 2.0.55 1 (1 ready)," in text
    assert text.splitlines()[-1].endswith(
        "attach the output of `plangate journal survey --json` to a report; "
        "`plangate journal inspect --layout PATH` explains one journal"
    )


@corpus.needed
def test_a_malformed_journal_is_a_verdict_with_its_code(folder: Folder) -> None:
    broken = folder.add_malformed()
    out = io.StringIO()
    assert survey(out=out) == 1
    report = collect()
    row = next(row for row in report["journals"] if row["path"] == str(broken))
    assert (row["status"], row["reason"], row["session_id"]) == (
        "error",
        "malformed",
        MALFORMED_SESSION,
    )
    assert "line 3" in row["detail"]
    assert report["ready"] is False
    assert report["summary"]["by_verdict"] == {"error:malformed": 1, "ready": len(MAIN)}
    line = next(line for line in out.getvalue().splitlines() if MALFORMED_SESSION in line)
    assert line.split()[-2:] == ["error", "malformed"]
    assert "6 journals, 5 ready, 1 not:" in out.getvalue()


@corpus.needed
def test_odd_files_get_verdicts_not_tracebacks(folder: Folder) -> None:
    project = folder.projects / "-odd"
    project.mkdir()
    (project / "11111111-1111-4111-8111-111111111111.jsonl").write_bytes(b"")
    (project / "22222222-2222-4222-8222-222222222222.jsonl").write_bytes(b"\xff\xfe\x00garbage\n")
    os.mkfifo(project / "33333333-3333-4333-8333-333333333333.jsonl")
    os.symlink(
        next(iter(folder.main.values())), project / "44444444-4444-4444-8444-444444444444.jsonl"
    )
    (project / "not a session id.jsonl").write_bytes(b"{}\n")
    rows = {row["session_id"][:8]: row for row in collect()["journals"] if "-odd" in row["path"]}
    verdicts = {key: (row["status"], row["reason"]) for key, row in rows.items()}
    assert verdicts == {
        "11111111": ("missing", None),
        "22222222": ("error", "malformed"),
        "33333333": ("error", "identity"),
        "44444444": ("error", "identity"),
        "not a se": ("error", "identity"),
    }


@corpus.needed
def test_a_journal_over_the_time_budget_is_skipped_as_timeout(folder: Folder) -> None:
    report = collect(file_seconds=0.001)  # less than any process start
    assert {(row["status"], row["reason"]) for row in report["journals"]} == {("error", "timeout")}
    assert all(row["seconds"] < 5 for row in report["journals"])
    assert report["summary"]["by_verdict"] == {"error:timeout": len(MAIN)}


@corpus.needed
def test_a_worker_that_dies_is_reader_failed(
    folder: Folder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(journal_survey, "WORKER", "raise MemoryError('out of memory')")
    rows = collect()["journals"]
    assert {(row["status"], row["reason"]) for row in rows} == {("error", "reader_failed")}
    assert rows[0]["detail"] == "the reader failed: MemoryError: out of memory"


@corpus.needed
def test_since_keeps_journals_modified_in_the_last_days(folder: Folder) -> None:
    old = time.time() - 10 * 86400
    stale = [folder.main["spotter/short.jsonl"], folder.main["agtrace/claude_session.jsonl"]]
    for path in stale:
        os.utime(path, (old, old))
    kept = {row["path"] for row in collect(since_days=3)["journals"]}
    assert kept == {str(path) for path in folder.main.values()} - {str(p) for p in stale}
    assert len(collect(since_days=11)["journals"]) == len(MAIN)
    assert len(collect(since_days=0.5)["journals"]) == len(MAIN) - 2


@corpus.needed
@pytest.mark.parametrize("days", [0, -1, float("nan"), float("inf")])
def test_since_must_be_a_positive_number(folder: Folder, days: float) -> None:
    with pytest.raises(UsageError, match="positive number of days"):
        collect(since_days=days)


def test_no_journals_is_a_message_and_exit_0(tmp_path: Path) -> None:
    empty = tmp_path / "claude"
    empty.mkdir()
    result = run_cli(config=empty)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == f"no journals under {empty / 'projects'}\n"
    (empty / "projects" / "-p").mkdir(parents=True)
    as_json = json.loads(run_cli("--json", config=empty).stdout)
    assert (as_json["journals"], as_json["ready"]) == ([], True)


@corpus.needed
def test_the_cli_json_shape_and_exit_0(folder: Folder) -> None:
    folder.add_ignored()
    result = run_cli("--json", config=folder.config)
    assert (result.returncode, result.stderr) == (0, "")
    report = json.loads(result.stdout)
    assert list(report) == ["config_dir", "since_days", "journals", "summary", "ready"]
    assert report["config_dir"] == str(folder.config)
    assert len(report["journals"]) == len(MAIN)
    for row in report["journals"]:
        assert set(row) == JOURNAL_KEYS
        assert isinstance(row["bytes"], int) and isinstance(row["seconds"], float)
    assert list(report["summary"]) == ["journals", "ready", "by_verdict", "by_version"]
    assert report["summary"]["journals"] == report["summary"]["ready"] == len(MAIN)
    assert report["ready"] is True


@corpus.needed
def test_the_cli_exits_1_when_one_journal_is_not_ready(folder: Folder) -> None:
    folder.add_malformed()
    result = run_cli(config=folder.config)
    assert (result.returncode, result.stderr) == (1, "")
    assert "error:malformed 1" in result.stdout
    as_json = run_cli("--json", "--config-dir", str(folder.config), config="/nonexistent")
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["ready"] is False
    recent = run_cli("--since", "1", config=folder.config)
    assert recent.returncode == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--since", "0"], "--since 0 is not a positive number of days"),
        (["--since", "-2"], "--since -2 is not a positive number of days"),
        (["--since", "soon"], "invalid float value"),
        (["--config-dir", "/nonexistent/claude"], "no Claude Code config folder"),
        ([], "no Claude Code config folder"),
    ],
)
def test_the_cli_exits_2_for_bad_usage(args: list[str], message: str, tmp_path: Path) -> None:
    result = run_cli(*args, config=tmp_path / "missing")
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_the_docs_name_the_codes_exit_codes_and_the_time_budget() -> None:
    repo = Path(__file__).resolve().parents[2]
    doc = (repo / "docs" / "journal-survey.md").read_text(encoding="utf-8")
    for code in (journal_survey.TIMEOUT, journal_survey.READER_FAILED, journal_survey.UNREADABLE):
        assert f"| `{code}` |" in doc, code
    assert f"within {journal_survey.FILE_SECONDS:g} seconds" in doc
    for exit_code in (0, 1, 2):
        assert f"| {exit_code} |" in doc
    assert "plangate journal survey --json" in doc
    assert "plangate journal inspect --layout PATH" in doc
    readme = (repo / "README.md").read_text(encoding="utf-8")
    assert "| `plangate journal survey [--since DAYS] [--json] [--config-dir DIR]` |" in readme
