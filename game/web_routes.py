"""The web page: one HTML shell and its static files, served by the game server.

A person who follows a link gets a page, not JSON. The page is plain HTML, CSS and
JavaScript modules shipped in the package (``game/webpage/``, no build step, nothing
fetched from the internet) that talk only to the server's own REST and WebSocket routes.
Every page path answers the same shell; ``app.js`` picks the view from the path:

* ``/`` — live games; ``/g/{game_id}`` — one game, live or replayed;
* ``/web/games`` — the record list; ``/web/bots`` — bots and the pair form;
* ``/web/tournaments`` and ``/t/{tournament_id}`` — tournaments and standings;
* ``/web/leaderboard`` — the arena's ratings (``GET /leaderboard``).

The JSON routes (``/games``, ``/bots``, ``/tournaments``, ``/leaderboard``) keep their
paths and answers: a page never shadows an API route. Static files are revalidated by ETag
(``Cache-Control: no-cache``) so an upgraded server never runs an old script.
"""

from __future__ import annotations

from importlib import resources
from typing import Final

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

__all__ = ["PAGE_VIEWS", "web_routes"]

#: The views under ``/web/<view>``; any other name is a 404 page.
PAGE_VIEWS: Final = frozenset({"games", "bots", "tournaments", "leaderboard"})

_SHELL: Final = "index.html"


def _shell_html() -> str:
    return resources.files("game.webpage").joinpath(_SHELL).read_text(encoding="utf-8")


class _RevalidatedStaticFiles(StaticFiles):
    """Static files a browser must revalidate (a cheap 304 by ETag) before reuse."""

    def file_response(self, *args: object, **kwargs: object) -> Response:
        response = super().file_response(*args, **kwargs)  # type: ignore[arg-type]
        response.headers["Cache-Control"] = "no-cache"
        return response


def web_routes() -> list[BaseRoute]:
    """The page's routes, to be listed after the API's (see ``game.server.create_app``)."""
    shell = _shell_html()

    async def page(request: Request) -> Response:
        view = request.path_params.get("view")
        status = 404 if view is not None and view not in PAGE_VIEWS else 200
        # The shell shows its own "not found" view for a 404; the status is for robots.
        return HTMLResponse(shell, status_code=status, headers={"Cache-Control": "no-cache"})

    static = _RevalidatedStaticFiles(packages=[("game", "webpage")])
    return [
        Route("/", page, methods=["GET"], include_in_schema=False),
        Route("/g/{game_id}", page, methods=["GET"], include_in_schema=False),
        Route("/t/{tournament_id}", page, methods=["GET"], include_in_schema=False),
        Route("/web/{view}", page, methods=["GET"], include_in_schema=False),
        Mount("/static", app=static, name="static"),
    ]
