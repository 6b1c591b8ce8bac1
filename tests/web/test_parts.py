"""The viewer's parts on their own: diff rows, git diffs, read-only URLs, an empty or missing
database, and ``serve``'s refusals."""

from __future__ import annotations

import io
import socket
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from plangate.commands.serve import serve
from plangate.errors import UsageError
from plangate.runs.store import Store
from plangate.web import diffs
from plangate.web.app import create_app
from plangate.web.queries import read_only_url
from tests.web.builders import LOGIN, README
from tests.web.conftest import BASE_URL, Site
from tests.web.test_pages import text_of


def test_text_diff_rows_and_split_rows() -> None:
    diff = diffs.text_diff("a\nb\nc\n", "a\nB!\nc\nd\n", old_name="v1", new_name="v2")
    kinds = [(row["kind"], row["old"], row["new"], row["text"]) for row in diff["rows"]]
    assert kinds == [
        ("hunk", None, None, "@@ -1,3 +1,4 @@"),
        ("context", 1, 1, "a"),
        ("del", 2, None, "b"),
        ("add", None, 2, "B!"),
        ("context", 3, 3, "c"),
        ("add", None, 4, "d"),
    ]
    assert (diff["added"], diff["removed"], diff["same"]) == (2, 1, False)
    split = [
        (row["left"] and row["left"]["text"], row["right"] and row["right"]["text"])
        for row in diff["split"]
        if row["kind"] == "row"
    ]
    assert split == [("a", "a"), ("b", "B!"), ("c", "c"), (None, "d")]
    same = diffs.text_diff("x\n", "x\n", old_name="v1", new_name="v2")
    assert (same["rows"], same["unified"], same["same"]) == ([], "", True)


def test_changed_parts_of_a_replaced_line() -> None:
    rows = diffs.parse_hunks(["@@ -1 +1 @@", "-return 401, {}", "+return 429, {}"])
    assert rows[1]["parts"] == [["return 4", False], ["01", True], [", {}", False]]
    assert rows[2]["parts"] == [["return 4", False], ["29", True], [", {}", False]]
    whole = diffs.parse_hunks(["@@ -1 +1 @@", "-abc", "+xyz"])
    assert whole[1]["parts"] == [["abc", True]] and whole[2]["parts"] == [["xyz", True]]


def test_git_diff_files() -> None:
    text = (
        "diff --git a/new.txt b/new.txt\n"
        "new file mode 100644\n"
        "index 0000000..3b18e51\n"
        "--- /dev/null\n"
        "+++ b/new.txt\n"
        "@@ -0,0 +1 @@\n"
        "+hello\n"
        "diff --git a/old.txt b/old.txt\n"
        "deleted file mode 100644\n"
        "--- a/old.txt\n"
        "+++ /dev/null\n"
        "@@ -1,2 +0,0 @@\n"
        "-one\n"
        "-two\n"
        "\\ No newline at end of file\n"
        "diff --git a/logo.png b/logo.png\n"
        "index 1..2 100644\n"
        "Binary files a/logo.png and b/logo.png differ\n"
    )
    files = diffs.parse_git_diff(text)
    assert [(f["path"], f["status"], f["added"], f["removed"], f["binary"]) for f in files] == [
        ("new.txt", "added", 1, 0, False),
        ("old.txt", "deleted", 0, 2, False),
        ("logo.png", "modified", 0, 0, True),
    ]
    assert files[1]["rows"][-1]["kind"] == "note"
    assert diffs.parse_git_diff("") == []


def test_read_only_urls(tmp_path: Path) -> None:
    url = read_only_url(f"sqlite:///{tmp_path}/a b/runs.db")
    assert url == f"sqlite:///file:{tmp_path}/a%20b/runs.db?mode=ro&uri=true"
    assert read_only_url("postgresql://u:p@db/runs") == "postgresql+psycopg://u:p@db/runs"


def test_an_empty_database_says_how_to_start(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    Store(url).close()
    with TestClient(create_app(url), base_url=BASE_URL) as client:
        words = text_of(client.get("/runs").text)
        assert "No runs yet" in words and "plangate run PLAN.md" in words
        assert client.get("/runs.json").json()["runs"] == []


def test_a_missing_database_is_one_clear_error(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'nothing' / 'runs.db'}"
    with TestClient(create_app(url), base_url=BASE_URL) as client:
        page = client.get("/runs")
        assert page.status_code == 503
        assert text_of(page.text).count("There is no runs database at") == 1
        error = client.get("/runs.json").json()["error"]
        assert error["remedy"] == "start a run with `plangate run`, or set PLANGATE_DATABASE_URL"
    assert not (tmp_path / "nothing").exists()  # reading made nothing


def test_serve_listens_on_this_machine_only() -> None:
    with pytest.raises(UsageError, match="listens on this machine only, not on '0.0.0.0'"):
        serve("0.0.0.0", 8765, False, io.StringIO())
    with pytest.raises(UsageError, match="is not a port"):
        serve("127.0.0.1", 70000, False, io.StringIO())


def test_serve_says_when_the_port_is_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANGATE_DATABASE_URL", f"sqlite:///{tmp_path / 'runs.db'}")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(UsageError, match=f"port {port} on 127.0.0.1 is in use"):
            serve("127.0.0.1", port, False, io.StringIO())


def test_a_run_whose_process_is_gone_says_interrupted(
    fresh: Site, fresh_client: TestClient
) -> None:
    store = Store(fresh.url)
    try:
        with store.transaction() as conn:
            store.update_run(conn, README, executor="gone-host-1-abc")
    finally:
        store.close()
    row = {r["id"]: r for r in fresh_client.get("/runs.json").json()["runs"]}[README]
    assert row["interrupted"] is True
    words = text_of(fresh_client.get(f"/runs/{README}").text)
    assert "Running · interrupted" in words
    assert "plangate worker --until-idle resumes it" in words


def test_a_repository_that_is_gone_is_one_line_on_the_changes_page(
    fresh: Site, fresh_client: TestClient
) -> None:
    store = Store(fresh.url)
    try:
        with store.transaction() as conn:
            store.update_run(conn, LOGIN, repo=str(fresh.root / "moved"))
    finally:
        store.close()
    data = fresh_client.get(f"/runs/{LOGIN}/changes.json").json()
    assert data["error"] == f"the run's repository {fresh.root / 'moved'} is not there any more"
    words = text_of(fresh_client.get(f"/runs/{LOGIN}/changes").text)
    assert words.count("Cannot read the change: the run's repository") == 1
