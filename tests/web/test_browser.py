"""The viewer in a real headless Chromium (Debian's ``chromium``, driven by Playwright)
against a real ``plangate serve`` on a free loopback port.

The screenshots are kept as test artifacts in ``.artifacts/`` at the repository root.
"""

from __future__ import annotations

import os
import select
import signal
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip(
        f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium) "
        "to run the browser tests",
        allow_module_level=True,
    )

from playwright.sync_api import Browser, Page, expect, sync_playwright  # noqa: E402

from plangate.runs.store import Store  # noqa: E402
from tests.web.builders import LOGIN, README, build_all  # noqa: E402

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / ".artifacts"
START_SECONDS = 30.0

pytestmark = pytest.mark.slow


@dataclass
class Server:
    base: str
    url: str
    root: Path
    process: subprocess.Popen[str]

    def store(self) -> Store:
        return Store(self.url)


def _start(root: Path) -> Server:
    """``plangate serve --port 0`` over the runs under ``root``; its address once it answers."""
    url, _repo = build_all(root)
    env = {
        **os.environ,
        "PLANGATE_STATE_ROOT": str(root / "state"),
        "PLANGATE_DATABASE_URL": url,
        "PYTHONUNBUFFERED": "1",
    }
    log = open(root / "serve.log", "w")  # noqa: SIM115 - the server writes it until it stops
    process = subprocess.Popen(
        [sys.executable, "-m", "plangate", "serve", "--port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        start_new_session=True,
    )
    log.close()
    assert process.stdout is not None
    deadline = time.monotonic() + START_SECONDS
    line = ""
    while time.monotonic() < deadline and process.poll() is None:
        ready, _, _ = select.select([process.stdout], [], [], 0.2)
        if ready:
            line = process.stdout.readline()
            break
    if not line.startswith("Run viewer at http://127.0.0.1:"):
        process.kill()
        process.wait()
        raise AssertionError(f"plangate serve did not start: {line!r}\n{_log(root)}")
    base = line.split(" at ", 1)[1].split("/runs", 1)[0]
    return Server(base, url, root, process)


def _log(root: Path) -> str:
    path = root / "serve.log"
    return path.read_text() if path.exists() else ""


def _stop(server: Server) -> None:
    if server.process.poll() is None:
        server.process.send_signal(signal.SIGINT)
        try:
            server.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()
    if server.process.stdout is not None:
        server.process.stdout.close()
    _stop_workers(server)


def _stop_workers(server: Server) -> None:
    """The background worker a reply started ends by itself when idle; wait for it."""
    store = server.store()
    try:
        pids = [row[2] for row in store.executors() if row[3] == "worker"]
    finally:
        store.close()
    deadline = time.monotonic() + 20
    for pid in pids:
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.2)
        if _alive(pid):
            os.kill(pid, signal.SIGTERM)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = _start(tmp_path_factory.mktemp("web-browser"))
    try:
        yield running
    finally:
        _stop(running)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.on(
        "console", lambda message: errors.append(message.text) if message.type == "error" else None
    )
    try:
        yield tab
        assert errors == []
    finally:
        context.close()


def png_size(path: Path) -> tuple[int, int]:
    width, height = struct.unpack(">II", path.read_bytes()[16:24])
    return width, height


def test_runs_list(server: Server, page: Page) -> None:
    page.goto(f"{server.base}/runs")
    rows = page.locator("tr.run-row")
    expect(rows).to_have_count(4)
    login = page.locator(f"tr[data-run='{LOGIN}']")
    expect(login.locator(".badge")).to_have_text("Waiting on you")
    expect(login.locator(".meter-text")).to_have_text("3 of 3 attempts used")
    expect(page.locator(f"tr[data-run='{README}'] .badge")).to_have_text("Running")
    expect(login.locator(".cell-event")).to_contain_text("Waiting on you: The checks fail")
    login.get_by_role("link", name="Rate-limit the login endpoint").click()
    expect(page).to_have_url(f"{server.base}/runs/{LOGIN}")
    expect(page.locator("h1")).to_have_text("Rate-limit the login endpoint")


def test_run_page_with_three_versions(server: Server, page: Page) -> None:
    page.goto(f"{server.base}/runs/{LOGIN}")
    expect(page.locator(".plan-panel .version-of")).to_have_text("Version 3 of 3")
    expect(page.locator(".versions .version:not(.refused)")).to_have_count(3)
    expect(page.locator(".steps .step")).to_have_count(4)
    expect(page.locator("#step-4 .chip-origin-added")).to_have_text("new in v3")
    expect(page.locator(".composer")).to_contain_text("Waiting on you")
    expect(page.locator(".composer")).to_contain_text("out of attempts")
    card = page.locator(".event-card.kind-plan_changed").first
    expect(card).to_contain_text("Plan changed to version 2: A check failed.")
    card.locator("summary").click()
    expect(card.locator(".failure-summary")).to_contain_text("check Tests")
    card.get_by_role("link", name="View version 2").click()
    expect(page).to_have_url(f"{server.base}/runs/{LOGIN}/versions/2")
    expect(page.locator(".plan-panel .version-of")).to_have_text("Version 2 of 3")
    why = page.locator("#why-this-version")
    expect(why).to_contain_text("A check failed.")
    expect(why.locator("pre.tail")).to_contain_text("2 failed, 1 passed")
    page.get_by_role("link", name="See version 1").first.click()
    expect(page).to_have_url(f"{server.base}/runs/{LOGIN}/versions/1")
    expect(page.locator("#why-this-version")).to_contain_text("The plan the run started with.")


def test_version_diff(server: Server, page: Page) -> None:
    page.goto(f"{server.base}/runs/{LOGIN}/diff?from=1&to=3")
    expect(page.locator(".diff-title")).to_have_text("Version 1 → version 3")
    table = page.locator(".only-wide table.diff-split")
    expect(table).to_be_visible()
    expect(table.locator("td.code-add").first).to_have_text(
        "### Step 3: Reset the count after a good password"
    )
    expect(page.locator(".chip-steps-added")).to_have_text("added: steps 3, 4")
    page.locator("select[name='from']").select_option("2")  # the page submits itself
    expect(page).to_have_url(f"{server.base}/runs/{LOGIN}/diff?from=2&to=3&view=auto")
    expect(page.locator(".diff-stat")).to_contain_text("+6")
    page.get_by_role("link", name="Unified").click()
    expect(page.locator("table.diff-unified")).to_be_visible()
    expect(page.locator("table.diff-split")).to_have_count(0)


def test_screenshot_of_the_run_page(server: Server, browser: Browser) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    shots = {
        "run-page-1280x800.png": {"width": 1280, "height": 800},
        "run-page-phone-390x844.png": {"width": 390, "height": 844},
    }
    for name, viewport in shots.items():
        context = browser.new_context(viewport=viewport)  # type: ignore[arg-type]
        try:
            tab = context.new_page()
            tab.goto(f"{server.base}/runs/{LOGIN}")
            expect(tab.locator(".composer textarea")).to_be_visible()
            tab.wait_for_function("document.fonts.status === 'loaded'")
            path = ARTIFACTS / name
            tab.screenshot(path=str(path))
        finally:
            context.close()
        assert png_size(path) == (viewport["width"], viewport["height"])


def test_live_update_without_reload(server: Server, page: Page) -> None:
    listing = page.context.new_page()
    listing.goto(f"{server.base}/runs")
    expect(listing.locator(f"tr[data-run='{README}'] .badge")).to_have_text("Running")
    listing.evaluate("window.__notReloaded = true")
    page.goto(f"{server.base}/runs/{README}")
    expect(page.locator(".badge")).to_have_text("Running")
    page.evaluate("window.__notReloaded = true")
    store = server.store()
    try:
        with store.transaction() as conn:
            store.add_event(
                conn, README, "t1/a0/v1/s1/agent", 1, "agent", "Wrote the paragraph on limits."
            )
            store.update_run(conn, README, state="checking")
    finally:
        store.close()
    expect(page.locator(".msg-agent .bubble").last).to_have_text(
        "Wrote the paragraph on limits.", timeout=10_000
    )
    expect(page.locator(".run-header .badge")).to_have_text("Checking")
    assert page.evaluate("window.__notReloaded") is True
    row = listing.locator(f"tr[data-run='{README}']")
    expect(row.locator(".badge")).to_have_text("Checking", timeout=10_000)
    expect(row.locator(".cell-event")).to_contain_text("Wrote the paragraph on limits.")
    assert listing.evaluate("window.__notReloaded") is True


@pytest.fixture
def reply_server(tmp_path: Path) -> Iterator[Server]:
    running = _start(tmp_path)
    try:
        yield running
    finally:
        _stop(running)


def test_reply_flow(reply_server: Server, page: Page) -> None:
    server = reply_server
    page.goto(f"{server.base}/runs/{LOGIN}")
    page.evaluate("window.__notReloaded = true")
    message = "Send Retry-After as a whole number of seconds, as a string."
    page.locator("#reply-message").fill(message)
    page.get_by_role("button", name="Send and start turn 2").click()
    expect(page).to_have_url(f"{server.base}/runs/{LOGIN}")
    expect(page.locator(".msg-you .bubble").last).to_have_text(message)
    store = server.store()
    try:
        run = store.run(LOGIN)
        assert run is not None and run.turn == 2
        assert store.reply(LOGIN, 2) == message
    finally:
        store.close()
    # The reply started turn 2 on the run queue and a background worker carries it: the
    # page follows it live, to the end.
    page.evaluate("window.__notReloaded = true")
    messages = page.locator(".messages")
    expect(messages).to_contain_text("Turn 2: carrying on.", timeout=90_000)
    expect(page.locator(".run-header .badge")).to_have_text("Done", timeout=90_000)
    expect(messages).to_contain_text("Retry-After is now a whole number of seconds")
    expect(messages).to_contain_text("Check Tests")
    assert page.evaluate("window.__notReloaded") is True
    ARTIFACTS.mkdir(exist_ok=True)
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(ARTIFACTS / "run-page-after-reply-1280x800.png"))
    done = server.store()
    try:
        final: Any = done.run(LOGIN)
        assert (final.state, final.turn) == ("done", 2)
    finally:
        done.close()
