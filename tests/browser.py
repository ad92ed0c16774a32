"""Headless Chromium for the web page's tests: the system's browser, driven by Playwright.

Nothing is downloaded: Playwright launches the Chromium of the system's packages
(Debian ``chromium``, installed by ``make test`` like PostgreSQL) or the executable named
by ``HTTTX_CHROMIUM``. Use the fixtures::

    def test_title(web_page: WebPage, tmp_path: Path) -> None:
        with game_server(tmp_path) as url:
            web_page.page.goto(url + "/")

``web_page`` fails the test at teardown if the page logged a console error or threw:
"no console errors" is part of every page test. A test that expects one (a dropped
socket) lists it in ``web_page.allowed_errors``.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Error, Page, Playwright, sync_playwright

__all__ = [
    "DESKTOP",
    "LINES_PER_CELL",
    "PHONE",
    "WebPage",
    "chromium",
    "chromium_executable",
    "web_page",
]

#: Viewports the tests and screenshots use: a laptop and a phone (one column).
DESKTOP = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}

#: For ``locator.evaluate_all``: how many lines each cell's text takes, a list. Only
#: the text's boxes count: an element's own box (an inline-flex one, taller than the
#: text in it) would count as a line of its own.
LINES_PER_CELL = """cells => cells.map((cell) => {
  const tops = new Set();
  const texts = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let text = texts.nextNode(); text; text = texts.nextNode()) {
    const range = document.createRange();
    range.selectNodeContents(text);
    for (const rect of range.getClientRects()) if (rect.width) tops.add(Math.round(rect.top));
  }
  return tops.size;
})"""

#: Flags that keep Chromium from reaching out to the internet on this closed machine.
CHROMIUM_FLAGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
)


def chromium_executable() -> str:
    """The system's Chromium: ``HTTTX_CHROMIUM`` or the first of the usual names."""
    named = os.environ.get("HTTTX_CHROMIUM")
    if named:
        return named
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        if path := shutil.which(name):
            return path
    raise RuntimeError(
        "the web page's tests need Chromium: `make test` installs Debian's chromium, or "
        "set HTTTX_CHROMIUM to a Chromium or Chrome executable"
    )


@dataclass
class WebPage:
    """A browser tab and what it logged."""

    page: Page
    errors: list[str] = field(default_factory=list)
    #: Patterns of console errors a test expects (a socket it dropped on purpose).
    allowed_errors: list[re.Pattern[str]] = field(default_factory=list)

    def unexpected_errors(self) -> list[str]:
        return [e for e in self.errors if not any(p.search(e) for p in self.allowed_errors)]


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    playwright: Playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(
            executable_path=chromium_executable(), args=list(CHROMIUM_FLAGS), headless=True
        )
        try:
            yield browser
        finally:
            browser.close()
    finally:
        playwright.stop()


@pytest.fixture
def web_page(chromium: Browser) -> Iterator[WebPage]:
    context = chromium.new_context(viewport=DESKTOP)  # type: ignore[arg-type]
    page = context.new_page()
    page.set_default_timeout(15_000)
    watched = WebPage(page)

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            watched.errors.append(f"console: {message.text}")

    def on_page_error(error: Error) -> None:
        watched.errors.append(f"exception: {error}")

    page.on("console", on_console)
    page.on("pageerror", on_page_error)
    try:
        yield watched
    finally:
        context.close()
    assert not watched.unexpected_errors(), watched.unexpected_errors()
