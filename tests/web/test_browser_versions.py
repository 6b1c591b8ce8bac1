"""Plan versions in a real headless Chromium against a real ``plangate serve``, at a laptop's
1280x800 and a phone's 390x844, measured by bounding boxes:

* "View version N" in the conversation opens that version above the conversation, at both
  sizes, without a page load (and the version's own address loads the same layout);
* the Plan panel holds the Version list, and picking a version in it shows that version with
  its "Why this version" in place, without a page load;
* waiting on a failing check, the waiting box shows the agent's last message.

Screenshots go to ``.artifacts/``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.web.browsing import box, shot, tab_at
from tests.web.builders import LOGIN
from tests.web.serve import Server, start, stop

from playwright.sync_api import Browser, Page, expect  # isort: skip (after browsing's check)

pytestmark = pytest.mark.slow
SIZES = [(1280, 800), (390, 844)]
WIDE = 961  # the layout puts the plan beside the conversation from this width up


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = start(tmp_path_factory.mktemp("web-versions"))
    try:
        yield running
    finally:
        stop(running)


def above(page: Page, top: str, below: str) -> None:
    """``top`` ends above where ``below`` starts, in the same column (same left edge)."""
    upper, lower = box(page, top), box(page, below)
    assert upper["y"] + upper["height"] <= lower["y"] + 0.5, (upper, lower)
    assert abs(upper["x"] - lower["x"]) < 1 and abs(upper["width"] - lower["width"]) < 1


def beside(page: Page, left: str, right: str) -> None:
    """``right`` is to the right of ``left``, their tops level."""
    first, second = box(page, left), box(page, right)
    assert first["x"] + first["width"] <= second["x"] + 0.5, (first, second)
    assert abs(first["y"] - second["y"]) < 1, (first, second)


def not_reloaded(page: Page) -> None:
    assert page.evaluate("window.__notReloaded") is True


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_view_version_opens_it_above_the_conversation(
    server: Server, browser: Browser, width: int, height: int
) -> None:
    with tab_at(browser, width, height) as page:
        page.goto(f"{server.base}/runs/{LOGIN}")
        page.evaluate("window.__notReloaded = true")
        if width >= WIDE:
            beside(page, "#conversation", "#plan")
        else:
            above(page, "#conversation", "#plan")
        card = page.locator(".event-card.kind-plan_changed").first
        card.get_by_role("link", name="View version 2").click()
        expect(page).to_have_url(f"{server.base}/runs/{LOGIN}/versions/2")
        expect(page.locator("#plan .version-of")).to_have_text("Version 2 of 3")
        not_reloaded(page)
        above(page, "#plan", "#conversation")
        why = page.locator("#plan #why-this-version")
        expect(why).to_contain_text("A check failed.")
        expect(why.locator("pre.tail")).to_contain_text("2 failed, 1 passed")
        page.evaluate("window.scrollTo(0, 0)")
        shot(page, f"version-2-above-conversation-{width}x{height}.png")
        # The version's own address loads the same layout.
        page.goto(f"{server.base}/runs/{LOGIN}/versions/2")
        above(page, "#plan", "#conversation")
        # "See version 1" in it opens version 1 there, still above the conversation.
        page.evaluate("window.__notReloaded = true")
        page.locator("#plan").get_by_role("link", name="See version 1").click()
        expect(page.locator("#plan .version-of")).to_have_text("Version 1 of 3")
        expect(page.locator("#plan #why-this-version")).to_contain_text(
            "The plan the run started with."
        )
        above(page, "#plan", "#conversation")
        # Back to the run: the plan beside the conversation again (below it on a phone).
        page.locator("#plan").get_by_role("link", name="Back to the run").click()
        expect(page).to_have_url(f"{server.base}/runs/{LOGIN}")
        expect(page.locator("#plan .version-of")).to_have_text("Version 3 of 3")
        not_reloaded(page)
        if width >= WIDE:
            beside(page, "#conversation", "#plan")
        else:
            above(page, "#conversation", "#plan")


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_the_plan_panel_holds_the_version_list(
    server: Server, browser: Browser, width: int, height: int
) -> None:
    with tab_at(browser, width, height) as page:
        page.goto(f"{server.base}/runs/{LOGIN}")
        page.evaluate("window.__notReloaded = true")
        listing = page.locator("#plan #versions")
        expect(listing).to_have_count(1)
        expect(listing.locator(".section-title")).to_have_text("Version list")
        expect(page.locator(".versions-panel")).to_have_count(0)  # no separate card
        plan, versions = box(page, "#plan"), box(page, "#plan #versions")
        assert plan["y"] <= versions["y"] and versions["y"] + versions["height"] <= (
            plan["y"] + plan["height"] + 0.5
        )
        listing.get_by_role("link", name="Version 1", exact=True).click()
        expect(page).to_have_url(f"{server.base}/runs/{LOGIN}/versions/1")
        expect(page.locator("#plan .version-of")).to_have_text("Version 1 of 3")
        expect(page.locator("#plan #why-this-version")).to_contain_text(
            "The plan the run started with."
        )
        expect(page.locator("#plan #version-1")).to_have_class("version selected")
        not_reloaded(page)
        # Picking from the list keeps the layout it was picked in.
        if width >= WIDE:
            beside(page, "#conversation", "#plan")
        page.locator("#plan #versions").get_by_role("link", name="Version 2", exact=True).click()
        expect(page.locator("#plan .version-of")).to_have_text("Version 2 of 3")
        why = page.locator("#plan #why-this-version")
        expect(why).to_contain_text("A check failed.")
        expect(why.locator(".failure-summary")).to_contain_text("check Tests")
        not_reloaded(page)
        page.locator("#plan #versions").scroll_into_view_if_needed()
        shot(page, f"plan-panel-version-list-{width}x{height}.png")


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_waiting_on_a_failing_check_shows_the_agents_last_message(
    server: Server, browser: Browser, width: int, height: int
) -> None:
    with tab_at(browser, width, height) as page:
        page.goto(f"{server.base}/runs/{LOGIN}")
        last = page.locator(".composer.waiting .last-message")
        expect(last).to_be_visible()
        expect(last).to_contain_text("The agent's last message")
        expect(last).to_contain_text("the plan does not say how to write the value")
        composer, inside = box(page, ".composer.waiting"), box(page, ".composer .last-message")
        assert composer["y"] <= inside["y"]
        assert inside["y"] + inside["height"] <= composer["y"] + composer["height"]
        page.locator(".composer").scroll_into_view_if_needed()
        shot(page, f"waiting-box-last-message-{width}x{height}.png")
