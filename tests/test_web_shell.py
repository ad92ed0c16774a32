"""The web page's shell in headless Chromium: navigation, the not-found view, no errors."""

from __future__ import annotations

import re
from pathlib import Path

from tests.browser import WebPage
from tests.ui_server import game_server


def test_the_shell_marks_the_section_it_shows_and_says_when_a_page_does_not_exist(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    with game_server(tmp_path) as url:
        page.goto(url + "/web/bots")
        assert page.locator("nav a[aria-current=page]").inner_text() == "Bots"
        # The document's own 404 status is logged by Chromium: expected here.
        web_page.allowed_errors.append(re.compile(r"status of 404"))
        page.goto(url + "/web/nothing-here")
        assert page.locator("main h1").inner_text() == "Not found"
