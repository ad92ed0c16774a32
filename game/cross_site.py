"""Requests that a web page of another site makes a browser send: refused when they
would change something (cross-site request forgery).

A browser sends a page's ``POST`` to any address, with the visitor's network position,
as long as it is a "simple" request (a ``text/plain`` body, or none: ``.../stop``): it
asks no one first, and the server parses the body as JSON whatever its type. So a page
of any site, open in the browser of someone whose machine or network runs this server
(``make run`` on 127.0.0.1, an arena on a LAN without an API token), could create games
and tournaments, register bots, or stop tournaments and the ladder there.

A browser says where a request comes from: ``Sec-Fetch-Site`` (``same-origin``,
``same-site``, ``cross-site``, or ``none`` for what the person typed or bookmarked), and
on older browsers ``Origin``. A request that changes something (any method but ``GET``,
``HEAD`` and ``OPTIONS``) is refused with 403 unless it comes from this server's own
page or from no page at all. Other clients (curl, the desktop client, bots, other
servers) send neither header and are not affected; neither is reading, nor a WebSocket
(every seat's socket asks for a token the page of another site does not know).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final
from urllib.parse import urlsplit

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["CrossSiteGuard", "cross_site_refusal"]

#: Methods that change nothing, which any page may send.
SAFE_METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS"})
#: ``Sec-Fetch-Site`` values of a request this server's own page, or no page, made.
_OWN_SITE: Final = frozenset({"same-origin", "none"})


def cross_site_refusal(method: str, headers: Mapping[str, str]) -> str | None:
    """Why a request is refused as one a page of another site made, or ``None``.
    ``headers`` by lower-case name.

    >>> cross_site_refusal("POST", {}) is None  # curl, a bot, the desktop client
    True
    >>> cross_site_refusal("POST", {"sec-fetch-site": "same-origin"}) is None
    True
    >>> cross_site_refusal("GET", {"sec-fetch-site": "cross-site"}) is None
    True
    >>> cross_site_refusal("POST", {"origin": "http://arena:8001", "host": "arena:8001"})
    >>> cross_site_refusal("POST", {"sec-fetch-site": "cross-site", "origin": "https://e.example"})
    'a page of https://e.example may not send POST requests to this server; use its own \
page, or a client that is not a browser'
    """
    if method.upper() in SAFE_METHODS:
        return None
    origin = headers.get("origin")
    site = headers.get("sec-fetch-site")
    if site is not None:
        if site.strip().lower() in _OWN_SITE:
            return None
    elif origin is None or _same_host(origin, headers.get("host")):
        return None
    page = origin if origin and origin != "null" else "another site"
    return (
        f"a page of {page[:100]} may not send {method.upper()} requests to this server; "
        "use its own page, or a client that is not a browser"
    )


def _same_host(origin: str, host: str | None) -> bool:
    """Whether ``origin`` (``scheme://host[:port]``) names ``host`` (the ``Host``
    header). The scheme is not compared: behind a proxy that ends TLS, the page's
    ``https`` origin reaches the server as plain HTTP."""
    if host is None or origin == "null":
        return False
    try:
        return urlsplit(origin).netloc.lower() == host.strip().lower()
    except ValueError:
        return False


class CrossSiteGuard:
    """ASGI middleware: answers 403 ``{"detail": ...}`` for an HTTP request that
    ``cross_site_refusal`` refuses; passes everything else on untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {
                name.decode("latin-1").lower(): value.decode("latin-1")
                for name, value in scope["headers"]
                if name.lower() in (b"origin", b"sec-fetch-site", b"host")
            }
            refusal = cross_site_refusal(scope["method"], headers)
            if refusal is not None:
                await JSONResponse({"detail": refusal}, status_code=403)(scope, receive, send)
                return
        await self.app(scope, receive, send)
