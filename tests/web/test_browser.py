"""The viewer in a real headless Chromium (Debian's ``chromium``, driven by Playwright)
against a real ``plangate serve`` on a free loopback port.

The screenshots are kept as test artifacts in ``.artifacts/`` at the repository root.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.web.browsing import ARTIFACTS, png_size
from tests.web.builders import LOGIN, README
from tests.web.serve import Server, start, stop

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = start(tmp_path_factory.mktemp("web-browser"))
    try:
        yield running
    finally:
        stop(running)


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
    running = start(tmp_path)
    try:
        yield running
    finally:
        stop(running)


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
    # Turn 2 has attempts of its own, and the header says what turn 1 spent.
    expect(page.locator(".run-header .meter-text")).to_have_text(
        "Attempts: 0 of 3 used in turn 2 (a new turn has attempts of its own; turn 1 used 3)"
    )
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
