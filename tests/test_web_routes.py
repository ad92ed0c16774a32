"""The web page's routes: the shell on every page path, static files with revalidation,
and the API's JSON routes untouched."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.ui_server import game_server


@dataclass
class Answer:
    status_code: int
    headers: dict[str, str]
    text: str


def get(url: str, headers: dict[str, str] | None = None) -> Answer:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            status, head, body = response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        status, head, body = error.code, error.headers, error.read()
    return Answer(status, {k.lower(): v for k, v in head.items()}, body.decode())


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    with game_server(tmp_path) as url:
        yield url


PAGE_PATHS = ["/", "/g/a-game", "/t/a-tournament", "/web/games", "/web/bots", "/web/tournaments"]


@pytest.mark.parametrize("path", PAGE_PATHS)
def test_every_page_path_answers_the_html_shell(server: str, path: str) -> None:
    response = get(server + path)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="/static/app.js">' in response.text


def test_an_unknown_view_is_a_404_that_still_shows_the_page(server: str) -> None:
    response = get(server + "/web/nothing-here")
    assert response.status_code == 404
    assert "/static/app.js" in response.text


def test_static_files_are_served_with_their_types_and_revalidated(server: str) -> None:
    script = get(server + "/static/app.js")
    assert script.status_code == 200
    assert "javascript" in script.headers["content-type"]
    assert script.headers["cache-control"] == "no-cache"
    again = get(server + "/static/app.js", headers={"if-none-match": script.headers["etag"]})
    assert again.status_code == 304
    assert get(server + "/static/app.css").headers["content-type"].startswith("text/css")
    assert get(server + "/static/nope.js").status_code == 404


@pytest.mark.parametrize("path", ["/", "/g/a-game", "/web/nothing-here"])
def test_the_page_runs_only_this_servers_scripts_and_is_framed_by_no_one(
    server: str, path: str
) -> None:
    headers = get(server + path).headers
    directives = headers["content-security-policy"].split("; ")
    policy = {name: value for name, _, value in (d.partition(" ") for d in directives)}
    host = server.split("://", 1)[1]
    assert policy["default-src"] == "'none'"
    assert policy["script-src"] == policy["style-src"] == policy["img-src"] == "'self'"
    assert policy["connect-src"] == f"'self' ws://{host} wss://{host}"
    assert policy["frame-ancestors"] == "'none'" and policy["base-uri"] == "'none'"
    assert headers["x-frame-options"] == "DENY"
    assert headers["x-content-type-options"] == "nosniff"
    assert get(server + "/static/app.js").headers["x-content-type-options"] == "nosniff"


def test_a_strange_host_header_stays_out_of_the_policy(server: str) -> None:
    headers = get(server + "/", headers={"host": "x; script-src *"}).headers
    assert "connect-src 'self';" in headers["content-security-policy"]
    assert "script-src *" not in headers["content-security-policy"]


def test_the_json_routes_keep_answering_json(server: str) -> None:
    for path in ("/games", "/bots", "/tournaments"):
        response = get(server + path)
        assert response.status_code == 200, path
        assert response.headers["content-type"] == "application/json", path


def test_every_module_the_shell_imports_ships_in_the_package() -> None:
    import re

    folder = Path(__file__).resolve().parent.parent / "game" / "webpage"
    app = (folder / "app.js").read_text()
    for module in re.findall(r'import\("\./([\w.]+)"\)', app):
        assert (folder / module).is_file(), module
