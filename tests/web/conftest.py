"""Shared set-up for the viewer's tests: a runs database filled the way the engine fills it
(:mod:`tests.web.builders`), and the app in this process over it."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from starlette.testclient import TestClient

from plangate.web.app import create_app
from plangate.web.reply import EngineReplier
from tests.web.builders import build_all

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

BASE_URL = "http://127.0.0.1"


@dataclass(frozen=True)
class Site:
    root: Path
    url: str
    repo: Path


def _build(root: Path) -> Site:
    url, repo = build_all(root)
    return Site(root, url, repo)


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Site:
    """The four runs, for tests that only read."""
    return _build(tmp_path_factory.mktemp("web-runs"))


@pytest.fixture
def fresh(built: Site, tmp_path: Path) -> Site:
    """A copy of the runs database for a test that writes (the repository is shared)."""
    source = Path(built.url.removeprefix("sqlite:///"))
    target = tmp_path / "runs.db"
    with (
        closing(sqlite3.connect(f"file:{source}?mode=ro", uri=True)) as src,
        closing(sqlite3.connect(target)) as dst,
    ):
        src.backup(dst)
    return Site(tmp_path, f"sqlite:///{target}", built.repo)


def client_for(site: Site) -> TestClient:
    # The engine records the reply; no turn is started (that needs a worker: see the browser
    # tests, which run one).
    app = create_app(site.url, replier=EngineReplier(site.url, start_turn=False))
    return TestClient(app, base_url=BASE_URL)


@pytest.fixture(scope="session")
def client(built: Site) -> Iterator[TestClient]:
    with client_for(built) as test_client:
        yield test_client


@pytest.fixture
def fresh_client(fresh: Site) -> Iterator[TestClient]:
    with client_for(fresh) as test_client:
        yield test_client


# -- the browser tests' Chromium (tests.web.browsing skips a module that lacks it) ---------


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    from tests.web.browsing import chromium

    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    from tests.web.browsing import tab_at

    with tab_at(browser, 1280, 800) as tab:
        yield tab
