"""The web page: one HTML shell and its static files, served by the game server.

A person who follows a link gets a page, not JSON. The page is plain HTML, CSS and
JavaScript modules shipped in the package (``game/webpage/``, no build step, nothing
fetched from the internet) that talk only to the server's own REST and WebSocket routes.
Every page path answers the same shell; ``app.js`` picks the view from the path:

* ``/`` — live games; ``/g/{game_id}`` — one game, live or replayed;
* ``/web/games`` — the record list; ``/web/bots`` — bots and the pair form;
* ``/web/tournaments`` and ``/t/{tournament_id}`` — tournaments and standings;
* ``/web/leaderboard`` — the arena's ratings (``GET /leaderboard``).
* ``/c/{challenge_id}`` — an open challenge: the ``htttx-ui --open`` command that plays
  it, and a form that accepts it (``challenge.js``).

The JSON routes (``/games``, ``/bots``, ``/tournaments``, ``/leaderboard``) keep their
paths and answers: a page never shadows an API route. Static files are revalidated by ETag
(``Cache-Control: no-cache``) so an upgraded server never runs an old script.
"""

from __future__ import annotations

import re
from importlib import resources
from typing import Final

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

__all__ = ["PAGE_VIEWS", "page_headers", "web_routes"]

#: The views under ``/web/<view>``; any other name is a 404 page.
PAGE_VIEWS: Final = frozenset({"games", "bots", "tournaments", "leaderboard"})

_SHELL: Final = "index.html"


def _shell_html() -> str:
    return resources.files("game.webpage").joinpath(_SHELL).read_text(encoding="utf-8")


#: A host as the ``Host`` header names it (``arena.example:8001``, ``[::1]:8001``):
#: anything else is left out of the policy rather than written into a header.
_PLAIN_HOST: Final = re.compile(r"[A-Za-z0-9.\-]+(:[0-9]{1,5})?|\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?")


def page_headers(host: str | None) -> dict[str, str]:
    """The headers of the page's shell. Its scripts, styles and images come from this
    server only and it talks to this server only (its REST routes and, over
    ``ws``/``wss``, its sockets), so the Content-Security-Policy allows nothing else:
    if a bot's or a person's words ever reached the page as HTML, no script of theirs
    would run, and nothing would leave for another site. No other site may frame the
    page (its forms register bots and create games) or sniff a type into its files.

    >>> page_headers("arena.example:8001")["Content-Security-Policy"].split("; ")[4]
    "connect-src 'self' ws://arena.example:8001 wss://arena.example:8001"
    """
    sockets = f" ws://{host} wss://{host}" if host and _PLAIN_HOST.fullmatch(host) else ""
    policy = (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        f"connect-src 'self'{sockets}",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
    return {
        "Cache-Control": "no-cache",
        "Content-Security-Policy": "; ".join(policy),
        "X-Frame-Options": "DENY",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "same-origin",
    }


class _RevalidatedStaticFiles(StaticFiles):
    """Static files a browser must revalidate (a cheap 304 by ETag) before reuse, and
    must take for the type they are served as."""

    def file_response(self, *args: object, **kwargs: object) -> Response:
        response = super().file_response(*args, **kwargs)  # type: ignore[arg-type]
        response.headers["Cache-Control"] = "no-cache"
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response


def web_routes() -> list[BaseRoute]:
    """The page's routes, to be listed after the API's (see ``game.server.create_app``)."""
    shell = _shell_html()

    async def page(request: Request) -> Response:
        view = request.path_params.get("view")
        status = 404 if view is not None and view not in PAGE_VIEWS else 200
        # The shell shows its own "not found" view for a 404; the status is for robots.
        headers = page_headers(request.headers.get("host"))
        return HTMLResponse(shell, status_code=status, headers=headers)

    static = _RevalidatedStaticFiles(packages=[("game", "webpage")])
    return [
        Route("/", page, methods=["GET"], include_in_schema=False),
        Route("/g/{game_id}", page, methods=["GET"], include_in_schema=False),
        Route("/t/{tournament_id}", page, methods=["GET"], include_in_schema=False),
        Route("/c/{challenge_id}", page, methods=["GET"], include_in_schema=False),
        Route("/web/{view}", page, methods=["GET"], include_in_schema=False),
        Mount("/static", app=static, name="static"),
    ]
