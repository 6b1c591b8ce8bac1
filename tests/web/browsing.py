"""What the browser tests share: Debian's Chromium driven by Playwright (a module that
imports this is skipped without it, and fails under ``PLANGATE_REQUIRE_ALL=1``), a tab at a
given size that fails its test on any page error, and the layout facts they measure. The
``browser`` and ``page`` fixtures are in ``conftest.py``."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip(
        f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium) "
        "to run the browser tests",
        allow_module_level=True,
    )

from playwright.sync_api import Browser, Page, sync_playwright  # noqa: E402

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


@contextmanager
def chromium() -> Iterator[Browser]:
    """Headless Chromium, for one test module (the ``browser`` fixture of ``conftest``)."""
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield launched
        finally:
            launched.close()


def png_size(path: Path) -> tuple[int, int]:
    width, height = struct.unpack(">II", path.read_bytes()[16:24])
    return width, height


@contextmanager
def tab_at(browser: Browser, width: int, height: int) -> Iterator[Page]:
    """A tab of ``width`` x ``height``; any page error or console error fails the test."""
    context = browser.new_context(viewport={"width": width, "height": height})
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


def box(page: Page, selector: str) -> dict[str, float]:
    """The bounding box of the one element ``selector`` finds, in page coordinates."""
    found = page.locator(selector).bounding_box()
    assert found is not None, f"{selector} is not drawn"
    scroll = page.evaluate("[window.scrollX, window.scrollY]")
    return {**found, "x": found["x"] + scroll[0], "y": found["y"] + scroll[1]}


def shot(page: Page, name: str) -> Path:
    """A screenshot of the viewport into ``.artifacts/``; its size checked."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    page.wait_for_function("document.fonts.status === 'loaded'")
    page.screenshot(path=str(path))
    size = page.viewport_size
    assert size is not None and png_size(path) == (size["width"], size["height"])
    return path
